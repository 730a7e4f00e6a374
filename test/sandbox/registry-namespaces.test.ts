/**
 * Namespaces (enterprise): precedence body > ?ns > X-Registry-Namespace > token > default, names
 * unique per namespace, `?ns=*` lists all, and policies linked from the role's namespace or `default`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { type Api, apiFor, createRole, type RoleJson } from './helpers.js';

let sandbox: RunningSandbox;
let api: Api;

beforeAll(async () => {
  sandbox = await startSandbox({
    config: {
      tokens: [
        { name: 'team-a-writer', secret: 'team-a-token', namespace: 'team-a', registry: { acl: 'write' } },
      ],
      registry: {
        policies: [
          { Name: 'shared', Description: 'in default' },
          { Name: 'team-only', Namespace: 'team-a' },
          { Name: 'b-only', Namespace: 'team-b' },
          { Name: 'shadowed', Description: 'default copy' },
          { Name: 'shadowed', Description: 'team-a copy', Namespace: 'team-a' },
        ],
      },
    },
  });
  api = apiFor(sandbox);
});

afterAll(async () => {
  await sandbox.close();
});

describe('namespace precedence', () => {
  const NS = 'X-Registry-Namespace';
  it.each([
    [
      'body Namespace over everything',
      { body: 'from-body', query: 'from-query', header: 'from-header' },
      'from-body',
    ],
    ['?ns over header and token', { query: 'from-query', header: 'from-header' }, 'from-query'],
    ['header over token', { header: 'from-header' }, 'from-header'],
    ['the token namespace when nothing else is given', {}, 'team-a'],
  ])('uses %s', async (_label, where: { body?: string; query?: string; header?: string }, expected) => {
    const name = `prec-${expected}-${Object.keys(where).length}`;
    const res = await api('PUT', `/v1/acl/role${where.query ? `?ns=${where.query}` : ''}`, {
      token: 'team-a-token',
      headers: where.header ? { [NS]: where.header } : {},
      body: { Name: name, ...(where.body ? { Namespace: where.body } : {}) },
    });
    expect(res.status).toBe(200);
    expect(res.json<RoleJson>().Namespace).toBe(expected);
  });

  it('falls back to default for a token without a namespace', async () => {
    const role = await createRole(api, { Name: 'prec-default' });
    expect(role.Namespace).toBe('default');
  });
});

describe('names are unique per namespace', () => {
  it('allows one name in two namespaces and reads each by name', async () => {
    const a = await createRole(api, { Name: 'same', Namespace: 'ns-one' });
    const b = await createRole(api, { Name: 'same', Namespace: 'ns-two' });
    expect(a.ID).not.toBe(b.ID);
    expect((await api('GET', '/v1/acl/role/name/same?ns=ns-one')).json<RoleJson>().ID).toBe(a.ID);
    expect((await api('GET', '/v1/acl/role/name/same?ns=ns-two')).json<RoleJson>().ID).toBe(b.ID);
    const dup = await api('PUT', '/v1/acl/role', { body: { Name: 'same', Namespace: 'ns-one' } });
    expect([dup.status, dup.text]).toEqual([500, 'Invalid Role: A Role with Name "same" already exists']);
  });

  it('scopes reads by ID and deletes to the namespace', async () => {
    const role = await createRole(api, { Name: 'scoped', Namespace: 'ns-scope' });
    const elsewhere = await api('GET', `/v1/acl/role/${role.ID}`);
    expect([elsewhere.status, elsewhere.text]).toEqual([404, 'Requested role does not exist: ACL not found']);
    const otherNs = await api('GET', `/v1/acl/role/${role.ID}?ns=ns-other`);
    expect([otherNs.status, otherNs.text]).toEqual([
      404,
      'Requested role not found in namespace ns-other: ACL not found',
    ]);
    expect((await api('GET', `/v1/acl/role/${role.ID}?ns=*`)).status).toBe(200);
    expect((await api('DELETE', `/v1/acl/role/${role.ID}`)).text).toBe('true'); // default: not there
    expect((await api('GET', `/v1/acl/role/${role.ID}?ns=ns-scope`)).status).toBe(200);
    await api('DELETE', `/v1/acl/role/${role.ID}?ns=ns-scope`);
    expect((await api('GET', `/v1/acl/role/${role.ID}?ns=ns-scope`)).status).toBe(404);
  });

  it('does not move a role to another namespace on update', async () => {
    const role = await createRole(api, { Name: 'stay', Namespace: 'ns-home' });
    const res = await api('PUT', `/v1/acl/role/${role.ID}`, { body: { Name: 'stay', Namespace: 'ns-away' } });
    expect([res.status, res.text]).toEqual([500, `cannot find role ${role.ID}`]);
  });
});

describe('listing', () => {
  it('lists one namespace by default and all with ?ns=*', async () => {
    await createRole(api, { Name: 'list-x', Namespace: 'ns-list-1' });
    await createRole(api, { Name: 'list-y', Namespace: 'ns-list-2' });
    const one = (await api('GET', '/v1/acl/roles?ns=ns-list-1')).json<RoleJson[]>();
    expect(one.map((r) => r.Name)).toEqual(['list-x']);
    const all = (await api('GET', '/v1/acl/roles?ns=*')).json<RoleJson[]>();
    const names = all.map((r) => `${r.Namespace}/${r.Name}`);
    expect(names).toEqual(
      expect.arrayContaining(['ns-list-1/list-x', 'ns-list-2/list-y', 'default/prec-default']),
    );
  });

  it('refuses wildcard writes and by-name reads', async () => {
    const write = await api('PUT', '/v1/acl/role?ns=*', { body: { Name: 'wild' } });
    expect(write.status).toBe(400);
    const read = await api('GET', '/v1/acl/role/name/list-x?ns=*');
    expect(read.status).toBe(400);
  });
});

describe('namespaced policies', () => {
  it('links a policy of the role namespace or of default, by name and by ID', async () => {
    const role = await createRole(api, {
      Name: 'links',
      Namespace: 'team-a',
      Policies: [{ Name: 'team-only' }, { Name: 'shared' }],
    });
    expect(role.Policies?.map((p) => p.Name)).toEqual(['team-only', 'shared']);
  });

  it('prefers the role namespace when both have a policy of that name', async () => {
    const role = await createRole(api, {
      Name: 'shadow',
      Namespace: 'team-a',
      Policies: [{ Name: 'shadowed' }],
    });
    const policy = (await api('GET', `/v1/acl/policy/${role.Policies![0]!.ID}?ns=team-a`)).json<{
      Description: string;
    }>();
    expect(policy.Description).toBe('team-a copy');
  });

  it('does not link a policy of a third namespace, by name or by ID', async () => {
    const byName = await api('PUT', '/v1/acl/role', {
      body: { Name: 'nolink', Namespace: 'team-a', Policies: [{ Name: 'b-only' }] },
    });
    expect([byName.status, byName.text]).toEqual([500, 'No such ACL policy with name "b-only"']);
    const bOnly = (await api('GET', '/v1/acl/policy/name/b-only?ns=team-b')).json<{ ID: string }>();
    const byId = await api('PUT', '/v1/acl/role', {
      body: { Name: 'nolink', Namespace: 'team-a', Policies: [{ ID: bOnly.ID }] },
    });
    expect([byId.status, byId.text]).toEqual([
      500,
      `Failed to apply role upsert request: No such policy with ID: ${bOnly.ID}`,
    ]);
  });

  it('lists and reads policies per namespace', async () => {
    const teamA = (await api('GET', '/v1/acl/policies?ns=team-a')).json<
      { Name: string; Namespace: string }[]
    >();
    expect(teamA.map((p) => p.Name).sort()).toEqual(['shadowed', 'team-only']);
    expect(teamA.every((p) => p.Namespace === 'team-a')).toBe(true);
    expect((await api('GET', '/v1/acl/policy/name/team-only')).status).toBe(404);
    expect((await api('GET', '/v1/acl/policy/name/team-only?ns=team-a')).status).toBe(200);
  });
});
