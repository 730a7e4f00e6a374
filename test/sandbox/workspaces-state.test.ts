/**
 * Workspace service: state versions (the lock rule, 409/412/422 conditions, derived attributes,
 * hosted downloads without a token, list/show/current, includes), and safe delete against the state.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { type Api, apiFor } from './helpers.js';

let sandbox: RunningSandbox;
let api: Api;

beforeAll(async () => {
  sandbox = await startSandbox({
    token: 'root-token',
    config: {
      tokens: [
        { name: 'alice', secret: 'alice-token', workspaces: { user: 'alice', teams: { acme: ['devs'] } } },
        { name: 'rita', secret: 'reader-token', workspaces: { user: 'rita', teams: { acme: ['readers'] } } },
        {
          name: 'otto',
          secret: 'outputs-token',
          workspaces: { user: 'otto', teams: { acme: ['outputs-only'] } },
        },
        { name: 'devs-team', secret: 'team-token', workspaces: { team: 'devs', organization: 'acme' } },
        { name: 'acme-org', secret: 'org-token', workspaces: { organization: 'acme' } },
      ],
      workspaces: {
        organizations: [
          {
            name: 'acme',
            teams: [
              { name: 'devs', access: { '*': { runs: 'read', lock: true, stateVersions: 'write' } } },
              { name: 'readers', access: { '*': { runs: 'read', lock: true, stateVersions: 'read' } } },
              { name: 'outputs-only', access: { '*': { runs: 'read', stateVersions: 'read-outputs' } } },
            ],
          },
        ],
      },
    },
  });
  api = apiFor(sandbox);
});

afterAll(async () => {
  await sandbox.close();
});

const NULL_PROVIDER = 'provider["registry.terraform.io/hashicorp/null"]';
const AWS_PROVIDER = 'provider["registry.terraform.io/hashicorp/aws"]';
const LINEAGE = '871d1b4a-e579-fb7c-ffdb-f0c858a647a7';

interface StateOpts {
  serial: number;
  lineage?: string;
  resources?: unknown[];
  outputs?: Record<string, unknown>;
}

function stateFile(opts: StateOpts): string {
  return `${JSON.stringify(
    {
      version: 4,
      terraform_version: '1.7.5',
      serial: opts.serial,
      lineage: opts.lineage ?? LINEAGE,
      outputs: opts.outputs ?? {},
      resources: opts.resources ?? [],
      check_results: null,
    },
    null,
    2,
  )}\n`;
}

const RESOURCES = [
  { mode: 'managed', type: 'null_resource', name: 'a', provider: NULL_PROVIDER, instances: [{}, {}] },
  {
    mode: 'managed',
    type: 'aws_instance',
    name: 'web',
    module: 'module.app',
    provider: AWS_PROVIDER,
    instances: [{}],
  },
  { mode: 'data', type: 'aws_ami', name: 'ubuntu', provider: AWS_PROVIDER, instances: [{}] },
];

function upload(raw: string, overrides: Record<string, unknown> = {}) {
  const attributes: Record<string, unknown> = {
    serial: (JSON.parse(raw) as { serial: number }).serial,
    md5: createHash('md5').update(raw).digest('hex'),
    state: Buffer.from(raw).toString('base64'),
    lineage: LINEAGE,
    ...overrides,
  };
  for (const key of Object.keys(attributes)) if (attributes[key] === undefined) delete attributes[key];
  return { data: { type: 'state-versions', attributes } };
}

interface SvDoc {
  data: {
    id: string;
    type: string;
    attributes: Record<string, unknown>;
    relationships: Record<string, { data: unknown; links?: Record<string, string> }>;
    links: { self: string };
  };
  included?: { id: string; type: string; attributes: Record<string, unknown> }[];
}

let n = 0;
async function newWorkspace(): Promise<{ id: string; name: string }> {
  const name = `state-${++n}`;
  const res = await api('POST', '/api/v2/organizations/acme/workspaces', {
    body: { data: { type: 'workspaces', attributes: { name } } },
  });
  expect(res.status).toBe(201);
  return { id: res.json<{ data: { id: string } }>().data.id, name };
}

const lock = (id: string, token = 'root-token') =>
  api('POST', `/api/v2/workspaces/${id}/actions/lock`, { token, body: { reason: 'state' } });
const unlock = (id: string, token = 'root-token') =>
  api('POST', `/api/v2/workspaces/${id}/actions/unlock`, { token });
const post = (id: string, body: unknown, token = 'root-token') =>
  api('POST', `/api/v2/workspaces/${id}/state-versions`, { token, body });

function detail(res: { json<T>(): T }): string {
  return res.json<{ errors: { detail: string }[] }>().errors[0]!.detail;
}

describe('creating a state version', () => {
  it('refuses uploads to an unlocked workspace or one locked by someone else (409)', async () => {
    const ws = await newWorkspace();
    const notLocked = await post(ws.id, upload(stateFile({ serial: 1 })));
    expect(notLocked.status).toBe(409);
    expect(notLocked.json()).toEqual({
      errors: [
        {
          status: '409',
          title: 'conflict',
          detail: 'This workspace is not locked and will only accept state uploads when locked',
        },
      ],
    });
    expect((await lock(ws.id)).status).toBe(200);
    const other = await api('POST', `/api/v2/workspaces/${ws.id}/state-versions`, {
      token: 'alice-token',
      body: upload(stateFile({ serial: 1 })),
    });
    expect(other.status).toBe(409);
    expect(detail(other)).toMatch(/locked by User user-/);
  });

  it('answers 412 when md5, serial or lineage disagree with the uploaded state', async () => {
    const ws = await newWorkspace();
    await lock(ws.id);
    const raw = stateFile({ serial: 3 });
    const md5 = await post(ws.id, upload(raw, { md5: createHash('md5').update('other').digest('hex') }));
    expect(md5.status).toBe(412);
    expect(md5.json()).toMatchObject({ errors: [{ status: '412', title: 'precondition failed' }] });
    expect((await post(ws.id, upload(raw, { serial: 4 }))).status).toBe(412);
    expect((await post(ws.id, upload(raw, { lineage: 'another-lineage' }))).status).toBe(412);
    // Lineage is optional (early engines had none).
    expect((await post(ws.id, upload(raw, { lineage: undefined }))).status).toBe(201);
  });

  it('answers 422 for malformed bodies and 400 for malformed JSON', async () => {
    const ws = await newWorkspace();
    await lock(ws.id);
    const raw = stateFile({ serial: 1 });
    const invalid = async (body: unknown, pointer: string) => {
      const res = await post(ws.id, body);
      expect(res.status, res.text).toBe(422);
      expect(res.json()).toMatchObject({ errors: [{ status: '422', source: { pointer } }] });
    };
    await invalid(upload(raw, { md5: undefined }), '/data/attributes/md5');
    await invalid(upload(raw, { serial: undefined }), '/data/attributes/serial');
    await invalid(upload(raw, { serial: '1' }), '/data/attributes/serial');
    await invalid(upload(raw, { state: undefined }), '/data/attributes/state');
    await invalid(upload(raw, { state: 'not base64 !!' }), '/data/attributes/state');
    await invalid(
      upload(raw, { state: Buffer.from('not json').toString('base64') }),
      '/data/attributes/state',
    );
    await invalid(upload(raw, { force: 'yes' }), '/data/attributes/force');
    await invalid(
      upload(raw, { 'json-state': Buffer.from('{').toString('base64') }),
      '/data/attributes/json-state',
    );
    await invalid({ data: { type: 'workspaces', attributes: upload(raw).data.attributes } }, '/data/type');
    const bad = await api('POST', `/api/v2/workspaces/${ws.id}/state-versions`, { rawBody: '{"data":' });
    expect(bad.status).toBe(400);
  });

  it('stores the version (201), makes it current and derives its attributes', async () => {
    const ws = await newWorkspace();
    await lock(ws.id);
    const raw = stateFile({
      serial: 5,
      resources: RESOURCES,
      outputs: {
        ip: { value: '10.0.0.1', type: 'string' },
        secret: { value: 's3cr3t', type: 'string', sensitive: true },
      },
    });
    const jsonState = JSON.stringify({ format_version: '1.0', values: {} });
    // go-tfe sends "force": null.
    const res = await post(
      ws.id,
      upload(raw, { force: null, 'json-state': Buffer.from(jsonState).toString('base64') }),
    );
    expect(res.status, res.text).toBe(201);
    const { data } = res.json<SvDoc>();
    expect(data.id).toMatch(/^sv-[A-Za-z0-9]{16}$/);
    expect(data.links.self).toBe(`/api/v2/state-versions/${data.id}`);
    expect(data.attributes).toMatchObject({
      serial: 5,
      size: Buffer.byteLength(raw),
      'state-version': 4,
      'engine-version': '1.7.5',
      'resources-processed': true,
      lineage: LINEAGE,
      'vcs-commit-sha': null,
      'vcs-commit-url': null,
    });
    expect(data.attributes['created-at']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(data.attributes.resources).toEqual([
      { name: 'a', type: 'null_resource', count: 2, module: 'root', provider: NULL_PROVIDER },
      { name: 'web', type: 'aws_instance', count: 1, module: 'module.app', provider: AWS_PROVIDER },
      { name: 'ubuntu', type: 'data.aws_ami', count: 1, module: 'root', provider: AWS_PROVIDER },
    ]);
    expect(data.attributes.modules).toEqual({
      root: { null_resource: 2, 'data.aws_ami': 1 },
      'module.app': { aws_instance: 1 },
    });
    expect(data.attributes.providers).toEqual({
      [NULL_PROVIDER]: { null_resource: 2 },
      [AWS_PROVIDER]: { aws_instance: 1, 'data.aws_ami': 1 },
    });
    const me = (await api('GET', '/api/v2/account/details')).json<{ data: { id: string } }>().data.id;
    expect(data.relationships['created-by']!.data).toEqual({ id: me, type: 'users' });
    expect(data.relationships.workspace!.data).toEqual({ id: ws.id, type: 'workspaces' });

    // The workspace points at it and counts the managed instances (data sources are not managed).
    const shown = await api('GET', `/api/v2/workspaces/${ws.id}`);
    const wsDoc = shown.json<{
      data: { attributes: Record<string, unknown>; relationships: Record<string, { data: unknown }> };
    }>();
    expect(wsDoc.data.relationships['current-state-version']!.data).toEqual({
      id: data.id,
      type: 'state-versions',
    });
    expect(wsDoc.data.attributes['resource-count']).toBe(3);
    const withState = await api(
      'GET',
      `/api/v2/workspaces/${ws.id}?include=current_state_version,outputs,locked_by`,
    );
    const types = withState
      .json<{ included: { type: string; id: string }[] }>()
      .included.map((i) => `${i.type}:${i.type === 'state-versions' ? i.id : ''}`)
      .sort();
    expect(types).toEqual([
      `state-versions:${data.id}`,
      'users:',
      'workspace-outputs:',
      'workspace-outputs:',
    ]);
    const current = await api('GET', `/api/v2/workspaces/${ws.id}/current-state-version`);
    expect(current.status).toBe(200);
    expect(current.json<SvDoc>().data.id).toBe(data.id);

    // Hosted downloads on the sandbox, with no token: the exact bytes uploaded.
    const rawUrl = data.attributes['hosted-state-download-url'] as string;
    const jsonUrl = data.attributes['hosted-json-state-download-url'] as string;
    expect(rawUrl.startsWith(`${sandbox.url}/_archivist/v1/object/`)).toBe(true);
    const download = await fetch(rawUrl, { headers: { Accept: 'application/json' } });
    expect(download.status).toBe(200);
    expect(await download.text()).toBe(raw);
    expect(await (await fetch(jsonUrl)).text()).toBe(jsonState);
    expect((await fetch(`${sandbox.url}/_archivist/v1/object/guessed`)).status).toBe(404);

    // Includes: the creator and the outputs (sensitive values redacted); runs do not exist.
    const withIncludes = await api('GET', `/api/v2/state-versions/${data.id}?include=created_by,outputs,run`);
    const included = withIncludes.json<SvDoc>().included!;
    expect(included).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          id: me,
          type: 'users',
          attributes: expect.objectContaining({ username: 'root' }),
        }),
        expect.objectContaining({
          type: 'state-version-outputs',
          attributes: expect.objectContaining({
            name: 'ip',
            sensitive: false,
            type: 'string',
            value: '10.0.0.1',
          }),
        }),
        expect.objectContaining({
          type: 'state-version-outputs',
          attributes: expect.objectContaining({ name: 'secret', sensitive: true, value: null }),
        }),
      ]),
    );
    expect(included).toHaveLength(3);
    const outputId = included.find((i) => i.attributes.name === 'ip')!.id;
    expect(outputId).toMatch(/^wsout-[A-Za-z0-9]{16}$/);
    const output = await api('GET', `/api/v2/state-version-outputs/${outputId}`);
    expect(output.json()).toMatchObject({ data: { id: outputId, attributes: { value: '10.0.0.1' } } });
    expect((await api('GET', `/api/v2/state-versions/${data.id}?include=bogus`)).status).toBe(400);
  });

  it('has no JSON download without json-state', async () => {
    const ws = await newWorkspace();
    await lock(ws.id);
    const res = await post(ws.id, upload(stateFile({ serial: 1 })));
    expect(res.json<SvDoc>().data.attributes['hosted-json-state-download-url']).toBeNull();
  });

  it('refuses an older or equal serial and another lineage (409) unless forced', async () => {
    const ws = await newWorkspace();
    await lock(ws.id);
    expect((await post(ws.id, upload(stateFile({ serial: 4 })))).status).toBe(201);
    const older = await post(ws.id, upload(stateFile({ serial: 3 })));
    expect(older.status).toBe(409);
    expect(detail(older)).toMatch(/serial 3 must be greater than the current state's serial 4/);
    expect((await post(ws.id, upload(stateFile({ serial: 4 })))).status).toBe(409);
    const otherLineage = stateFile({ serial: 9, lineage: 'other' });
    const lineage = await post(ws.id, upload(otherLineage, { lineage: 'other' }));
    expect(lineage.status).toBe(409);
    expect(detail(lineage)).toMatch(/lineage/);
    expect((await post(ws.id, upload(otherLineage, { lineage: 'other', force: true }))).status).toBe(201);
    expect(
      (
        await post(
          ws.id,
          upload(stateFile({ serial: 2, lineage: 'other' }), { lineage: 'other', force: true }),
        )
      ).status,
    ).toBe(201);
    expect(
      (await post(ws.id, upload(stateFile({ serial: 3, lineage: 'other' }), { lineage: 'other' }))).status,
    ).toBe(201);
  });

  it('lists versions newest first (both filters required), paginated', async () => {
    const ws = await newWorkspace();
    await lock(ws.id);
    for (const serial of [1, 2, 3])
      expect((await post(ws.id, upload(stateFile({ serial })))).status).toBe(201);
    const path = `/api/v2/state-versions?filter%5Bworkspace%5D%5Bname%5D=${ws.name}&filter%5Borganization%5D%5Bname%5D=acme`;
    const all = await api('GET', path);
    const doc = all.json<{
      data: { attributes: { serial: number } }[];
      meta: { pagination: unknown };
      links: Record<string, unknown>;
    }>();
    expect(doc.data.map((d) => d.attributes.serial)).toEqual([3, 2, 1]);
    expect(doc.meta.pagination).toEqual({
      'current-page': 1,
      'page-size': 20,
      'prev-page': null,
      'next-page': null,
      'total-pages': 1,
      'total-count': 3,
    });
    const page2 = await api('GET', `${path}&page%5Bsize%5D=1&page%5Bnumber%5D=2`);
    const p2 = page2.json<{
      data: { attributes: { serial: number } }[];
      meta: { pagination: Record<string, unknown> };
    }>();
    expect(p2.data.map((d) => d.attributes.serial)).toEqual([2]);
    expect(p2.meta.pagination).toMatchObject({ 'prev-page': 1, 'next-page': 3, 'total-pages': 3 });
    expect(
      (await api('GET', `/api/v2/state-versions?filter%5Bworkspace%5D%5Bname%5D=${ws.name}`)).status,
    ).toBe(404);
    expect((await api('GET', '/api/v2/state-versions?filter%5Borganization%5D%5Bname%5D=acme')).status).toBe(
      404,
    );
    expect(
      (
        await api(
          'GET',
          `/api/v2/state-versions?filter%5Bworkspace%5D%5Bname%5D=nope&filter%5Borganization%5D%5Bname%5D=acme`,
        )
      ).status,
    ).toBe(404);
  });

  it('answers 404 for missing versions and workspaces without a current state', async () => {
    const ws = await newWorkspace();
    expect((await api('GET', `/api/v2/workspaces/${ws.id}/current-state-version`)).status).toBe(404);
    expect((await api('GET', '/api/v2/workspaces/ws-missing/current-state-version')).status).toBe(404);
    expect((await api('GET', '/api/v2/state-versions/sv-missing')).status).toBe(404);
  });
});

describe('state version permissions', () => {
  it('lets readers read but not write; refuses organization tokens; accepts team tokens', async () => {
    const ws = await newWorkspace();
    await lock(ws.id, 'reader-token');
    // rita may lock but only read state versions: creating is not found for her.
    expect((await post(ws.id, upload(stateFile({ serial: 1 })), 'reader-token')).status).toBe(404);
    await unlock(ws.id, 'reader-token');
    expect((await post(ws.id, upload(stateFile({ serial: 1 })), 'org-token')).status).toBe(404);

    // A team token holding the lock uploads as the team's service user.
    expect((await lock(ws.id, 'team-token')).status).toBe(200);
    const res = await post(ws.id, upload(stateFile({ serial: 1 })), 'team-token');
    expect(res.status).toBe(201);
    const sv = res.json<SvDoc>().data;
    const creator = await api('GET', `/api/v2/state-versions/${sv.id}?include=created_by`, {
      token: 'reader-token',
    });
    expect(creator.status).toBe(200);
    expect(creator.json<SvDoc>().included![0]!.attributes.username).toMatch(/^api-team_team-/);
    expect(
      (await api('GET', `/api/v2/workspaces/${ws.id}/current-state-version`, { token: 'org-token' })).status,
    ).toBe(200);
    // Outputs-only readers see outputs, not versions.
    expect((await api('GET', `/api/v2/state-versions/${sv.id}`, { token: 'outputs-token' })).status).toBe(
      404,
    );
  });
});

describe('safe delete and the current state', () => {
  it('refuses while locked or while resources are managed (409), deletes when none are (204)', async () => {
    const ws = await newWorkspace();
    await lock(ws.id);
    const locked = await api('POST', `/api/v2/workspaces/${ws.id}/actions/safe-delete`);
    expect(locked.status).toBe(409);
    expect(detail(locked)).toContain('locked');
    const res = await post(ws.id, upload(stateFile({ serial: 1, resources: RESOURCES })));
    expect(res.status).toBe(201);
    const rawUrl = res.json<SvDoc>().data.attributes['hosted-state-download-url'] as string;
    await unlock(ws.id);
    const managing = await api(
      'POST',
      `/api/v2/organizations/acme/workspaces/${ws.name}/actions/safe-delete`,
    );
    expect(managing.status).toBe(409);
    expect(detail(managing)).toBe(
      'Workspace cannot be safely deleted because it is still managing 3 resources',
    );
    expect(detail(managing)).not.toMatch(/locked|being processed/);

    // Only data sources left: nothing managed, so the workspace may go.
    await lock(ws.id);
    const dataOnly = stateFile({ serial: 2, resources: [RESOURCES[2]] });
    expect((await post(ws.id, upload(dataOnly))).status).toBe(201);
    await unlock(ws.id);
    const deleted = await api('POST', `/api/v2/workspaces/${ws.id}/actions/safe-delete`);
    expect([deleted.status, deleted.text]).toEqual([204, '']);
    expect((await api('GET', `/api/v2/workspaces/${ws.id}`)).status).toBe(404);
    // Its state versions and downloads went with it.
    expect((await fetch(rawUrl)).status).toBe(404);
    expect((await api('POST', `/api/v2/workspaces/${ws.id}/actions/safe-delete`)).status).toBe(404);
  });

  it('force delete removes a workspace that still manages resources', async () => {
    const ws = await newWorkspace();
    await lock(ws.id);
    expect((await post(ws.id, upload(stateFile({ serial: 1, resources: RESOURCES })))).status).toBe(201);
    await unlock(ws.id);
    expect((await api('DELETE', `/api/v2/workspaces/${ws.id}`)).status).toBe(204);
  });
});
