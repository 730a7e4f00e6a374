/**
 * Job manifests through the built CLI, as a user runs them against the sandbox: a text (HCL) job, a
 * JSON job file and an inline job planned through the service's plan endpoint, applied with
 * check-and-set, and planned `noop` afterwards; a change shown with the service's annotations;
 * counts kept after scaling; a job changed behind a saved plan refused; stop, purge and prune.
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceConnections } from '../../src/engine/connections.js';
import { defaultCatalog } from '../../src/engine/services.js';
import { schedulerService } from '../../src/clients/scheduler/definition.js';
import type { SchedulerClient } from '../../src/clients/scheduler/client.js';
import type { PlanJson } from '../../src/planner/render/json.js';
import type { KindContext } from '../../src/resources/contract.js';
import { jobKind } from '../../src/resources/scheduler/job.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { type CliResult, converge as run } from './helpers.js';
import { tempDir } from '../support/temp-dirs.js';

const ROOT_TOKEN = `planted-root-token-${randomUUID()}`;
let sandbox: RunningSandbox;
let connections: ServiceConnections;
let scheduler: SchedulerClient;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, token: ROOT_TOKEN });
  connections = new ServiceConnections(sandbox.env(), defaultCatalog.definitions);
  scheduler = connections.client(schedulerService);
});
afterAll(async () => {
  await connections?.close();
  await sandbox?.close();
});

const outputs: string[] = [];

async function converge(args: string[], cwd?: string): Promise<CliResult> {
  const result = await run(args, { ...sandbox.env(), NO_COLOR: '1' }, cwd);
  outputs.push(result.stdout, result.stderr);
  return result;
}

function folder(files: Record<string, string>): string {
  const dir = tempDir('converge-job-');
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  return dir;
}

function hcl(id: string, image: string, count = 2): string {
  return `job "${id}" {
  datacenters = ["dc1"]
  type        = "service"

  group "web" {
    count = ${count}

    task "server" {
      driver = "docker"
      config {
        image = "${image}"
      }
      resources {
        cpu    = 100
        memory = 128
      }
    }
  }
}
`;
}

function manifestFor(id: string, spec: string): string {
  return `apiVersion: converge/v1
kind: Job
metadata: { name: ${id} }
spec:
${spec
  .split('\n')
  .map((l) => `  ${l}`)
  .join('\n')}
`;
}

async function planJson(dir: string): Promise<PlanJson> {
  const r = await converge(['plan', '-f', dir, '--json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as PlanJson;
}

async function applied(dir: string): Promise<void> {
  const r = await converge(['apply', '-f', dir, '--auto-approve']);
  expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
}

async function expectNoop(dir: string): Promise<void> {
  const r = await converge(['plan', '-f', dir, '--detailed-exitcode']);
  expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
}

describe('a text (HCL) job spec', () => {
  it('plans a create with what the scheduler would place, applies it, and then plans noop', async () => {
    const dir = folder({
      'web.nomad.hcl': hcl('hcl-web', 'nginx:1.26'),
      'jobs.yaml': manifestFor('hcl-web', 'specFile: web.nomad.hcl'),
    });
    const plan = await planJson(dir);
    expect(plan.changes).toEqual([
      expect.objectContaining({
        address: 'Job/default/hcl-web',
        action: 'create',
        impact: ['group web: 2 to place'],
      }),
    ]);
    const human = await converge(['plan', '-f', dir]);
    expect(human.stdout).toContain('# group web: 2 to place');

    await applied(dir);
    const job = await scheduler.readJob('hcl-web');
    expect(job).toMatchObject({ ID: 'hcl-web', Type: 'service', Meta: { 'converge-managed': 'true' } });
    expect(job!.TaskGroups![0]).toMatchObject({ Name: 'web', Count: 2 });
    expect(await scheduler.jobAllocations('hcl-web')).toHaveLength(2);
    await expectNoop(dir);
    // `converge job plan` of the same file agrees: nothing to change (the ownership marker included).
    const jobPlan = await converge(['job', 'plan', path.join(dir, 'web.nomad.hcl'), '--detailed-exitcode']);
    expect(jobPlan.code, jobPlan.stdout).toBe(0);
  });

  it('shows a changed image as a destructive update at the manifest path, and converges', async () => {
    const dir = folder({
      'web.hcl': hcl('hcl-change', 'nginx:1.26'),
      'jobs.yaml': manifestFor('hcl-change', 'specFile: web.hcl'),
    });
    await applied(dir);
    writeFileSync(path.join(dir, 'web.hcl'), hcl('hcl-change', 'nginx:1.27'));
    const plan = await planJson(dir);
    const change = plan.changes.find((c) => c.address === 'Job/default/hcl-change')!;
    expect(change.action).toBe('update');
    expect(change.diffs).toEqual([
      expect.objectContaining({
        path: 'TaskGroups[web].Tasks[server].Config.image',
        op: 'change',
        before: 'nginx:1.26',
        after: 'nginx:1.27',
        note: expect.stringContaining('forces create/destroy update'),
      }),
    ]);
    // The canonical rolling update (MaxParallel 1) replaces one allocation at a time.
    expect(change.impact.join('\n')).toMatch(/group web: 1 to replace \(create\/destroy update\)/);
    await applied(dir);
    expect((await scheduler.readJob('hcl-change'))!.Version).toBe(1);
    await expectNoop(dir);
  });

  it('reports a syntax error at the manifest line with the parser message and position', async () => {
    const dir = folder({
      'broken.hcl': 'job "broken" {\n  group "g" {\n    count = \n  }\n}\n',
      'jobs.yaml': manifestFor('broken', 'specFile: broken.hcl'),
    });
    const r = await converge(['plan', '-f', dir]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /jobs\.yaml:5:\d+: Failed to parse job: broken\.hcl:3,\d+-\d+,\d+: Invalid expression/,
    );
    expect(await scheduler.readJob('broken')).toBeUndefined();
  });

  it('refuses a job whose own ID differs from metadata.name', async () => {
    const dir = folder({
      'other.hcl': hcl('other-id', 'nginx'),
      'jobs.yaml': manifestFor('declared-id', 'specFile: other.hcl'),
    });
    const r = await converge(['plan', '-f', dir]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('other.hcl says ID "other-id", but metadata.name is "declared-id"');
    // Not planned, so nothing the scheduler would do is shown: its plan would be of another job.
    expect(r.stdout).toContain('could not be planned');
    expect(r.stdout).not.toMatch(/# group web: .*to place/);
  });
});

describe('mistakes in a job', () => {
  it('a misspelt inline field is refused by validate with a suggestion, before any service is asked', async () => {
    const dir = folder({
      'jobs.yaml': manifestFor(
        'typo',
        'Type: service\nDatacenter: [dc1]\nTaskGroups:\n  - { Name: g, Cuont: 2, Tasks: [{ Name: t, Driver: docker }] }',
      ),
    });
    const r = await converge(['validate', '-f', dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('unknown field "Datacenter" in spec; did you mean "Datacenters"?');
    expect(r.stderr).toContain('unknown field "Cuont" in spec.TaskGroups[0]; did you mean "Count"?');
  });

  it('a missing job file is reported by validate with the other problems, in one run', async () => {
    const dir = folder({
      'jobs.yaml':
        manifestFor('no-file', 'specFile: missing.hcl') +
        '---\n' +
        manifestFor(
          'typo-too',
          'Type: service\nDatacenter: [dc1]\nTaskGroups:\n  - { Name: g, Tasks: [{ Name: t }] }',
        ),
    });
    const validated = await converge(['validate', '-f', dir]);
    expect(validated.code).toBe(1);
    expect(validated.stderr).toContain('missing.hcl');
    expect(validated.stderr).toContain('unknown field "Datacenter" in spec');
  });

  it('takes null for a block the service writes as null (a batch job read back)', async () => {
    const dir = folder({
      'jobs.yaml': manifestFor(
        'nulls',
        [
          'Type: batch',
          'Datacenters: [dc1]',
          'Update: null',
          'Migrate: null',
          'Reschedule: null',
          'TaskGroups:',
          '  - Name: g',
          '    Update: null',
          '    Migrate: null',
          '    ReschedulePolicy: null',
          '    Tasks:',
          '      - { Name: t, Driver: docker, RestartPolicy: null, Resources: { CPU: 100 } }',
        ].join('\n'),
      ),
    });
    const r = await converge(['validate', '-f', dir]);
    expect(r.code, r.stderr).toBe(0);
  });

  it('a misspelt field of resources or an update, which the service would drop, is refused too', async () => {
    const dir = folder({
      'jobs.yaml': manifestFor(
        'typo-deep',
        [
          'Type: service',
          'Datacenters: [dc1]',
          'Update: { MaxParalel: 2 }',
          'TaskGroups:',
          '  - Name: g',
          '    ReschedulePolicy: { Atempts: 3 }',
          '    Tasks:',
          '      - { Name: t, Driver: docker, Resources: { CPU: 100, MemoryMegs: 2048 } }',
        ].join('\n'),
      ),
    });
    const r = await converge(['validate', '-f', dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('unknown field "MaxParalel" in spec.Update; did you mean "MaxParallel"?');
    expect(r.stderr).toContain(
      'unknown field "Atempts" in spec.TaskGroups[0].ReschedulePolicy; did you mean "Attempts"?',
    );
    expect(r.stderr).toContain(
      'unknown field "MemoryMegs" in spec.TaskGroups[0].Tasks[0].Resources (allowed: CPU, Cores, MemoryMB,',
    );
  });

  it('a job the scheduler refuses is a problem at its manifest line (a missing namespace at metadata.namespace); the other jobs are still planned', async () => {
    const dir = folder({
      'jobs.yaml': `apiVersion: converge/v1
kind: Job
metadata: { name: lost, namespace: no-such-namespace }
spec:
  Type: service
  TaskGroups: [{ Name: g, Tasks: [{ Name: t, Driver: docker }] }]
---
${manifestFor('fine', 'Type: service\nDatacenters: [dc1]\nTaskGroups: [{ Name: g, Tasks: [{ Name: t, Driver: docker }] }]')}`,
    });
    const r = await converge(['plan', '-f', dir]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /jobs\.yaml:3:\d+: the scheduler refuses this job: .*nonexistent namespace "no-such-namespace"/,
    );
    expect(r.stdout).toContain('+ Job/default/fine');
  });

  it('a refusal the scheduler words as a Go multierror reads as one plain line, not with its escapes', async () => {
    // The type from a variable: validate checks a written one, the scheduler one it is given.
    const dir = folder({
      'jobs.yaml': manifestFor(
        'typed',
        'Type: "${env:JOB_TYPE}"\nDatacenters: [dc1]\nTaskGroups: [{ Name: g, Tasks: [{ Name: t, Driver: docker }] }]',
      ),
    });
    const r = await run(['plan', '-f', dir, '--allow-env', 'JOB_TYPE'], {
      ...sandbox.env(),
      NO_COLOR: '1',
      JOB_TYPE: 'bogus',
    });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('the scheduler refuses this job: Invalid job type: "bogus"');
    expect(r.stdout).not.toContain('\\n\\t');
  });
});

describe('JSON and inline jobs', () => {
  it('applies a .json job file ({"Job": …}) and an inline job, then plans both noop', async () => {
    const json = {
      Job: {
        ID: 'json-batch',
        Type: 'batch',
        Datacenters: ['dc1'],
        TaskGroups: [
          { Name: 'run', Count: 1, Tasks: [{ Name: 'once', Driver: 'exec', Config: { command: 'true' } }] },
        ],
      },
    };
    const dir = folder({
      'batch.json': JSON.stringify(json),
      'jobs.yaml': `${manifestFor('json-batch', 'specFile: batch.json')}---
${manifestFor(
  'inline-web',
  `Type: service
Datacenters: [dc1]
Meta: { team: web }
TaskGroups:
  - Name: web
    Count: 1
    Tasks:
      - { Name: server, Driver: docker, Config: { image: "nginx:1.27" } }`,
)}`,
    });
    const plan = await planJson(dir);
    expect(plan.summary).toMatchObject({ create: 2 });
    await applied(dir);
    expect(await scheduler.readJob('json-batch')).toMatchObject({ Type: 'batch' });
    expect(await scheduler.readJob('inline-web')).toMatchObject({
      Meta: { team: 'web', 'converge-managed': 'true' },
    });
    await expectNoop(dir);
  });

  it('points at the line and column of a .json job file that is not valid JSON', async () => {
    const dir = folder({
      'bad.json': '{"Job": {\n  "ID": "bad-json",, }}\n',
      'jobs.yaml': manifestFor('bad-json', 'specFile: bad.json'),
    });
    const r = await converge(['validate', '-f', dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/bad\.json: not valid JSON: .* at line 2, column 20/);
  });
});

describe('counts changed by scaling', () => {
  // No rolling update (MaxParallel 0): no deployment, so the group may be scaled right away.
  const spec = (preserve: boolean) =>
    `${preserve ? 'preserveCounts: true\n' : ''}Type: service
Datacenters: [dc1]
TaskGroups:
  - Name: web
    Count: 1
    Update: { MaxParallel: 0 }
    Tasks:
      - { Name: server, Driver: docker, Config: { image: "nginx:1.27" } }`;

  it('are kept with preserveCounts (noop), and planned back without it', async () => {
    const dir = folder({ 'jobs.yaml': manifestFor('scaled', spec(true)) });
    await applied(dir);
    await scheduler.scaleJob('scaled', 'web', { count: 3, message: 'busy day' });
    await expectNoop(dir);
    // The manifest's count differs from the live one it keeps: said on the job, so a change that only
    // edits a count does not read as nothing.
    const kept = await planJson(dir);
    expect(kept.changes[0]).toMatchObject({
      action: 'noop',
      notes: [`task group "web": the manifest's Count 1 is not applied; preserveCounts keeps the live 3`],
      held_back: ['TaskGroups'],
    });
    // Nor does the headline say the job matches: the note under it says otherwise.
    const text = await converge(['plan', '-f', dir]);
    expect(text.stdout).toContain(
      'No changes. Nothing to apply. 1 object still differs from the manifest in what Converge leaves alone on purpose (see their notes).',
    );
    expect(text.stdout).not.toContain('matches');

    writeFileSync(path.join(dir, 'jobs.yaml'), manifestFor('scaled', spec(false)));
    const plan = await planJson(dir);
    expect(plan.changes[0]!.diffs).toEqual([
      expect.objectContaining({ path: 'TaskGroups[web].Count', before: 3, after: 1, note: 'forces destroy' }),
    ]);
  });
});

describe('deleting jobs', () => {
  it('says how many running allocations each deletion stops, from the list it read anyway', async () => {
    const spec = (count: number) =>
      `Type: service\nDatacenters: [dc1]\nTaskGroups:\n  - Name: web\n    Count: ${count}\n    Tasks:\n      - { Name: server, Driver: docker, Config: { image: "nginx:1.27" } }`;
    const dir = folder({
      'jobs.yaml': manifestFor('doomed-a', spec(2)) + '---\n' + manifestFor('doomed-b', spec(1)),
    });
    await applied(dir);
    const absent = (text: string, id: string) =>
      text.replace(`metadata: { name: ${id} }`, `metadata: { name: ${id}, ensure: absent }`);
    writeFileSync(
      path.join(dir, 'jobs.yaml'),
      absent(
        absent(manifestFor('doomed-a', spec(2)) + '---\n' + manifestFor('doomed-b', spec(1)), 'doomed-a'),
        'doomed-b',
      ),
    );
    const plan = await planJson(dir);
    const impact = Object.fromEntries(plan.changes.map((c) => [c.name, [c.action, c.impact]]));
    expect(impact).toEqual({
      'doomed-a': ['delete', ['stops 2 running allocations (web: 2)']],
      'doomed-b': ['delete', ['stops 1 running allocation (web: 1)']],
    });
  });
});

describe('check-and-set', () => {
  const spec = (priority: number) => `Type: service
Priority: ${priority}
Datacenters: [dc1]
TaskGroups:
  - Name: web
    Count: 1
    Tasks:
      - { Name: server, Driver: docker, Config: { image: "nginx:1.27" } }`;

  it('refuses a saved plan when someone registered the job after it was made', async () => {
    const dir = folder({ 'jobs.yaml': manifestFor('cas-saved', spec(50)) });
    await applied(dir);
    writeFileSync(path.join(dir, 'jobs.yaml'), manifestFor('cas-saved', spec(60)));
    const planFile = path.join(dir, 'job.plan');
    expect((await converge(['plan', '-f', dir, '-out', planFile])).code).toBe(0);

    const live = (await scheduler.readJob('cas-saved'))!;
    await scheduler.registerJob({ ...live, Priority: 90 });

    const r = await converge(['apply', planFile, '--auto-approve']);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/Job\/default\/cas-saved.*changed since the plan \(JobModifyIndex \d+ → \d+\)/);
    expect((await scheduler.readJob('cas-saved'))!.Priority).toBe(90);
  });

  it("registers with the plan's JobModifyIndex, so a change in between is refused, not overwritten", async () => {
    const dir = folder({ 'jobs.yaml': manifestFor('cas-race', spec(50)) });
    await applied(dir);
    const ctx: KindContext = {
      client: (definition, connection) => connections.client(definition, connection),
      option: () => false,
    };
    const key = { kind: 'Job', name: 'cas-race', namespace: 'default' };
    const desired = {
      key,
      spec: {
        Type: 'service',
        Priority: 60,
        Datacenters: ['dc1'],
        TaskGroups: (await scheduler.readJob('cas-race'))!.TaskGroups,
      },
    };
    const resolved = (await jobKind.resolve!(desired)).desired;
    const observed = (await jobKind.observe(ctx, key))!;
    const planned = await jobKind.serverPlan(ctx, resolved, observed);
    expect(planned && 'plan' in planned ? planned.plan.JobModifyIndex : undefined).toBe(observed.version);

    // Between the plan and the apply, someone else registers the job.
    const live = (await scheduler.readJob('cas-race'))!;
    await scheduler.registerJob({ ...live, Priority: 90 });

    await expect(jobKind.update(ctx, resolved, observed)).rejects.toThrow(
      /job cas-race in namespace default changed since the plan .*not overwritten/,
    );
    expect((await scheduler.readJob('cas-race'))!.Priority).toBe(90);
  });
});

describe('deleting jobs', () => {
  const spec = `Type: service
Datacenters: [dc1]
TaskGroups:
  - Name: web
    Count: 1
    Tasks:
      - { Name: server, Driver: docker, Config: { image: "nginx:1.27" } }`;

  it('stops a job declared absent, and purges it with purgeOnDelete', async () => {
    const dir = folder({
      'jobs.yaml': `${manifestFor('gone-stopped', spec)}---\n${manifestFor('gone-purged', spec)}`,
    });
    await applied(dir);
    writeFileSync(
      path.join(dir, 'jobs.yaml'),
      `apiVersion: converge/v1
kind: Job
metadata: { name: gone-stopped, ensure: absent }
---
apiVersion: converge/v1
kind: Job
metadata: { name: gone-purged, ensure: absent }
spec: { purgeOnDelete: true }
`,
    );
    const plan = await planJson(dir);
    expect(plan.changes.map((c) => [c.address, c.action])).toEqual([
      ['Job/default/gone-stopped', 'delete'],
      ['Job/default/gone-purged', 'delete'],
    ]);
    await applied(dir);
    expect(await scheduler.readJob('gone-stopped')).toMatchObject({ Stop: true });
    expect(await scheduler.readJob('gone-purged')).toBeUndefined();
    await expectNoop(dir);

    // A stopped job counts as absent: declared again, it is created (started) anew on its own index.
    writeFileSync(path.join(dir, 'jobs.yaml'), manifestFor('gone-stopped', spec));
    expect((await planJson(dir)).changes.map((c) => [c.address, c.action])).toEqual([
      ['Job/default/gone-stopped', 'create'],
    ]);
    await applied(dir);
    expect(await scheduler.readJob('gone-stopped')).toMatchObject({ Stop: false, Status: 'running' });
    await expectNoop(dir);
  });

  it("prunes only jobs carrying the ownership marker, never other teams' jobs", async () => {
    const dir = folder({
      'jobs.yaml': `${manifestFor('prune-keep', spec)}---\n${manifestFor('prune-drop', spec)}`,
    });
    await applied(dir);
    const foreign = (await scheduler.readJob('prune-keep'))!;
    await scheduler.registerJob({ ...foreign, ID: 'prune-foreign', Name: 'prune-foreign', Meta: {} });
    writeFileSync(path.join(dir, 'jobs.yaml'), manifestFor('prune-keep', spec));
    const plan = JSON.parse((await converge(['plan', '-f', dir, '--prune', '--json'])).stdout) as PlanJson;
    const deletes = plan.changes.filter((c) => c.action === 'delete').map((c) => c.address);
    expect(deletes).toContain('Job/default/prune-drop');
    expect(deletes).not.toContain('Job/default/prune-foreign');
    expect(deletes).not.toContain('Job/default/prune-keep');
  });
});

describe('output', () => {
  it('never shows the token', () => {
    for (const text of outputs) expect(text).not.toContain(ROOT_TOKEN);
  });
});
