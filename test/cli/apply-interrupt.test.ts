/**
 * Ctrl-C and SIGTERM while `converge apply` is changing objects, through the built CLI in a child
 * process (npm run build first): a real signal and a real exit code. The sandbox answers slowly, so
 * changes are in flight when the signal arrives. What the person must get: no change started after
 * the signal, those in flight finished, a summary naming each object applied or not (and the service
 * holding exactly those), the lock released, and 130 (SIGINT) or 143 (SIGTERM); a second signal
 * quits at once.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STATE_LOCK_FILE } from '../../src/engine/state-lock.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { CLI } from './helpers.js';
import { tempDir } from '../support/temp-dirs.js';

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, config: { faults: { latencyMs: 400 } } });
});
afterAll(async () => {
  await sandbox?.close();
});

const ROLES = 6;

function manifest(stem: string, roles = ROLES): string {
  const dir = tempDir('converge-interrupt-');
  const docs = Array.from(
    { length: roles },
    (_, i) =>
      `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: ${stem}-${i} }\nspec:\n  Description: r\n`,
  );
  writeFileSync(path.join(dir, 'roles.yaml'), docs.join('---\n'));
  return dir;
}

async function rolesNamed(stem: string): Promise<string[]> {
  const res = await fetch(`${sandbox.url}/v1/acl/roles`, {
    headers: { authorization: `Bearer ${sandbox.rootToken}` },
  });
  const roles = (await res.json()) as { Name: string }[];
  return roles
    .map((r) => r.Name)
    .filter((n) => n.startsWith(`${stem}-`))
    .sort();
}

/** Starts the apply, sends `signals` once the first change is in flight, and collects the outcome. */
async function interruptedApply(
  stem: string,
  signals: NodeJS.Signals[],
  after: RegExp | ((stdout: string) => boolean) = /: creating…/,
  roles = ROLES,
  gapMs = 100,
) {
  const stateDir = tempDir('converge-interrupt-state-');
  const startedBy = typeof after === 'function' ? after : (out: string) => after.test(out);
  const child = spawn(
    process.execPath,
    [CLI, 'apply', '-f', manifest(stem, roles), '--auto-approve', '--parallelism', '2'],
    {
      env: { PATH: process.env.PATH, ...sandbox.env(), CONVERGE_STATE_DIR: stateDir, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = once(child, 'exit');
  const started = new Promise<void>((resolve) => {
    child.stdout.on('data', (d) => {
      stdout += d;
      if (startedBy(stdout)) resolve();
    });
  });
  await started;
  for (const signal of signals) {
    child.kill(signal);
    // Two signals sent back to back can arrive as one (a pending signal is not queued twice).
    await new Promise((r) => setTimeout(r, gapMs));
  }
  const [code] = (await exited) as [number | null];
  return { code, stdout, stderr, stateDir, lockFile: path.join(stateDir, STATE_LOCK_FILE) };
}

describe('an interrupted apply', () => {
  it.each<[NodeJS.Signals, number]>([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ])(
    'on %s: finishes the changes in flight, starts no other, says which, exits %i',
    async (signal, exitCode) => {
      const stem = `int-${signal.toLowerCase()}`;
      const r = await interruptedApply(stem, [signal]);
      expect(r.code, r.stderr).toBe(exitCode);
      expect(r.stderr).toContain(`Interrupted (${signal}): starting no new change`);
      const summary = /Apply interrupted: (\d+) applied, (\d+) not attempted/.exec(r.stdout);
      expect(summary, r.stdout).not.toBeNull();
      const applied = Number(summary![1]);
      expect(applied + Number(summary![2])).toBe(ROLES);
      // The two changes in flight (parallelism 2) finished; nothing started after the signal.
      expect(applied).toBeGreaterThanOrEqual(1);
      expect(applied).toBeLessThan(ROLES);
      const listed = [...r.stdout.matchAll(/^ {2}applied: AclRole\/default\/(\S+) \(create\)$/gm)].map(
        (m) => m[1],
      );
      expect(listed).toHaveLength(applied);
      // The service holds exactly the roles the summary calls applied, once each.
      expect(await rolesNamed(stem)).toEqual([...listed].sort());
      expect(r.stdout).toMatch(/not applied \(skipped\): AclRole\/default\/\S+: not attempted: interrupted/);
      // The plan that lists what is left, as it runs: with the manifest (a bare `converge plan` stops).
      expect(r.stdout).toMatch(/: `converge plan -f \S+` lists what is left\.\n$/);
      // Each object left alone is said once, in the summary: not also as a progress line of its own.
      expect(r.stdout).not.toContain('SKIPPED: not attempted: interrupted');
      expect(existsSync(r.lockFile)).toBe(false);
    },
  );

  it('exits 0 when the signal came after every change had started, and all of them landed', async () => {
    // Two roles at parallelism 2: both are in flight when the signal comes, and both finish.
    const bothStarted = (out: string) => (out.match(/: creating…/g) ?? []).length >= 2;
    const r = await interruptedApply('int-late', ['SIGINT'], bothStarted, 2);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('The interrupt (SIGINT) came after every change had been made');
    expect(r.stdout).toContain('Apply complete: 2 applied, 0 failed, 0 skipped, 0 stale.');
    expect(r.stdout).not.toContain('Apply interrupted');
    expect(await rolesNamed('int-late')).toEqual(['int-late-0', 'int-late-1']);
  });

  it('quits at once on a second signal, still removing the lock file', async () => {
    const r = await interruptedApply('int-twice', ['SIGINT', 'SIGINT']);
    expect(r.code).toBe(130);
    expect(r.stderr).toContain('Interrupted again (SIGINT): quitting now');
    expect(r.stdout).not.toContain('Apply interrupted');
    expect(existsSync(r.lockFile)).toBe(false);
  });

  it('on a second signal, still records in the inventory what was created before it', async () => {
    const r = await interruptedApply('int-record', ['SIGINT', 'SIGINT'], /: created \(/);
    expect(r.code).toBe(130);
    const created = [...r.stdout.matchAll(/^AclRole\/default\/(\S+): created \(/gm)].map((m) => m[1]!);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(r.stderr).toContain('The changes applied so far are recorded in the inventory');
    // Each role created is Converge's own in the inventory, so a later --prune can delete it.
    const inventory = JSON.parse(readFileSync(path.join(r.stateDir, 'inventory.json'), 'utf8')) as {
      objects: Record<string, { owned: boolean }>;
    };
    for (const name of created) expect(inventory.objects[`AclRole/default/${name}`]?.owned).toBe(true);
  });

  it('on a second signal while creates are in flight, records them too: they may land after it quits', async () => {
    // The second signal comes while both creates' writes are out (each answer takes 400 ms).
    const r = await interruptedApply('int-inflight', ['SIGINT', 'SIGINT'], /: creating…/, ROLES, 150);
    expect(r.code).toBe(130);
    const started = [...r.stdout.matchAll(/^AclRole\/default\/(\S+): creating…$/gm)].map((m) => m[1]!);
    expect(started.length).toBeGreaterThanOrEqual(1);
    const inventory = JSON.parse(readFileSync(path.join(r.stateDir, 'inventory.json'), 'utf8')) as {
      objects: Record<string, { owned: boolean }>;
    };
    // What was under way is Converge's own in the inventory, whether or not the service acted on
    // it: within a later --prune's reach if it exists, named by the next plan if it does not.
    for (const name of started) expect(inventory.objects[`AclRole/default/${name}`]?.owned, name).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 600));
    for (const name of await rolesNamed('int-inflight')) expect(started).toContain(name);
    // Only what was started: at parallelism 2, the rest never began.
    expect(Object.keys(inventory.objects).sort()).toEqual(started.map((n) => `AclRole/default/${n}`).sort());
  });
});
