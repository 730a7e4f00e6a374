/**
 * A workspace inventory whose lock someone releases while an apply runs (`converge inventory unlock`
 * from another shell, a force-unlock on the service). The changes that landed are reported, the
 * records are not written over whatever another run may have written since, and the objects created
 * are named with the command that records them; the apply's own release leaves the workspace alone.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

const ORG = 'lock-lost-org';
const INVENTORY = 'converge-inventory';
let sandbox: RunningSandbox;
/** Run once, when the first role create is answered: the hostile interleaving. */
let onFirstCreate: (() => Promise<void>) | undefined;
let released: Promise<void> | undefined;

beforeAll(async () => {
  sandbox = await startSandbox({
    port: 0,
    config: {
      workspaces: { organizations: [{ name: ORG }] },
      // Slow role writes: the release below lands while the apply still has creates to make.
      faults: { services: { registry: { latencyMs: 150 } } },
    },
    log: (line) => {
      if (onFirstCreate && /^PUT \/v1\/acl\/role\S* \d{3}/.test(line)) {
        released = onFirstCreate();
        onFirstCreate = undefined;
      }
    },
  });
});
afterAll(async () => sandbox?.close());

async function workspaces(p: string, method = 'GET') {
  const res = await fetch(`${sandbox.url}/api/v2${p}`, {
    method,
    headers: { Authorization: `Bearer ${sandbox.rootToken}`, 'Content-Type': 'application/vnd.api+json' },
  });
  return {
    status: res.status,
    body: (await res.json()) as { data: { id: string; attributes: Record<string, unknown> } },
  };
}

it('reports what landed, names the unrecorded objects, and does not release the next holder’s lock', async () => {
  const dir = tempDir('converge-lock-lost-');
  const names = ['lost-a', 'lost-b', 'lost-c'];
  writeFileSync(
    path.join(dir, 'roles.yaml'),
    names
      .map(
        (n) => `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: ${n} }\nspec: { Description: x }\n`,
      )
      .join('---\n'),
  );
  const env = {
    ...sandbox.env(),
    NO_COLOR: '1',
    CONVERGE_STATE_DIR: tempDir('converge-lock-lost-state-'),
    CONVERGE_INVENTORY: `workspace:${ORG}/${INVENTORY}`,
  };
  onFirstCreate = async () => {
    // Another operator releases the lock, and another run takes it (here: the admin, by hand).
    const ws = await workspaces(`/organizations/${ORG}/workspaces/${INVENTORY}`);
    expect((await workspaces(`/workspaces/${ws.body.data.id}/actions/force-unlock`, 'POST')).status).toBe(
      200,
    );
    expect((await workspaces(`/workspaces/${ws.body.data.id}/actions/lock`, 'POST')).status).toBe(200);
  };
  const r = await runCli(['apply', '-f', dir, '--auto-approve', '--parallelism', '1'], env);
  await released;
  expect(r.code).toBe(1);
  // What landed is said, then why it is not recorded, and how to record it.
  expect(r.stdout + r.stderr).toContain('Apply complete: 3 applied');
  expect(r.stderr).toContain(
    `Error: the changes above landed, but the inventory was not saved: the lock of workspace ${ORG}/${INVENTORY} was released by someone else during this run`,
  );
  expect(r.stderr).toContain(
    'adopt each with `converge import ADDRESS` (AclRole/default/lost-a, AclRole/default/lost-b, AclRole/default/lost-c)',
  );
  // The lock the other run took is still its own: this run's release looked before unlocking.
  const ws = await workspaces(`/organizations/${ORG}/workspaces/${INVENTORY}`);
  expect(ws.body.data.attributes.locked).toBe(true);
});
