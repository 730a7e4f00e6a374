/**
 * What a plan sends to the services, counted by the sandbox: jobs' ownership comes from the job list
 * (`meta=true`), not from one read per job; a mount's directory configuration is read once per run
 * however many kinds ask; a drifted job is read whole (once) to show its change; a job a prune
 * deletes is shown with its groups and counts; a directory group's blast radius reuses the users the
 * plan read. And a service that ignores `meta=true` still works.
 */
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SchedulerClient } from '../../src/clients/scheduler/client.js';
import { schedulerService } from '../../src/clients/scheduler/definition.js';
import { SecretsClient } from '../../src/clients/secrets/client.js';
import { apply, connect, loadManifest, plan } from '../../src/engine/index.js';
import type { KindContext } from '../../src/resources/contract.js';
import { jobKind } from '../../src/resources/scheduler/job.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { tempDir } from '../support/temp-dirs.js';

let sandbox: RunningSandbox;
let env: NodeJS.ProcessEnv;
let sent: string[] = [];

beforeAll(async () => {
  sandbox = await startSandbox({
    port: 0,
    log: (line) => sent.push(line.split(' ').slice(0, 2).join(' ')),
    config: { registry: { policies: [{ Name: 'service-read' }] } },
  });
  env = { ...sandbox.env(), CONVERGE_STATE_DIR: tempDir('converge-requests-') };
});
afterAll(async () => sandbox?.close());

const job = (id: string, count: number) => `apiVersion: converge/v1
kind: Job
metadata: { name: ${id} }
spec:
  Type: service
  Datacenters: [dc1]
  # As most service jobs do: an unchanged one is still read from the list alone.
  Update: { MaxParallel: 1, MinHealthyTime: 10s }
  TaskGroups:
    - Name: web
      Count: ${count}
      Tasks: [{ Name: app, Driver: docker, Config: { image: "nginx:1.27" } }]
`;

const directory = `apiVersion: converge/v1
kind: LdapConfig
metadata: { name: ldap }
spec: { url: 'ldap://ldap.test', userdn: 'ou=people,dc=test', groupdn: 'ou=groups,dc=test' }
---
apiVersion: converge/v1
kind: LdapGroup
metadata: { name: devs }
spec: { policies: [dev] }
---
apiVersion: converge/v1
kind: LdapGroup
metadata: { name: ops }
spec: { policies: [ops] }
---
apiVersion: converge/v1
kind: LdapUser
metadata: { name: ann }
spec: { policies: [a], groups: [devs] }
---
apiVersion: converge/v1
kind: LdapUser
metadata: { name: bob }
spec: { policies: [b], groups: [ops] }
`;

const workspaces = ['fr-one', 'fr-two']
  .map(
    (name) =>
      `apiVersion: converge/v1\nkind: Workspace\nmetadata: { name: ${name} }\nspec: { description: ${name} }\n`,
  )
  .join('---\n');

function manifestDir(jobs: string[]): string {
  const dir = tempDir('converge-requests-manifest-');
  writeFileSync(path.join(dir, 'jobs.yaml'), jobs.map((id, i) => job(id, i + 1)).join('---\n'));
  writeFileSync(path.join(dir, 'directory.yaml'), directory);
  writeFileSync(path.join(dir, 'workspaces.yaml'), workspaces);
  return dir;
}

async function planOf(dir: string, options: { prune?: boolean } = {}) {
  const manifest = await loadManifest([dir], { env });
  sent = [];
  const run = await plan(manifest, { env, ...options });
  await run.connections.close();
  return { plan: run.plan, sent: [...sent], manifest };
}

const JOBS = ['fr-a', 'fr-b', 'fr-c'];

describe('a plan against services that hold everything already', () => {
  beforeAll(async () => {
    const { plan: cold, manifest } = await planOf(manifestDir(JOBS));
    const connections = connect(manifest, { env });
    const result = await apply({ plan: cold, connections });
    await connections.close();
    expect(result.counts.failed).toBe(0);
  });

  it('reads the jobs from one list with their Meta, and no job one by one', async () => {
    const { plan: warm, sent: requests } = await planOf(manifestDir(JOBS));
    expect(warm.summary.noop).toBe(warm.changes.length);
    expect(requests.filter((r) => r.startsWith('GET /v1/jobs?'))).toEqual([
      'GET /v1/jobs?meta=true&namespace=default',
    ]);
    expect(requests.filter((r) => r.startsWith('GET /v1/job/'))).toEqual([]);
    // The service's own dry run is the comparison: one per job, nothing more.
    expect(requests.filter((r) => /^POST \/v1\/job\/[^/]+\/plan/.test(r))).toHaveLength(JOBS.length);
  });

  it('reads the directory configuration once, for the configuration and the mount check of groups and users', async () => {
    const { sent: requests } = await planOf(manifestDir(JOBS));
    expect(requests.filter((r) => r.startsWith('GET /v1/auth/ldap/config'))).toHaveLength(1);
  });

  it('tells that the organization exists from the workspace list it reads anyway, not from a read of its own', async () => {
    const { sent: requests } = await planOf(manifestDir(JOBS));
    expect(
      requests.filter((r) => r.startsWith('GET /api/v2/organizations/sandbox/workspaces?')),
    ).toHaveLength(1);
    expect(requests).not.toContain('GET /api/v2/organizations/sandbox');
  });

  it('reads a job changed behind its back once, whole, and shows the change', async () => {
    const scheduler = SchedulerClient.fromConnection({ address: sandbox.url, token: sandbox.rootToken });
    const live = (await scheduler.readJob('fr-b'))!;
    await scheduler.registerJob({ ...live, Priority: 20 });
    await scheduler.close();

    const { plan: drifted, sent: requests } = await planOf(manifestDir(JOBS));
    const change = drifted.changes.find((c) => c.key.name === 'fr-b')!;
    expect(change.action).toBe('update');
    expect(change.diffs).toContainEqual(expect.objectContaining({ path: 'Priority', before: 20, after: 50 }));
    expect(requests.filter((r) => r.startsWith('GET /v1/job/'))).toEqual([
      'GET /v1/job/fr-b?namespace=default',
    ]);
  });

  it('shows a job that a prune deletes with its groups and their counts', async () => {
    const { plan: pruned } = await planOf(manifestDir(['fr-a', 'fr-b']), { prune: true });
    const doomed = pruned.changes.find((c) => c.key.name === 'fr-c')!;
    expect(doomed.action).toBe('delete');
    expect(doomed.before).toMatchObject({ ID: 'fr-c', TaskGroups: [{ Name: 'web', Count: 3 }] });
  });
});

/** Requests in `after` beyond those in `before`, as a sorted multiset difference. */
function extra(before: readonly string[], after: readonly string[]): string[] {
  const left = [...before];
  return after
    .filter((r) => {
      const i = left.indexOf(r);
      if (i < 0) return true;
      left.splice(i, 1);
      return false;
    })
    .sort();
}

describe("the blast radius of a directory group whose policies change behind Converge's back", () => {
  const group = (name: string, policies: string) =>
    `apiVersion: converge/v1\nkind: LdapGroup\nmetadata: { name: ${name} }\nspec: { policies: [${policies}] }\n`;
  const user = (name: string, groups: string) =>
    `apiVersion: converge/v1\nkind: LdapUser\nmetadata: { name: ${name} }\nspec: { groups: [${groups}] }\n`;

  function folderOf(docs: string[]): string {
    const dir = tempDir('converge-requests-impact-');
    writeFileSync(path.join(dir, 'directory.yaml'), docs.join('---\n'));
    return dir;
  }

  async function applied(dir: string): Promise<void> {
    const { plan: cold, manifest } = await planOf(dir);
    const connections = connect(manifest, { env });
    const result = await apply({ plan: cold, connections });
    await connections.close();
    expect(result.counts.failed).toBe(0);
  }

  async function driftGroup(name: string): Promise<void> {
    const secrets = SecretsClient.fromConnection({ address: sandbox.url, token: sandbox.rootToken });
    await secrets.writeLdapGroup('ldap', name, { policies: ['drifted'] });
    await secrets.close();
  }

  it("sends the warm plan's requests and nothing more when the plan listed the users", async () => {
    const dir = folderOf([
      group('im-ops', 'ops'),
      group('im-devs', 'dev'),
      user('im-alice', 'im-ops'),
      user('im-bob', 'im-ops'),
      user('im-carol', 'im-devs'),
    ]);
    await applied(dir);
    const { sent: warm } = await planOf(dir);
    await driftGroup('im-ops');

    const { plan: drifted, sent: requests } = await planOf(dir);
    const change = drifted.changes.find((c) => c.key.name === 'im-ops')!;
    expect(change.action).toBe('update');
    expect(change.impact).toContainEqual(expect.stringMatching(/effective policies of .*im-alice, im-bob/));
    expect(extra(warm, requests)).toEqual([]);
    expect(requests.length).toBe(warm.length);
  });

  it('reads only the users the plan did not read, once each, when the manifest declares one', async () => {
    const secrets = SecretsClient.fromConnection({ address: sandbox.url, token: sandbox.rootToken });
    // Made by someone else: only the service knows that im-zed belongs to the group.
    await secrets.writeLdapUser('ldap', 'im-zed', { policies: [], groups: ['im-solo'] });
    const dir = folderOf([group('im-solo', 'solo'), user('im-yan', 'im-solo')]);
    await applied(dir);
    const { sent: warm } = await planOf(dir);
    await driftGroup('im-solo');
    const live = await secrets.listLdapUsers('ldap');
    await secrets.close();

    const { plan: drifted, sent: requests } = await planOf(dir);
    const change = drifted.changes.find((c) => c.key.name === 'im-solo')!;
    expect(change.impact).toEqual(['changes the effective policies of 2 users: im-yan, im-zed']);
    // One list of names, and one read of each user but the declared one the plan read already.
    expect(extra(warm, requests)).toEqual(
      [
        'LIST /v1/auth/ldap/users',
        ...live.filter((name) => name !== 'im-yan').map((name) => `GET /v1/auth/ldap/users/${name}`),
      ].sort(),
    );
  });
});

describe('a scheduler that ignores meta=true (before Nomad 1.6)', () => {
  it('reads each listed job whole for its ownership marker', async () => {
    const asked: string[] = [];
    const jobs: Record<string, object> = {
      mine: { ID: 'mine', JobModifyIndex: 5, Meta: { 'converge-managed': 'true' }, TaskGroups: [] },
      theirs: { ID: 'theirs', JobModifyIndex: 6, Meta: null, TaskGroups: [] },
    };
    const server = createServer((req, res) => {
      asked.push(`${req.method} ${req.url}`);
      const id = /^\/v1\/job\/([^/?]+)/.exec(req.url ?? '')?.[1];
      const body = req.url?.startsWith('/v1/jobs?')
        ? Object.values(jobs).map((j) => ({ ...j, Meta: undefined, TaskGroups: undefined }))
        : id && jobs[id];
      res.writeHead(body ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify(body ?? {}));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const client = SchedulerClient.fromConnection({ address });
    const ctx: KindContext = {
      client: <C>(service: unknown) => (service === schedulerService ? client : undefined) as C,
      option: () => false,
    };
    try {
      const listed = await jobKind.list!(ctx, { namespace: 'default' });
      const scope = { kind: 'Job', namespace: 'default' };
      expect(listed.map((o) => [o.key.name, jobKind.owns!(o, scope), o.version])).toEqual([
        ['mine', true, 5],
        ['theirs', false, 6],
      ]);
      expect(asked.filter((a) => a.startsWith('GET /v1/job/')).sort()).toEqual([
        'GET /v1/job/mine?namespace=default',
        'GET /v1/job/theirs?namespace=default',
      ]);
    } finally {
      await client.close();
      server.close();
    }
  });
});
