/**
 * `converge … | head`: when the reader of stdout goes away, the CLI stops writing quietly (no
 * "Unhandled 'error' event … EPIPE" stack) and exits with the command's own code. The process
 * boundary is what is under test, so the CLI runs in a child (from the sources, through tsx), its
 * stdout closed before it writes.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { tempDir } from '../support/temp-dirs.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
});
afterAll(async () => {
  await sandbox?.close();
});

/** Runs the CLI with its stdout's reader already gone. */
async function withClosedStdout(args: string[], env: Record<string, string> = {}) {
  const stateDir = tempDir('converge-epipe-state-');
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], {
    env: { PATH: process.env.PATH, CONVERGE_STATE_DIR: stateDir, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.destroy();
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stderr };
}

describe('a closed stdout (EPIPE)', () => {
  it('ends help quietly with 0', async () => {
    const r = await withClosedStdout(['reconcile', '--help']);
    expect(r.stderr).not.toContain('EPIPE');
    expect(r.code).toBe(0);
  }, 30_000);

  it("ends a long plan quietly with the plan's own exit code", async () => {
    const dir = tempDir('converge-epipe-');
    const docs = Array.from(
      { length: 200 },
      (_, i) =>
        `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: epipe-${i} }\nspec:\n  Description: r\n`,
    );
    writeFileSync(path.join(dir, 'm.yaml'), docs.join('---\n'));
    const r = await withClosedStdout(['plan', '-f', dir, '--detailed-exitcode'], sandbox.env());
    expect(r.stderr).not.toContain('EPIPE');
    expect(r.stderr).not.toContain('Unhandled');
    // 2: the plan has changes, as --detailed-exitcode says when the output is read.
    expect(r.code).toBe(2);
  }, 30_000);
});
