/**
 * A directory group whose create landed with its answer lost for good (the run's retry budget spent)
 * was reported failed and never recorded as Converge's: the next apply of the saved plan refused it
 * as made by hand, and `--prune` could never delete it. Now such a create is read back once, and one
 * whose read back fails too is recorded anyway (a record of an object that is not there is reported
 * and dropped by the plan). Under heavy faults, every group that exists is in the inventory.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, config: { faults: { failRate: 0.2, resetRate: 0.2, seed: 1 } } });
});
afterAll(async () => sandbox?.close());

/** The groups that exist, read through the same faults: bounded tries until one is answered. */
async function liveGroups(): Promise<string[]> {
  for (let i = 0; i < 50; i++) {
    try {
      const res = await fetch(`${sandbox.url}/v1/auth/ldap/groups`, {
        method: 'LIST',
        headers: { 'X-Vault-Token': sandbox.rootToken },
      });
      if (res.status === 404) return [];
      if (res.status === 200) return ((await res.json()) as { data: { keys: string[] } }).data.keys;
    } catch {
      // A dropped connection: try again.
    }
  }
  throw new Error('the group list was never answered');
}

it('records every group that exists, including those whose create answer was lost', async () => {
  const dir = tempDir('converge-lost-upsert-');
  const docs = Array.from(
    { length: 30 },
    (_, i) =>
      `apiVersion: converge/v1\nkind: LdapGroup\nmetadata: { name: g-${i} }\nspec: { policies: [p${i}] }\n`,
  );
  writeFileSync(path.join(dir, 'groups.yaml'), docs.join('---\n'));
  const env = { ...sandbox.env(), NO_COLOR: '1', CONVERGE_STATE_DIR: tempDir('converge-lost-upsert-state-') };
  const planFile = path.join(dir, 'plan.bin');
  expect((await runCli(['plan', '-f', dir, '-out', planFile], env)).code).toBe(0);
  // A few applies of the saved plan: each lands some creates, loses some answers.
  for (let i = 0; i < 3; i++) {
    const r = await runCli(['apply', planFile], env);
    // Never refused as "created since the plan, and not recorded as Converge's": it was Converge's.
    expect(r.stdout + r.stderr).not.toContain('not recorded as Converge');
  }
  const live = await liveGroups();
  expect(live.length).toBeGreaterThan(0);
  const listed = await runCli(['inventory', 'list', '--json'], env);
  expect(listed.code, listed.stderr).toBe(0);
  const recorded = (JSON.parse(listed.stdout) as { objects: { address: string }[] }).objects.map(
    (o) => o.address,
  );
  for (const name of live) expect(recorded).toContain(`LdapGroup/ldap/${name}`);
});
