/**
 * The spec's row for `case_sensitive_names` ("when false, user and group names in local definitions
 * are lower-cased for matching"), over HTTP, for every operation on a local user, and the group
 * delete the sandbox keeps as the real service has it (issue 16).
 */
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
        mounts: [{ path: 'folded' }, { path: 'cased', config: { case_sensitive_names: true } }],
      },
    },
  });
  api = apiFor(sandbox);
});

afterAll(async () => {
  await sandbox.close();
});

const keysOf = async (path: string): Promise<string[]> => {
  const res = await api('LIST', path);
  if (res.status === 404) return [];
  expect(res.status, res.text).toBe(200);
  return res.json<{ data: { keys: string[] } }>().data.keys;
};

describe('case_sensitive_names false: "user and group names in local definitions are lower-cased for matching"', () => {
  it('a user delete is matched lower-cased: DELETE users/MARYJANE removes maryjane and her policies', async () => {
    const write = await api('POST', '/v1/auth/folded/users/maryjane', {
      body: { policies: 'admin', groups: 'ops' },
    });
    expect(write.status, write.text).toBe(204);

    const del = await api('DELETE', '/v1/auth/folded/users/MARYJANE');
    expect([del.status, del.text]).toEqual([204, '']);

    const read = await api('GET', '/v1/auth/folded/users/maryjane');
    expect([read.status, read.text]).toEqual([404, '{"errors":[]}\n']);
    expect(await keysOf('/v1/auth/folded/users')).not.toContain('maryjane');
  });

  it('a user write, read and delete in any case all reach the one lower-cased entry', async () => {
    await api('POST', '/v1/auth/folded/users/Peter', { body: { policies: 'a' } });
    await api('POST', '/v1/auth/folded/users/PETER', { body: { policies: 'b' } });
    expect(await keysOf('/v1/auth/folded/users')).toEqual(['peter']);
    const read = await api('GET', '/v1/auth/folded/users/pEtEr');
    expect(read.json<{ data: unknown }>().data).toEqual({ groups: '', policies: ['b'] });
    expect((await api('DELETE', '/v1/auth/folded/users/Peter')).status).toBe(204);
    expect((await api('GET', '/v1/auth/folded/users/peter')).status).toBe(404);
  });

  it('a group delete uses the name as given, as the real service does: DELETE groups/ADMINS leaves admins', async () => {
    await api('POST', '/v1/auth/folded/groups/admins', { body: { policies: 'root-ish' } });
    const del = await api('DELETE', '/v1/auth/folded/groups/ADMINS');
    expect([del.status, del.text]).toEqual([204, '']);
    const kept = await api('GET', '/v1/auth/folded/groups/admins');
    expect(kept.status, 'the real pathGroupDelete does not fold').toBe(200);
    expect(kept.json<{ data: unknown }>().data).toEqual({ policies: ['root-ish'] });
    expect((await api('DELETE', '/v1/auth/folded/groups/admins')).status).toBe(204);
    expect((await api('GET', '/v1/auth/folded/groups/admins')).status).toBe(404);
  });
});

describe('case_sensitive_names true: names are matched as given', () => {
  it('a user delete in another case leaves the user; in the same case it removes it', async () => {
    await api('POST', '/v1/auth/cased/users/MaryJane', { body: { policies: 'admin' } });
    expect((await api('DELETE', '/v1/auth/cased/users/maryjane')).status).toBe(204);
    expect((await api('GET', '/v1/auth/cased/users/MaryJane')).status).toBe(200);
    expect((await api('DELETE', '/v1/auth/cased/users/MaryJane')).status).toBe(204);
    expect((await api('GET', '/v1/auth/cased/users/MaryJane')).status).toBe(404);
  });
});
