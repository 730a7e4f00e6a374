/** Local groups and users of the directory method, listing, and the real service's status codes and bodies. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { type Api, apiFor } from './helpers.js';

let sandbox: RunningSandbox;
let api: Api;

beforeAll(async () => {
  sandbox = await startSandbox({
    token: 'root',
    config: {
      secrets: {
        mounts: [
          { path: 'groups-a' },
          { path: 'users-a' },
          { path: 'lists' },
          { path: 'empty' },
          { path: 'cased', config: { case_sensitive_names: true } },
        ],
      },
    },
  });
  api = apiFor(sandbox);
});

afterAll(async () => {
  await sandbox.close();
});

interface Envelope<T> {
  data: T;
}

const data = async <T>(path: string): Promise<T> => {
  const res = await api('GET', path);
  expect(res.status, res.text).toBe(200);
  return res.json<Envelope<T>>().data;
};

describe('groups', () => {
  it('writes policies as a comma string or an array and reads them as a normalised array', async () => {
    const res = await api('POST', '/v1/auth/groups-a/groups/devs', {
      body: { policies: ' Web, db,,web ,admin' },
    });
    expect([res.status, res.text]).toEqual([204, '']);
    expect(await data('/v1/auth/groups-a/groups/devs')).toEqual({ policies: ['admin', 'db', 'web'] });
    await api('POST', '/v1/auth/groups-a/groups/ops', { body: { policies: ['B', 'a'] } });
    expect(await data('/v1/auth/groups-a/groups/ops')).toEqual({ policies: ['a', 'b'] });
    await api('POST', '/v1/auth/groups-a/groups/none', { body: {} });
    expect(await data('/v1/auth/groups-a/groups/none')).toEqual({ policies: [] });
  });

  it('keeps only root when root is among the policies', async () => {
    await api('POST', '/v1/auth/groups-a/groups/super', { body: { policies: 'dev,root' } });
    expect(await data('/v1/auth/groups-a/groups/super')).toEqual({ policies: ['root'] });
  });

  it('lower-cases names on write and read, but a delete uses the name as given (the real quirk)', async () => {
    await api('POST', '/v1/auth/groups-a/groups/Admins', { body: { policies: 'a' } });
    expect(await data('/v1/auth/groups-a/groups/ADMINS')).toEqual({ policies: ['a'] });
    const list = await api('LIST', '/v1/auth/groups-a/groups');
    expect(list.json<Envelope<{ keys: string[] }>>().data.keys).toContain('admins');
    expect((await api('DELETE', '/v1/auth/groups-a/groups/Admins')).status).toBe(204);
    expect((await api('GET', '/v1/auth/groups-a/groups/admins')).status).toBe(200); // still there
    expect((await api('DELETE', '/v1/auth/groups-a/groups/admins')).status).toBe(204);
    const gone = await api('GET', '/v1/auth/groups-a/groups/admins');
    expect([gone.status, gone.text]).toEqual([404, '{"errors":[]}\n']);
  });

  it('keeps the case of names with case_sensitive_names', async () => {
    await api('POST', '/v1/auth/cased/groups/Admins', { body: { policies: 'a' } });
    expect((await api('GET', '/v1/auth/cased/groups/admins')).status).toBe(404);
    expect(await data('/v1/auth/cased/groups/Admins')).toEqual({ policies: ['a'] });
    await api('POST', '/v1/auth/cased/users/Alice', { body: { groups: 'Admins,admins' } });
    expect(await data('/v1/auth/cased/users/Alice')).toEqual({ groups: 'Admins,admins', policies: [] });
  });
});

describe('users', () => {
  it('reads groups back as one comma string and policies as an array', async () => {
    const res = await api('POST', '/v1/auth/users-a/users/Alice', {
      body: { policies: 'Dev, ops', groups: ' Zeta,alpha , ALPHA' },
    });
    expect(res.status).toBe(204);
    expect(await data('/v1/auth/users-a/users/alice')).toEqual({
      groups: 'alpha,zeta',
      policies: ['dev', 'ops'],
    });
    await api('POST', '/v1/auth/users-a/users/bob', { body: { policies: ['x'], groups: ['g2', 'g1'] } });
    expect(await data('/v1/auth/users-a/users/bob')).toEqual({ groups: 'g1,g2', policies: ['x'] });
  });

  it('replaces a user on every write and deletes it', async () => {
    await api('POST', '/v1/auth/users-a/users/carol', { body: { policies: 'a', groups: 'g' } });
    await api('POST', '/v1/auth/users-a/users/carol', { body: { policies: 'b' } });
    expect(await data('/v1/auth/users-a/users/carol')).toEqual({ groups: '', policies: ['b'] });
    expect((await api('DELETE', '/v1/auth/users-a/users/carol')).status).toBe(204);
    expect((await api('GET', '/v1/auth/users-a/users/carol')).status).toBe(404);
  });

  it('warns about fields a user does not have', async () => {
    const res = await api('POST', '/v1/auth/users-a/users/dave', { body: { policies: 'a', password: 'x' } });
    expect(res.status).toBe(200);
    expect(res.json<{ warnings: string[] }>().warnings).toEqual([
      'Endpoint ignored these unrecognized parameters: [password]',
    ]);
  });
});

describe('listing', () => {
  beforeAll(async () => {
    for (const name of ['b', 'a', 'C']) await api('POST', `/v1/auth/lists/users/${name}`, { body: {} });
    await api('POST', '/v1/auth/lists/groups/g', { body: {} });
  });

  it('lists with the LIST method and with GET ?list=true, keys sorted', async () => {
    for (const [method, path] of [
      ['LIST', '/v1/auth/lists/users'],
      ['LIST', '/v1/auth/lists/users/'],
      ['GET', '/v1/auth/lists/users?list=true'],
      ['GET', '/v1/auth/lists/users/?list=1'],
    ] as const) {
      const res = await api(method, path);
      expect(res.status, `${method} ${path}`).toBe(200);
      expect(res.json<Envelope<{ keys: string[] }>>().data).toEqual({ keys: ['a', 'b', 'c'] });
    }
    const groups = await api('LIST', '/v1/auth/lists/groups');
    expect(groups.json<Envelope<{ keys: string[] }>>().data.keys).toEqual(['g']);
  });

  it('answers 404 {"errors":[]} for a list without keys', async () => {
    for (const path of ['/v1/auth/empty/users', '/v1/auth/empty/groups']) {
      const res = await api('LIST', path);
      expect([res.status, res.text, res.headers.get('content-type')]).toEqual([
        404,
        '{"errors":[]}\n',
        'application/json',
      ]);
    }
  });

  it('refuses a list value that is not a bool (400), and treats list=false as a read', async () => {
    const res = await api('GET', '/v1/auth/lists/users?list=maybe');
    expect([res.status, res.text]).toEqual([400, '{"errors":[]}\n']);
    const read = await api('GET', '/v1/auth/lists/users?list=false');
    expect([read.status, read.json()]).toEqual([405, { errors: ['unsupported operation'] }]);
  });
});

describe('routes and status codes', () => {
  const errorsOf = async (method: string, path: string) => {
    const res = await api(method, path);
    return [res.status, res.json<{ errors: string[] }>().errors];
  };

  it('answers an unknown mount as the real router does', async () => {
    expect(await errorsOf('GET', '/v1/auth/nope/config')).toEqual([
      404,
      ['no handler for route "auth/nope/config". route entry not found.'],
    ]);
  });

  it('answers an unknown path inside a mount with unsupported path', async () => {
    expect(await errorsOf('GET', '/v1/auth/ldap/roles/x')).toEqual([404, ['unsupported path']]);
  });

  it('answers an operation a path lacks with 405 unsupported operation', async () => {
    expect(await errorsOf('DELETE', '/v1/auth/ldap/config')).toEqual([405, ['unsupported operation']]);
    expect(await errorsOf('LIST', '/v1/auth/ldap/config')).toEqual([404, ['unsupported path']]);
    expect(await errorsOf('GET', '/v1/auth/ldap/groups')).toEqual([405, ['unsupported operation']]);
    expect(await errorsOf('GET', '/v1/auth/ldap/login/alice')).toEqual([405, ['unsupported operation']]);
  });

  it('answers a method the real HTTP layer does not know with 405 and no message', async () => {
    const res = await api('PROPFIND', '/v1/auth/ldap/config');
    expect([res.status, res.text]).toEqual([405, '{"errors":[]}\n']);
  });

  it('owns /v1/sys/: unknown paths there are 404 in the same style', async () => {
    expect(await errorsOf('GET', '/v1/sys/rekey-recovery-key/nothing')).toEqual([404, ['unsupported path']]);
  });
});
