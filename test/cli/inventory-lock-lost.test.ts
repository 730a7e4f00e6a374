/**
 * A workspace inventory whose lock someone releases while an apply runs (`converge inventory unlock`
 * from another shell, a force-unlock on the service).
 * - Left free: the apply takes the lock again, reads the inventory as it is now, merges its own
 *   records into what another run may have written meanwhile, and says so.
 * - Taken by another run: the changes that landed are reported, the records are not written over
 *   that run's, the objects created are named with the command that records them, and the apply's
 *   own release leaves the other run's lock alone.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { inventoryFromEnv } from '../../src/engine/inventory-backend.js';
import { lockInventory } from '../../src/engine/workflow.js';
import { runReconcile } from '../../src/reconcile/loop.js';
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

/** Three roles to create, and an environment whose inventory is the workspace `inventory`. */
function setUp(inventory: string, names: string[]) {
  const dir = tempDir('converge-lock-lost-');
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
    CONVERGE_INVENTORY: `workspace:${ORG}/${inventory}`,
  };
  return { dir, env };
}

async function forceUnlock(inventory: string): Promise<string> {
  const ws = await workspaces(`/organizations/${ORG}/workspaces/${inventory}`);
  expect((await workspaces(`/workspaces/${ws.body.data.id}/actions/force-unlock`, 'POST')).status).toBe(200);
  return ws.body.data.id;
}

async function recorded(env: NodeJS.ProcessEnv): Promise<string[]> {
  const inventory = inventoryFromEnv(env);
  try {
    await inventory.open();
    return inventory.objects.entries().map(([address]) => address);
  } finally {
    await inventory.close();
  }
}

async function serialOf(env: NodeJS.ProcessEnv): Promise<number> {
  const inventory = inventoryFromEnv(env);
  try {
    await inventory.open();
    return inventory.serial;
  } finally {
    await inventory.close();
  }
}

it('takes a lock left free again and merges its records into what another run wrote meanwhile', async () => {
  const inventory = 'inventory-left-free';
  const { dir, env } = setUp(inventory, ['free-a', 'free-b', 'free-c']);
  onFirstCreate = async () => {
    await forceUnlock(inventory);
    // Another run takes the free lock, records an object of its own, and goes.
    const other = await lockInventory({ env, command: 'converge import (another run)', timeoutMs: 5_000 });
    other.inventory.objects.record('AclRole/default/other-run', {
      kind: 'AclRole',
      key: { kind: 'AclRole', namespace: 'default', name: 'other-run' },
      owned: true,
      origin: 'created',
    });
    await other.inventory.save();
    otherSerial = other.inventory.serial;
    await other.release();
  };
  let otherSerial = 0;
  const r = await runCli(['apply', '-f', dir, '--auto-approve', '--parallelism', '1'], env);
  await released;
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout + r.stderr).toContain('Apply complete: 3 applied');
  expect(r.stderr).toContain(
    `Note: the lock of workspace ${ORG}/${inventory} was released by someone else during this run; Converge took it again and merged`,
  );
  // This run's three and the other run's one: neither run's records were lost.
  expect(await recorded(env)).toEqual([
    'AclRole/default/free-a',
    'AclRole/default/free-b',
    'AclRole/default/free-c',
    'AclRole/default/other-run',
  ]);
  // Its write counts after the other run's: a plan that run's inventory saved is older than it.
  expect(otherSerial).toBeGreaterThan(0);
  expect(await serialOf(env)).toBeGreaterThan(otherSerial);
  // The lock taken again was released at the end.
  const ws = await workspaces(`/organizations/${ORG}/workspaces/${inventory}`);
  expect(ws.body.data.attributes.locked).toBe(false);
});

it('reports what landed, names the unrecorded objects, and does not release the next holder’s lock', async () => {
  const names = ['lost-a', 'lost-b', 'lost-c'];
  const { dir, env } = setUp(INVENTORY, names);
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
  // One command for all of them, that works as printed.
  const suggested = /^ {2}(converge import .*)$/m.exec(r.stderr)?.[1];
  expect(suggested).toBe(
    `converge import -f ${dir} AclRole/default/lost-a AclRole/default/lost-b AclRole/default/lost-c`,
  );
  // The lock the other run took is still its own: this run's release looked before unlocking.
  const ws = await workspaces(`/organizations/${ORG}/workspaces/${INVENTORY}`);
  expect(ws.body.data.attributes.locked).toBe(true);
  // Once that run is done (its lock released), the command records every object.
  await forceUnlock(INVENTORY);
  const adopted = await runCli(suggested!.split(' ').slice(1), env);
  expect(adopted.code, adopted.stderr).toBe(0);
  expect(await recorded(env)).toEqual(expect.arrayContaining(names.map((n) => `AclRole/default/${n}`)));
});

it('is said in the reconcile loop’s log too, when a cycle takes a lock left free again', async () => {
  const inventory = 'inventory-left-free-loop';
  const { dir, env } = setUp(inventory, ['loop-a', 'loop-b', 'loop-c']);
  onFirstCreate = () => forceUnlock(inventory).then(() => undefined);
  const stop = new AbortController();
  const text: string[] = [];
  const lines = () =>
    text
      .join('')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  const loop = await runReconcile(
    { paths: [dir], intervalMs: 60_000, parallelism: 1, env, signal: stop.signal },
    { stdout: { write: (t: string) => text.push(t) } },
  );
  const deadline = Date.now() + 20_000;
  while (!lines().some((l) => l.type === 'cycle') && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 20));
  stop.abort();
  await loop.done;
  await released;
  const cycle = lines().find((l) => l.type === 'cycle');
  expect(cycle?.outcome, JSON.stringify(lines())).toBe('corrected');
  const retaken = lines().filter((l) => l.type === 'inventory_lock_retaken');
  expect(retaken).toEqual([
    expect.objectContaining({ cycle: 1, inventory: `workspace ${ORG}/${inventory}` }),
  ]);
  expect(await recorded(env)).toEqual([
    'AclRole/default/loop-a',
    'AclRole/default/loop-b',
    'AclRole/default/loop-c',
  ]);
});
