/**
 * `converge export --namespace '*'`: the registry and the scheduler list every namespace under `*`,
 * but no object lives in `*`. Each document names the namespace its object lives in, a job is read
 * whole there, and the export plans clean. A role may link a policy of the default namespace from
 * any namespace, as the registry resolves links; and `*` written as a role's namespace is refused at
 * its line by `validate`, not by the registry at the first apply.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registryService } from '../../src/clients/registry/definition.js';
import { schedulerService } from '../../src/clients/scheduler/definition.js';
import type { Job } from '../../src/clients/scheduler/types.js';
import { connect } from '../../src/engine/workflow.js';
import type { PlanJson } from '../../src/planner/render/json.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

let sandbox: RunningSandbox;
let env: Record<string, string | undefined>;

const job = (id: string, namespace: string, image: string): Job =>
  ({
    ID: id,
    Namespace: namespace,
    Type: 'service',
    Datacenters: ['dc1'],
    TaskGroups: [{ Name: id, Count: 2, Tasks: [{ Name: 'server', Driver: 'docker', Config: { image } }] }],
  }) as Job;

beforeAll(async () => {
  sandbox = await startSandbox({
    port: 0,
    token: 'export-all-ns-root-3c9d',
    config: {
      registry: {
        policies: [
          { Name: 'service-read', ID: '0e6d7a52-7f6b-4c36-9a0e-5f1f7a1d2b01' },
          // The same name in team-a: a link by name there means team-a's, by ID either.
          { Name: 'service-read', Namespace: 'team-a', ID: '0e6d7a52-7f6b-4c36-9a0e-5f1f7a1d2b02' },
        ],
      },
      scheduler: { namespaces: ['team-a'] },
    },
  });
  env = { ...sandbox.env(), NO_COLOR: '1', CONVERGE_STATE_DIR: tempDir('converge-export-ns-state-') };
  const connections = connect(undefined, { env });
  try {
    const registry = connections.client(registryService);
    const role = { Policies: [{ Name: 'service-read' }], ServiceIdentities: [], NodeIdentities: [] };
    await registry.createRole({ Name: 'team-role', Description: 'team', ...role }, { namespace: 'team-a' });
    await registry.createRole({ Name: 'base-role', Description: 'base', ...role }, { namespace: 'default' });
    const scheduler = connections.client(schedulerService);
    await scheduler.registerJob(job('web', 'default', 'nginx:1.26'), { namespace: 'default' });
    await scheduler.registerJob(job('api', 'team-a', 'api:1'), { namespace: 'team-a' });
  } finally {
    await connections.close();
  }
});
afterAll(async () => {
  await sandbox?.close();
});

/** What these tests read of an exported document's spec (a job's). */
interface ExportedSpec {
  Datacenters?: string[];
  TaskGroups: { Count?: number; Tasks: { Config: { image?: string } }[] }[];
}

/** The exported documents of one kind's file, as plain objects. */
function documents(
  dir: string,
  kind: string,
): { metadata: { name: string; namespace: string }; spec: ExportedSpec }[] {
  const text = readFileSync(path.join(dir, `${kind}.yaml`), 'utf8');
  return parseAllDocuments(text).map(
    (d) => d.toJS() as { metadata: { name: string; namespace: string }; spec: ExportedSpec },
  );
}

async function planOf(dir: string): Promise<PlanJson> {
  const r = await runCli(['plan', '-f', dir, '--json'], env);
  expect(r.stderr).toBe('');
  return JSON.parse(r.stdout) as PlanJson;
}

describe("export --namespace '*'", () => {
  it('writes each role with the namespace it lives in, and the export plans with no changes', async () => {
    const dir = path.join(tempDir('converge-export-ns-'), 'roles');
    const r = await runCli(['export', '-o', dir, '--kind', 'AclRole', '--namespace', '*'], env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const roles = documents(dir, 'AclRole').map((d) => [d.metadata.name, d.metadata.namespace]);
    expect(roles.sort()).toEqual([
      ['base-role', 'default'],
      ['team-role', 'team-a'],
    ]);
    const plan = await planOf(dir);
    // team-role links service-read, a policy of the default namespace: no problem, no change.
    expect(plan.problems).toEqual([]);
    expect(plan.summary).toMatchObject({ create: 0, update: 0, delete: 0, noop: 2, unplanned: 0 });
  });

  it('writes each job whole, in its own namespace: the plan only adds the ownership marker', async () => {
    const dir = path.join(tempDir('converge-export-ns-'), 'jobs');
    const r = await runCli(['export', '-o', dir, '--kind', 'Job', '--namespace', '*'], env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const jobs = documents(dir, 'Job');
    expect(jobs.map((d) => [d.metadata.name, d.metadata.namespace]).sort()).toEqual([
      ['api', 'team-a'],
      ['web', 'default'],
    ]);
    for (const d of jobs) {
      expect(d.spec.Datacenters).toEqual(['dc1']);
      expect(d.spec.TaskGroups[0]!.Count).toBe(2);
      expect(d.spec.TaskGroups[0]!.Tasks[0]!.Config.image).toMatch(/^(nginx:1\.26|api:1)$/);
    }
    const plan = await planOf(dir);
    expect(plan.problems).toEqual([]);
    expect(plan.changes.map((c) => [c.address, c.action, c.diffs.map((d) => d.path)]).sort()).toEqual([
      ['Job/default/web', 'update', ['Meta.converge-managed']],
      ['Job/team-a/api', 'update', ['Meta.converge-managed']],
    ]);
  });

  it('without --kind, names the kinds it found beside the places that do not exist, and writes nothing', async () => {
    const dir = path.join(tempDir('converge-export-ns-'), 'all');
    const r = await runCli(['export', '-o', dir, '--namespace', '*'], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Workspace: organization "*" does not exist');
    expect(r.stderr).toContain(
      'Objects of AclRole, Job were found there: export them with --kind AclRole --kind Job.',
    );
    expect(existsSync(dir)).toBe(false);
  });
});

it("links a role to the default namespace's policy by ID, where its own namespace has one of that name", async () => {
  const dir = tempDir('converge-export-ns-link-');
  writeFileSync(
    path.join(dir, 'roles.yaml'),
    'apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: by-id, namespace: team-a }\nspec: { Policies: [{ ID: 0e6d7a52-7f6b-4c36-9a0e-5f1f7a1d2b01 }] }\n',
  );
  const plan = await planOf(dir);
  expect(plan.problems).toEqual([]);
  expect(plan.summary).toMatchObject({ create: 1, unplanned: 0 });
});

it("refuses a role whose namespace is '*' at its line, before any service is asked", async () => {
  const dir = tempDir('converge-export-ns-star-');
  writeFileSync(
    path.join(dir, 'roles.yaml'),
    'apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: r, namespace: "*" }\nspec: { Description: x }\n',
  );
  const r = await runCli(['validate', '-f', dir], env);
  expect(r.code).toBe(1);
  expect(r.stderr).toContain(
    `${path.join(dir, 'roles.yaml')}:3:33: metadata.namespace must match the pattern`,
  );
  expect(r.stderr).toContain('got "*"');
});
