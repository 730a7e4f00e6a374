/**
 * What the registry client puts on the wire (namespaces, blocking queries, retry choices), checked
 * against a MockAgent. Behaviour against a real server is in registry-client.test.ts.
 */
import type { MockAgent } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HttpStatusError, UnexpectedResponseError } from '../../src/clients/http/index.js';
import { RegistryClient } from '../../src/clients/registry/client.js';
import { caught, jsonHeaders, mockAgent, ORIGIN, TOKEN } from './helpers.js';

let agent: MockAgent;
let pool: ReturnType<MockAgent['get']>;

beforeEach(() => {
  agent = mockAgent();
  pool = agent.get(ORIGIN);
});

afterEach(async () => {
  agent.assertNoPendingInterceptors();
  await agent.close();
});

function registry(defaultNamespace?: string): RegistryClient {
  return RegistryClient.fromConnection({
    address: ORIGIN,
    token: TOKEN,
    dispatcher: agent,
    ...(defaultNamespace ? { defaultNamespace } : {}),
    http: { retry: { minDelayMs: 1, maxDelayMs: 5 } },
  });
}

type Seen = { path: string; headers: Record<string, string> };

function capture(
  seen: Seen[],
  statusCode: number,
  data: unknown,
  headers: Record<string, string> = jsonHeaders,
) {
  return (opts: { path: string; headers?: unknown }) => {
    seen.push({ path: opts.path, headers: opts.headers as Record<string, string> });
    return { statusCode, data: JSON.stringify(data), responseOptions: { headers } };
  };
}

const role = { ID: 'r-1', Name: 'web', Description: '', CreateIndex: 5, ModifyIndex: 5 };

describe('RegistryClient on the wire', () => {
  it('sends the token as Bearer and the namespace as query ns', async () => {
    const seen: Seen[] = [];
    pool.intercept({ path: /^\/v1\/acl\/role\/name\/web/, method: 'GET' }).reply(capture(seen, 200, role));
    await registry().readRoleByName('web', { namespace: 'team-a' });
    expect(seen[0]!.path).toBe('/v1/acl/role/name/web?ns=team-a');
    expect(seen[0]!.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(seen[0]!.headers['x-registry-namespace']).toBeUndefined();
  });

  it('sends a client-wide default namespace as the X-Registry-Namespace header', async () => {
    const seen: Seen[] = [];
    pool
      .intercept({ path: /^\/v1\/acl\/roles/, method: 'GET' })
      .reply(capture(seen, 200, []))
      .times(2);
    const client = registry('team-b');
    await client.listRoles();
    await client.listRoles({ namespace: '*', policy: 'p-1' });
    expect(seen[0]!.path).toBe('/v1/acl/roles');
    expect(seen[0]!.headers['x-registry-namespace']).toBe('team-b');
    expect(seen[1]!.path).toBe('/v1/acl/roles?policy=p-1&ns=*');
  });

  it('escapes names and ids as one path segment', async () => {
    const seen: Seen[] = [];
    pool.intercept({ path: () => true, method: 'GET' }).reply(capture(seen, 404, ''));
    expect(await registry().readRoleByName('a/b?c')).toBeUndefined();
    expect(seen[0]!.path).toBe('/v1/acl/role/name/a%2Fb%3Fc');
    await expect(registry().readRole('')).rejects.toThrow('role ID must not be empty');
  });

  it('passes blocking-query parameters and returns the X-Registry-Index', async () => {
    const seen: Seen[] = [];
    pool
      .intercept({ path: /^\/v1\/acl\/role\/r-1/, method: 'GET' })
      .reply(capture(seen, 200, role, { ...jsonHeaders, 'x-registry-index': '17' }));
    pool
      .intercept({ path: /^\/v1\/acl\/roles/, method: 'GET' })
      .reply(capture(seen, 200, [role], { ...jsonHeaders, 'x-registry-index': '18' }));
    const client = registry();
    const read = await client.readRoleWithIndex('r-1', { index: 16, wait: '30s' });
    expect(read).toEqual({ value: role, index: 17 });
    const list = await client.listRolesWithIndex({ index: 17, wait: 1500 });
    expect(list).toEqual({ value: [role], index: 18 });
    expect(seen.map((s) => s.path)).toEqual([
      '/v1/acl/role/r-1?index=16&wait=30s',
      '/v1/acl/roles?index=17&wait=2s',
    ]);
    await expect(client.readRole('r-1', { index: 1, wait: 'soon' })).rejects.toThrow('invalid wait "soon"');
  });

  it('gives 404 as undefined, keeping the index', async () => {
    pool
      .intercept({ path: '/v1/acl/policy/name/nope', method: 'GET' })
      .reply(404, 'ACL not found', { headers: { 'x-registry-index': '3' } });
    pool
      .intercept({ path: '/v1/acl/role/name/nope', method: 'GET' })
      .reply(404, '', { headers: { 'x-registry-index': '3' } });
    const client = registry();
    expect(await client.readPolicyByName('nope')).toBeUndefined();
    expect(await client.readRoleByNameWithIndex('nope')).toEqual({ value: undefined, index: 3 });
  });

  it('does not retry 500: the registry reports validation failures with it', async () => {
    pool.intercept({ path: '/v1/acl/role/r-1', method: 'PUT' }).reply(500, 'Invalid Role: no Name is set');
    const client = registry();
    const err = await caught(client.updateRole('r-1', { Name: '' }));
    expect(err).toBeInstanceOf(HttpStatusError);
    expect(err).toMatchObject({ status: 500, attempts: 1, serviceMessage: 'Invalid Role: no Name is set' });
    expect((err as Error).message).toBe('registry: PUT /v1/acl/role/r-1 → 500 Invalid Role: no Name is set');
  });

  it('retries reads on 503, but not a create', async () => {
    pool.intercept({ path: '/v1/acl/roles', method: 'GET' }).reply(503, 'no leader');
    pool.intercept({ path: '/v1/acl/roles', method: 'GET' }).reply(200, [], { headers: jsonHeaders });
    pool.intercept({ path: '/v1/acl/role', method: 'PUT' }).reply(503, 'no leader');
    const client = registry();
    expect(await client.listRoles()).toEqual([]);
    await expect(client.createRole({ Name: 'web' })).rejects.toMatchObject({ status: 503, attempts: 1 });
    expect(client.requestCount).toBe(3);
  });

  it('reads the delete answer and refuses an empty create answer', async () => {
    pool
      .intercept({ path: '/v1/acl/role/r-1', method: 'DELETE' })
      .reply(200, 'false', { headers: jsonHeaders });
    pool.intercept({ path: '/v1/acl/role', method: 'PUT' }).reply(200, '', { headers: jsonHeaders });
    const client = registry();
    expect(await client.deleteRole('r-1')).toBe(false);
    await expect(client.createRole({ Name: 'web' })).rejects.toBeInstanceOf(UnexpectedResponseError);
  });
});
