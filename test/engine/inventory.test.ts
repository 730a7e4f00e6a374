/**
 * The inventory through the library API against the sandbox: what an apply records (objects Converge
 * created, with their live ids; deletions dropped), what it never adopts, and how a file anyone may
 * have written is read (version 1, hostile content).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apply, LocalInventory, lockInventory, plan } from '../../src/engine/index.js';
import { mergedRecords } from '../../src/engine/inventory.js';
import type { InventoryEntry } from '../../src/engine/inventory-document.js';
import { lockReason } from '../../src/common/lock-reason.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { tempDir } from '../support/temp-dirs.js';

let sandbox: RunningSandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
});
afterAll(async () => {
  await sandbox?.close();
});

function tmp(prefix: string): string {
  return tempDir(prefix);
}

function roles(...names: string[]): string {
  const dir = tmp('converge-inv-manifest-');
  const docs = names.map(
    (n) =>
      `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: ${n} }\nspec: { Description: made by a test }\n`,
  );
  writeFileSync(path.join(dir, 'roles.yaml'), docs.join('---\n'));
  return dir;
}

async function registryRole(name: string): Promise<{ ID: string } | undefined> {
  const res = await fetch(`${sandbox.url}/v1/acl/role/name/${name}`, {
    headers: { 'X-Consul-Token': sandbox.env().CONVERGE_REGISTRY_TOKEN! },
  });
  return res.status === 200 ? ((await res.json()) as { ID: string }) : undefined;
}

/** One locked apply, as `converge apply --prune` makes it. */
async function applyLocked(env: NodeJS.ProcessEnv, dir: string, prune = false) {
  const { inventory, release } = await lockInventory({ env, command: 'test', timeoutMs: 1000 });
  try {
    const run = await plan([dir], { env, prune, writeOnly: inventory, managed: inventory.objects });
    try {
      expect(run.plan.problems).toEqual([]);
      const result = await apply(run, { inventory });
      return { plan: run.plan, result };
    } finally {
      await run.connections.close();
    }
  } finally {
    await release();
  }
}

/** Writes a format-2 inventory file holding `content` beside the format fields. */
function writeInventory(stateDir: string, content: Record<string, unknown>): void {
  writeFileSync(
    path.join(stateDir, 'inventory.json'),
    JSON.stringify({ format: 'converge-inventory', format_version: 2, objects: {}, ...content }),
  );
}

function readInventory(stateDir: string) {
  return JSON.parse(readFileSync(path.join(stateDir, 'inventory.json'), 'utf8')) as {
    format_version: number;
    objects: Record<string, { kind: string; id?: string; owned: boolean }>;
    deleted?: Record<string, string>;
  };
}

describe('the inventory an apply keeps', () => {
  it('records each object Converge creates with its live id, and drops it once deleted', async () => {
    const stateDir = tmp('converge-inv-state-');
    const env = { ...sandbox.env(), CONVERGE_STATE_DIR: stateDir };
    await applyLocked(env, roles('inv-a', 'inv-b'));
    const file = readInventory(stateDir);
    expect(file.format_version).toBe(2);
    const live = await registryRole('inv-b');
    expect(file.objects['AclRole/default/inv-b']).toMatchObject({
      kind: 'AclRole',
      owned: true,
      id: live!.ID,
    });
    expect(Object.keys(file.objects).sort()).toEqual(['AclRole/default/inv-a', 'AclRole/default/inv-b']);

    const { plan: pruned } = await applyLocked(env, roles('inv-a'), true);
    expect(pruned.changes.filter((c) => c.prune).map((c) => c.address)).toEqual(['AclRole/default/inv-b']);
    expect(await registryRole('inv-b')).toBeUndefined();
    expect(Object.keys(readInventory(stateDir).objects)).toEqual(['AclRole/default/inv-a']);
  });

  it('never adopts an object it did not create: an update records it as not its own, and prune leaves it alone', async () => {
    const stateDir = tmp('converge-inv-state-');
    const env = { ...sandbox.env(), CONVERGE_STATE_DIR: stateDir };
    await fetch(`${sandbox.url}/v1/acl/role`, {
      method: 'PUT',
      headers: { 'X-Consul-Token': sandbox.env().CONVERGE_REGISTRY_TOKEN! },
      body: JSON.stringify({ Name: 'inv-foreign', Description: 'made by hand' }),
    });
    const { plan: updated } = await applyLocked(env, roles('inv-foreign', 'inv-mine'));
    expect(updated.changes.find((c) => c.key.name === 'inv-foreign')?.action).toBe('update');
    const objects = readInventory(stateDir).objects as Record<string, { owned: boolean }>;
    expect(Object.fromEntries(Object.entries(objects).map(([address, e]) => [address, e.owned]))).toEqual({
      'AclRole/default/inv-foreign': false,
      'AclRole/default/inv-mine': true,
    });

    const { plan: pruned } = await applyLocked(env, roles('inv-mine'), true);
    expect(pruned.changes.filter((c) => c.action === 'delete')).toEqual([]);
    expect(await registryRole('inv-foreign')).toBeDefined();
  });
});

describe('reading an inventory file', () => {
  const digest = 'ab'.repeat(32);

  it('reads a version-1 file: its digests are kept, its objects are not taken as Converge’s own', async () => {
    const stateDir = tmp('converge-inv-v1-');
    writeFileSync(
      path.join(stateDir, 'inventory.json'),
      JSON.stringify({
        format: 'converge-inventory',
        format_version: 1,
        writeOnly: { 'LdapConfig/ldap': { bindpass: digest } },
      }),
    );
    const inventory = await new LocalInventory({ CONVERGE_STATE_DIR: stateDir }).open();
    expect(inventory.recorded('LdapConfig/ldap', 'bindpass')).toBe(digest);
    expect(inventory.objects.entries()).toEqual([
      [
        'LdapConfig/ldap',
        {
          kind: 'LdapConfig',
          key: { kind: 'LdapConfig', name: 'ldap' },
          owned: false,
          writeOnly: { bindpass: digest },
        },
      ],
    ]);
    // Written back as version 2 once something changes.
    inventory.record('LdapConfig/ldap', 'bindpass', 'cd'.repeat(32));
    await inventory.save();
    expect(readInventory(stateDir).format_version).toBe(2);
  });

  it.each([
    [
      'a digest that is not one',
      {
        objects: {
          'AclRole/default/x': {
            key: { kind: 'AclRole', name: 'x' },
            owned: true,
            writeOnly: { a: 'not-hex' },
          },
        },
      },
      'is not a SHA-256 hex digest',
    ],
    [
      'an object without a key',
      { objects: { 'AclRole/default/x': { owned: true } } },
      '"key" must have a kind and a name',
    ],
    [
      'an ownership that is not a boolean',
      { objects: { 'AclRole/default/x': { key: { kind: 'AclRole', name: 'x' }, owned: 'yes' } } },
      '"owned" must be true or false',
    ],
    ['a format version from the future', { format_version: 99, objects: {} }, 'format_version 99'],
    ['deletions that are not a map', { objects: {}, deleted: ['x'] }, '"deleted" must be an object'],
    [
      'a deletion time that is not a time',
      { objects: {}, deleted: { 'AclRole/default/x': 'yesterday-ish' } },
      '"deleted" of "AclRole/default/x" must be a time',
    ],
    ['a write count below 0', { objects: {}, serial: -1 }, '"serial" must be a whole number from 0 up to'],
    [
      'a write count past what a number holds exactly',
      { objects: {}, serial: 9007199254740991 },
      '"serial" must be a whole number from 0 up to',
    ],
    [
      'a write count that is text',
      { objects: {}, serial: '7' },
      '"serial" must be a whole number from 0 up to',
    ],
    [
      'a deletion serial past what a number holds exactly',
      {
        objects: {},
        deleted: { 'AclRole/default/x': '2020-01-01T00:00:00Z' },
        deleted_serial: { 'AclRole/default/x': 1e300 },
      },
      '"deleted_serial" of "AclRole/default/x" must be a whole number from 0 up to',
    ],
  ])('refuses %s, naming the file', async (_what, content, message) => {
    const stateDir = tmp('converge-inv-hostile-');
    const file = path.join(stateDir, 'inventory.json');
    writeFileSync(file, JSON.stringify({ format: 'converge-inventory', format_version: 2, ...content }));
    const opened = new LocalInventory({ CONVERGE_STATE_DIR: stateDir }).open();
    await expect(opened).rejects.toThrow(file);
    await expect(opened).rejects.toThrow(message);
  });

  it('remembers at most the newest 1,000 deletions', async () => {
    const stateDir = tmp('converge-inv-deleted-');
    const deleted = Object.fromEntries(
      Array.from({ length: 1000 }, (_, i) => [
        `AclRole/default/old-${i}`,
        new Date(Date.UTC(2020, 0, 1, 0, 0, i)).toISOString(),
      ]),
    );
    writeFileSync(
      path.join(stateDir, 'inventory.json'),
      JSON.stringify({ format: 'converge-inventory', format_version: 2, objects: {}, deleted }),
    );
    const inventory = await new LocalInventory({ CONVERGE_STATE_DIR: stateDir }).open();
    inventory.recordApplied([
      { address: 'AclRole/default/new', key: { kind: 'AclRole', name: 'new' }, action: 'delete' },
    ] as never);
    await inventory.save();
    const kept = readInventory(stateDir).deleted!;
    expect(Object.keys(kept)).toHaveLength(1000);
    expect(kept['AclRole/default/new']).toBeDefined();
    expect(kept['AclRole/default/old-0']).toBeUndefined();
  });

  it('keeps deletion times in one form, drops one far in the future, and forgets one when the object is made again', async () => {
    const stateDir = tmp('converge-inv-deleted-times-');
    writeInventory(stateDir, {
      deleted: {
        'AclRole/default/a': '2020-01-01T00:00:00+02:00',
        'AclRole/default/future': '9999-12-31',
        'AclRole/default/b': '2020-01-02T00:00:00.000Z',
      },
    });
    const inventory = await new LocalInventory({ CONVERGE_STATE_DIR: stateDir }).open();
    expect(inventory.deletion('AclRole/default/a')?.at).toBe('2019-12-31T22:00:00.000Z');
    expect(inventory.deletion('AclRole/default/future')).toBeUndefined();
    inventory.recordApplied([
      {
        address: 'AclRole/default/b',
        key: { kind: 'AclRole', name: 'b', namespace: 'default' },
        action: 'create',
        id: 'x',
      },
    ]);
    expect(inventory.deletion('AclRole/default/b')).toBeUndefined();
    await inventory.save();
    expect(Object.keys(readInventory(stateDir).deleted ?? {})).toEqual(['AclRole/default/a']);
  });

  it('counts its writes, and records with each deletion the write that recorded it', async () => {
    const stateDir = tmp('converge-inv-serial-');
    const inventory = await new LocalInventory({ CONVERGE_STATE_DIR: stateDir }).open();
    expect(inventory.serial).toBe(0);
    const role = (name: string) => ({
      address: `AclRole/default/${name}`,
      key: { kind: 'AclRole', name, namespace: 'default' },
    });
    inventory.recordApplied([
      { ...role('a'), action: 'create', id: 'a' },
      { ...role('b'), action: 'create', id: 'b' },
    ]);
    await inventory.save();
    expect(inventory.serial).toBe(1);
    // Nothing changed: no write, and the count stays.
    await inventory.save();
    inventory.recordApplied([{ ...role('a'), action: 'delete' }]);
    await inventory.save();
    const reopened = await new LocalInventory({ CONVERGE_STATE_DIR: stateDir }).open();
    expect(reopened.serial).toBe(2);
    expect(reopened.deletion('AclRole/default/a')).toMatchObject({ serial: 2 });
    // A serial for an address that has no deletion time is not kept.
    const written = JSON.parse(readFileSync(path.join(stateDir, 'inventory.json'), 'utf8'));
    written.deleted_serial['AclRole/default/ghost'] = 5;
    writeFileSync(path.join(stateDir, 'inventory.json'), JSON.stringify(written));
    const third = await new LocalInventory({ CONVERGE_STATE_DIR: stateDir }).open();
    expect(third.deletion('AclRole/default/ghost')).toBeUndefined();
    // Made again: the deletion and its serial go.
    third.recordApplied([{ ...role('a'), action: 'create', id: 'a2' }]);
    await third.save();
    const last = JSON.parse(readFileSync(path.join(stateDir, 'inventory.json'), 'utf8'));
    expect(last).toMatchObject({ serial: 3, deleted: {}, deleted_serial: {} });
  });

  it('drops a deletion recorded by a write the inventory has not made yet', async () => {
    const stateDir = tmp('converge-inv-future-serial-');
    writeInventory(stateDir, {
      serial: 3,
      deleted: {
        'AclRole/default/a': '2020-01-01T00:00:00.000Z',
        'AclRole/default/b': '2020-01-01T00:00:00.000Z',
      },
      deleted_serial: { 'AclRole/default/a': 3, 'AclRole/default/b': 999 },
    });
    const inventory = await new LocalInventory({ CONVERGE_STATE_DIR: stateDir }).open();
    expect(inventory.deletion('AclRole/default/a')).toEqual({ at: '2020-01-01T00:00:00.000Z', serial: 3 });
    // Its time is kept (the older rule decides for it), its impossible serial is not.
    expect(inventory.deletion('AclRole/default/b')).toEqual({ at: '2020-01-01T00:00:00.000Z' });
  });

  it('keeps an address named __proto__ as an address, without touching any prototype', async () => {
    const stateDir = tmp('converge-inv-proto-');
    writeFileSync(
      path.join(stateDir, 'inventory.json'),
      `{"format":"converge-inventory","format_version":2,"objects":{"__proto__":{"key":{"kind":"AclRole","name":"x"},"owned":true,"writeOnly":{"polluted":"${digest}"}}}}`,
    );
    const inventory = await new LocalInventory({ CONVERGE_STATE_DIR: stateDir }).open();
    expect(inventory.objects.entries().map(([a]) => a)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).owned).toBeUndefined();
  });
});

describe('the reason a workspace inventory is locked with', () => {
  it('names the CI job (GitHub Actions, GitLab CI), the host, the process and the start time', () => {
    const since = new Date('2030-01-02T03:04:05.000Z');
    const github = lockReason(
      'converge apply -f infra/',
      { GITHUB_SERVER_URL: 'https://github.com', GITHUB_REPOSITORY: 'acme/infra', GITHUB_RUN_ID: '42' },
      since,
    );
    expect(github).toBe(
      `converge apply -f infra/ in https://github.com/acme/infra/actions/runs/42 on host ${os.hostname()}, pid ${process.pid}, since 2030-01-02T03:04:05.000Z`,
    );
    expect(
      lockReason('converge apply', { CI_JOB_URL: 'https://gitlab.example/acme/infra/-/jobs/7' }, since),
    ).toContain(' in https://gitlab.example/acme/infra/-/jobs/7 on host ');
    expect(lockReason('converge apply', {}, since)).toBe(
      `converge apply on host ${os.hostname()}, pid ${process.pid}, since 2030-01-02T03:04:05.000Z`,
    );
  });
});

describe('merging a run’s records into an inventory another run changed meanwhile', () => {
  const entry = (name: string, id?: string): InventoryEntry => ({
    kind: 'AclRole',
    key: { kind: 'AclRole', namespace: 'default', name },
    owned: true,
    origin: 'created',
    writeOnly: {},
    ...(id !== undefined ? { id } : {}),
  });
  const at = (name: string) => `AclRole/default/${name}`;

  it('takes what this run added, changed and dropped, and everything else as it is now', () => {
    const opened = {
      [at('kept')]: entry('kept'),
      [at('dropped')]: entry('dropped'),
      [at('changed')]: entry('changed'),
    };
    const ours = {
      [at('kept')]: entry('kept'),
      [at('changed')]: entry('changed', 'id-2'),
      [at('added')]: entry('added'),
    };
    // Meanwhile another run added one, dropped `kept` (it deleted it) and left the rest.
    const latest = {
      [at('dropped')]: entry('dropped'),
      [at('changed')]: entry('changed'),
      [at('theirs')]: entry('theirs'),
    };
    const merged = mergedRecords(opened, ours, latest);
    expect(Object.keys(merged).sort()).toEqual([at('added'), at('changed'), at('theirs')]);
    expect(merged[at('changed')]!.id).toBe('id-2');
  });
});
