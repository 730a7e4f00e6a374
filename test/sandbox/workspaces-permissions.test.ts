/**
 * Workspace service: the lock state machine row by row, and what each kind of token may do (owners,
 * team members with and without rights, team tokens, organization tokens, strangers, unknown tokens).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, type SandboxConfig, startSandbox } from '../../src/sandbox/index.js';
import { type Api, apiFor } from './helpers.js';

let sandbox: RunningSandbox;
let api: Api;

const config: SandboxConfig = {
  workspaces: {
    organizations: [
      {
        name: 'acme',
        projects: ['platform'],
        teams: [
          {
            name: 'devs',
            access: {
              '*': { runs: 'read', lock: true, stateVersions: 'write' },
              'web-prod': { admin: true },
            },
          },
          { name: 'readers', access: { '*': { runs: 'read', stateVersions: 'read' } } },
          { name: 'web-only', access: { 'web-prod': { runs: 'read' } } },
          { name: 'managers', manageWorkspaces: true },
          { name: 'platform-admins', projectAdmin: ['platform'] },
        ],
        workspaces: [
          { name: 'web-dev' },
          { name: 'web-prod' },
          { name: 'api-dev' },
          { name: 'infra', project: 'platform' },
        ],
      },
      {
        name: 'lenient',
        forceDeleteByAdmins: true,
        teams: [{ name: 'admins', access: { '*': { admin: true } } }],
        workspaces: [{ name: 'a' }, { name: 'b' }],
      },
    ],
  },
  tokens: [
    { name: 'olivia', secret: 'owner-token', workspaces: { user: 'olivia', teams: { acme: ['owners'] } } },
    { name: 'alice', secret: 'alice-token', workspaces: { user: 'alice', teams: { acme: ['devs'] } } },
    { name: 'bob', secret: 'bob-token', workspaces: { user: 'bob', teams: { acme: ['devs'] } } },
    { name: 'rita', secret: 'reader-token', workspaces: { user: 'rita', teams: { acme: ['readers'] } } },
    { name: 'wendy', secret: 'web-only-token', workspaces: { user: 'wendy', teams: { acme: ['web-only'] } } },
    { name: 'max', secret: 'manager-token', workspaces: { user: 'max', teams: { acme: ['managers'] } } },
    {
      name: 'pat',
      secret: 'platform-token',
      workspaces: { user: 'pat', teams: { acme: ['platform-admins'] } },
    },
    { name: 'lena', secret: 'lenient-token', workspaces: { user: 'lena', teams: { lenient: ['admins'] } } },
    {
      name: 'stranger',
      secret: 'stranger-token',
      workspaces: { user: 'sam', teams: { lenient: ['owners'] } },
    },
    { name: 'devs-team', secret: 'team-token', workspaces: { team: 'devs', organization: 'acme' } },
    { name: 'acme-org', secret: 'org-token', workspaces: { organization: 'acme' } },
  ],
};

beforeAll(async () => {
  sandbox = await startSandbox({ token: 'root-token', config });
  api = apiFor(sandbox);
});

afterAll(async () => {
  await sandbox.close();
});

interface WorkspaceDoc {
  data: {
    id: string;
    attributes: Record<string, unknown> & { locked: boolean; permissions: Record<string, boolean> };
    relationships: Record<string, { data?: { id: string; type: string } | null }>;
  };
}

async function userId(token: string): Promise<string> {
  const res = await api('GET', '/api/v2/account/details', { token });
  expect(res.status).toBe(200);
  return res.json<{ data: { id: string } }>().data.id;
}

async function workspaceId(name: string, org = 'acme'): Promise<string> {
  const res = await api('GET', `/api/v2/organizations/${org}/workspaces/${name}`);
  expect(res.status).toBe(200);
  return res.json<WorkspaceDoc>().data.id;
}

const action = (id: string, name: string, token: string, body?: unknown) =>
  api('POST', `/api/v2/workspaces/${id}/actions/${name}`, { token, body });

function errorDetail(res: { json<T>(): T }): string | undefined {
  return res.json<{ errors: { detail?: string }[] }>().errors[0]!.detail;
}

describe('the lock state machine', () => {
  it('unlocked → lock → locked, with locked-by = the calling user', async () => {
    const id = await workspaceId('web-dev');
    const res = await action(id, 'lock', 'alice-token', { reason: 'deploying' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/vnd.api+json');
    const doc = res.json<WorkspaceDoc>();
    expect(doc.data.attributes.locked).toBe(true);
    expect(doc.data.attributes['locked-reason']).toBe('deploying');
    expect(doc.data.relationships['locked-by']!.data).toEqual({
      id: await userId('alice-token'),
      type: 'users',
    });

    // locked → lock → 409, whoever asks.
    for (const token of ['alice-token', 'bob-token']) {
      const again = await action(id, 'lock', token);
      expect(again.status).toBe(409);
      expect(again.json<{ errors: { status: string; title: string }[] }>().errors[0]).toMatchObject({
        status: '409',
        title: 'conflict',
      });
    }

    // locked → unlock by another user → 409 with the real text; still locked.
    const other = await action(id, 'unlock', 'bob-token');
    expect(other.status).toBe(409);
    expect(errorDetail(other)).toBe(
      `Unable to unlock workspace. The workspace is locked by User ${await userId('alice-token')} and may not be unlocked except by them.`,
    );
    const still = await api('GET', `/api/v2/workspaces/${id}`, { token: 'alice-token' });
    expect(still.json<WorkspaceDoc>().data.attributes.locked).toBe(true);

    // locked → unlock by the locker → unlocked, and locked-by is gone.
    const unlocked = await action(id, 'unlock', 'alice-token');
    expect(unlocked.status).toBe(200);
    const after = unlocked.json<WorkspaceDoc>();
    expect(after.data.attributes.locked).toBe(false);
    expect(after.data.attributes['locked-reason']).toBeNull();
    expect(after.data.relationships['locked-by']).toBeUndefined();

    // unlocked → unlock → 409.
    const twice = await action(id, 'unlock', 'alice-token');
    expect(twice.status).toBe(409);
  });

  it('force-unlock: locked → unlocked for an admin; unlocked → 409; 404 without admin', async () => {
    const id = await workspaceId('api-dev');
    expect((await action(id, 'lock', 'bob-token')).status).toBe(200);
    // alice may lock api-dev but is no admin of it: the action is not found for her.
    expect((await action(id, 'force-unlock', 'alice-token')).status).toBe(404);
    const forced = await action(id, 'force-unlock', 'owner-token');
    expect(forced.status).toBe(200);
    expect(forced.json<WorkspaceDoc>().data.attributes.locked).toBe(false);
    const again = await action(id, 'force-unlock', 'owner-token');
    expect(again.status).toBe(409);
    // admin through the workspace's own access entry (devs are admins of web-prod only).
    const prod = await workspaceId('web-prod');
    expect((await action(prod, 'lock', 'bob-token')).status).toBe(200);
    expect((await action(prod, 'force-unlock', 'alice-token')).status).toBe(200);
  });

  it('accepts a JSON:API lock body and no body at all (reason then empty)', async () => {
    const id = await workspaceId('infra');
    const wrapped = await action(id, 'lock', 'owner-token', { data: { attributes: { reason: 'wrapped' } } });
    expect(wrapped.json<WorkspaceDoc>().data.attributes['locked-reason']).toBe('wrapped');
    await action(id, 'unlock', 'owner-token');
    const bare = await action(id, 'lock', 'owner-token');
    expect(bare.status).toBe(200);
    expect(bare.json<WorkspaceDoc>().data.attributes['locked-reason']).toBe('');
    expect((await action(id, 'unlock', 'owner-token')).status).toBe(200);
    // A malformed lock body is a 400 and leaves the workspace unlocked.
    const bad = await api('POST', `/api/v2/workspaces/${id}/actions/lock`, {
      token: 'owner-token',
      rawBody: '{nope',
    });
    expect(bad.status).toBe(400);
    expect(bad.json()).toMatchObject({ errors: [{ status: '400', title: 'bad request' }] });
    expect((await action(id, 'unlock', 'owner-token')).status).toBe(409);
  });

  it('answers 404 for a missing workspace, a caller without the lock right, and other organizations', async () => {
    expect((await action('ws-doesnotexist0000', 'lock', 'owner-token')).status).toBe(404);
    const id = await workspaceId('web-dev');
    expect((await action(id, 'lock', 'reader-token')).status).toBe(404);
    expect((await action(id, 'lock', 'stranger-token')).status).toBe(404);
    expect((await action(id, 'unlock', 'reader-token')).status).toBe(404);
  });

  it('records a team token as the lock holder: only that team may unlock', async () => {
    const id = await workspaceId('web-dev');
    const res = await action(id, 'lock', 'team-token');
    expect(res.status).toBe(200);
    const holder = res.json<WorkspaceDoc>().data.relationships['locked-by']!.data!;
    expect(holder.type).toBe('teams');
    expect(holder.id).toMatch(/^team-[A-Za-z0-9]{16}$/);
    // The holder's name comes with include=locked_by, on a read and on a list alike.
    const read = await api('GET', `/api/v2/workspaces/${id}?include=locked_by`);
    expect(read.json<{ included: unknown[] }>().included).toEqual([
      expect.objectContaining({ id: holder.id, type: 'teams', attributes: { name: 'devs' } }),
    ]);
    const list = await api(
      'GET',
      '/api/v2/organizations/acme/workspaces?search[name]=web-dev&include=locked_by',
    );
    expect(list.json<{ included: unknown[] }>().included).toEqual([
      expect.objectContaining({ id: holder.id, type: 'teams' }),
    ]);
    const byMember = await action(id, 'unlock', 'alice-token');
    expect(byMember.status).toBe(409);
    expect(errorDetail(byMember)).toBe(
      `Unable to unlock workspace. The workspace is locked by Team ${holder.id} and may not be unlocked except by them.`,
    );
    expect((await action(id, 'unlock', 'team-token')).status).toBe(200);
  });

  it('does not let an organization token lock (404)', async () => {
    const id = await workspaceId('web-dev');
    expect((await action(id, 'lock', 'org-token')).status).toBe(404);
  });
});

describe('who sees and changes what', () => {
  it('answers 401 for a missing or unknown token, with the real error document', async () => {
    for (const token of [null, 'who-is-this']) {
      const res = await api('GET', '/api/v2/organizations/acme/workspaces', { token });
      expect(res.status).toBe(401);
      expect(res.json()).toEqual({ errors: [{ status: '401', title: 'unauthorized' }] });
    }
  });

  it('shows a workspace to callers who may read its runs, 404 to others', async () => {
    const path = '/api/v2/organizations/acme/workspaces/web-prod';
    for (const token of [
      'owner-token',
      'alice-token',
      'reader-token',
      'web-only-token',
      'team-token',
      'org-token',
    ]) {
      expect((await api('GET', path, { token })).status, token).toBe(200);
    }
    expect(
      (await api('GET', '/api/v2/organizations/acme/workspaces/web-dev', { token: 'web-only-token' })).status,
    ).toBe(404);
    expect((await api('GET', path, { token: 'stranger-token' })).status).toBe(404);
    expect(
      (await api('GET', '/api/v2/organizations/acme/workspaces', { token: 'stranger-token' })).status,
    ).toBe(404);
  });

  it('lists only the workspaces the caller may read runs of', async () => {
    const names = async (token: string) =>
      (await api('GET', '/api/v2/organizations/acme/workspaces', { token }))
        .json<{ data: { attributes: { name: string } }[] }>()
        .data.map((w) => w.attributes.name);
    expect(await names('web-only-token')).toEqual(['web-prod']);
    expect(await names('reader-token')).toEqual(
      expect.arrayContaining(['api-dev', 'infra', 'web-dev', 'web-prod']),
    );
    // pat administers the platform project only.
    expect(await names('platform-token')).toEqual(['infra']);
    // Owners and teams that manage workspaces see every one, in name order, as the reader does.
    const every = await names('reader-token');
    expect(await names('owner-token')).toEqual([...every].sort());
    expect(await names('manager-token')).toEqual([...every].sort());
    expect(await names('org-token')).toEqual([...every].sort());
    // A member of another organization only: not found, not an empty list.
    expect(
      (await api('GET', '/api/v2/organizations/acme/workspaces', { token: 'lenient-token' })).status,
    ).toBe(404);
  });

  it('lets owners, manage-workspaces teams and the organization token create; others get 404', async () => {
    const create = (token: string, name: string) =>
      api('POST', '/api/v2/organizations/acme/workspaces', {
        token,
        body: { data: { type: 'workspaces', attributes: { name } } },
      });
    expect((await create('owner-token', 'by-owner')).status).toBe(201);
    expect((await create('manager-token', 'by-manager')).status).toBe(201);
    expect((await create('org-token', 'by-org')).status).toBe(201);
    expect((await create('root-token', 'by-root')).status).toBe(201);
    for (const token of ['alice-token', 'team-token', 'reader-token', 'platform-token', 'stranger-token']) {
      expect((await create(token, `by-${token}`)).status, token).toBe(404);
    }
  });

  it('computes the permissions object for the caller', async () => {
    const perms = async (token: string, name: string) =>
      (await api('GET', `/api/v2/organizations/acme/workspaces/${name}`, { token })).json<WorkspaceDoc>().data
        .attributes.permissions;
    expect(Object.keys(await perms('owner-token', 'web-dev')).sort()).toHaveLength(20);
    expect(Object.values(await perms('owner-token', 'web-dev')).every(Boolean)).toBe(true);
    expect(await perms('alice-token', 'web-dev')).toMatchObject({
      'can-lock': true,
      'can-unlock': true,
      'can-update': false,
      'can-force-unlock': false,
      'can-create-state-versions': true,
      'can-read-state-versions': true,
      'can-force-delete': false,
      'can-queue-run': false,
    });
    expect(await perms('alice-token', 'web-prod')).toMatchObject({
      'can-update': true,
      'can-force-delete': false,
    });
    expect(await perms('reader-token', 'web-dev')).toMatchObject({
      'can-lock': false,
      'can-create-state-versions': false,
      'can-read-state-versions': true,
    });
    expect(await perms('org-token', 'web-dev')).toMatchObject({
      'can-update': true,
      'can-lock': false,
      'can-create-state-versions': false,
    });
  });

  it('lets only admins update (404 for others), and organization tokens manage settings', async () => {
    const patch = (token: string, name: string, attributes: Record<string, unknown>) =>
      api('PATCH', `/api/v2/organizations/acme/workspaces/${name}`, {
        token,
        body: { data: { type: 'workspaces', attributes } },
      });
    expect((await patch('alice-token', 'web-dev', { description: 'x' })).status).toBe(404);
    expect((await patch('alice-token', 'web-prod', { description: 'by alice' })).status).toBe(200);
    expect((await patch('org-token', 'web-dev', { description: 'by org' })).status).toBe(200);
    expect((await patch('reader-token', 'web-dev', { description: 'x' })).status).toBe(404);
  });

  it('needs admin on both projects to move a workspace', async () => {
    const projects = (await api('GET', '/api/v2/organizations/acme/projects')).json<{
      data: { id: string; attributes: { name: string } }[];
    }>().data;
    const platform = projects.find((p) => p.attributes.name === 'platform')!.id;
    const dflt = projects.find((p) => p.attributes.name === 'Default Project')!.id;
    const move = (token: string, project: string) =>
      api('PATCH', '/api/v2/organizations/acme/workspaces/infra', {
        token,
        body: {
          data: {
            type: 'workspaces',
            relationships: { project: { data: { id: project, type: 'projects' } } },
          },
        },
      });
    // pat administers platform (and so infra) but not the default project.
    expect((await move('platform-token', dflt)).status).toBe(404);
    const moved = await move('manager-token', dflt);
    expect(moved.status).toBe(200);
    expect(moved.json<WorkspaceDoc>().data.relationships.project!.data!.id).toBe(dflt);
    expect((await move('manager-token', platform)).status).toBe(200);
    // A blank id means no move.
    expect((await move('platform-token', '')).status).toBe(200);
  });

  it('force delete: owners 204; admins and readers 403; strangers 404', async () => {
    const del = (token: string, name: string, org = 'acme') =>
      api('DELETE', `/api/v2/organizations/${org}/workspaces/${name}`, { token });
    const forbidden = await del('alice-token', 'web-prod');
    expect(forbidden.status).toBe(403);
    expect(forbidden.json()).toMatchObject({ errors: [{ status: '403', title: 'forbidden' }] });
    expect((await del('reader-token', 'by-owner')).status).toBe(403);
    expect((await del('stranger-token', 'by-owner')).status).toBe(404);
    expect((await del('owner-token', 'by-owner')).status).toBe(204);
    expect((await api('GET', '/api/v2/organizations/acme/workspaces/by-owner')).status).toBe(404);
    // By id, too.
    const id = await workspaceId('by-manager');
    const byId = await api('DELETE', `/api/v2/workspaces/${id}`, { token: 'owner-token' });
    expect([byId.status, byId.text]).toEqual([204, '']);
    // An organization that lets workspace admins force delete.
    expect((await del('lenient-token', 'a', 'lenient')).status).toBe(204);
  });

  it('safe delete needs admin (404 otherwise)', async () => {
    const path = '/api/v2/organizations/acme/workspaces/by-org/actions/safe-delete';
    expect((await api('POST', path, { token: 'alice-token' })).status).toBe(404);
    expect((await api('POST', path, { token: 'org-token' })).status).toBe(204);
    expect((await api('POST', path, { token: 'org-token' })).status).toBe(404);
  });

  it('account details: the user of a user token; 404 for team and organization tokens', async () => {
    const alice = await api('GET', '/api/v2/account/details', { token: 'alice-token' });
    expect(alice.json()).toMatchObject({ data: { type: 'users', attributes: { username: 'alice' } } });
    expect(alice.json<{ data: { id: string } }>().data.id).toMatch(/^user-[A-Za-z0-9]{16}$/);
    const root = await api('GET', '/api/v2/account/details');
    expect(root.json()).toMatchObject({ data: { attributes: { username: 'root' } } });
    expect((await api('GET', '/api/v2/account/details', { token: 'team-token' })).status).toBe(404);
    expect((await api('GET', '/api/v2/account/details', { token: 'org-token' })).status).toBe(404);
  });

  it('shows an organization to its members, 404 for a missing one and for strangers alike', async () => {
    const acme = await api('GET', '/api/v2/organizations/acme', { token: 'alice-token' });
    expect(acme.status).toBe(200);
    expect(acme.json()).toMatchObject({
      data: { id: 'acme', type: 'organizations', attributes: { name: 'acme' } },
    });
    for (const token of ['team-token', 'org-token', 'root-token'])
      expect((await api('GET', '/api/v2/organizations/acme', { token })).status, token).toBe(200);
    expect((await api('GET', '/api/v2/organizations/acme', { token: 'stranger-token' })).status).toBe(404);
    expect((await api('GET', '/api/v2/organizations/lenient', { token: 'org-token' })).status).toBe(404);
    const missing = await api('GET', '/api/v2/organizations/nowhere');
    expect(missing.status).toBe(404);
    expect(missing.json()).toMatchObject({ errors: [{ status: '404', title: 'not found' }] });
    expect((await api('GET', '/api/v2/organizations/acme', { token: null })).status).toBe(401);
  });
});
