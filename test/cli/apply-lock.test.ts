/**
 * Apply holds a lock on the local inventory folder for the whole run: two applies on one machine
 * never lose each other's records, a second run says who holds the lock, a dead holder's lock is
 * taken over, and the lock never outlives the run. In-process against the sandbox.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STATE_LOCK_FILE } from '../../src/engine/state-lock.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { CLI } from './helpers.js';
import { tempDir } from '../support/temp-dirs.js';

let sandbox: RunningSandbox;
let sleeper: ChildProcess | undefined;

beforeAll(async () => {
  sandbox = await startSandbox({
    port: 0,
    config: { secrets: { mounts: [{ path: 'lock-a' }, { path: 'lock-b' }] } },
  });
});
afterAll(async () => {
  sleeper?.kill();
  await sandbox?.close();
});

function tmp(prefix: string): string {
  return tempDir(prefix);
}

function manifest(text: string): string {
  const dir = tmp('converge-lock-');
  writeFileSync(path.join(dir, 'm.yaml'), text);
  return dir;
}

function ldapConfig(mount: string, variable: string): string {
  return manifest(`apiVersion: converge/v1
kind: LdapConfig
metadata: { name: ${mount} }
spec:
  url: ldap://127.0.0.1:1
  binddn: cn=svc,dc=example,dc=test
  bindpass: \${env:${variable}}
  userdn: ou=people,dc=example,dc=test
`);
}

function roleManifest(name: string, policy?: string): string {
  return manifest(
    `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: ${name} }\nspec:\n  Description: x\n${
      policy ? `  Policies: [{ Name: ${policy} }]\n` : ''
    }`,
  );
}

/**
 * Enough roles that reading them keeps the process busy for a while after it takes the lock, so
 * both signals reach it while the first is still being handled. With one role the apply winds down
 * within the 50 ms between the signals (since start-up compiles only the kinds a manifest uses),
 * and the second signal would find no apply left to quit.
 */
function busyManifest(name: string): string {
  const roles = Array.from(
    { length: 3000 },
    (_, i) =>
      `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: ${name}-${i} }\nspec:\n  Description: x\n`,
  );
  return manifest(roles.join('---\n'));
}

/** The wait for a lock `writeLock` wrote, said once as it begins and before it ran out (`--lock-timeout 1`). */
function expectSaidWaitOnce(stderr: string, pid: number, file: string): void {
  const waiting = stderr
    .split('\n')
    .filter((l) => l.startsWith("Waiting for the inventory's lock, held by "));
  expect(waiting).toEqual([
    `Waiting for the inventory's lock, held by pid ${pid} on ${os.hostname()}, running \`converge apply -f elsewhere/\` since 2030-01-02T03:04:05.000Z (${file}): up to 1s (--lock-timeout)…`,
  ]);
  expect(stderr.indexOf('Waiting')).toBeLessThan(stderr.indexOf('Waited 1s'));
}

function env(stateDir: string): Record<string, string> {
  return {
    ...sandbox.env(),
    CONVERGE_STATE_DIR: stateDir,
    CONVERGE_ALLOW_ENV: 'TEST_*',
    TEST_BINDPASS_A: 'bindpass-of-a',
    TEST_BINDPASS_B: 'bindpass-of-b',
    NO_COLOR: '1',
  };
}

function writeLock(stateDir: string, pid: number, command = 'converge apply -f elsewhere/'): string {
  const file = path.join(stateDir, STATE_LOCK_FILE);
  writeFileSync(
    file,
    JSON.stringify({
      pid,
      host: os.hostname(),
      command,
      since: '2030-01-02T03:04:05.000Z',
    }),
  );
  return file;
}

/** A process that is alive for the length of the test file. */
function livePid(): number {
  sleeper ??= spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
  return sleeper.pid!;
}

async function roleExists(name: string): Promise<boolean> {
  const res = await fetch(`${sandbox.url}/v1/acl/role/name/${name}`, {
    headers: { Authorization: `Bearer ${sandbox.rootToken}` },
  });
  return res.status === 200;
}

describe('the apply lock on the inventory', () => {
  it('lets two concurrent applies both keep their write-only records', async () => {
    // Both configurations exist already, applied from elsewhere: each run reads the inventory while
    // planning (nothing recorded here yet) and writes it after applying.
    const elsewhere = tmp('converge-lock-elsewhere-');
    for (const [mount, variable] of [
      ['lock-a', 'TEST_BINDPASS_A'],
      ['lock-b', 'TEST_BINDPASS_B'],
    ] as const) {
      const set = await runCli(
        ['apply', '-f', ldapConfig(mount, variable), '--auto-approve'],
        env(elsewhere),
      );
      expect(set.code, set.stderr).toBe(0);
    }
    const stateDir = tmp('converge-lock-state-');
    const [a, b] = await Promise.all([
      runCli(['apply', '-f', ldapConfig('lock-a', 'TEST_BINDPASS_A'), '--auto-approve'], env(stateDir)),
      runCli(['apply', '-f', ldapConfig('lock-b', 'TEST_BINDPASS_B'), '--auto-approve'], env(stateDir)),
    ]);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    const inventory = JSON.parse(readFileSync(path.join(stateDir, 'inventory.json'), 'utf8')) as {
      objects: Record<string, { writeOnly: Record<string, string> }>;
    };
    expect(Object.keys(inventory.objects).sort()).toEqual(['LdapConfig/lock-a', 'LdapConfig/lock-b']);
    for (const entry of Object.values(inventory.objects))
      expect(Object.keys(entry.writeOnly)).toEqual(['bindpass']);
    expect(existsSync(path.join(stateDir, STATE_LOCK_FILE))).toBe(false);
  });

  it('names the holder after --lock-timeout when a live process holds the lock', async () => {
    const stateDir = tmp('converge-lock-state-');
    const pid = livePid();
    const file = writeLock(stateDir, pid);
    const started = Date.now();
    const r = await runCli(
      ['apply', '-f', roleManifest('lock-held'), '--auto-approve', '--lock-timeout', '1'],
      env(stateDir),
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `another apply holds the lock on the inventory (${file}): pid ${pid} on ${os.hostname()}, running \`converge apply -f elsewhere/\` since 2030-01-02T03:04:05.000Z`,
    );
    expect(r.stderr).toContain('--lock-timeout SECONDS');
    // Said once as the wait begins, not only when it ran out: a silent wait reads as a hang.
    expectSaidWaitOnce(r.stderr, pid, file);
    // The command README documents, not a file to delete by hand.
    expect(r.stderr).toContain('Release it with `converge inventory unlock`.');
    expect(r.stderr).not.toContain(`delete ${file}`);
    expect(existsSync(file)).toBe(true);
    expect(await roleExists('lock-held')).toBe(false);
  });

  it('shows a lock file written by anything as one printable, bounded line', async () => {
    const stateDir = tmp('converge-lock-state-');
    writeLock(stateDir, livePid(), `x\u001b[2K\r::error::forged\n${'y'.repeat(5000)}`);
    const r = await runCli(
      ['apply', '-f', roleManifest('lock-hostile'), '--auto-approve', '--lock-timeout', '0'],
      env(stateDir),
    );
    expect(r.code).toBe(1);
    expect(r.stderr).not.toMatch(/[\u001b\r]/);
    expect(r.stderr).not.toMatch(/^::/m);
    expect(r.stderr).toContain('running `x\\u001b[2K\\r::error::forged\\n');
    expect(r.stderr.length).toBeLessThan(1500);
  });

  it('says the wait for a lock file written by anything as one printable, bounded line too', async () => {
    const stateDir = tmp('converge-lock-state-');
    writeLock(stateDir, livePid(), `x\u001b[2K\r::error::forged\n${'y'.repeat(5000)}`);
    const r = await runCli(
      ['apply', '-f', roleManifest('lock-hostile-wait'), '--auto-approve', '--lock-timeout', '1'],
      env(stateDir),
    );
    expect(r.code).toBe(1);
    const waiting = r.stderr.split('\n').filter((l) => l.startsWith("Waiting for the inventory's lock"));
    expect(waiting).toHaveLength(1);
    expect(waiting[0]).toContain('running `x\\u001b[2K\\r::error::forged\\n');
    expect(waiting[0]!.length).toBeLessThan(700);
    expect(r.stderr).not.toMatch(/[\u001b\r]/);
    expect(r.stderr).not.toMatch(/^::/m);
  });

  it('reads a lock file whose pid is not a positive whole number as unreadable, never as a holder', async () => {
    const stateDir = tmp('converge-lock-state-');
    const file = path.join(stateDir, STATE_LOCK_FILE);
    writeFileSync(file, JSON.stringify({ pid: -1, host: os.hostname(), command: 'x', since: 'now' }));
    const r = await runCli(
      ['apply', '-f', roleManifest('lock-bad-pid'), '--auto-approve', '--lock-timeout', '0'],
      env(stateDir),
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('a process that left an unreadable lock file');
    expect(r.stderr).not.toContain('pid -1');
  });

  it('stops waiting on Ctrl-C', async () => {
    const stateDir = tmp('converge-lock-state-');
    writeLock(stateDir, livePid());
    const running = runCli(
      ['apply', '-f', roleManifest('lock-interrupted'), '--auto-approve', '--lock-timeout', '60'],
      env(stateDir),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    process.emit('SIGINT', 'SIGINT');
    const r = await running;
    // 130 as for any interrupted apply (it was 1 before interrupts got their own exit code).
    expect(r.code).toBe(130);
    expect(r.stderr).toContain('Interrupted while waiting for the lock');
    expect(await roleExists('lock-interrupted')).toBe(false);
  });

  it('takes over the lock of a process that is gone, with a note', async () => {
    const stateDir = tmp('converge-lock-state-');
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    const file = writeLock(stateDir, dead);
    const r = await runCli(['apply', '-f', roleManifest('lock-taken-over'), '--auto-approve'], env(stateDir));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`Took over the lock ${file}: its holder (pid ${dead}`);
    expect(await roleExists('lock-taken-over')).toBe(true);
    expect(existsSync(file)).toBe(false);
  });

  it('is released after an apply that fails', async () => {
    const stateDir = tmp('converge-lock-state-');
    const r = await runCli(
      ['apply', '-f', roleManifest('lock-failed', 'no-such-policy'), '--auto-approve'],
      env(stateDir),
    );
    expect(r.code).toBe(1);
    expect(existsSync(path.join(stateDir, STATE_LOCK_FILE))).toBe(false);
  });

  it('is released when the manifest is refused', async () => {
    const stateDir = tmp('converge-lock-state-');
    const r = await runCli(['apply', '-f', manifest('kind: Nonsense\n'), '--auto-approve'], env(stateDir));
    expect(r.code).toBe(1);
    expect(existsSync(path.join(stateDir, STATE_LOCK_FILE))).toBe(false);
  });

  // The built CLI in a child process (npm run build first): a real signal, and a real process exit.
  it.each([
    // Exits 130 as a process ended by SIGINT does (it was 1 before interrupts got their own code).
    ['one Ctrl-C (the apply winds down)', 1, 130],
    ['two Ctrl-C (quits at once)', 2, 130],
  ])('is released after %s', async (_what, signals, exitCode) => {
    const slow = await startSandbox({ port: 0, config: { faults: { latencyMs: 400 } } });
    try {
      const stateDir = tmp('converge-lock-state-');
      const lockFile = path.join(stateDir, STATE_LOCK_FILE);
      const child = spawn(
        process.execPath,
        [CLI, 'apply', '-f', busyManifest(`lock-signal-${signals}`), '--auto-approve'],
        {
          env: { PATH: process.env.PATH, ...slow.env(), CONVERGE_STATE_DIR: stateDir },
          stdio: ['ignore', 'ignore', 'ignore'],
        },
      );
      const exited = once(child, 'exit');
      // Taken once the process started and checked the manifest: seconds on a loaded machine.
      for (let i = 0; i < 500 && !existsSync(lockFile); i++) await new Promise((r) => setTimeout(r, 20));
      expect(existsSync(lockFile)).toBe(true);
      for (let i = 0; i < signals; i++) {
        child.kill('SIGINT');
        await new Promise((r) => setTimeout(r, 50));
      }
      const [code, signal] = await exited;
      // 130, or ended by SIGINT itself, which a shell reports as 130 too: when the first signal wound
      // the apply down before the second came, that one can land as the process exits, after its
      // handlers are gone.
      if (signals === 2 && code === null) expect(signal).toBe('SIGINT');
      else expect(code).toBe(exitCode);
      expect(existsSync(lockFile)).toBe(false);
    } finally {
      await slow.close();
    }
  });
});

describe('the other commands that take the inventory lock', () => {
  // Each waited up to --lock-timeout in silence, which reads as a hang; apply said why it waits.
  it.each([
    ['import', () => ['import', 'AclRole/default/lock-import', '-f', roleManifest('lock-import')]],
    ['inventory forget', () => ['inventory', 'forget', 'AclRole/default/lock-forget', '--yes']],
    [
      'inventory migrate',
      () => ['inventory', 'migrate', '--to', `file:${path.join(tmp('converge-lock-to-'), 'inventory.json')}`],
    ],
  ])('%s says it waits for a lock a live process holds, and whose', async (_name, args) => {
    const stateDir = tmp('converge-lock-state-');
    const pid = livePid();
    const file = writeLock(stateDir, pid);
    const r = await runCli([...args(), '--lock-timeout', '1'], env(stateDir));
    expect(r.code).toBe(1);
    expectSaidWaitOnce(r.stderr, pid, file);
    expect(existsSync(file)).toBe(true);
  });
});

describe('converge inventory unlock of the local lock', () => {
  it('refuses when the holder still runs on this host, naming it, unless --force', async () => {
    const stateDir = tmp('converge-lock-state-');
    const pid = livePid();
    const file = writeLock(stateDir, pid, 'converge apply -f live/');
    const refused = await runCli(['inventory', 'unlock', '--yes'], env(stateDir));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      `the lock is held by pid ${pid} (\`converge apply -f live/\`), which is still running on this host`,
    );
    expect(refused.stderr).toContain('--force');
    expect(existsSync(file)).toBe(true);
    const forced = await runCli(['inventory', 'unlock', '--yes', '--force'], env(stateDir));
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stderr).toContain(`releasing the lock of pid ${pid}`);
    expect(existsSync(file)).toBe(false);
  });

  it('releases with --yes when the holder is gone', async () => {
    const stateDir = tmp('converge-lock-state-');
    const dead = spawnSync(process.execPath, ['-e', '']).pid!;
    const file = writeLock(stateDir, dead);
    const r = await runCli(['inventory', 'unlock', '--yes'], env(stateDir));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`Its holder (pid ${dead}) is no longer running on this host.`);
    expect(existsSync(file)).toBe(false);
  });

  it('says a holder on another host cannot be checked, and releases with --yes', async () => {
    const stateDir = tmp('converge-lock-state-');
    const file = path.join(stateDir, STATE_LOCK_FILE);
    writeFileSync(
      file,
      JSON.stringify({ pid: 4242, host: 'some-other-host', command: 'converge apply', since: 'x' }),
    );
    const r = await runCli(['inventory', 'unlock', '--yes'], env(stateDir));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('held from host some-other-host (pid 4242)');
    expect(r.stderr).toContain('cannot be checked');
    expect(existsSync(file)).toBe(false);
  });
});
