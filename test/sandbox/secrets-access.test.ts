/**
 * Tokens and rights on the directory method, and the login handler around the directory half. The
 * directory half (`directoryLogin`) is replaced here by a stub; logins against a real directory server
 * are tested with that module.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { type Api, apiFor } from './helpers.js';

const directory = vi.hoisted(() => ({
  groups: {} as Record<string, string[]>,
  calls: [] as { username: string; password: string; url: string }[],
}));

vi.mock('../../src/sandbox/services/secrets/directory-login.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/sandbox/services/secrets/directory-login.js')>();
  return {
    ...real,
    directoryLogin: (settings: { url: string }, username: string, password: string) => {
      directory.calls.push({ username, password, url: settings.url });
      if (password !== 'good') {
        return Promise.reject(new real.DirectoryLoginError('ldap operation failed: failed to bind as user'));
      }
      const groups = directory.groups[username] ?? [];
      return Promise.resolve({
        userDN: `uid=${username},ou=people`,
        groups,
        warnings:
          groups.length === 0
            ? ['no LDAP groups found in groupDN; only policies from locally-defined groups available']
            : [],
      });
    },
  };
});

let sandbox: RunningSandbox;
let api: Api;

beforeAll(async () => {
  sandbox = await startSandbox({
    token: 'root',
    config: {
      tokens: [
        { name: 'reader', secret: 'reader-token', secrets: { ldap: 'read' } },
        { name: 'writer', secret: 'writer-token', secrets: { ldap: 'write' } },
        { name: 'nobody', secret: 'none-token', secrets: { ldap: 'none' } },
        { name: 'registry-only', secret: 'registry-token', registry: { acl: 'write' } },
      ],
      secrets: {
        mounts: [
          { path: 'unconfigured' },
          { path: 'bound', config: { url: 'ldap://bound', token_bound_cidrs: '10.0.0.0/8' } },
          { path: 'local', config: { url: 'ldap://local', token_bound_cidrs: ['127.0.0.0/8', '::1'] } },
          {
            path: 'team/ldap',
            config: {
              url: 'ldap://team',
              token_policies: 'Base',
              token_ttl: '1h',
              token_explicit_max_ttl: '30m',
            },
            groups: [
              { name: 'Engineers', policies: 'eng' },
              { name: 'local-only', policies: ['local'] },
            ],
            users: [{ name: 'Alice', policies: 'alice-own', groups: 'local-only' }],
          },
          {
            path: 'bare',
            config: { url: 'ldap://bare', token_no_default_policy: true, token_type: 'batch' },
          },
          { path: 'rooted', config: { url: 'ldap://rooted' }, users: [{ name: 'eve', policies: 'root' }] },
        ],
      },
    },
  });
  api = apiFor(sandbox);
});

afterAll(async () => {
  await sandbox.close();
});

const as = (token: string | null, method: string, path: string, body?: unknown) =>
  api(method, path, { token: null, headers: token ? { 'X-Secrets-Token': token } : {}, body });

describe('rights on the administrative API', () => {
  it('refuses a request without a token, or with an unknown one, with 403 permission denied', async () => {
    for (const token of [null, 'made-up']) {
      const res = await as(token, 'GET', '/v1/auth/ldap/config');
      expect([res.status, res.text]).toEqual([403, '{"errors":["permission denied"]}\n']);
    }
  });

  it('checks the token before the route, so unknown paths are not revealed', async () => {
    expect((await as(null, 'GET', '/v1/auth/nope/x')).status).toBe(403);
    expect((await as(null, 'GET', '/v1/sys/anything')).status).toBe(403);
    expect((await as('writer-token', 'GET', '/v1/sys/anything')).status).toBe(403);
  });

  it('lets a read token read and list but not write or delete', async () => {
    expect((await as('reader-token', 'GET', '/v1/auth/ldap/config')).status).toBe(200);
    expect((await as('reader-token', 'LIST', '/v1/auth/team/ldap/groups')).status).toBe(200);
    expect((await as('reader-token', 'GET', '/v1/auth/team/ldap/users/alice')).status).toBe(200);
    expect((await as('reader-token', 'POST', '/v1/auth/ldap/config', { url: 'ldap://x' })).status).toBe(403);
    expect((await as('reader-token', 'DELETE', '/v1/auth/ldap/groups/x')).status).toBe(403);
  });

  it('lets a write token write', async () => {
    expect((await as('writer-token', 'POST', '/v1/auth/ldap/groups/w', { policies: 'a' })).status).toBe(204);
    expect((await as('writer-token', 'DELETE', '/v1/auth/ldap/groups/w')).status).toBe(204);
  });

  it('gives tokens without secrets rights nothing', async () => {
    for (const token of ['none-token', 'registry-token']) {
      expect((await as(token, 'GET', '/v1/auth/ldap/config')).status).toBe(403);
    }
  });

  it('reads the token from X-Vault-Token and Authorization: Bearer too', async () => {
    expect(
      (
        await api('GET', '/v1/auth/ldap/config', {
          token: null,
          headers: { 'X-Vault-Token': 'reader-token' },
        })
      ).status,
    ).toBe(200);
    expect((await api('GET', '/v1/auth/ldap/config', { token: 'reader-token' })).status).toBe(200);
  });
});

describe('login', () => {
  const login = (path: string, password = 'good') => as(null, 'POST', `/v1/auth/${path}`, { password });

  it('answers 400 for a mount never configured, without a token', async () => {
    const res = await login('unconfigured/login/alice');
    expect([res.status, res.json()]).toEqual([400, { errors: ['auth method not configured'] }]);
  });

  it('refuses a client outside token_bound_cidrs with 403 before asking the directory', async () => {
    const before = directory.calls.length;
    const res = await login('bound/login/alice');
    expect([res.status, res.json()]).toEqual([403, { errors: ['permission denied'] }]);
    expect(directory.calls.length).toBe(before);
    expect((await login('local/login/alice')).status).toBe(200);
  });

  it('passes the directory error on with its status', async () => {
    const res = await login('local/login/alice', 'wrong');
    expect([res.status, res.json()]).toEqual([
      400,
      { errors: ['ldap operation failed: failed to bind as user'] },
    ]);
  });

  it('issues a token with local, group and configured policies in the real envelope', async () => {
    directory.groups.Alice = ['ENGINEERS', 'unknown-group'];
    const res = await login('team/ldap/login/Alice');
    expect(res.status).toBe(200);
    const body = res.json<{ auth: Record<string, unknown> } & Record<string, unknown>>();
    expect(body).toMatchObject({
      lease_id: '',
      renewable: false,
      lease_duration: 0,
      data: null,
      wrap_info: null,
      warnings: null,
    });
    expect(body.auth).toEqual({
      client_token: expect.stringMatching(/^hvs\.\w{24}$/) as string,
      accessor: expect.stringMatching(/^\w{24}$/) as string,
      policies: ['alice-own', 'base', 'default', 'eng', 'local'],
      token_policies: ['alice-own', 'base', 'default', 'eng', 'local'],
      metadata: { username: 'Alice' },
      lease_duration: 1800, // token_ttl 1h capped by token_explicit_max_ttl 30m
      renewable: true,
      entity_id: expect.any(String) as string,
      token_type: 'service',
      orphan: true,
      mfa_requirement: null,
      num_uses: 0,
    });
    expect(directory.calls.at(-1)).toEqual({ username: 'Alice', password: 'good', url: 'ldap://team' });
  });

  it('passes the directory warnings on and uses the 768h default lease', async () => {
    const res = await login('local/login/nobody-known');
    const body = res.json<{ warnings: string[]; auth: { policies: string[]; lease_duration: number } }>();
    expect(body.warnings).toEqual([
      'no LDAP groups found in groupDN; only policies from locally-defined groups available',
    ]);
    expect(body.auth.policies).toEqual(['default']);
    expect(body.auth.lease_duration).toBe(2764800);
  });

  it('leaves default out with token_no_default_policy, and issues batch tokens when asked', async () => {
    const res = await login('bare/login/bob');
    const auth = res.json<{ auth: Record<string, unknown> }>().auth;
    expect(auth.client_token).toMatch(/^hvb\./);
    expect(auth).toMatchObject({ policies: [], accessor: '', renewable: false, token_type: 'batch' });
    expect(auth).not.toHaveProperty('token_policies');
  });

  it('refuses to issue a root token', async () => {
    const res = await login('rooted/login/eve');
    expect([res.status, res.json()]).toEqual([400, { errors: ['auth methods cannot create root tokens'] }]);
  });

  it('issues tokens that carry no administrative rights', async () => {
    const res = await login('team/ldap/login/Alice');
    const token = res.json<{ auth: { client_token: string } }>().auth.client_token;
    expect((await as(token, 'GET', '/v1/auth/team/ldap/config')).status).toBe(403);
    expect((await as(token, 'LIST', '/v1/auth/team/ldap/users')).status).toBe(403);
  });
});
