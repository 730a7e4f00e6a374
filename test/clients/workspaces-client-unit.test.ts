/**
 * What the workspaces client puts on the wire (paths, encoded queries, headers, JSON:API bodies), how
 * it walks pages, which failures it retries and how it reads JSON:API errors, checked against a
 * MockAgent. Behaviour against the sandbox over real HTTP is in workspaces-client.test.ts.
 */
import { inspect } from 'node:util';
import { MockAgent } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connectionFromEnv, HttpStatusError, UnexpectedResponseError } from '../../src/clients/http/index.js';
import { workspacesService } from '../../src/clients/workspaces/definition.js';
import { WorkspacesClient } from '../../src/clients/workspaces/client.js';
import { describeLockHolder } from '../../src/clients/workspaces/lock-holder.js';

const ORIGIN = 'http://tfe.test';
const TOKEN = 'ws-token-9b31c7e2d4';
const JSON_API = 'application/vnd.api+json';
const apiHeaders = { 'content-type': JSON_API };

let agent: MockAgent;
let pool: ReturnType<MockAgent['get']>;

beforeEach(() => {
  agent = new MockAgent({ enableCallHistory: true });
  agent.disableNetConnect();
  pool = agent.get(ORIGIN);
});

afterEach(async () => {
  agent.assertNoPendingInterceptors();
  await agent.close();
});

function client(defaultOrganization?: string): WorkspacesClient {
  return WorkspacesClient.fromConnection({
    address: ORIGIN,
    token: TOKEN,
    dispatcher: agent,
    ...(defaultOrganization ? { defaultOrganization } : {}),
    http: { retry: { minDelayMs: 1, maxDelayMs: 5 } },
  });
}

interface Sent {
  method: string;
  /** Path with the query exactly as encoded on the wire. */
  path: string;
  headers: Record<string, string>;
  body: unknown;
}

/** Every request the agent saw, in order. */
function sent(): Sent[] {
  return (agent.getCallHistory()?.calls() ?? []).map((call) => {
    const url = new URL(call.fullUrl);
    return {
      method: call.method,
      path: `${url.pathname}${url.search}`,
      headers: Object.fromEntries(
        Object.entries(call.headers ?? {}).map(([k, v]) => [k.toLowerCase(), String(v)]),
      ),
      body: typeof call.body === 'string' && call.body !== '' ? JSON.parse(call.body) : undefined,
    };
  });
}

function workspaceResource(id: string, name: string, extra: Record<string, unknown> = {}) {
  return {
    id,
    type: 'workspaces',
    attributes: { name, 'auto-apply': false, 'execution-mode': 'remote', locked: false },
    relationships: {
      organization: { data: { id: 'acme', type: 'organizations' } },
      project: { data: { id: 'prj-1', type: 'projects' } },
      'current-state-version': { data: null },
      ...extra,
    },
    links: { self: `/api/v2/organizations/acme/workspaces/${name}` },
  };
}

function doc(data: unknown, more: Record<string, unknown> = {}) {
  return JSON.stringify({ data, ...more });
}

async function caught(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected the promise to reject');
}

describe('workspaces on the wire', () => {
  it('creates a workspace with a JSON:API body, the media type and the bearer token', async () => {
    pool
      .intercept({ path: '/api/v2/organizations/acme/workspaces', method: 'POST' })
      .reply(201, doc(workspaceResource('ws-1', 'app')), { headers: apiHeaders });
    const ws = await client().createWorkspace(
      'acme',
      { name: 'app', 'auto-apply': true },
      { projectId: 'prj-9' },
    );
    const [req] = sent();
    expect(req).toMatchObject({ method: 'POST', path: '/api/v2/organizations/acme/workspaces' });
    expect(req!.headers).toMatchObject({
      'content-type': JSON_API,
      accept: JSON_API,
      authorization: `Bearer ${TOKEN}`,
    });
    expect(req!.body).toEqual({
      data: {
        type: 'workspaces',
        attributes: { name: 'app', 'auto-apply': true },
        relationships: { project: { data: { type: 'projects', id: 'prj-9' } } },
      },
    });
    expect(ws).toEqual({
      id: 'ws-1',
      organization: 'acme',
      name: 'app',
      attributes: { name: 'app', 'auto-apply': false, 'execution-mode': 'remote', locked: false },
      projectId: 'prj-1',
      projectName: null,
      lockedBy: null,
      lockedByName: null,
      lockReason: null,
      currentStateVersionId: null,
      agentPoolId: null,
    });
  });

  it('leaves out the project relationship without a project, and uses the default organization', async () => {
    pool
      .intercept({ path: '/api/v2/organizations/dflt/workspaces', method: 'POST' })
      .reply(201, doc(workspaceResource('ws-1', 'app')), { headers: apiHeaders });
    const c = client('dflt');
    expect(c.defaultOrganization).toBe('dflt');
    await c.createWorkspace(undefined, { name: 'app' });
    expect(sent()[0]!.body).toEqual({ data: { type: 'workspaces', attributes: { name: 'app' } } });
    await expect(client().listWorkspaces('')).rejects.toThrow(/CONVERGE_WORKSPACES_ORGANIZATION/);
  });

  it('reads by name or id, maps include=project and locked-by, and gives 404 as undefined', async () => {
    const locked = workspaceResource('ws-1', 'app', {
      'locked-by': { data: { id: 'user-7', type: 'users' } },
      'current-state-version': { data: { id: 'sv-3', type: 'state-versions' } },
    });
    pool.intercept({ path: /^\/api\/v2\/organizations\/acme\/workspaces\/app/, method: 'GET' }).reply(
      200,
      doc(locked, {
        included: [
          { id: 'prj-1', type: 'projects', attributes: { name: 'Platform' } },
          { id: 'user-7', type: 'users', attributes: { username: 'alice' } },
        ],
      }),
      { headers: apiHeaders },
    );
    pool
      .intercept({ path: /^\/api\/v2\/workspaces\//, method: 'GET' })
      .reply(404, JSON.stringify({ errors: [{ status: '404', title: 'not found' }] }), {
        headers: apiHeaders,
      });
    const c = client();
    const ws = await c.readWorkspace({ organization: 'acme', name: 'app' }, { include: ['project'] });
    expect(ws).toMatchObject({
      projectId: 'prj-1',
      projectName: 'Platform',
      lockedBy: { id: 'user-7', type: 'users' },
      lockedByName: 'alice',
      currentStateVersionId: 'sv-3',
    });
    expect(await c.readWorkspace({ id: 'ws-a/b' })).toBeUndefined();
    expect(sent().map((s) => s.path)).toEqual([
      '/api/v2/organizations/acme/workspaces/app?include=project',
      '/api/v2/workspaces/ws-a%2Fb',
    ]);
    await expect(c.readWorkspace({ id: '' })).rejects.toThrow('workspace id must not be empty');
    // The pool of an agent workspace comes as a relationship, never as an attribute.
    const agent = workspaceResource('ws-2', 'agent', {
      'agent-pool': { data: { id: 'apool-1', type: 'agent-pools' } },
    });
    pool
      .intercept({ path: '/api/v2/workspaces/ws-2', method: 'GET' })
      .reply(200, doc(agent), { headers: apiHeaders });
    expect(await c.readWorkspace({ id: 'ws-2' })).toMatchObject({ agentPoolId: 'apool-1' });
  });

  it('reads the lock holder name from include=locked_by and the lock reason, else the id alone', async () => {
    const locked = (id: string, holder: { id: string; type: string }, reason: string) => ({
      ...workspaceResource(id, id, { 'locked-by': { data: holder } }),
      attributes: { name: id, locked: true, 'locked-reason': reason },
    });
    pool.intercept({ path: /^\/api\/v2\/organizations\/acme\/workspaces\?/, method: 'GET' }).reply(
      200,
      doc(
        [
          locked('ws-t', { id: 'team-1', type: 'teams' }, 'freeze'),
          locked('ws-u', { id: 'user-2', type: 'users' }, ''),
        ],
        {
          included: [{ id: 'team-1', type: 'teams', attributes: { name: 'devs' } }],
          meta: { pagination: { 'current-page': 1, 'next-page': null, 'total-pages': 1, 'total-count': 2 } },
        },
      ),
      { headers: apiHeaders },
    );
    const [team, user] = await client().listWorkspaces('acme', { include: ['locked_by'] });
    expect(team).toMatchObject({
      lockedBy: { id: 'team-1', type: 'teams' },
      lockedByName: 'devs',
      lockReason: 'freeze',
    });
    // No included user, and an empty reason says nothing.
    expect(user).toMatchObject({
      lockedBy: { id: 'user-2', type: 'users' },
      lockedByName: null,
      lockReason: null,
    });
    expect(describeLockHolder(team!.lockedBy!, team!.lockedByName)).toBe('team devs');
    expect(describeLockHolder(user!.lockedBy!, user!.lockedByName)).toBe('user user-2');
    expect(describeLockHolder({ id: 'run-5', type: 'runs' })).toBe('run run-5');
  });

  it('updates with PATCH, by id or by name', async () => {
    pool
      .intercept({ path: '/api/v2/workspaces/ws-1', method: 'PATCH' })
      .reply(200, doc(workspaceResource('ws-1', 'app')), { headers: apiHeaders });
    pool
      .intercept({ path: '/api/v2/organizations/acme/workspaces/app', method: 'PATCH' })
      .reply(200, doc(workspaceResource('ws-1', 'app')), { headers: apiHeaders });
    const c = client();
    await c.updateWorkspace({ id: 'ws-1' }, { description: 'x' }, { projectId: 'prj-2' });
    await c.updateWorkspace({ organization: 'acme', name: 'app' }, { 'auto-apply': true });
    const [byId, byName] = sent();
    expect(byId!.body).toEqual({
      data: {
        type: 'workspaces',
        attributes: { description: 'x' },
        relationships: { project: { data: { type: 'projects', id: 'prj-2' } } },
      },
    });
    expect(byName!.body).toEqual({ data: { type: 'workspaces', attributes: { 'auto-apply': true } } });
  });

  it('percent-encodes bracketed query parameters', async () => {
    pool.intercept({ path: /^\/api\/v2\/organizations\/acme\/workspaces\?/, method: 'GET' }).reply(
      200,
      doc([], {
        meta: {
          pagination: {
            'current-page': 2,
            'page-size': 50,
            'prev-page': 1,
            'next-page': null,
            'total-pages': 2,
            'total-count': 50,
          },
        },
      }),
      { headers: apiHeaders },
    );
    const page = await client().listWorkspacesPage(
      'acme',
      {
        name: 'app',
        tags: ['a', 'b'],
        excludeTags: ['x'],
        wildcardName: '*-prod',
        projectId: 'prj-1',
        include: ['project'],
      },
      { number: 2, size: 50 },
    );
    expect(sent()[0]!.path).toBe(
      '/api/v2/organizations/acme/workspaces?search%5Bname%5D=app&search%5Btags%5D=a%2Cb' +
        '&search%5Bexclude-tags%5D=x&search%5Bwildcard-name%5D=*-prod&filter%5Bproject%5D%5Bid%5D=prj-1' +
        '&include=project&page%5Bnumber%5D=2&page%5Bsize%5D=50',
    );
    expect(page).toEqual({
      items: [],
      pagination: {
        currentPage: 2,
        pageSize: 50,
        prevPage: 1,
        nextPage: null,
        totalPages: 2,
        totalCount: 50,
      },
    });
  });

  it('walks every page at page[size]=100', async () => {
    const pages = [1, 2, 3].map((n) => ({
      items: [workspaceResource(`ws-${n}a`, `w${n}a`), workspaceResource(`ws-${n}b`, `w${n}b`)],
      pagination: {
        'current-page': n,
        'page-size': 100,
        'prev-page': n > 1 ? n - 1 : null,
        'next-page': n < 3 ? n + 1 : null,
        'total-pages': 3,
        'total-count': 6,
      },
    }));
    for (const page of pages) {
      pool
        .intercept({
          path: `/api/v2/organizations/acme/workspaces?page%5Bnumber%5D=${page.pagination['current-page']}&page%5Bsize%5D=100`,
          method: 'GET',
        })
        .reply(200, doc(page.items, { meta: { pagination: page.pagination } }), { headers: apiHeaders });
    }
    const c = client();
    const all = await c.listWorkspaces('acme');
    expect(all.map((w) => w.name)).toEqual(['w1a', 'w1b', 'w2a', 'w2b', 'w3a', 'w3b']);
    expect(c.requestCount).toBe(3);
  });

  it('follows links.next when a list has no meta.pagination', async () => {
    pool
      .intercept({ path: '/api/v2/organizations/acme/projects?page%5Bnumber%5D=1&page%5Bsize%5D=100' })
      .reply(
        200,
        doc([{ id: 'prj-1', type: 'projects', attributes: { name: 'Default Project' } }], {
          links: {
            next: `${ORIGIN}/api/v2/organizations/acme/projects?page%5Bnumber%5D=2&page%5Bsize%5D=100`,
          },
        }),
        { headers: apiHeaders },
      );
    pool
      .intercept({ path: '/api/v2/organizations/acme/projects?page%5Bnumber%5D=2&page%5Bsize%5D=100' })
      .reply(200, doc([{ id: 'prj-2', type: 'projects', attributes: { name: 'Platform' } }]), {
        headers: apiHeaders,
      });
    expect(await client().listProjects('acme')).toEqual([
      { id: 'prj-1', name: 'Default Project', organization: 'acme' },
      { id: 'prj-2', name: 'Platform', organization: 'acme' },
    ]);
  });

  it('deletes, locks and unlocks on the documented paths', async () => {
    const ws = doc(workspaceResource('ws-1', 'app'));
    pool.intercept({ path: '/api/v2/workspaces/ws-1/actions/safe-delete', method: 'POST' }).reply(204, '');
    pool
      .intercept({ path: '/api/v2/organizations/acme/workspaces/app/actions/safe-delete', method: 'POST' })
      .reply(204, '');
    pool.intercept({ path: '/api/v2/workspaces/ws-1', method: 'DELETE' }).reply(204, '');
    for (const action of ['lock', 'unlock', 'force-unlock']) {
      pool
        .intercept({ path: `/api/v2/workspaces/ws-1/actions/${action}`, method: 'POST' })
        .reply(200, ws, { headers: apiHeaders });
    }
    const c = client();
    await c.safeDeleteWorkspace({ id: 'ws-1' });
    await c.safeDeleteWorkspace({ organization: 'acme', name: 'app' });
    await c.forceDeleteWorkspace({ id: 'ws-1' });
    await c.lockWorkspace('ws-1', 'maintenance');
    await c.unlockWorkspace('ws-1');
    await c.forceUnlockWorkspace('ws-1');
    const calls = sent();
    expect(calls.map((s) => `${s.method} ${s.path}`)).toEqual([
      'POST /api/v2/workspaces/ws-1/actions/safe-delete',
      'POST /api/v2/organizations/acme/workspaces/app/actions/safe-delete',
      'DELETE /api/v2/workspaces/ws-1',
      'POST /api/v2/workspaces/ws-1/actions/lock',
      'POST /api/v2/workspaces/ws-1/actions/unlock',
      'POST /api/v2/workspaces/ws-1/actions/force-unlock',
    ]);
    expect(calls[3]!.body).toEqual({ reason: 'maintenance' });
    expect(calls[4]!.body).toBeUndefined();
  });

  it('sends a safe delete by id again after a lost answer, and one by name only once', async () => {
    const byId = '/api/v2/workspaces/ws-1/actions/safe-delete';
    pool.intercept({ path: byId, method: 'POST' }).reply(503, 'busy');
    pool
      .intercept({ path: byId, method: 'POST' })
      .replyWithError(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
    // The dropped send had landed: the next one finds the workspace gone.
    pool
      .intercept({ path: byId, method: 'POST' })
      .reply(404, { errors: [{ status: '404', title: 'not found' }] });
    const error = await client()
      .safeDeleteWorkspace({ id: 'ws-1' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HttpStatusError);
    expect((error as HttpStatusError).status).toBe(404);

    const byName = '/api/v2/organizations/acme/workspaces/app/actions/safe-delete';
    pool.intercept({ path: byName, method: 'POST' }).reply(503, 'busy');
    await expect(client().safeDeleteWorkspace({ organization: 'acme', name: 'app' })).rejects.toThrow(/503/);
    expect(sent().map((s) => s.path)).toEqual([byId, byId, byId, byName]);
  });

  it('pings for the rate limit and asks who the token belongs to', async () => {
    pool.intercept({ path: '/api/v2/ping' }).reply(204, '', { headers: { 'x-ratelimit-limit': '30' } });
    pool
      .intercept({ path: '/api/v2/account/details' })
      .reply(200, doc({ id: 'user-1', type: 'users', attributes: { username: 'alice' } }), {
        headers: apiHeaders,
      });
    pool.intercept({ path: '/api/v2/account/details' }).reply(404, '');
    const c = client();
    expect(await c.ping()).toEqual({ rateLimit: 30 });
    expect(c.http.announcedRateLimit).toBe(30);
    expect(await c.whoAmI()).toEqual({ id: 'user-1', type: 'users', username: 'alice' });
    expect(await c.whoAmI()).toBeUndefined();
  });
});

describe('state versions on the wire', () => {
  const sv = {
    id: 'sv-1',
    type: 'state-versions',
    attributes: { serial: 3, 'hosted-state-download-url': `${ORIGIN}/archivist/object/s3cr3t` },
    relationships: { workspace: { data: { id: 'ws-1', type: 'workspaces' } } },
  };

  it('creates a state version with kebab-case attributes', async () => {
    pool
      .intercept({ path: '/api/v2/workspaces/ws-1/state-versions', method: 'POST' })
      .reply(201, doc(sv), { headers: apiHeaders });
    const created = await client().createStateVersion('ws-1', {
      serial: 3,
      md5: 'abc',
      state: 'e30=',
      lineage: 'l-1',
      jsonState: 'e30=',
      jsonStateOutputs: 'e30=',
    });
    expect(sent()[0]!.body).toEqual({
      data: {
        type: 'state-versions',
        attributes: {
          serial: 3,
          md5: 'abc',
          state: 'e30=',
          lineage: 'l-1',
          'json-state': 'e30=',
          'json-state-outputs': 'e30=',
        },
      },
    });
    expect(created).toEqual({ id: 'sv-1', workspaceId: 'ws-1', attributes: sv.attributes });
  });

  it('lists with filter[…] parameters, reads current and by id, 404 as undefined', async () => {
    pool.intercept({ path: /^\/api\/v2\/state-versions\?/ }).reply(200, doc([sv]), { headers: apiHeaders });
    pool.intercept({ path: '/api/v2/workspaces/ws-1/current-state-version' }).reply(404, '');
    pool
      .intercept({ path: '/api/v2/state-versions/sv-1?include=created_by%2Coutputs' })
      .reply(200, doc(sv, { included: [{ id: 'user-1', type: 'users' }] }), { headers: apiHeaders });
    const c = client();
    expect(await c.listStateVersions('acme', 'app')).toHaveLength(1);
    expect(await c.currentStateVersion('ws-1')).toBeUndefined();
    const read = await c.readStateVersion('sv-1', { include: ['created_by', 'outputs'] });
    expect(read?.stateVersion.id).toBe('sv-1');
    expect(read?.included).toEqual([{ id: 'user-1', type: 'users' }]);
    expect(sent()[0]!.path).toBe(
      '/api/v2/state-versions?filter%5Bworkspace%5D%5Bname%5D=app&filter%5Borganization%5D%5Bname%5D=acme' +
        '&page%5Bnumber%5D=1&page%5Bsize%5D=100',
    );
  });

  it('downloads the raw text without the token, even from the service origin', async () => {
    const raw = '{\n  "version": 4,   "serial": 3\n}\n';
    pool
      .intercept({ path: '/archivist/object/s3cr3t', method: 'GET' })
      .reply(200, raw, { headers: { 'content-type': 'application/json' } });
    pool.intercept({ path: '/api/v2/state-versions/relative' }).reply(200, 'x', {});
    const c = client();
    expect(await c.downloadState(`${ORIGIN}/archivist/object/s3cr3t`)).toBe(raw);
    expect(await c.downloadState('/api/v2/state-versions/relative')).toBe('x');
    const [download] = sent();
    expect(download!.headers.authorization).toBeUndefined();
    expect(download!.headers.accept).toBe('application/json');
    expect(c.requestCount).toBe(2);
    await c.close();
  });
});

describe('retries', () => {
  it('retries a POST after 429, waiting as X-RateLimit-Reset says', async () => {
    pool.intercept({ path: '/api/v2/organizations/acme/workspaces', method: 'POST' }).reply(
      429,
      JSON.stringify({
        errors: [
          { detail: "You have exceeded the API's rate limit.", status: 429, title: 'Too many requests' },
        ],
      }),
      { headers: { ...apiHeaders, 'x-ratelimit-reset': '0.02' } },
    );
    pool
      .intercept({ path: '/api/v2/organizations/acme/workspaces', method: 'POST' })
      .reply(201, doc(workspaceResource('ws-1', 'app')), { headers: apiHeaders });
    const c = client();
    const started = performance.now();
    expect((await c.createWorkspace('acme', { name: 'app' })).id).toBe('ws-1');
    expect(performance.now() - started).toBeGreaterThanOrEqual(15);
    expect(c.requestCount).toBe(2);
  });

  it('does not retry POST on 5xx, but retries GET, PATCH (it sets what it names), and lock and unlock when asked to resend', async () => {
    pool.intercept({ path: '/api/v2/organizations/acme/workspaces', method: 'POST' }).reply(503, '');
    pool.intercept({ path: '/api/v2/workspaces/ws-1', method: 'PATCH' }).reply(502, '');
    pool
      .intercept({ path: '/api/v2/workspaces/ws-1', method: 'PATCH' })
      .reply(200, doc(workspaceResource('ws-1', 'app')), { headers: apiHeaders });
    pool.intercept({ path: '/api/v2/workspaces/ws-1/actions/lock', method: 'POST' }).reply(500, '');
    pool.intercept({ path: '/api/v2/workspaces/ws-1/actions/lock', method: 'POST' }).reply(500, '');
    pool
      .intercept({ path: '/api/v2/workspaces/ws-1/actions/lock', method: 'POST' })
      .reply(200, doc(workspaceResource('ws-1', 'app')), { headers: apiHeaders });
    pool.intercept({ path: '/api/v2/workspaces/ws-1', method: 'GET' }).reply(503, '');
    pool
      .intercept({ path: '/api/v2/workspaces/ws-1', method: 'GET' })
      .reply(200, doc(workspaceResource('ws-1', 'app')), { headers: apiHeaders });
    const c = client();
    await expect(c.createWorkspace('acme', { name: 'app' })).rejects.toMatchObject({
      status: 503,
      attempts: 1,
    });
    expect((await c.updateWorkspace({ id: 'ws-1' }, {})).id).toBe('ws-1');
    // Only callers that read a 409 back ask for the resend (state-push, the inventory lock).
    await expect(c.lockWorkspace('ws-1')).rejects.toMatchObject({ status: 500, attempts: 1 });
    expect((await c.lockWorkspace('ws-1', 'r', { resend: true })).id).toBe('ws-1');
    expect((await c.readWorkspace({ id: 'ws-1' }))?.id).toBe('ws-1');
    expect(c.requestCount).toBe(8);
  });
});

describe('errors', () => {
  it('reads a 422 with title, detail and pointer into one line and a details list', async () => {
    pool.intercept({ path: '/api/v2/organizations/acme/workspaces', method: 'POST' }).reply(
      422,
      JSON.stringify({
        errors: [
          {
            status: '422',
            title: 'invalid attribute',
            detail: 'Name has already been taken',
            source: { pointer: '/data/attributes/name' },
          },
          { status: '422', title: 'invalid attribute', detail: 'Execution mode is not valid' },
        ],
      }),
      { headers: apiHeaders },
    );
    const err = await caught(client().createWorkspace('acme', { name: 'app' }));
    expect(err).toBeInstanceOf(HttpStatusError);
    expect((err as Error).message).toBe(
      'workspaces: POST /api/v2/organizations/acme/workspaces → 422 invalid attribute: Name has already been taken ' +
        '(at /data/attributes/name); invalid attribute: Execution mode is not valid',
    );
    expect((err as HttpStatusError).details).toEqual([
      {
        status: 422,
        title: 'invalid attribute',
        detail: 'Name has already been taken',
        pointer: '/data/attributes/name',
      },
      { status: 422, title: 'invalid attribute', detail: 'Execution mode is not valid' },
    ]);
    expect(JSON.parse(JSON.stringify(err)).details).toHaveLength(2);
  });

  it('accepts {"errors":["text"]}, integer statuses and 5xx error documents', async () => {
    pool
      .intercept({ path: '/api/v2/workspaces/ws-1/actions/unlock', method: 'POST' })
      .reply(409, JSON.stringify({ errors: ['workspace already unlocked'] }), { headers: apiHeaders });
    pool
      .intercept({ path: '/api/v2/workspaces/ws-1/actions/lock', method: 'POST' })
      .reply(
        409,
        JSON.stringify({ errors: [{ status: 409, title: 'conflict', detail: 'Conflict: locked' }] }),
        {
          headers: apiHeaders,
        },
      );
    pool
      .intercept({ path: '/api/v2/workspaces/ws-1/actions/force-unlock', method: 'POST' })
      .reply(500, JSON.stringify({ errors: [{ status: '500', title: 'internal error' }] }), {
        headers: apiHeaders,
      });
    const c = client();
    const unlock = await caught(c.unlockWorkspace('ws-1'));
    expect(unlock).toMatchObject({
      status: 409,
      serviceMessage: 'workspace already unlocked',
      details: [{ detail: 'workspace already unlocked' }],
    });
    const lock = await caught(c.lockWorkspace('ws-1'));
    // The detail repeats the title, so the title is not said twice.
    expect(lock).toMatchObject({ serviceMessage: 'Conflict: locked', details: [{ status: 409 }] });
    const force = await caught(c.forceUnlockWorkspace('ws-1'));
    expect((force as Error).message).toMatch(/→ 500 internal error$/);
  });

  it('never shows the token, even when the service echoes it', async () => {
    pool
      .intercept({ path: '/api/v2/workspaces/ws-1', method: 'PATCH' })
      .reply(
        401,
        JSON.stringify({ errors: [{ status: '401', title: 'unauthorized', detail: `bad token ${TOKEN}` }] }),
        { headers: apiHeaders },
      );
    const err = await caught(client().updateWorkspace({ id: 'ws-1' }, {}));
    const rendered = [
      inspect(err, { depth: 10, showHidden: true }),
      JSON.stringify(err),
      String((err as Error).stack),
    ].join('\n');
    expect(rendered).toContain('bad token [redacted]');
    expect(rendered).not.toContain(TOKEN);
  });

  it('refuses a 2xx answer that is not a JSON:API document', async () => {
    pool
      .intercept({ path: '/api/v2/workspaces/ws-1' })
      .reply(200, '<html>proxy</html>', { headers: { 'content-type': 'text/html' } });
    pool.intercept({ path: '/api/v2/workspaces/ws-2' }).reply(200, doc([]), { headers: apiHeaders });
    const c = client();
    await expect(c.readWorkspace({ id: 'ws-1' })).rejects.toBeInstanceOf(UnexpectedResponseError);
    await expect(c.readWorkspace({ id: 'ws-2' })).rejects.toThrow(
      'workspaces: GET /api/v2/workspaces/ws-2 → 200 expected a single workspaces resource in "data"',
    );
  });
});

describe('connection', () => {
  it('adds /api/v2 to the address unless it is there', async () => {
    const a = WorkspacesClient.fromConnection({ address: 'http://h.test/' });
    const b = WorkspacesClient.fromConnection({ address: 'http://h.test/tfe/api/v2' });
    expect(a.http.baseUrl).toBe('http://h.test/api/v2');
    expect(b.http.baseUrl).toBe('http://h.test/tfe/api/v2');
    await Promise.all([a.close(), b.close()]);
  });

  it('takes its default organization from CONVERGE_WORKSPACES_ORGANIZATION', async () => {
    // The definition imports its client on demand (start-up, issue 20); connections do this for kinds.
    await workspacesService.loadClient?.();
    const client = workspacesService.createClient(
      connectionFromEnv(workspacesService, {
        CONVERGE_WORKSPACES_ADDR: 'http://h.test',
        CONVERGE_WORKSPACES_ORGANIZATION: ' acme ',
      }),
    );
    expect(client.defaultOrganization).toBe('acme');
    await client.close();
  });
});
