/** The registry client against the sandbox over real HTTP on 127.0.0.1. */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectionError, connectionFromEnv, HttpStatusError } from '../../src/clients/http/index.js';
import { registryService } from '../../src/clients/registry/definition.js';
import { type Policy, RegistryClient } from '../../src/clients/registry/client.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { caught, everyRendering } from './helpers.js';

const ROOT = 'root-secret-7d2e91';
const READER = 'reader-secret-a83b20';

let sandbox: Awaited<ReturnType<typeof startSandbox>>;
let root: RegistryClient;
let reader: RegistryClient;
let serviceRead: Policy;

/** A role name no other test uses. */
const unique = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;

beforeAll(async () => {
  sandbox = await startSandbox({
    port: 0,
    token: ROOT,
    config: {
      registry: {
        policies: [
          { Name: 'service-read', Description: 'read services' },
          { Name: 'node-read' },
          { Name: 'team-read', Namespace: 'team-a' },
        ],
      },
      tokens: [{ name: 'reader', secret: READER, registry: { acl: 'read' } }],
    },
  });
  const endpoint = connectionFromEnv(registryService, sandbox.env());
  root = RegistryClient.fromConnection({ address: endpoint.address, token: ROOT });
  reader = RegistryClient.fromConnection({ address: endpoint.address, token: READER });
  serviceRead = (await root.readPolicyByName('service-read'))!;
});

afterAll(async () => {
  await root?.close();
  await reader?.close();
  await sandbox?.close();
});

describe('roles', () => {
  it('creates a role and reads it back by id and by name', async () => {
    const name = unique('web');
    const created = await root.createRole({
      Name: name,
      Description: 'web tier',
      Policies: [{ Name: 'service-read' }],
      ServiceIdentities: [{ ServiceName: 'web', Datacenters: ['dc1'] }],
      NodeIdentities: [{ NodeName: 'node-1', Datacenter: 'dc1' }],
    });
    expect(created.ID).toMatch(/^[0-9a-f-]{36}$/);
    expect(created).toMatchObject({
      Name: name,
      Description: 'web tier',
      Policies: [{ ID: serviceRead.ID, Name: 'service-read' }],
      ServiceIdentities: [{ ServiceName: 'web', Datacenters: ['dc1'] }],
      NodeIdentities: [{ NodeName: 'node-1', Datacenter: 'dc1' }],
    });
    expect(created.Hash).toEqual(expect.any(String));
    expect(created.CreateIndex).toBe(created.ModifyIndex);

    expect(await root.readRole(created.ID)).toEqual(created);
    expect(await root.readRoleByName(name)).toEqual(created);
  });

  it('gives undefined for a role that does not exist', async () => {
    expect(await root.readRole(randomUUID())).toBeUndefined();
    expect(await root.readRoleByName(unique('missing'))).toBeUndefined();
  });

  it('updates a role, moving its ModifyIndex', async () => {
    const created = await root.createRole({ Name: unique('api'), Description: 'before' });
    const updated = await root.updateRole(created.ID, {
      ID: created.ID,
      Name: created.Name,
      Description: 'after',
      Policies: [{ ID: serviceRead.ID }],
    });
    expect(updated).toMatchObject({ ID: created.ID, Description: 'after', CreateIndex: created.CreateIndex });
    expect(updated.Policies).toEqual([{ ID: serviceRead.ID, Name: 'service-read' }]);
    expect(updated.ModifyIndex).toBeGreaterThan(created.ModifyIndex!);
    expect((await root.readRole(created.ID))?.Description).toBe('after');
  });

  it('refuses an update whose body ID differs from the path', async () => {
    const created = await root.createRole({ Name: unique('mismatch') });
    const err = await caught(root.updateRole(created.ID, { ID: randomUUID(), Name: created.Name }));
    expect(err).toBeInstanceOf(HttpStatusError);
    expect(err).toMatchObject({
      status: 400,
      serviceMessage: 'Role ID in URL and payload do not match',
      attempts: 1,
    });
    expect((err as Error).message).toBe(
      `registry: PUT /v1/acl/role/${created.ID} → 400 Role ID in URL and payload do not match`,
    );
  });

  it("reports the registry's validation failures without retrying them", async () => {
    const name = unique('dup');
    await root.createRole({ Name: name });
    const before = root.requestCount;
    const err = await caught(root.createRole({ Name: name }));
    expect(err).toMatchObject({
      status: 500,
      serviceMessage: `Invalid Role: A Role with Name "${name}" already exists`,
    });
    expect(root.requestCount - before).toBe(1);
    await expect(
      root.createRole({ Name: 'x', Policies: [{ Name: 'no-such-policy' }] }),
    ).rejects.toMatchObject({
      status: 500,
      serviceMessage: 'No such ACL policy with name "no-such-policy"',
    });
  });

  it('deletes a role (true), and says true again for a missing one', async () => {
    const created = await root.createRole({ Name: unique('gone') });
    expect(await root.deleteRole(created.ID)).toBe(true);
    expect(await root.readRole(created.ID)).toBeUndefined();
    expect(await root.deleteRole(created.ID)).toBe(true);
  });

  it('lists roles, and filters them by policy', async () => {
    const linked = await root.createRole({ Name: unique('linked'), Policies: [{ Name: 'node-read' }] });
    const other = await root.createRole({ Name: unique('other') });
    const all = await root.listRoles();
    expect(all.map((r) => r.ID)).toEqual(expect.arrayContaining([linked.ID, other.ID]));
    const nodeRead = await root.readPolicyByName('node-read');
    const filtered = await root.listRoles({ policy: nodeRead!.ID });
    expect(filtered.map((r) => r.ID)).toContain(linked.ID);
    expect(filtered.map((r) => r.ID)).not.toContain(other.ID);
    expect(await root.listRoles({ policy: randomUUID() })).toEqual([]);
  });
});

describe('namespaces', () => {
  it('keeps roles apart per namespace, and lists all of them with *', async () => {
    const name = unique('ns');
    const inTeam = await root.createRole(
      { Name: name, Policies: [{ Name: 'team-read' }] },
      { namespace: 'team-a' },
    );
    expect(inTeam.Namespace ?? 'team-a').toBe('team-a');
    expect(await root.readRoleByName(name)).toBeUndefined();
    expect((await root.readRoleByName(name, { namespace: 'team-a' }))?.ID).toBe(inTeam.ID);
    expect((await root.listRoles({ namespace: 'team-a' })).map((r) => r.ID)).toContain(inTeam.ID);
    expect((await root.listRoles()).map((r) => r.ID)).not.toContain(inTeam.ID);
    expect((await root.listRoles({ namespace: '*' })).map((r) => r.ID)).toContain(inTeam.ID);
    expect(await root.deleteRole(inTeam.ID, { namespace: 'team-a' })).toBe(true);
  });

  it('lets a body Namespace outrank the ns query', async () => {
    const name = unique('body-ns');
    await root.createRole({ Name: name, Namespace: 'team-b' }, { namespace: 'team-a' });
    expect(await root.readRoleByName(name, { namespace: 'team-a' })).toBeUndefined();
    expect(await root.readRoleByName(name, { namespace: 'team-b' })).toBeDefined();
  });

  it('sends a default namespace as the header, which the ns query outranks', async () => {
    const scoped = RegistryClient.fromConnection({
      address: sandbox.url,
      token: ROOT,
      defaultNamespace: 'team-c',
    });
    try {
      const name = unique('hdr');
      await scoped.createRole({ Name: name });
      expect(await root.readRoleByName(name, { namespace: 'team-c' })).toBeDefined();
      expect(await scoped.readRoleByName(name)).toBeDefined();
      expect(await scoped.readRoleByName(name, { namespace: 'default' })).toBeUndefined();
    } finally {
      await scoped.close();
    }
  });
});

describe('policies', () => {
  it('lists policies and reads one by id and by name', async () => {
    const listed = await root.listPolicies();
    expect(listed.map((p) => p.Name)).toEqual(expect.arrayContaining(['service-read', 'node-read']));
    expect(listed.map((p) => p.Name)).not.toContain('team-read');
    expect(serviceRead).toMatchObject({ Name: 'service-read', Description: 'read services' });
    expect(await root.readPolicy(serviceRead.ID)).toMatchObject({ ID: serviceRead.ID, Name: 'service-read' });
    expect(await root.readPolicy(randomUUID())).toBeUndefined();
    expect(await root.readPolicyByName('no-such-policy')).toBeUndefined();
  });

  it('reads namespaced policies', async () => {
    expect((await root.listPolicies({ namespace: 'team-a' })).map((p) => p.Name)).toContain('team-read');
    expect(await root.readPolicyByName('team-read', { namespace: 'team-a' })).toMatchObject({
      Name: 'team-read',
    });
  });
});

describe('permissions', () => {
  it("turns a 403 into a typed error carrying the registry's message, without the token", async () => {
    const err = await caught(reader.createRole({ Name: unique('denied') }));
    expect(err).toBeInstanceOf(HttpStatusError);
    expect(err).toMatchObject({
      status: 403,
      service: 'registry',
      method: 'PUT',
      path: '/v1/acl/role',
      serviceMessage: "Permission denied: token with AccessorID 'reader' lacks permission 'acl:write'",
      attempts: 1,
    });
    expect((err as Error).message).toBe(
      "registry: PUT /v1/acl/role → 403 Permission denied: token with AccessorID 'reader' lacks permission 'acl:write' " +
        '(the token in CONVERGE_REGISTRY_TOKEN lacks this permission)',
    );
    expect(everyRendering(err)).not.toContain(READER);
  });

  it('says to set the token when none is configured', async () => {
    const anonymous = RegistryClient.fromConnection({ address: sandbox.url });
    try {
      const err = await caught(anonymous.listRoles());
      expect(err).toMatchObject({ status: 403 });
      expect((err as HttpStatusError).serviceMessage).toMatch(/^Permission denied: anonymous token lacks/);
      expect((err as Error).message).toMatch(/ \(no token was sent: set CONVERGE_REGISTRY_TOKEN\)$/);
    } finally {
      await anonymous.close();
    }
  });

  it('says to check the token the registry does not know, naming where it came from', async () => {
    const wrong = 'wrong-secret-0c55d1';
    const stranger = RegistryClient.fromConnection({
      address: sandbox.url,
      token: wrong,
      tokenSource: 'connection "eu" (infra/conn.yaml:3:1)',
    });
    try {
      const err = await caught(stranger.createRole({ Name: unique('refused') }));
      expect((err as Error).message).toBe(
        'registry: PUT /v1/acl/role → 403 ACL not found ' +
          '(check the token in connection "eu" (infra/conn.yaml:3:1): the service refused it)',
      );
      expect(everyRendering(err)).not.toContain(wrong);
    } finally {
      await stranger.close();
    }
  });

  it('lets a read token read, and refuses an unknown token', async () => {
    expect(Array.isArray(await reader.listRoles())).toBe(true);
    const stranger = RegistryClient.fromConnection({ address: sandbox.url, token: 'not-a-known-token' });
    try {
      await expect(stranger.listRoles()).rejects.toMatchObject({
        status: 403,
        serviceMessage: 'ACL not found',
      });
    } finally {
      await stranger.close();
    }
  });
});

describe('blocking queries', () => {
  it('returns the index, and waits for a change past it', async () => {
    const created = await root.createRole({ Name: unique('watch'), Description: 'v1' });
    const first = await root.readRoleWithIndex(created.ID);
    expect(first.value?.ID).toBe(created.ID);
    expect(first.index).toBeGreaterThanOrEqual(created.ModifyIndex!);

    const started = performance.now();
    const watching = root.readRoleWithIndex(created.ID, { index: first.index!, wait: '10s' });
    setTimeout(() => {
      void root.updateRole(created.ID, { Name: created.Name, Description: 'v2' });
    }, 300);
    const next = await watching;
    expect(next.value?.Description).toBe('v2');
    expect(next.index).toBeGreaterThan(first.index!);
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(8000);
  });

  it('returns after the wait when nothing changes', async () => {
    const list = await root.listRolesWithIndex();
    expect(list.index).toBeGreaterThan(0);
    const started = performance.now();
    const again = await root.listRolesWithIndex({ index: list.index!, wait: '1s' });
    expect(performance.now() - started).toBeGreaterThanOrEqual(900);
    expect(again.index).toBe(list.index);
  });
});

describe('faults injected by the sandbox', () => {
  async function faulty(faults: Record<string, unknown>) {
    const server = await startSandbox({ port: 0, token: ROOT, config: { faults } });
    const client = RegistryClient.fromConnection({
      address: server.url,
      token: ROOT,
      http: { retry: { minDelayMs: 1, maxDelayMs: 5 } },
    });
    return {
      client,
      close: async () => {
        await client.close();
        await server.close();
      },
    };
  }

  it('reads through 503s', async () => {
    const { client, close } = await faulty({ failFirst: 2 });
    try {
      expect(Array.isArray(await client.listRoles())).toBe(true);
      expect(client.requestCount).toBe(3);
    } finally {
      await close();
    }
  });

  it('creates through a 429, and learns the rate limit from it', async () => {
    const { client, close } = await faulty({ rateLimit: { perSecond: 5, burst: 1 } });
    try {
      await client.createRole({ Name: unique('first') });
      const started = performance.now();
      const second = await client.createRole({ Name: unique('second') });
      expect(second.ID).toEqual(expect.any(String));
      expect(performance.now() - started).toBeGreaterThanOrEqual(150);
      expect(client.requestCount).toBe(3);
      expect(client.http.announcedRateLimit).toBe(5);
    } finally {
      await close();
    }
  });
});

describe('connection', () => {
  it('reports an unreachable registry as a ConnectionError that names the variable', async () => {
    const probe = await startSandbox({ port: 0, token: ROOT, config: {} });
    const address = probe.url;
    await probe.close();
    const gone = RegistryClient.fromConnection({
      address,
      token: ROOT,
      http: { retry: { maxRetries: 1, minDelayMs: 1 } },
    });
    try {
      const err = await caught(gone.listRoles());
      expect(err).toBeInstanceOf(ConnectionError);
      expect((err as Error).message).toContain('check CONVERGE_REGISTRY_ADDR');
      expect(everyRendering(err)).not.toContain(ROOT);
    } finally {
      await gone.close();
    }
  });
});
