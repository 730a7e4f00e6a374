/**
 * The workspace that holds a workspace inventory (CONVERGE_INVENTORY=workspace:ORG/NAME) may not be
 * an object of the manifest that uses it: declared with `locked:` the plan and the apply disagreed
 * forever (the apply holds the lock itself), `locked: false` released the run's own lock mid-apply,
 * and `ensure: absent` deleted every runner's records with exit 0.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

const ORG = 'home-org';
let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, config: { workspaces: { organizations: [{ name: ORG }] } } });
});
afterAll(async () => sandbox?.close());

const role =
  'apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: home-role }\nspec: { Description: x }\n';

function setUp(docs: string[]) {
  const dir = tempDir('converge-home-');
  writeFileSync(path.join(dir, 'm.yaml'), docs.join('---\n'));
  const env = {
    ...sandbox.env(),
    NO_COLOR: '1',
    CONVERGE_STATE_DIR: tempDir('converge-home-state-'),
    CONVERGE_INVENTORY: `workspace:${ORG}/converge-inv`,
  };
  return { dir, env };
}

async function inventoryWorkspace() {
  const res = await fetch(`${sandbox.url}/api/v2/organizations/${ORG}/workspaces/converge-inv`, {
    headers: { Authorization: `Bearer ${sandbox.rootToken}` },
  });
  return res.status === 200
    ? ((await res.json()) as { data: { attributes: { locked: boolean } } })
    : undefined;
}

describe("the workspace holding the manifest's own inventory", () => {
  it.each([
    ['deleted', 'metadata: { name: converge-inv, ensure: absent }\nspec: { deletion: force }'],
    ['locked', 'metadata: { name: converge-inv }\nspec: { locked: true }'],
    ['unlocked', 'metadata: { name: converge-inv }\nspec: { locked: false }'],
  ])('is refused at its line when the manifest has it %s, before anything is changed', async (_what, doc) => {
    const first = setUp([role]);
    expect((await runCli(['apply', '-f', first.dir, '--auto-approve'], first.env)).code).toBe(0);
    const { dir, env } = setUp([role, `apiVersion: converge/v1\nkind: Workspace\n${doc}\n`]);
    const file = path.join(dir, 'm.yaml');
    for (const command of [
      ['plan', '-f', dir],
      ['apply', '-f', dir, '--auto-approve'],
    ]) {
      const r = await runCli(command, env);
      expect(r.code, r.stdout).toBe(1);
      expect(r.stderr).toContain(
        `${file}:7:1: Workspace/${ORG}/converge-inv holds Converge's inventory (CONVERGE_INVENTORY): the manifest that uses the inventory cannot also manage its workspace`,
      );
    }
    // Still there, unlocked, with its records.
    expect((await inventoryWorkspace())?.data.attributes.locked).toBe(false);
    const listed = await runCli(['inventory', 'list'], env);
    expect(listed.stdout).toContain('AclRole/default/home-role');
  });

  it('may still be managed by a manifest whose inventory is elsewhere', async () => {
    const { dir, env } = setUp([
      `apiVersion: converge/v1\nkind: Workspace\nmetadata: { name: converge-inv }\nspec: { description: kept }\n`,
    ]);
    const r = await runCli(['plan', '-f', dir], { ...env, CONVERGE_INVENTORY: undefined });
    expect(r.code, r.stderr).toBe(0);
  });
});
