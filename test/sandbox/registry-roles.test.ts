/** ACL role endpoints: create, read, update, delete, list, and the real registry's status codes and texts. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { blake2b } from '@noble/hashes/blake2.js';
import { type Api, apiFor, createRole, type RoleJson, UUID_RE } from './helpers.js';

let sandbox: RunningSandbox;
let api: Api;
let serviceRead: { ID: string; Name: string };
let nodeRead: { ID: string; Name: string };

beforeAll(async () => {
  sandbox = await startSandbox({
    config: {
      registry: {
        policies: [
          { Name: 'service-read', Description: 'read services' },
          { Name: 'node-read', ID: '5e1c1a7e-0000-4000-8000-00000000a0de' },
        ],
      },
    },
  });
  api = apiFor(sandbox);
  const policies = (await api('GET', '/v1/acl/policies')).json<{ ID: string; Name: string }[]>();
  serviceRead = policies.find((p) => p.Name === 'service-read')!;
  nodeRead = policies.find((p) => p.Name === 'node-read')!;
});

afterAll(async () => {
  await sandbox.close();
});

describe('create', () => {
  it('answers 200 with the full role: UUID, Hash, indexes, namespace', async () => {
    const res = await api('PUT', '/v1/acl/role', {
      body: { Name: 'create-full', Description: 'd', Policies: [{ Name: 'service-read' }] },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    const role = res.json<RoleJson>();
    expect(role.ID).toMatch(UUID_RE);
    expect(role).toMatchObject({ Name: 'create-full', Description: 'd', Namespace: 'default' });
    expect(role.Policies).toEqual([{ ID: serviceRead.ID, Name: 'service-read' }]);
    expect(role.CreateIndex).toBeGreaterThan(0);
    expect(role.ModifyIndex).toBe(role.CreateIndex);
    expect(Buffer.from(role.Hash, 'base64')).toHaveLength(32);
  });

  it('hashes like the real registry: BLAKE2b-256 over Name, Description, policy IDs and identities', async () => {
    const role = await createRole(api, {
      Name: 'create-hash',
      Description: 'desc',
      Policies: [{ ID: nodeRead.ID }],
      ServiceIdentities: [{ ServiceName: 'web', Datacenters: ['dc1', 'dc2'] }],
      NodeIdentities: [{ NodeName: 'n1', Datacenter: 'dc1' }],
    });
    const expected = blake2b(Buffer.from(`create-hashdesc${nodeRead.ID}webdc1dc2n1dc1`), { dkLen: 32 });
    expect(role.Hash).toBe(Buffer.from(expected).toString('base64'));
  });

  it('omits empty Policies and identity arrays, as the real JSON does', async () => {
    const role = await createRole(api, { Name: 'create-bare', Policies: [], ServiceIdentities: [] });
    expect(Object.keys(role)).toEqual([
      'ID',
      'Name',
      'Description',
      'Hash',
      'CreateIndex',
      'ModifyIndex',
      'Namespace',
    ]);
    expect(role.Description).toBe('');
  });

  it('omits Datacenters of a service identity that has none', async () => {
    const role = await createRole(api, { Name: 'create-sid', ServiceIdentities: [{ ServiceName: 'api' }] });
    expect(role.ServiceIdentities).toEqual([{ ServiceName: 'api' }]);
  });

  it('matches body field names case-insensitively and ignores unknown fields, like Go decoding', async () => {
    const role = await createRole(api, { name: 'create-ci', DESCRIPTION: 'x', Hash: 'ignored', Whatever: 1 });
    expect(role).toMatchObject({ Name: 'create-ci', Description: 'x' });
    expect(role.Hash).not.toBe('ignored');
  });

  it('rejects a second role with the same name (500, real text)', async () => {
    await createRole(api, { Name: 'create-dup' });
    const res = await api('PUT', '/v1/acl/role', { body: { Name: 'create-dup' } });
    expect(res.status).toBe(500);
    expect(res.text).toBe('Invalid Role: A Role with Name "create-dup" already exists');
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
  });

  it('keeps names unique and finds them regardless of case, as the real name index does', async () => {
    const role = await createRole(api, { Name: 'create-case' });
    const upper = await api('PUT', '/v1/acl/role', { body: { Name: 'CREATE-Case' } });
    expect([upper.status, upper.text]).toEqual([
      500,
      'Invalid Role: A Role with Name "CREATE-Case" already exists',
    ]);
    const found = await api('GET', '/v1/acl/role/name/Create-CASE');
    expect(found.status).toBe(200);
    expect(found.json()).toMatchObject({ ID: role.ID, Name: 'create-case' });
  });

  it('treats an ID in a create body as a mismatch with the (empty) URL ID', async () => {
    const res = await api('PUT', '/v1/acl/role', {
      body: { ID: '11111111-2222-4333-8444-555555555555', Name: 'x' },
    });
    expect(res.status).toBe(400);
    expect(res.text).toBe('Role ID in URL and payload do not match');
  });

  it.each([
    ['an empty body', '', 'Role decoding failed: EOF'],
    ['malformed JSON', '{"Name":', 'Role decoding failed: '],
    [
      'a JSON array',
      '[]',
      'Role decoding failed: json: cannot unmarshal array into Go value of type structs.ACLRole',
    ],
    [
      'a number for Name',
      '{"Name": 5}',
      'Role decoding failed: json: cannot unmarshal number into Go struct field ACLRole.Name of type string',
    ],
    [
      'a string for Policies',
      '{"Name":"a","Policies":"service-read"}',
      'Role decoding failed: json: cannot unmarshal string into Go struct field ACLRole.Policies of type []structs.ACLRolePolicyLink',
    ],
  ])('answers 400 for %s', async (_label, rawBody, text) => {
    const res = await api('PUT', '/v1/acl/role', { rawBody });
    expect(res.status).toBe(400);
    expect(res.text.startsWith(text)).toBe(true);
  });

  it('creates through PUT /v1/acl/role/ (empty ID) as the real registry does', async () => {
    const res = await api('PUT', '/v1/acl/role/', { body: { Name: 'create-slash' } });
    expect(res.status).toBe(200);
    expect(res.json<RoleJson>().Name).toBe('create-slash');
  });
});

describe('policy links', () => {
  it('resolves links by name and by ID, and answers with both', async () => {
    const role = await createRole(api, {
      Name: 'links-both',
      Policies: [{ Name: 'service-read' }, { ID: nodeRead.ID }],
    });
    expect(role.Policies).toEqual([
      { ID: serviceRead.ID, Name: 'service-read' },
      { ID: nodeRead.ID, Name: 'node-read' },
    ]);
  });

  it('deduplicates links by ID, keeping the first', async () => {
    const role = await createRole(api, {
      Name: 'links-dedup',
      Policies: [{ Name: 'node-read' }, { ID: nodeRead.ID }, { Name: 'service-read' }, { Name: 'node-read' }],
    });
    expect(role.Policies?.map((p) => p.Name)).toEqual(['node-read', 'service-read']);
  });

  it('uses the ID when a link has both ID and Name', async () => {
    const role = await createRole(api, {
      Name: 'links-id-wins',
      Policies: [{ ID: nodeRead.ID, Name: 'service-read' }],
    });
    expect(role.Policies).toEqual([{ ID: nodeRead.ID, Name: 'node-read' }]);
  });

  it('rejects an unknown policy name', async () => {
    const res = await api('PUT', '/v1/acl/role', {
      body: { Name: 'links-bad-name', Policies: [{ Name: 'nope' }] },
    });
    expect(res.status).toBe(500);
    expect(res.text).toBe('No such ACL policy with name "nope"');
  });

  it('rejects an unknown policy ID', async () => {
    const id = '0badc0de-0000-4000-8000-000000000000';
    const res = await api('PUT', '/v1/acl/role', { body: { Name: 'links-bad-id', Policies: [{ ID: id }] } });
    expect(res.status).toBe(500);
    expect(res.text).toBe(`Failed to apply role upsert request: No such policy with ID: ${id}`);
  });

  it('lists only roles linked to ?policy=<id>', async () => {
    await createRole(api, { Name: 'filter-node', Policies: [{ Name: 'node-read' }] });
    await createRole(api, { Name: 'filter-none' });
    const res = await api('GET', `/v1/acl/roles?policy=${nodeRead.ID}`);
    const names = res.json<RoleJson[]>().map((r) => r.Name);
    expect(names).toContain('filter-node');
    expect(names).not.toContain('filter-none');
    expect(res.json<RoleJson[]>().every((r) => r.Policies?.some((p) => p.ID === nodeRead.ID))).toBe(true);
  });
});

describe('read', () => {
  it('reads by ID and by name', async () => {
    const created = await createRole(api, { Name: 'read-me', Policies: [{ Name: 'service-read' }] });
    const byId = await api('GET', `/v1/acl/role/${created.ID}`);
    expect(byId.status).toBe(200);
    expect(byId.json()).toEqual(created);
    const byName = await api('GET', '/v1/acl/role/name/read-me');
    expect(byName.status).toBe(200);
    expect(byName.json()).toEqual(created);
  });

  it('answers 404 for a missing role by ID and by name', async () => {
    const byId = await api('GET', '/v1/acl/role/6b1c1a7e-0000-4000-8000-000000000404');
    expect(byId.status).toBe(404);
    expect(byId.text).toBe('Requested role does not exist: ACL not found');
    const byName = await api('GET', '/v1/acl/role/name/nobody');
    expect(byName.status).toBe(404);
    expect(byName.text).toBe('Requested role does not exist: ACL not found');
  });

  it('answers 400 for an empty ID or name', async () => {
    const id = await api('GET', '/v1/acl/role/');
    expect([id.status, id.text]).toEqual([400, 'Missing role ID']);
    const name = await api('GET', '/v1/acl/role/name/');
    expect([name.status, name.text]).toEqual([400, 'Missing role Name']);
  });

  it('pretty-prints with ?pretty', async () => {
    await createRole(api, { Name: 'read-pretty' });
    const res = await api('GET', '/v1/acl/role/name/read-pretty?pretty');
    expect(res.text).toContain('\n    "Name": "read-pretty"');
  });
});

describe('update', () => {
  it('replaces the role: ModifyIndex moves, CreateIndex stays, body ID optional', async () => {
    const created = await createRole(api, {
      Name: 'upd-a',
      Description: 'before',
      Policies: [{ Name: 'service-read' }],
      ServiceIdentities: [{ ServiceName: 'web' }],
    });
    const res = await api('PUT', `/v1/acl/role/${created.ID}`, {
      body: { Name: 'upd-a', Description: 'after' },
    });
    expect(res.status).toBe(200);
    const updated = res.json<RoleJson>();
    expect(updated.ID).toBe(created.ID);
    expect(updated.Description).toBe('after');
    expect(updated.Policies).toBeUndefined(); // replaced, not merged
    expect(updated.ServiceIdentities).toBeUndefined();
    expect(updated.CreateIndex).toBe(created.CreateIndex);
    expect(updated.ModifyIndex).toBeGreaterThan(created.ModifyIndex);
    expect(updated.Hash).not.toBe(created.Hash);
  });

  it('accepts a body ID equal to the path ID and renames', async () => {
    const created = await createRole(api, { Name: 'upd-rename' });
    const res = await api('PUT', `/v1/acl/role/${created.ID}`, {
      body: { ID: created.ID, Name: 'upd-renamed' },
    });
    expect(res.status).toBe(200);
    expect((await api('GET', '/v1/acl/role/name/upd-renamed')).status).toBe(200);
    expect((await api('GET', '/v1/acl/role/name/upd-rename')).status).toBe(404);
  });

  it('rejects a body ID different from the path ID', async () => {
    const created = await createRole(api, { Name: 'upd-mismatch' });
    const res = await api('PUT', `/v1/acl/role/${created.ID}`, {
      body: { ID: '11111111-2222-4333-8444-555555555555', Name: 'upd-mismatch' },
    });
    expect([res.status, res.text]).toEqual([400, 'Role ID in URL and payload do not match']);
  });

  it('rejects a rename onto an existing name (lower-case "role" in the real text)', async () => {
    await createRole(api, { Name: 'upd-taken' });
    const created = await createRole(api, { Name: 'upd-mover' });
    const res = await api('PUT', `/v1/acl/role/${created.ID}`, { body: { Name: 'upd-taken' } });
    expect([res.status, res.text]).toEqual([
      500,
      'Invalid Role: A role with name "upd-taken" already exists',
    ]);
  });

  it('rejects an ID that is not a UUID, and a role that does not exist', async () => {
    const bad = await api('PUT', '/v1/acl/role/not-a-uuid', { body: { Name: 'x' } });
    expect([bad.status, bad.text]).toEqual([500, 'Role ID invalid UUID']);
    const id = '7c1c1a7e-0000-4000-8000-000000000404';
    const missing = await api('PUT', `/v1/acl/role/${id}`, { body: { Name: 'x' } });
    expect([missing.status, missing.text]).toEqual([500, `cannot find role ${id}`]);
  });
});

describe('delete', () => {
  it('deletes and answers true; the role is gone', async () => {
    const created = await createRole(api, { Name: 'del-me' });
    const res = await api('DELETE', `/v1/acl/role/${created.ID}`);
    expect(res.status).toBe(200);
    expect(res.text).toBe('true');
    expect((await api('GET', `/v1/acl/role/${created.ID}`)).status).toBe(404);
  });

  it('answers true for a role that does not exist, as the real registry', async () => {
    const res = await api('DELETE', '/v1/acl/role/8d1c1a7e-0000-4000-8000-000000000404');
    expect([res.status, res.text]).toEqual([200, 'true']);
  });

  it('answers 400 without an ID', async () => {
    const res = await api('DELETE', '/v1/acl/role/');
    expect([res.status, res.text]).toEqual([400, 'Missing role ID']);
  });
});

describe('list', () => {
  it('is always an array, sorted by ID', async () => {
    const res = await api('GET', '/v1/acl/roles');
    expect(res.status).toBe(200);
    const roles = res.json<RoleJson[]>();
    expect(Array.isArray(roles)).toBe(true);
    const ids = roles.map((r) => r.ID);
    expect(ids).toEqual([...ids].sort());
  });

  it('returns an empty array (not null) when nothing matches', async () => {
    const res = await api('GET', '/v1/acl/roles?ns=empty-namespace');
    expect(res.text).toBe('[]');
  });
});

describe('methods and paths', () => {
  it.each([
    ['POST', '/v1/acl/role', 'OPTIONS,PUT'],
    ['GET', '/v1/acl/role', 'OPTIONS,PUT'],
    ['POST', '/v1/acl/role/some-id', 'OPTIONS,GET,PUT,DELETE'],
    ['DELETE', '/v1/acl/roles', 'OPTIONS,GET'],
    ['PUT', '/v1/acl/role/name/x', 'OPTIONS,GET'],
    ['PUT', '/v1/acl/policy/x', 'OPTIONS,GET'],
  ])('answers 405 for %s %s with an Allow header', async (method, path, allow) => {
    const res = await api(method, path, { rawBody: method === 'GET' ? undefined : '{}' });
    expect(res.status).toBe(405);
    expect(res.text).toBe(`method ${method} not allowed`);
    expect(res.headers.get('allow')).toBe(allow);
  });

  it('answers OPTIONS with the allowed methods', async () => {
    const res = await api('OPTIONS', '/v1/acl/roles');
    expect(res.status).toBe(200);
    expect(res.headers.get('allow')).toBe('OPTIONS,GET');
  });

  it('answers 404 with the real text for an unknown registry path', async () => {
    const res = await api('GET', '/v1/acl/rolez');
    expect(res.status).toBe(404);
    expect(res.text).toBe('Invalid URL path: not a recognized HTTP API endpoint\n');
  });
});

describe('policies', () => {
  it('lists the built-in global-management policy with its fixed ID, and config policies', async () => {
    const res = await api('GET', '/v1/acl/policies');
    const policies = res.json<Record<string, unknown>[]>();
    expect(policies[0]).toMatchObject({
      ID: '00000000-0000-0000-0000-000000000001',
      Name: 'global-management',
    });
    expect(policies.map((p) => p.Name)).toEqual(expect.arrayContaining(['service-read', 'node-read']));
    expect(policies[0]).not.toHaveProperty('Rules'); // list entries are stubs
    expect(nodeRead.ID).toBe('5e1c1a7e-0000-4000-8000-00000000a0de'); // ID fixed in the config
  });

  it('reads a policy by ID and by name; 404 when missing', async () => {
    const byId = await api('GET', `/v1/acl/policy/${serviceRead.ID}`);
    expect(byId.json()).toMatchObject({
      ID: serviceRead.ID,
      Name: 'service-read',
      Description: 'read services',
      Rules: '',
    });
    const byName = await api('GET', '/v1/acl/policy/name/service-read');
    expect(byName.json()).toMatchObject({ ID: serviceRead.ID });
    const missing = await api('GET', '/v1/acl/policy/name/nope');
    expect([missing.status, missing.text]).toEqual([404, 'Requested policy does not exist: ACL not found']);
    const noId = await api('GET', '/v1/acl/policy/');
    expect([noId.status, noId.text]).toEqual([400, 'Missing policy ID']);
  });
});
