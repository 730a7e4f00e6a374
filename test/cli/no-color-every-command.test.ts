/**
 * `--no-color` is taken by every command, as README says for scripts that pass it to all of them:
 * `export`, `job …`, `workspace …`, `state …`, `inventory …`, `role …`, `ldap …` and `rekey …` were
 * refused `unknown option '--no-color'` (exit 1) while NO_COLOR=1 worked.
 */
import { Writable } from 'node:stream';
import type { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Io } from '../../src/cli/io.js';
import { buildProgram } from '../../src/cli/program.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
});
afterAll(async () => {
  await sandbox?.close();
});

function leaves(command: Command, path: string[] = []): { path: string; command: Command }[] {
  if (command.commands.length === 0) return [{ path: path.join(' '), command }];
  return command.commands.flatMap((c) => leaves(c, [...path, c.name()]));
}

function env(): Record<string, string> {
  return { ...sandbox.env(), CONVERGE_STATE_DIR: tempDir('converge-no-color-') };
}

describe('--no-color', () => {
  it('is an option of every command that runs, however deep', async () => {
    const sink = new Writable({ write: (_c, _e, done) => done() });
    const io: Io = { stdout: sink, stderr: sink, stdinIsTTY: false, env: {} };
    // No command named: every service's commands are registered.
    const program = await buildProgram(io, () => {}, undefined, undefined);
    const all = leaves(program);
    // The grouped commands are there (not a tree that lost them).
    for (const name of ['export', 'job status', 'workspace list', 'inventory forget', 'rekey backup delete'])
      expect(all.map((l) => l.path)).toContain(name);
    const without = all
      .filter(({ command }) => !command.options.some((o) => o.long === '--no-color'))
      .map((l) => l.path);
    expect(without).toEqual([]);
  });

  it('is taken by grouped commands, as NO_COLOR is', async () => {
    const listed = await runCli(['workspace', 'list', '--no-color'], env());
    expect(listed.stderr).toBe('');
    expect(listed.code).toBe(0);
    // Refused for its own reason (no such role), not for the flag.
    const role = await runCli(['role', 'get', 'x', '--no-color'], env());
    expect(role.stderr).not.toContain('unknown option');
    expect(role.stderr).toContain('no role named "x"');
    const inventory = await runCli(['inventory', 'list', '--no-color'], env());
    expect(inventory.stderr).not.toContain('unknown option');
    expect(inventory.code).toBe(0);
    const exported = await runCli(
      ['export', '-o', tempDir('converge-no-color-out-'), '--kind', 'AclRole', '--no-color'],
      env(),
    );
    expect(exported.stderr).not.toContain('unknown option');
    expect(exported.code).toBe(0);
  });
});
