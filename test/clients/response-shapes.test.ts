/**
 * Hostile and broken services answering 2xx with a body of the wrong shape: each must fail with an
 * `UnexpectedResponseError` naming the service, the method, the path and what is wrong (never the
 * value), not with a TypeError from deep inside a kind, and not by silently reading nothing.
 * The services are small real HTTP servers on 127.0.0.1.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { type AddressInfo, createServer as createTcpServer } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { UnexpectedResponseError } from '../../src/clients/http/index.js';
import { RegistryClient } from '../../src/clients/registry/client.js';
import { SchedulerClient } from '../../src/clients/scheduler/client.js';
import { SecretsClient } from '../../src/clients/secrets/client.js';
import { WorkspacesClient } from '../../src/clients/workspaces/client.js';
import { runCli } from '../support/run-cli.js';
import { caught, everyRendering } from './helpers.js';
import { tempDir } from '../support/temp-dirs.js';

type Answer = { status?: number; body: unknown };
/** `METHOD /path` (without the query) → the JSON answer. */
type Routes = Record<string, Answer>;

/** Servers of this test, closed after it (HTTP and bare TCP ones alike). */
const servers: { close(callback: () => void): unknown }[] = [];
const folders: string[] = [];

/** A service that answers each route with its JSON body, and 404 otherwise. */
async function hostileService(routes: Routes): Promise<string> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const route = routes[`${req.method} ${new URL(req.url ?? '/', 'http://x').pathname}`];
      if (!route) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('no such route');
        return;
      }
      res
        .writeHead(route.status ?? 200, { 'content-type': 'application/json' })
        .end(JSON.stringify(route.body));
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/**
 * A service that answers every request with `body`, over a bare socket: node's HTTP server refuses
 * the `LIST` method the secrets service's lists use, before any handler sees it. The socket may
 * send the request in several chunks: the answer goes after the first, and the rest is ignored.
 */
async function rawJsonService(body: unknown): Promise<string> {
  return rawJsonText(JSON.stringify(body));
}

async function rawJsonText(json: string): Promise<string> {
  const server = createTcpServer((socket) => {
    socket.once('data', () => {
      socket.end(
        `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(json)}\r\nconnection: close\r\n\r\n${json}`,
      );
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  for (const dir of folders.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The rejection of `promise`, checked to be a shape error (not a TypeError) with `message`. */
async function shapeError(promise: Promise<unknown>, message: string): Promise<UnexpectedResponseError> {
  const err = await caught(promise);
  expect(err).toBeInstanceOf(UnexpectedResponseError);
  expect((err as Error).message).toBe(message);
  return err as UnexpectedResponseError;
}

const fast = { http: { retry: { minDelayMs: 1, maxDelayMs: 5 } } };

describe('registry', () => {
  it('refuses a role whose Policies is a string, without showing the value', async () => {
    const address = await hostileService({
      'GET /v1/acl/roles': { body: [{ ID: 'r1', Name: 'web', Policies: 'policy-text-xyz' }] },
    });
    const client = RegistryClient.fromConnection({ address, ...fast });
    const err = await shapeError(
      client.listRoles(),
      'registry: GET /v1/acl/roles → 200 unexpected response: /0/Policies must be array',
    );
    expect(everyRendering(err)).not.toContain('policy-text-xyz');
    await client.close();
  });

  it('refuses a policy list that is an object', async () => {
    const address = await hostileService({ 'GET /v1/acl/policies': { body: { ID: 'p1', Name: 'ops' } } });
    const client = RegistryClient.fromConnection({ address, ...fast });
    await shapeError(
      client.listPolicies(),
      'registry: GET /v1/acl/policies → 200 unexpected response: the body must be array',
    );
    await client.close();
  });

  it('refuses a role whose ModifyIndex is a string', async () => {
    const address = await hostileService({
      'GET /v1/acl/role/name/web': { body: { ID: 'r1', Name: 'web', ModifyIndex: '12' } },
    });
    const client = RegistryClient.fromConnection({ address, ...fast });
    await shapeError(
      client.readRoleByName('web'),
      'registry: GET /v1/acl/role/name/web → 200 unexpected response: /ModifyIndex must be integer',
    );
    await client.close();
  });

  it('names a few problems of a long wrong list, not every one', async () => {
    const roles = Array.from({ length: 10_000 }, (_, i) => ({ ID: `r${i}`, Name: i }));
    const address = await hostileService({ 'GET /v1/acl/roles': { body: roles } });
    const client = RegistryClient.fromConnection({ address, ...fast });
    await shapeError(
      client.listRoles(),
      'registry: GET /v1/acl/roles → 200 unexpected response: /0/Name must be string; /1/Name must be string; /2/Name must be string (and 9997 more)',
    );
    await client.close();
  });
});

describe('scheduler', () => {
  it('refuses a job whose JobModifyIndex is a string', async () => {
    const address = await hostileService({
      'GET /v1/job/web': { body: { ID: 'web', JobModifyIndex: '7', TaskGroups: [] } },
    });
    const client = SchedulerClient.fromConnection({ address, ...fast });
    await shapeError(
      client.readJob('web', { namespace: 'default' }),
      'scheduler: GET /v1/job/web?namespace=default → 200 unexpected response: /JobModifyIndex must be integer',
    );
    await client.close();
  });

  it('refuses a job list whose Meta (where the ownership marker is read) holds a non-string value', async () => {
    const address = await hostileService({
      'GET /v1/jobs': { body: [{ ID: 'web', Meta: { 'converge-managed': { toString: 'true' } } }] },
    });
    const client = SchedulerClient.fromConnection({ address, ...fast });
    await shapeError(
      client.listJobs({ namespace: 'default', meta: true }),
      'scheduler: GET /v1/jobs?meta=true&namespace=default → 200 unexpected response: /0/Meta/converge-managed must be string',
    );
    await client.close();
  });

  it('refuses a plan whose task group diffs are an object, deep in the diff too', async () => {
    const address = await hostileService({
      'POST /v1/job/web/plan': {
        body: {
          JobModifyIndex: 3,
          Diff: {
            Type: 'Edited',
            TaskGroups: {},
            Objects: [{ Type: 'Edited', Name: 'a', Objects: [{ Type: 'Added', Name: 'b', Fields: 'x' }] }],
          },
        },
      },
    });
    const client = SchedulerClient.fromConnection({ address, ...fast });
    await shapeError(
      client.planJob({ ID: 'web' }),
      'scheduler: POST /v1/job/web/plan → 200 unexpected response: /Diff/Objects/0/Objects/0/Fields must be array; /Diff/TaskGroups must be array',
    );
    await client.close();
  });

  it('refuses a diff nested deeper than the stack, without crashing', async () => {
    // Built as text: JSON.stringify itself would overflow on it.
    const depth = 200_000;
    const nested = `${'{"Type":"Edited","Name":"o","Objects":['.repeat(depth)}{"Type":"Added","Name":"x"}${']}'.repeat(depth)}`;
    const address = await rawJsonText(`{"JobModifyIndex":3,"Diff":${nested}}`);
    const client = SchedulerClient.fromConnection({ address, ...fast });
    await shapeError(
      client.planJob({ ID: 'web' }),
      'scheduler: POST /v1/job/web/plan → 200 JSON in the response body nests deeper than 128 levels',
    );
    await client.close();
  });

  it('refuses versions that are not a list, and allocations that are an object', async () => {
    const address = await hostileService({
      'GET /v1/job/web/versions': { body: { Versions: { 0: { ID: 'web' } }, Diffs: null } },
      'GET /v1/job/web/allocations': { body: { ID: 'a1' } },
    });
    const client = SchedulerClient.fromConnection({ address, ...fast });
    await shapeError(
      client.jobVersions('web'),
      'scheduler: GET /v1/job/web/versions → 200 unexpected response: /Versions must be array',
    );
    await shapeError(
      client.jobAllocations('web'),
      'scheduler: GET /v1/job/web/allocations → 200 unexpected response: the body must be array',
    );
    await client.close();
  });

  it('refuses a register answer without its new JobModifyIndex', async () => {
    const address = await hostileService({ 'POST /v1/jobs': { body: { EvalID: 'e1' } } });
    const client = SchedulerClient.fromConnection({ address, ...fast });
    await shapeError(
      client.registerJob({ ID: 'web' }),
      "scheduler: POST /v1/jobs → 200 unexpected response: the body must have required property 'JobModifyIndex'",
    );
    await client.close();
  });
});

describe('secrets', () => {
  const TOKEN = 'secrets-token-77c1';

  it('refuses an envelope without data instead of reading "no such group"', async () => {
    const address = await hostileService({ 'GET /v1/auth/ldap/groups/devs': { body: { warnings: null } } });
    const client = SecretsClient.fromConnection({ address, token: TOKEN });
    await shapeError(
      client.readLdapGroup('ldap', 'devs'),
      "secrets: GET /v1/auth/ldap/groups/devs → 200 unexpected response: the body must have required property 'data'",
    );
    await client.close();
  });

  it('refuses list keys that are not a list instead of reading none', async () => {
    const address = await rawJsonService({ data: { keys: 'a,b' } });
    const client = SecretsClient.fromConnection({ address, token: TOKEN });
    await shapeError(
      client.listLdapUsers(),
      'secrets: LIST /v1/auth/ldap/users → 200 unexpected response: /data/keys must be array',
    );
    await client.close();
  });

  it("reads a backup with one share per fingerprint (the spec's form) as Vault's lists are read", async () => {
    const address = await hostileService({
      'GET /v1/sys/rekey/recovery-key-backup': {
        body: { nonce: 'n1', keys: { ab12: 'c1c04c03', cd34: ['c1c0aa', 'c1c0bb'] } },
      },
    });
    const client = SecretsClient.fromConnection({ address, token: TOKEN });
    expect(await client.rekeyBackup()).toEqual({
      nonce: 'n1',
      keys: { ab12: ['c1c04c03'], cd34: ['c1c0aa', 'c1c0bb'] },
    });
    await client.close();
  });

  it('refuses a rekey status whose progress is a string', async () => {
    const address = await hostileService({
      'GET /v1/sys/rekey-recovery-key/init': {
        body: { started: true, nonce: 'n1', progress: '1', required: 3, t: 2, n: 3 },
      },
    });
    const client = SecretsClient.fromConnection({ address, token: TOKEN });
    await shapeError(
      client.rekeyStatus(),
      'secrets: GET /v1/sys/rekey-recovery-key/init → 200 unexpected response: /progress must be integer',
    );
    await client.close();
  });

  it('refuses a completed rekey whose keys are not a list', async () => {
    const address = await hostileService({
      'PUT /v1/sys/rekey-recovery-key/update': { body: { complete: true, nonce: 'n1', keys: 'k' } },
    });
    const client = SecretsClient.fromConnection({ address, token: TOKEN });
    const err = await shapeError(
      client.rekeySubmit('share-secret-0a1b', 'n1'),
      'secrets: PUT /v1/sys/rekey-recovery-key/update → 200 unexpected response: /keys must be array',
    );
    expect(everyRendering(err)).not.toContain('share-secret-0a1b');
    await client.close();
  });
});

describe('workspaces', () => {
  const workspace = {
    id: 'ws-1',
    type: 'workspaces',
    attributes: { name: 'web' },
    relationships: { project: { data: { id: 'prj-1', type: 'projects' } } },
  };

  it('refuses a document whose included is an object', async () => {
    const address = await hostileService({
      'GET /api/v2/workspaces/ws-1': { body: { data: workspace, included: { id: 'prj-1' } } },
    });
    const client = WorkspacesClient.fromConnection({ address, ...fast });
    await shapeError(
      client.readWorkspace({ id: 'ws-1' }, { include: ['project'] }),
      'workspaces: GET /api/v2/workspaces/ws-1 → 200 unexpected response: /included must be array',
    );
    await client.close();
  });

  it('refuses a list whose data is null', async () => {
    const address = await hostileService({
      'GET /api/v2/organizations/acme/workspaces': { body: { data: null, meta: {} } },
    });
    const client = WorkspacesClient.fromConnection({ address, ...fast });
    await shapeError(
      client.listWorkspaces('acme'),
      'workspaces: GET /api/v2/organizations/acme/workspaces → 200 expected a list of workspaces in "data"',
    );
    await client.close();
  });

  it('refuses a state version whose resources are not a list, and a resource whose attributes are text', async () => {
    const address = await hostileService({
      'GET /api/v2/state-versions/sv-1': {
        body: { data: { id: 'sv-1', type: 'state-versions', attributes: { serial: 1, resources: 'x' } } },
      },
      'GET /api/v2/organizations/acme/projects': {
        body: { data: [{ id: 'prj-1', type: 'projects', attributes: 'acme' }] },
      },
    });
    const client = WorkspacesClient.fromConnection({ address, ...fast });
    await shapeError(
      client.readStateVersion('sv-1'),
      'workspaces: GET /api/v2/state-versions/sv-1 → 200 unexpected response: /data/attributes/resources must be array',
    );
    await shapeError(
      client.listProjects('acme'),
      'workspaces: GET /api/v2/organizations/acme/projects → 200 unexpected response: /data/0/attributes must be object',
    );
    await client.close();
  });
});

describe('converge plan against a registry answering the wrong shape', () => {
  it('says which service, request and field, and exits 1', async () => {
    const address = await hostileService({
      'GET /v1/acl/policies': { body: [{ ID: 'p1', Name: 'service-read' }] },
      'GET /v1/acl/role/name/web-readers': {
        body: { ID: 'r1', Name: 'web-readers', Policies: 'service-read' },
      },
    });
    const dir = tempDir('converge-shapes-');
    folders.push(dir);
    const manifest = path.join(dir, 'roles.yaml');
    writeFileSync(
      manifest,
      [
        'apiVersion: converge/v1',
        'kind: AclRole',
        'metadata:',
        '  name: web-readers',
        'spec:',
        '  Policies:',
        '    - Name: service-read',
        '',
      ].join('\n'),
    );
    const r = await runCli(['plan', '-f', manifest], {
      CONVERGE_REGISTRY_ADDR: address,
      CONVERGE_REGISTRY_TOKEN: 'registry-token-5e2d',
      CONVERGE_STATE_DIR: path.join(dir, 'state'),
    });
    expect(r.stderr).toContain(
      'registry: GET /v1/acl/role/name/web-readers?ns=default → 200 unexpected response: /Policies must be array',
    );
    expect(r.stderr).not.toMatch(/TypeError|is not a function/);
    expect(r.stderr + r.stdout).not.toContain('registry-token-5e2d');
    expect(r.code).toBe(1);
  });
});
