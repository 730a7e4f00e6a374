/** `converge sandbox` (runSandboxCommand): exports on stdout, a note on stderr, clean stop on SIGTERM/SIGINT. */
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { SANDBOX_SERVICES } from '../../src/sandbox/services/index.js';
import { describe, expect, it } from 'vitest';
import { runSandboxCommand, shellQuote } from '../../src/sandbox/command.js';
import { tempDir } from './helpers.js';

const fixture = fileURLToPath(new URL('./fixtures/run-sandbox-command.ts', import.meta.url));
const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

const EXPORT_NAMES = SANDBOX_SERVICES.flatMap((service) => [
  `CONVERGE_${service.name.toUpperCase()}_ADDR`,
  `CONVERGE_${service.name.toUpperCase()}_TOKEN`,
]);

interface Started {
  child: ChildProcessByStdio<null, Readable, Readable>;
  env: Record<string, string>;
  stdout: string;
  stderr: () => string;
}

/** Starts the command in a child process and waits for its export lines. */
async function startChild(opts: Record<string, unknown>): Promise<Started> {
  const child = spawn(process.execPath, ['--import', 'tsx', fixture, JSON.stringify(opts)], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const env: Record<string, string> = {};
  await new Promise<void>((resolve, reject) => {
    // A child that never got ready is killed, so a failing test leaves no sandbox running.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no exports within 10 s; stderr: ${stderr}`));
    }, 10_000);
    child.once('exit', (code) => reject(new Error(`exited early with ${code}; stderr: ${stderr}`)));
    const check = () => {
      for (const m of stdout.matchAll(/^export (\w+)='([^']*)'$/gm)) env[m[1]!] = m[2]!;
      // The exports are written before the "listening" line.
      if (stderr.includes('listening')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      check();
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      check();
    });
  });
  return { child, env, stdout, stderr: () => stderr };
}

describe('runSandboxCommand in a child process', () => {
  it('prints quoted exports for every emulated service, serves, and stops on SIGTERM with state flushed', async () => {
    const data = tempDir('sandbox-cmd');
    try {
      const { child, env, stdout, stderr } = await startChild({
        port: 0,
        token: 'cmd-root',
        data: data.path,
      });
      expect(Object.keys(env).sort()).toEqual([...EXPORT_NAMES, 'CONVERGE_WORKSPACES_ORGANIZATION'].sort());
      const url = env.CONVERGE_REGISTRY_ADDR!;
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      for (const name of EXPORT_NAMES) {
        expect(env[name]).toBe(name.endsWith('_ADDR') ? url : 'cmd-root');
      }
      expect(env.CONVERGE_WORKSPACES_ORGANIZATION).toBe('sandbox');
      expect(stdout.trim().split('\n')).toHaveLength(EXPORT_NAMES.length + 1);
      // The recovery key shares of a fresh data folder, once, before the note.
      expect(stderr()).toMatch(
        new RegExp(
          '^(Recovery Key [1-5]: [0-9a-f]{66}\\n){5}' +
            'Recovery key initialized with 5 key shares and a key threshold of 3\\.\\n' +
            'converge sandbox: the recovery key shares are shown only this once \\(a development copy is in .+recovery-keys\\.json\\); keep them to rekey\\.\\n' +
            'converge sandbox: listening on http://127\\.0\\.0\\.1:\\d+ \\(data in .+\\); stop with Ctrl-C\\n$',
        ),
      );
      const printed = [...stderr().matchAll(/^Recovery Key \d: (\w+)$/gm)].map((m) => m[1]);
      expect(JSON.parse(readFileSync(join(data.path, 'recovery-keys.json'), 'utf8')).keys).toEqual(printed);

      const res = await fetch(`${url}/v1/acl/role`, {
        method: 'PUT',
        headers: { 'X-Registry-Token': 'cmd-root' },
        body: JSON.stringify({ Name: 'before-sigterm' }),
      });
      expect(res.status).toBe(200);

      child.kill('SIGTERM');
      const [code] = await once(child, 'exit');
      expect(code).toBe(0);
      const saved = JSON.parse(readFileSync(join(data.path, 'registry.json'), 'utf8'));
      expect(saved.state.roles.map((r: { Name: string }) => r.Name)).toEqual(['before-sigterm']);
      await expect(fetch(`${url}/v1/acl/roles`)).rejects.toThrow();

      // A restart on the same data keeps the recovery key: no new shares are shown.
      const again = await startChild({ port: 0, token: 'cmd-root', data: data.path });
      expect(again.stderr()).toMatch(/^converge sandbox: listening on .+\n$/);
      again.child.kill('SIGTERM');
      await once(again.child, 'exit');
    } finally {
      data.remove();
    }
  });

  it('stops cleanly on SIGINT', async () => {
    const { child } = await startChild({ port: 0 });
    child.kill('SIGINT');
    const [code, signal] = await once(child, 'exit');
    expect([code, signal]).toEqual([0, null]);
  });
});

describe('runSandboxCommand in process', () => {
  function sinks() {
    const out = { stdout: '', stderr: '' };
    return {
      out,
      io: {
        stdout: { write: (t: string) => (out.stdout += t) },
        stderr: { write: (t: string) => (out.stderr += t) },
      },
    };
  }

  it('reports a port in use in one clear line and exits 1', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as { port: number }).port;
    try {
      const { out, io } = sinks();
      const code = await runSandboxCommand({ port }, io);
      expect(code).toBe(1);
      expect(out.stdout).toBe('');
      expect(out.stderr).toBe(
        `converge sandbox: port ${port} on 127.0.0.1 is already in use; stop whatever listens there or choose another port (0 picks a free one)\n`,
      );
    } finally {
      blocker.close();
    }
  });

  it('reports a bad config and an invalid port without a stack trace', async () => {
    const { out, io } = sinks();
    const missing = join(repoRoot, 'test/sandbox/fixtures/no-such-sandbox.yaml');
    expect(await runSandboxCommand({ port: 0, config: missing }, io)).toBe(1);
    expect(out.stderr).toBe(`converge sandbox: ${missing}: cannot read the sandbox config: no such file\n`);
    const bad = sinks();
    expect(await runSandboxCommand({ port: 70000 }, bad.io)).toBe(1);
    expect(bad.out.stderr).toMatch(/invalid port 70000/);
    expect(out.stderr + bad.out.stderr).not.toMatch(/\n\s+at /);
  });

  it('stops when its abort signal fires, and quotes values for the shell', async () => {
    const { out, io } = sinks();
    const stop = new AbortController();
    // Counted against the start: files sharing this worker may hold handlers of their own.
    const before = process.listenerCount('SIGTERM');
    const running = runSandboxCommand({ port: 0, token: "it's secret" }, { ...io, signal: stop.signal });
    await new Promise((r) => setTimeout(r, 100));
    expect(out.stdout).toContain(`export CONVERGE_REGISTRY_TOKEN='it'\\''s secret'\n`);
    stop.abort();
    expect(await running).toBe(0);
    expect(process.listenerCount('SIGTERM')).toBe(before); // its handlers are gone again
  });
});

describe('shellQuote', () => {
  it.each([
    ['plain', "'plain'"],
    ['', "''"],
    ["a'b", "'a'\\''b'"],
    ['$HOME `x` "y"', `'$HOME \`x\` "y"'`],
  ])('quotes %j', (value, quoted) => {
    expect(shellQuote(value)).toBe(quoted);
  });
});
