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
  const read = (path: string, headers: Record<string, string> = {}) =>
    api('GET', path, { token: null, headers });

  it.each([
    ['?token=', '/v1/acl/roles?token=reader-token', {}],
    ['X-Registry-Token (the spec)', '/v1/acl/roles', { 'X-Registry-Token': 'reader-token' }],
    ['X-Consul-Token (the real product)', '/v1/acl/roles', { 'X-Consul-Token': 'reader-token' }],
    ['Authorization: Bearer', '/v1/acl/roles', { Authorization: 'Bearer reader-token' }],
    ['Authorization: bearer (lowercase)', '/v1/acl/roles', { Authorization: 'bearer reader-token' }],
  ])('reads with the token in %s', async (_form, path, headers: Record<string, string>) => {
    expect(sandbox.rootToken).toBe('root-secret');
    const res = await read(path, headers);
    expect([res.status, res.text.startsWith('[')]).toEqual([200, true]);
  });

  it('reads the Bearer scheme case-insensitively and takes the first word', async () => {
    const res = await read('/v1/acl/roles', { Authorization: 'bEaReR   reader-token   extra' });
    expect(res.status).toBe(200);
  });

  it('ignores Authorization with another scheme or without a value', async () => {
    for (const value of ['Basic reader-token', 'reader-token', 'Bearer']) {
      const res = await read('/v1/acl/roles', { Authorization: value });
      expect(res.status, value).toBe(403);
      expect(res.text, value).toMatch(/^Permission denied: anonymous token/);
    }
  });

  // Each pair gives a reader token in the form that should win and a writer token in the other, so a
  // write answers 403 only when the winning form was read.
  it.each([
    ['?token= over X-Registry-Token', '?token=reader-token', { 'X-Registry-Token': 'writer-token' }],
    ['?token= over X-Consul-Token', '?token=reader-token', { 'X-Consul-Token': 'writer-token' }],
    ['?token= over Authorization', '?token=reader-token', { Authorization: 'Bearer writer-token' }],
    [
      'X-Registry-Token over X-Consul-Token',
      '',
      { 'X-Registry-Token': 'reader-token', 'X-Consul-Token': 'writer-token' },
    ],
    [
      'X-Registry-Token over Authorization',
      '',
      { 'X-Registry-Token': 'reader-token', Authorization: 'Bearer writer-token' },
    ],
    [
      'X-Consul-Token over Authorization',
      '',
      { 'X-Consul-Token': 'reader-token', Authorization: 'Bearer writer-token' },
    ],
  ])('prefers %s', async (_order, query, headers: Record<string, string>) => {
    const res = await api('PUT', `/v1/acl/role${query}`, {
      token: null,
      headers,
      body: { Name: 'precedence' },
    });
    expect([res.status, res.text]).toEqual([403, denied('reader', 'write')]);
  });

  it('lets the writer token write, so each 403 above means the reader token won', async () => {
    const res = await api('PUT', '/v1/acl/role', {
      token: null,
      headers: { 'X-Consul-Token': 'writer-token' },
      body: { Name: 'precedence-control' },
    });
    expect(res.status).toBe(200);
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
