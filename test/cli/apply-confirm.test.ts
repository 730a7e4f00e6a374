/**
 * The "Apply these changes?" prompt on a terminal, in-process: input that ends (EOF) cancels, Ctrl-C
 * (as a key in raw mode, or as a signal) interrupts with 130; every path releases the lock and
 * changes nothing. The prompt stays readable when the terminal reports no width.
 */
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Io } from '../../src/cli/io.js';
import { run } from '../../src/cli/program.js';
import { STATE_LOCK_FILE } from '../../src/engine/state-lock.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { tempDir } from '../support/temp-dirs.js';

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
});
afterAll(async () => {
  await sandbox?.close();
});

function roleManifest(name: string): string {
  const dir = tempDir('converge-confirm-');
  writeFileSync(
    path.join(dir, 'm.yaml'),
    `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: ${name} }\nspec:\n  Description: x\n`,
  );
  return dir;
}

async function roleExists(name: string): Promise<boolean> {
  const res = await fetch(`${sandbox.url}/v1/acl/roles`, {
    headers: { authorization: `Bearer ${sandbox.rootToken}` },
  });
  return ((await res.json()) as { Name: string }[]).some((r) => r.Name === name);
}

/**
 * Runs `apply` with a terminal on both ends; `answer` is called with the keyboard once the
 * question is on screen.
 */
async function applyAtTerminal(
  role: string,
  answer: (keyboard: PassThrough) => void,
  columns?: number,
): Promise<{ code: number; stdout: string; stderr: string; lockLeft: boolean }> {
  const stateDir = tempDir('converge-confirm-state-');
  const keyboard = new PassThrough();
  let stdout = '';
  let stderr = '';
  let asked = false;
  const screen = Object.assign(
    new Writable({
      write(chunk: Buffer | string, _encoding, callback) {
        stdout += String(chunk);
        if (!asked && stdout.includes('Apply these changes?')) {
          asked = true;
          setTimeout(() => answer(keyboard), 20);
        }
        callback();
      },
    }),
    { isTTY: true, columns },
  );
  const errors = Object.assign(
    new Writable({
      write(chunk: Buffer | string, _encoding, callback) {
        stderr += String(chunk);
        callback();
      },
    }),
    { isTTY: false },
  );
  const io: Io = {
    stdout: screen,
    stderr: errors,
    stdinIsTTY: true,
    stdin: keyboard,
    env: { ...sandbox.env(), CONVERGE_STATE_DIR: stateDir, NO_COLOR: '1' },
  };
  const code = await run(['apply', '-f', roleManifest(role)], io);
  return { code, stdout, stderr, lockLeft: existsSync(path.join(stateDir, STATE_LOCK_FILE)) };
}

describe('the apply confirmation prompt', () => {
  it('applies on yes', async () => {
    const r = await applyAtTerminal('confirm-yes', (k) => k.write('y\r'));
    expect(r.code, r.stderr).toBe(0);
    expect(await roleExists('confirm-yes')).toBe(true);
    expect(r.lockLeft).toBe(false);
  });

  it('cancels when input ends (EOF), releasing the lock', async () => {
    const r = await applyAtTerminal('confirm-eof', (k) => k.end());
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Apply cancelled; nothing was changed.');
    expect(await roleExists('confirm-eof')).toBe(false);
    expect(r.lockLeft).toBe(false);
  });

  it('cancels on Ctrl-D typed at the prompt (end of input in raw mode)', async () => {
    const r = await applyAtTerminal('confirm-ctrl-d', (k) => k.write('\x04'));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Apply cancelled; nothing was changed.');
    expect(await roleExists('confirm-ctrl-d')).toBe(false);
    expect(r.lockLeft).toBe(false);
  });

  it('treats Ctrl-C typed at the prompt as an interrupt: 130, lock released', async () => {
    const r = await applyAtTerminal('confirm-ctrl-c', (k) => k.write('\x03'));
    expect(r.code).toBe(130);
    expect(r.stderr).toContain('Interrupted before any change started; nothing was changed.');
    expect(await roleExists('confirm-ctrl-c')).toBe(false);
    expect(r.lockLeft).toBe(false);
  });

  it('stops waiting for an answer on the first SIGINT: 130, lock released', async () => {
    const r = await applyAtTerminal('confirm-sigint', () => process.emit('SIGINT', 'SIGINT'));
    expect(r.code).toBe(130);
    expect(r.stderr).toContain('Interrupted before any change started; nothing was changed.');
    expect(await roleExists('confirm-sigint')).toBe(false);
    expect(r.lockLeft).toBe(false);
  });

  it('draws the question on one line when the terminal reports no width', async () => {
    const r = await applyAtTerminal('confirm-narrow', (k) => k.end(), 0);
    expect(r.stdout).toContain('Apply these changes?');
    expect(r.code).toBe(1);
  });
});
