/**
 * Targeting through the library, as the reconcile loop and embedding programs use it: `plan` with
 * `targets` and `excludes` reads and plans only the selected objects and says so in the plan; export
 * and adoption through the library without the CLI.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adoptObjects,
  apply,
  connect,
  EngineError,
  exportLive,
  LocalInventory,
  loadManifest,
  plan,
  writeExportFiles,
} from '../../src/engine/index.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { tempDir } from '../support/temp-dirs.js';

let sandbox: RunningSandbox;
let env: NodeJS.ProcessEnv;
let dir: string;

const role = (name: string) =>
  `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: ${name} }\nspec: { Description: ${name} }\n`;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
  env = { ...sandbox.env(), CONVERGE_STATE_DIR: tempDir('converge-engine-t-') };
  dir = tempDir('converge-engine-t-manifest-');
  writeFileSync(
    path.join(dir, 'all.yaml'),
    [role('a-one'), role('a-two'), role('b-one')].join('---\n') +
      '---\napiVersion: converge/v1\nkind: LdapGroup\nmetadata: { name: ops }\nspec: { policies: [ops] }\n',
  );
});
afterAll(async () => sandbox?.close());

describe('plan with targets', () => {
  it('plans only the selected objects and asks no other service', async () => {
    const run = await plan([dir], { env, targets: ['AclRole/default/a-*'], excludes: ['**/a-two'] });
    try {
      expect(run.plan.changes.map((c) => c.address)).toEqual(['AclRole/default/a-one']);
      expect(run.plan.targeting).toEqual({
        targets: ['AclRole/default/a-*'],
        excludes: ['**/a-two'],
        selected: 1,
        total: 4,
        notes: [],
      });
      expect(run.plan.requests.secrets ?? 0).toBe(0);
    } finally {
      await run.connections.close();
    }
  });

  it('refuses a target that matches nothing with an EngineError', async () => {
    await expect(plan([dir], { env, targets: ['Job/**'] })).rejects.toThrow(EngineError);
  });

  it('suggests first the address one swapped pair of letters away (the commonest typo)', async () => {
    const typos = tempDir('converge-engine-t-typo-');
    writeFileSync(path.join(typos, 'roles.yaml'), [role('web'), role('wbe12')].join('---\n'));
    // `wbe` is one swap from `web`, two insertions from `wbe12`: the manifest's own measure.
    await expect(plan([typos], { env, targets: ['AclRole/default/wbe'] })).rejects.toThrow(
      'the closest addresses are AclRole/default/web, AclRole/default/wbe12',
    );
  });
});

describe('export and adoption through the library', () => {
  it('exports live roles and adopts one', async () => {
    const run = await plan([dir], { env, targets: ['AclRole/**'] });
    await apply(run);
    await run.connections.close();

    const objects = await exportLive({ env, kinds: ['AclRole'] });
    expect(objects.map((o) => o.key.name)).toEqual(['a-one', 'a-two', 'b-one']);
    const out = path.join(tempDir('converge-engine-t-out-'), 'x');
    await writeExportFiles(out, objects);
    expect(readdirSync(out)).toEqual(['AclRole.yaml']);

    const manifest = await loadManifest([dir], { env });
    const connections = connect(manifest, { env });
    const inventory = new LocalInventory(env);
    try {
      const [result] = await adoptObjects(manifest, ['AclRole/default/b-one'], connections, inventory);
      expect(result).toMatchObject({ address: 'AclRole/default/b-one', adopted: true });
      expect((await new LocalInventory(env).open()).objects.entry('AclRole/default/b-one')).toMatchObject({
        kind: 'AclRole',
        owned: true,
      });
      // Refusals name no command of the CLI: the CLI adds its own (see the import CLI test).
      const undeclared = await adoptObjects(
        manifest,
        ['AclRole/default/b-onne'],
        connections,
        inventory,
      ).catch((error: unknown) => error as EngineError);
      expect(undeclared).toBeInstanceOf(EngineError);
      expect((undeclared as EngineError).message).toContain('the manifest does not declare it');
      expect((undeclared as EngineError).message).toContain('closest to it: AclRole/default/b-one');
      expect((undeclared as EngineError).message).not.toContain('converge ');
      expect((undeclared as EngineError).remedy).toBe('declare-from-export');
    } finally {
      await connections.close();
    }
  });
});
