/**
 * Workspace service: create defaults, validation (422 with pointers), update semantics, the VCS
 * repository, both path forms, includes, projects, ping and the JSON:API framing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { type Api, apiFor } from './helpers.js';

let sandbox: RunningSandbox;
let api: Api;
let defaultProject: string;
let platformProject: string;

beforeAll(async () => {
  sandbox = await startSandbox({
    token: 'root-token',
    config: {
      workspaces: {
        engineVersion: '1.9.8',
        organizations: [
          { name: 'acme', projects: ['platform'], agentPools: [{ name: 'pool-1', id: 'apool-pool1' }] },
          { name: 'other', agentPools: [{ name: 'theirs', id: 'apool-theirs' }] },
        ],
      },
    },
  });
  api = apiFor(sandbox);
  const projects = (await api('GET', '/api/v2/organizations/acme/projects')).json<{
    data: { id: string; attributes: { name: string } }[];
  }>().data;
  defaultProject = projects.find((p) => p.attributes.name === 'Default Project')!.id;
  platformProject = projects.find((p) => p.attributes.name === 'platform')!.id;
});

afterAll(async () => {
  await sandbox.close();
});

interface Doc {
  data: {
    id: string;
    type: string;
    attributes: Record<string, unknown>;
    relationships: Record<string, { data?: unknown; links?: Record<string, string> }>;
    links: Record<string, string>;
  };
  included?: { id: string; type: string; attributes: Record<string, unknown> }[];
}

const create = (attributes: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  api('POST', '/api/v2/organizations/acme/workspaces', {
    body: { data: { type: 'workspaces', attributes, ...extra } },
  });

const update = (name: string, attributes: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  api('PATCH', `/api/v2/organizations/acme/workspaces/${name}`, {
    body: { data: { type: 'workspaces', attributes, ...extra } },
  });

async function created(
  attributes: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Promise<Doc> {
  const res = await create(attributes, extra);
  expect(res.status, res.text).toBe(201);
  return res.json<Doc>();
}

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('creating a workspace', () => {
  it('answers 201 with the create defaults of the key table', async () => {
    const res = await create({ name: 'defaults' });
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toBe('application/vnd.api+json');
    const { data } = res.json<Doc>();
    expect(data.id).toMatch(/^ws-[A-Za-z0-9]{16}$/);
    expect(data.type).toBe('workspaces');
    expect(data.links.self).toBe('/api/v2/organizations/acme/workspaces/defaults');
    expect(data.attributes).toMatchObject({
      name: 'defaults',
      'allow-destroy-plan': true,
      'assessments-enabled': false,
      'auto-apply': false,
      description: null,
      'execution-mode': 'remote',
      operations: true,
      'file-triggers-enabled': true,
      'global-remote-state': false,
      'queue-all-runs': false,
      'speculative-enabled': true,
      'engine-version': '1.9.8',
      'trigger-prefixes': [],
      'trigger-patterns': [],
      'tag-names': [],
      'source-name': null,
      'source-url': null,
      'vcs-repo': null,
      'vcs-repo-identifier': null,
      'working-directory': null,
      locked: false,
      'resource-count': 0,
      actions: { 'is-destroyable': true },
      'apply-duration-average': null,
      'plan-duration-average': null,
      'policy-check-failures': null,
      'run-failures': null,
      'workspace-kpis-runs-count': null,
      environment: 'default',
      'structured-run-output-enabled': true,
    });
    for (const key of ['created-at', 'updated-at', 'latest-change-at'])
      expect(data.attributes[key]).toMatch(TIMESTAMP);
    expect(data.relationships.organization!.data).toEqual({ id: 'acme', type: 'organizations' });
    expect(data.relationships.project!.data).toEqual({ id: defaultProject, type: 'projects' });
    expect(data.relationships['current-state-version']).toEqual({
      data: null,
      links: { related: `/api/v2/workspaces/${data.id}/current-state-version` },
    });
    for (const rel of ['current-run', 'latest-run', 'current-configuration-version', 'agent-pool', 'readme'])
      expect(data.relationships[rel]!.data, rel).toBeNull();
    expect(data.relationships['locked-by']).toBeUndefined();
  });

  it('takes every settable attribute, a project, and the source label', async () => {
    const { data } = await created(
      {
        name: 'full_settings-1',
        description: 'd',
        'allow-destroy-plan': false,
        'auto-apply': true,
        'execution-mode': 'local',
        'file-triggers-enabled': false,
        'global-remote-state': true,
        'queue-all-runs': true,
        'speculative-enabled': false,
        'engine-version': '~> 1.8.0',
        'trigger-prefixes': ['modules/'],
        'trigger-patterns': ['**/*.tf'],
        'tag-names': ['prod', 'web'],
        'working-directory': 'envs/prod',
        'source-name': 'converge',
        'source-url': 'https://example.test/converge',
      },
      { relationships: { project: { data: { id: platformProject, type: 'projects' } } } },
    );
    expect(data.attributes).toMatchObject({
      description: 'd',
      'allow-destroy-plan': false,
      'auto-apply': true,
      'execution-mode': 'local',
      operations: false,
      'file-triggers-enabled': false,
      'global-remote-state': true,
      'queue-all-runs': true,
      'speculative-enabled': false,
      'engine-version': '~> 1.8.0',
      'trigger-prefixes': ['modules/'],
      'trigger-patterns': ['**/*.tf'],
      'tag-names': ['prod', 'web'],
      'working-directory': 'envs/prod',
      'source-name': 'converge',
      'source-url': 'https://example.test/converge',
    });
    expect(data.relationships.project!.data).toEqual({ id: platformProject, type: 'projects' });
  });

  it("accepts go-tfe's terraform-version and the underscore engine_version as engine-version", async () => {
    expect(
      (await created({ name: 'tfv', 'terraform-version': '1.5.7' })).data.attributes['engine-version'],
    ).toBe('1.5.7');
    expect(
      (await created({ name: 'underscore', engine_version: '1.6.0' })).data.attributes['engine-version'],
    ).toBe('1.6.0');
  });

  it("adds go-tfe's tags relationship to tag-names", async () => {
    const { data } = await created(
      { name: 'tagged', 'tag-names': ['a'] },
      { relationships: { tags: { data: [{ type: 'tags', attributes: { name: 'b' } }] } } },
    );
    expect(data.attributes['tag-names']).toEqual(['a', 'b']);
  });

  it('maps the deprecated operations flag and takes an agent pool of the organization', async () => {
    expect((await created({ name: 'ops-false', operations: false })).data.attributes['execution-mode']).toBe(
      'local',
    );
    const agent = await created({
      name: 'agent-ws',
      'execution-mode': 'agent',
      'agent-pool-id': 'apool-pool1',
    });
    expect(agent.data.relationships['agent-pool']!.data).toEqual({ id: 'apool-pool1', type: 'agent-pools' });
  });

  it('accepts a body sent as application/vnd.api+json', async () => {
    const res = await fetch(`${sandbox.url}/api/v2/organizations/acme/workspaces`, {
      method: 'POST',
      headers: { Authorization: 'Bearer root-token', 'Content-Type': 'application/vnd.api+json' },
      body: JSON.stringify({ data: { type: 'workspaces', attributes: { name: 'vnd' } } }),
    });
    expect(res.status).toBe(201);
  });
});

describe('validation: 422 pointing at the attribute', () => {
  const invalid = async (
    attributes: Record<string, unknown>,
    pointer: string,
    detail?: string | RegExp,
    extra: Record<string, unknown> = {},
  ) => {
    const res = await create(attributes, extra);
    expect(res.status, res.text).toBe(422);
    const err = res.json<{
      errors: { status: string; title: string; detail: string; source: { pointer: string } }[];
    }>().errors[0]!;
    expect(err).toMatchObject({ status: '422', title: 'invalid attribute', source: { pointer } });
    if (detail instanceof RegExp) expect(err.detail).toMatch(detail);
    else if (detail !== undefined) expect(err.detail).toBe(detail);
  };

  it('refuses a name taken in the organization, with the real document', async () => {
    await created({ name: 'taken' });
    const res = await create({ name: 'taken' });
    expect(res.status).toBe(422);
    expect(res.json()).toEqual({
      errors: [
        {
          status: '422',
          title: 'invalid attribute',
          detail: 'Name has already been taken',
          source: { pointer: '/data/attributes/name' },
        },
      ],
    });
    // The same name in another organization is fine.
    const other = await api('POST', '/api/v2/organizations/other/workspaces', {
      body: { data: { type: 'workspaces', attributes: { name: 'taken' } } },
    });
    expect(other.status).toBe(201);
  });

  it('checks the name pattern and length', async () => {
    await invalid({ name: 'has space' }, '/data/attributes/name', /invalid/);
    await invalid({ name: 'dot.ted' }, '/data/attributes/name');
    await invalid({}, '/data/attributes/name', "Name can't be blank");
    await invalid({ name: 'x'.repeat(91) }, '/data/attributes/name', /too long/);
    await invalid({ name: 7 }, '/data/attributes/name');
    expect((await create({ name: 'x'.repeat(90) })).status).toBe(201);
  });

  it('refuses execution-mode together with operations, and unknown modes', async () => {
    await invalid(
      { name: 'both', 'execution-mode': 'remote', operations: true },
      '/data/attributes/execution-mode',
    );
    await invalid({ name: 'weird', 'execution-mode': 'cloud' }, '/data/attributes/execution-mode');
  });

  it('needs agent-pool-id with mode agent, and refuses it otherwise', async () => {
    await invalid(
      { name: 'p1', 'execution-mode': 'agent' },
      '/data/attributes/agent-pool-id',
      /must be specified/,
    );
    await invalid(
      { name: 'p2', 'execution-mode': 'remote', 'agent-pool-id': 'apool-pool1' },
      '/data/attributes/agent-pool-id',
    );
    await invalid(
      { name: 'p3', 'execution-mode': 'local', 'agent-pool-id': 'apool-pool1' },
      '/data/attributes/agent-pool-id',
    );
    await invalid(
      { name: 'p4', operations: true, 'agent-pool-id': 'apool-pool1' },
      '/data/attributes/agent-pool-id',
    );
    await invalid({ name: 'p5', 'agent-pool-id': 'apool-pool1' }, '/data/attributes/agent-pool-id');
    // A pool of another organization.
    await invalid(
      { name: 'p6', 'execution-mode': 'agent', 'agent-pool-id': 'apool-theirs' },
      '/data/attributes/agent-pool-id',
    );
  });

  it('needs oauth-token-id and identifier when a repository is added', async () => {
    await invalid(
      { name: 'v1', 'vcs-repo': { identifier: 'acme/app' } },
      '/data/attributes/vcs-repo/oauth-token-id',
    );
    await invalid(
      { name: 'v2', 'vcs-repo': { 'oauth-token-id': 'ot-1' } },
      '/data/attributes/vcs-repo/identifier',
    );
    await invalid({ name: 'v3', 'vcs-repo': 'acme/app' }, '/data/attributes/vcs-repo');
  });

  it('checks types and the document type', async () => {
    await invalid({ name: 't1', 'auto-apply': 'yes' }, '/data/attributes/auto-apply');
    await invalid({ name: 't2', 'trigger-prefixes': 'a' }, '/data/attributes/trigger-prefixes');
    await invalid({ name: 't3', 'tag-names': ['has space'] }, '/data/attributes/tag-names');
    await invalid({ name: 't4', 'engine-version': 12 }, '/data/attributes/engine-version');
    const wrongType = await api('POST', '/api/v2/organizations/acme/workspaces', {
      body: { data: { type: 'projects', attributes: { name: 't5' } } },
    });
    expect(wrongType.status).toBe(422);
    expect(wrongType.json()).toMatchObject({ errors: [{ source: { pointer: '/data/type' } }] });
    await invalid({ name: 't6' }, '/data/relationships/project/data/id', undefined, {
      relationships: { project: { data: { id: 'prj-nope', type: 'projects' } } },
    });
  });

  it('answers 400 for malformed JSON and 404 for an unknown organization', async () => {
    const bad = await api('POST', '/api/v2/organizations/acme/workspaces', { rawBody: '{"data": ' });
    expect(bad.status).toBe(400);
    expect(bad.json()).toMatchObject({ errors: [{ status: '400', title: 'bad request' }] });
    const missing = await api('POST', '/api/v2/organizations/nope/workspaces', {
      body: { data: { type: 'workspaces', attributes: { name: 'x' } } },
    });
    expect(missing.status).toBe(404);
  });
});

describe('updating, showing, renaming', () => {
  it('keeps omitted attributes, changes sent ones, and answers 200 by name and by id', async () => {
    const { data } = await created({
      name: 'upd',
      description: 'keep me',
      'auto-apply': true,
      'tag-names': ['a'],
    });
    const res = await update('upd', { 'queue-all-runs': true });
    expect(res.status).toBe(200);
    const after = res.json<Doc>().data.attributes;
    expect(after).toMatchObject({
      description: 'keep me',
      'auto-apply': true,
      'tag-names': ['a'],
      'queue-all-runs': true,
    });
    expect(after['updated-at']).toMatch(TIMESTAMP);
    const byId = await api('PATCH', `/api/v2/workspaces/${data.id}`, {
      body: { data: { type: 'workspaces', attributes: { description: null, 'execution-mode': 'local' } } },
    });
    expect(byId.status).toBe(200);
    expect(byId.json<Doc>().data.attributes).toMatchObject({
      description: null,
      'execution-mode': 'local',
      'auto-apply': true,
    });
    // Both show forms answer the same workspace.
    const byName = await api('GET', '/api/v2/organizations/acme/workspaces/upd');
    const shown = await api('GET', `/api/v2/workspaces/${data.id}`);
    expect(byName.status).toBe(200);
    expect(shown.json<Doc>().data).toEqual(byName.json<Doc>().data);
  });

  it('validates an update as a whole and changes nothing on a 422', async () => {
    await created({ name: 'upd-a' });
    await created({ name: 'upd-b', description: 'b' });
    const res = await update('upd-b', { name: 'upd-a', description: 'changed' });
    expect(res.status).toBe(422);
    const b = await api('GET', '/api/v2/organizations/acme/workspaces/upd-b');
    expect(b.json<Doc>().data.attributes.description).toBe('b');
    expect((await update('upd-b', { 'execution-mode': 'agent' })).status).toBe(422);
  });

  it('renames: the workspace moves to its new URL', async () => {
    const { data } = await created({ name: 'old-name' });
    const res = await update('old-name', { name: 'new-name' });
    expect(res.json<Doc>().data.links.self).toBe('/api/v2/organizations/acme/workspaces/new-name');
    expect((await api('GET', '/api/v2/organizations/acme/workspaces/old-name')).status).toBe(404);
    expect((await api('GET', '/api/v2/organizations/acme/workspaces/new-name')).json<Doc>().data.id).toBe(
      data.id,
    );
  });

  it('switches to agent mode with a pool and back to remote, which drops the pool', async () => {
    await created({ name: 'modes' });
    const agent = await update('modes', { 'execution-mode': 'agent', 'agent-pool-id': 'apool-pool1' });
    expect(agent.status).toBe(200);
    const kept = await update('modes', { description: 'still agent' });
    expect(kept.json<Doc>().data.relationships['agent-pool']!.data).toEqual({
      id: 'apool-pool1',
      type: 'agent-pools',
    });
    const remote = await update('modes', { 'execution-mode': 'remote' });
    expect(remote.json<Doc>().data.relationships['agent-pool']!.data).toBeNull();
  });

  it('adds a repository, changes only the sent members, and removes it with null', async () => {
    await created({ name: 'vcs' });
    const added = await update('vcs', {
      'vcs-repo': { 'oauth-token-id': 'ot-abc', identifier: 'acme/app', branch: 'main' },
    });
    expect(added.status).toBe(200);
    const repo = added.json<Doc>().data.attributes['vcs-repo'] as Record<string, unknown>;
    expect(repo).toMatchObject({
      'oauth-token-id': 'ot-abc',
      identifier: 'acme/app',
      'display-identifier': 'acme/app',
      branch: 'main',
      'ingress-submodules': false,
      'tags-regex': null,
    });
    expect(repo['webhook-url']).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    expect(added.json<Doc>().data.attributes['vcs-repo-identifier']).toBe('acme/app');
    const changed = await update('vcs', { 'vcs-repo': { branch: 'release' } });
    expect(changed.json<Doc>().data.attributes['vcs-repo']).toMatchObject({
      'oauth-token-id': 'ot-abc',
      identifier: 'acme/app',
      branch: 'release',
      'webhook-url': repo['webhook-url'],
    });
    const removed = await update('vcs', { 'vcs-repo': null });
    expect(removed.json<Doc>().data.attributes).toMatchObject({
      'vcs-repo': null,
      'vcs-repo-identifier': null,
    });
    // Adding again needs both required members.
    expect((await update('vcs', { 'vcs-repo': { branch: 'x' } })).status).toBe(422);
  });

  it('turns assessments off when an update leaves them out (the key table default)', async () => {
    await created({ name: 'assess', 'assessments-enabled': true });
    const res = await update('assess', { description: 'x' });
    expect(res.json<Doc>().data.attributes['assessments-enabled']).toBe(false);
  });
});

describe('includes, projects and framing', () => {
  it('includes the project (and tolerates an empty include)', async () => {
    await created({ name: 'inc' });
    const res = await api('GET', '/api/v2/organizations/acme/workspaces/inc?include=project,organization');
    const doc = res.json<Doc>();
    expect(doc.included).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          id: defaultProject,
          type: 'projects',
          attributes: expect.objectContaining({ name: 'Default Project' }),
        }),
        expect.objectContaining({ id: 'acme', type: 'organizations' }),
      ]),
    );
    const empty = await api('GET', '/api/v2/organizations/acme/workspaces?include=');
    expect(empty.status).toBe(200);
    expect(empty.json<Doc>().included).toBeUndefined();
  });

  it('answers 400 mentioning "include parameter" for an unknown include', async () => {
    for (const path of [
      '/api/v2/organizations/acme/workspaces/inc?include=bogus',
      '/api/v2/organizations/acme/workspaces?include=project,bogus',
    ]) {
      const res = await api('GET', path);
      expect(res.status).toBe(400);
      expect(res.text).toContain('include parameter');
    }
  });

  it('lists projects (filter[names]) and shows one', async () => {
    const res = await api('GET', '/api/v2/organizations/acme/projects?filter%5Bnames%5D=platform');
    const doc = res.json<{
      data: { id: string; type: string; attributes: { name: string } }[];
      meta: unknown;
    }>();
    expect(doc.data).toEqual([
      expect.objectContaining({
        id: platformProject,
        type: 'projects',
        attributes: expect.objectContaining({ name: 'platform' }),
      }),
    ]);
    expect(doc.meta).toMatchObject({ pagination: { 'total-count': 1 } });
    expect(platformProject).toMatch(/^prj-[A-Za-z0-9]{16}$/);
    const one = await api('GET', `/api/v2/projects/${platformProject}`);
    expect(one.json()).toMatchObject({ data: { id: platformProject, attributes: { name: 'platform' } } });
    expect((await api('GET', '/api/v2/projects/prj-missing')).status).toBe(404);
  });

  it('answers ping with 204 and X-RateLimit-Limit, even without a token', async () => {
    const res = await api('GET', '/api/v2/ping', { token: null });
    expect(res.status).toBe(204);
    expect(res.headers.get('x-ratelimit-limit')).toBe('30');
  });

  it('answers unknown paths with a JSON:API 404 and other methods with 405', async () => {
    const missing = await api('GET', '/api/v2/nothing-here');
    expect(missing.status).toBe(404);
    expect(missing.json()).toEqual({ errors: [{ status: '404', title: 'not found' }] });
    const method = await api('PUT', '/api/v2/organizations/acme/workspaces');
    expect(method.status).toBe(405);
    expect(method.headers.get('content-type')).toBe('application/vnd.api+json');
  });
});
