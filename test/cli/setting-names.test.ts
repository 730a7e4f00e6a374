/**
 * The engine and the HTTP layer are a library with more than one front end, so the setting an error
 * asks to change is named as the caller spells it: a program calling the engine reads its option's
 * name, a `converge` user reads the flag. Each failure is produced once through the library and once
 * through the CLI, against the same sandbox and the same inventory.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apply, lockInventory, plan } from '../../src/engine/index.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

let sandbox: RunningSandbox;
let env: Record<string, string | undefined>;
let dir: string;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
  env = { ...sandbox.env(), CONVERGE_STATE_DIR: tempDir('converge-settings-') };
  dir = tempDir('converge-settings-manifest-');
  writeFileSync(
    path.join(dir, 'roles.yaml'),
    'apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: web-readers }\nspec: { Description: web readers }\n',
  );
});
afterAll(async () => sandbox?.close());

describe('a target that matches nothing', () => {
  it('names the `targets` option to a library caller', async () => {
    const failure = await plan([dir], { env, targets: ['AclRole/web-raeders'] }).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(failure?.message).toContain('targets AclRole/web-raeders matches no object of the manifest');
    expect(failure?.message).not.toContain('--');
  });

  it('names --target to a CLI user', async () => {
    const r = await runCli(['plan', '-f', dir, '--target', 'AclRole/web-raeders'], env);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('--target AclRole/web-raeders matches no object of the manifest');
  });
});

describe('an inventory lock held by another run', () => {
  it('names the lock wait as lockInventory takes it to a library caller, and --lock-timeout to a CLI user', async () => {
    const held = await lockInventory({ env, command: 'a long apply', timeoutMs: 1_000 });
    try {
      const library = await lockInventory({ env, command: 'a second apply', timeoutMs: 0 }).then(
        () => undefined,
        (error: unknown) => error as Error,
      );
      expect(library?.message).toContain('wait longer (timeoutMs)');
      expect(library?.message).not.toContain('--lock-timeout');

      const cli = await runCli(
        ['inventory', 'forget', 'AclRole/default/web-readers', '--lock-timeout', '0'],
        env,
      );
      expect(cli.code).not.toBe(0);
      expect(cli.stderr).toContain('wait longer (--lock-timeout SECONDS)');
      expect(cli.stderr).toContain('a long apply');
    } finally {
      await held.release();
    }
  });
});

describe('a plan that deletes more than allowed', () => {
  it('names limits.maxDeletes to a library caller and --max-deletes to a CLI user', async () => {
    const gone = tempDir('converge-settings-delete-');
    const role = (ensure: string) =>
      `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: old-readers${ensure} }\nspec: { Description: old }\n`;
    writeFileSync(path.join(gone, 'roles.yaml'), role(''));
    const created = await plan([gone], { env });
    try {
      await apply(created);
    } finally {
      await created.connections.close();
    }
    writeFileSync(path.join(gone, 'roles.yaml'), role(', ensure: absent'));

    const run = await plan([gone], { env, limits: { maxDeletes: 0 } });
    await run.connections.close();
    const messages = run.plan.problems.map((p) => p.message).join('\n');
    expect(messages).toContain('more than limits.maxDeletes 0 allows');
    expect(messages).not.toContain('--');

    const r = await runCli(['plan', '-f', gone, '--max-deletes', '0'], env);
    expect(r.stdout + r.stderr).toContain('more than --max-deletes 0 allows');
  });
});
