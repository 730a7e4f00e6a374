/** Tokens: where they are read from, and which rights reads and writes need. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { type Api, apiFor, createRole } from './helpers.js';

let sandbox: RunningSandbox;
let api: Api;

beforeAll(async () => {
  sandbox = await startSandbox({
    token: 'root-secret',
    config: {
      tokens: [
        { name: 'reader', secret: 'reader-token', registry: { acl: 'read' } },
        { name: 'writer', secret: 'writer-token', registry: { acl: 'write' } },
        { name: 'nobody', secret: 'none-token', registry: { acl: 'none' } },
        { name: 'other-service-only', secret: 'other-token' },
      ],
    },
  });
  api = apiFor(sandbox);
});

afterAll(async () => {
  await sandbox.close();
});

const denied = (who: string, perm: 'read' | 'write') =>
  `Permission denied: token with AccessorID '${who}' lacks permission 'acl:${perm}'`;

describe('where the token comes from', () => {
  it('accepts Authorization: Bearer, X-Registry-Token and ?token=', async () => {
    expect(sandbox.rootToken).toBe('root-secret');
    const bearer = await api('GET', '/v1/acl/roles', { token: 'reader-token' });
    const header = await api('GET', '/v1/acl/roles', {
      token: null,
      headers: { 'X-Registry-Token': 'reader-token' },
    });
    const query = await api('GET', '/v1/acl/roles?token=reader-token', { token: null });
    expect([bearer.status, header.status, query.status]).toEqual([200, 200, 200]);
  });

  it('reads the Bearer scheme case-insensitively and takes the first word', async () => {
    const res = await api('GET', '/v1/acl/roles', {
      token: null,
      headers: { Authorization: 'bEaReR   reader-token   extra' },
    });
    expect(res.status).toBe(200);
  });

  it('prefers ?token= over X-Registry-Token over Authorization', async () => {
    const queryWins = await api('PUT', '/v1/acl/role?token=reader-token', {
      token: 'writer-token',
      headers: { 'X-Registry-Token': 'writer-token' },
      body: { Name: 'prec-1' },
    });
    expect([queryWins.status, queryWins.text]).toEqual([403, denied('reader', 'write')]);
    const headerWins = await api('PUT', '/v1/acl/role', {
      token: 'writer-token',
      headers: { 'X-Registry-Token': 'reader-token' },
      body: { Name: 'prec-2' },
    });
    expect(headerWins.status).toBe(403);
  });
});

describe('rights', () => {
  it('answers 403 "ACL not found" for an unknown token', async () => {
    const read = await api('GET', '/v1/acl/roles', { token: 'who-is-this' });
    expect([read.status, read.text]).toEqual([403, 'ACL not found']);
    const write = await api('PUT', '/v1/acl/role', { token: 'who-is-this', body: { Name: 'x' } });
    expect([write.status, write.text]).toEqual([403, 'ACL not found']);
  });

  it('treats a request without a token as the anonymous token, which has no rights', async () => {
    const res = await api('GET', '/v1/acl/roles', { token: null });
    expect(res.status).toBe(403);
    expect(res.text).toBe(
      "Permission denied: anonymous token lacks permission 'acl:read'. The anonymous token is used implicitly when a request does not specify a token.",
    );
  });

  it('lets a reader read but not write', async () => {
    const role = await createRole(api, { Name: 'auth-target' });
    for (const path of [
      '/v1/acl/roles',
      `/v1/acl/role/${role.ID}`,
      '/v1/acl/role/name/auth-target',
      '/v1/acl/policies',
    ]) {
      expect((await api('GET', path, { token: 'reader-token' })).status).toBe(200);
    }
    const create = await api('PUT', '/v1/acl/role', { token: 'reader-token', body: { Name: 'auth-new' } });
    expect([create.status, create.text]).toEqual([403, denied('reader', 'write')]);
    const update = await api('PUT', `/v1/acl/role/${role.ID}`, {
      token: 'reader-token',
      body: { Name: 'auth-target' },
    });
    expect(update.status).toBe(403);
    const del = await api('DELETE', `/v1/acl/role/${role.ID}`, { token: 'reader-token' });
    expect([del.status, del.text]).toEqual([403, denied('reader', 'write')]);
    expect((await api('GET', `/v1/acl/role/${role.ID}`)).status).toBe(200);
  });

  it('lets a writer write and read (write implies read)', async () => {
    const role = await createRole(api, { Name: 'auth-by-writer' }, { token: 'writer-token' });
    expect((await api('GET', `/v1/acl/role/${role.ID}`, { token: 'writer-token' })).status).toBe(200);
    expect((await api('DELETE', `/v1/acl/role/${role.ID}`, { token: 'writer-token' })).text).toBe('true');
  });

  it('denies reads to tokens with acl none or without registry rights', async () => {
    const none = await api('GET', '/v1/acl/roles', { token: 'none-token' });
    expect([none.status, none.text]).toEqual([403, denied('nobody', 'read')]);
    const other = await api('GET', '/v1/acl/policies', { token: 'other-token' });
    expect([other.status, other.text]).toEqual([403, denied('other-service-only', 'read')]);
  });

  it('parses the body before checking rights, as the real registry (400 beats 403)', async () => {
    const res = await api('PUT', '/v1/acl/role', { token: 'reader-token', rawBody: '{' });
    expect(res.status).toBe(400);
  });

  it('checks rights before validating (403 beats 500)', async () => {
    const res = await api('PUT', '/v1/acl/role', { token: 'reader-token', body: { Name: 'bad name' } });
    expect(res.status).toBe(403);
  });

  it('checks query parameters before rights (400 beats 403)', async () => {
    const res = await api('GET', '/v1/acl/roles?wait=soon', { token: 'none-token' });
    expect([res.status, res.text]).toEqual([400, 'Invalid wait time']);
  });
});
