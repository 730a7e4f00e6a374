/** The scheduler client against the sandbox over real HTTP on 127.0.0.1: every job endpoint of the spec. */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectionFromEnv, HttpStatusError } from '../../src/clients/http/index.js';
import { schedulerService } from '../../src/clients/scheduler/definition.js';
import { type Job, SchedulerClient } from '../../src/clients/scheduler/client.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { caught } from './helpers.js';

const ROOT = 'root-secret-5c1d77';
const READER = 'reader-secret-90e2aa';

let sandbox: Awaited<ReturnType<typeof startSandbox>>;
let root: SchedulerClient;
let reader: SchedulerClient;

const unique = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;

function service(id: string, count = 2, extra: Partial<Job> = {}): Job {
  return {
    ID: id,
    Type: 'service',
    Datacenters: ['dc1'],
    TaskGroups: [
      {
        Name: 'web',
        Count: count,
        Tasks: [{ Name: 'server', Driver: 'docker', Config: { image: 'nginx:1.26' } }],
      },
    ],
    ...extra,
  };
}

beforeAll(async () => {
  sandbox = await startSandbox({
    port: 0,
    token: ROOT,
    config: {
      scheduler: { namespaces: ['team-a'], deploymentSeconds: 0.2 },
      tokens: [
        { name: 'reader', secret: READER, scheduler: { namespaces: { default: { policy: 'read' } } } },
      ],
    },
  });
  const endpoint = connectionFromEnv(schedulerService, sandbox.env());
  root = SchedulerClient.fromConnection({ address: endpoint.address, token: ROOT });
  reader = SchedulerClient.fromConnection({ address: endpoint.address, token: READER });
});

afterAll(async () => {
  await root?.close();
  await reader?.close();
  await sandbox?.close();
});

describe('register, read, plan', () => {
  it('plans a new job (JobModifyIndex 0), registers it with check-and-set, and plans it unchanged', async () => {
    const id = unique('web');
    const first = await root.planJob(service(id));
    expect(first.JobModifyIndex).toBe(0);
    expect(first.Diff?.Type).toBe('Added');
    expect(first.Annotations?.DesiredTGUpdates?.web).toMatchObject({ Place: 2 });

    const reg = await root.registerJob(service(id), { enforceIndex: true, jobModifyIndex: 0 });
    expect(reg.EvalID).toMatch(/^[0-9a-f-]{36}$/);
    const job = await root.readJob(id);
    expect(job).toMatchObject({ ID: id, Version: 0, JobModifyIndex: reg.JobModifyIndex });

    const again = await root.planJob(service(id));
    expect(again.JobModifyIndex).toBe(reg.JobModifyIndex);
    expect(again.Diff?.Type).toBe('None');
    expect(await root.jobAllocations(id)).toHaveLength(2);
    expect((await root.jobEvaluations(id))[0]).toMatchObject({ TriggeredBy: 'job-register' });
  });

  it('accepts the canonical job the service reads back (every listed field, null where unused) in read, versions, list and plan', async () => {
    const id = unique('canon');
    const minimal: Job = {
      ID: id,
      Type: 'batch',
      TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'docker' }] }],
    };
    await root.registerJob(minimal);
    const job = (await root.readJob(id)) as Record<string, unknown>;
    expect(job).toMatchObject({ Constraints: null, Meta: null, Periodic: null, Update: null, Migrate: null });
    const task = (job.TaskGroups as { Tasks: Record<string, unknown>[] }[])[0]!.Tasks[0]!;
    expect(task).toMatchObject({ Env: null, Meta: null, Secrets: null });
    expect((await root.jobVersions(id))?.Versions).toHaveLength(1);
    expect((await root.listJobs({ prefix: id })).map((j) => j.ID)).toEqual([id]);
    expect((await root.planJob(job as Job)).Diff?.Type).toBe('None');
  });

  it('refuses a stale check-and-set with the service message, and a reader with 403', async () => {
    const id = unique('cas');
    const reg = await root.registerJob(service(id));
    await root.updateJob(service(id, 3));
    const err = await caught(
      root.updateJob(service(id, 4), { enforceIndex: true, jobModifyIndex: reg.JobModifyIndex }),
    );
    expect(err).toBeInstanceOf(HttpStatusError);
    expect((err as HttpStatusError).serviceMessage).toMatch(
      /^Enforcing job modify index \d+: job exists with conflicting job modify index: \d+$/,
    );
    expect(await reader.readJob(id)).toMatchObject({ ID: id });
    expect(await caught(reader.registerJob(service(id)))).toMatchObject({ status: 403 });
  });

  it('parses a text job specification, with defaults when asked', async () => {
    const text =
      'job "parsed" {\n  datacenters = ["dc1"]\n  group "g" {\n    task "t" {\n      driver = "docker"\n      config { image = "redis" }\n    }\n  }\n}\n';
    const job = await root.parseJob(text);
    expect(job).toMatchObject({ ID: 'parsed', Datacenters: ['dc1'] });
    expect(job.TaskGroups![0]!.Name).toBe('g');
    const canonical = await root.parseJob(text, { canonicalize: true });
    expect(canonical).toMatchObject({ Type: 'service', Priority: 50, Namespace: 'default' });
    expect(await caught(root.parseJob('job "x" {'))).toMatchObject({ status: 400 });
  });

  it('reads versions with diffs, marks one stable, reverts to it with EnforcePriorVersion', async () => {
    const id = unique('ver');
    await root.registerJob(service(id, 1));
    await root.registerJob(service(id, 2));
    const versions = await root.jobVersions(id, { diffs: true });
    expect(versions!.Versions.map((v) => v.Version)).toEqual([1, 0]);
    expect(versions!.Diffs![0]!.TaskGroups![0]!.Fields).toEqual(
      expect.arrayContaining([expect.objectContaining({ Name: 'Count', Old: '1', New: '2' })]),
    );
    expect((await root.jobVersions(id))!.Diffs).toBeNull();
    await root.setJobStability(id, 0, true);
    expect((await root.jobVersions(id))!.Versions.find((v) => v.Version === 0)!.Stable).toBe(true);
    const stale = await caught(root.revertJob(id, 0, { enforcePriorVersion: 0 }));
    expect((stale as HttpStatusError).serviceMessage).toBe('Current job has version 1; enforcing version 0');
    await root.revertJob(id, 0, { enforcePriorVersion: 1 });
    expect(await root.readJob(id)).toMatchObject({
      Version: 2,
      TaskGroups: [expect.objectContaining({ Count: 1 })],
    });
    expect(await root.jobVersions(unique('none'))).toBeUndefined();
  });
});

describe('operations', () => {
  it('dispatches a parameterized job and counts the child in the summary', async () => {
    const id = unique('report');
    await root.registerJob({
      ...service(id, 1),
      Type: 'batch',
      ParameterizedJob: { Payload: 'optional', MetaRequired: ['customer'] },
    });
    const res = await root.dispatchJob(id, { payload: '{"a":1}', meta: { customer: 'acme' } });
    expect(res.DispatchedJobID).toMatch(new RegExp(`^${id}/dispatch-\\d+-[0-9a-f]{8}$`));
    const child = await root.readJob(res.DispatchedJobID);
    expect(child).toMatchObject({ ParentID: id, Dispatched: true, Meta: { customer: 'acme' } });
    expect((await root.jobSummary(id))!.Children).toMatchObject({ Running: 1 });
    const missing = await caught(root.dispatchJob(id));
    expect((missing as HttpStatusError).serviceMessage).toContain('did not provide required meta keys');
  });

  it('forces a periodic launch, and refuses it for a job that is not periodic', async () => {
    const id = unique('nightly');
    await root.registerJob({
      ...service(id, 1),
      Type: 'batch',
      Periodic: { Enabled: true, SpecType: 'cron', Spec: '0 3 * * *' },
    });
    const plan = await root.planJob({
      ...service(id, 1),
      Type: 'batch',
      Periodic: { Enabled: true, SpecType: 'cron', Spec: '0 3 * * *' },
    });
    expect(plan.NextPeriodicLaunch).toMatch(/T03:00:00Z$/);
    const forced = await root.forcePeriodic(id);
    expect(forced.EvalID).toMatch(/^[0-9a-f-]{36}$/);
    expect(await caught(root.forcePeriodic(unique('missing')))).toBeInstanceOf(HttpStatusError);
    const plain = unique('plain');
    await root.registerJob(service(plain, 1));
    expect(((await caught(root.forcePeriodic(plain))) as HttpStatusError).serviceMessage).toBe(
      "can't force launch non-periodic job",
    );
  });

  it('scales a group after its deployment, records the event, and refuses during one', async () => {
    const id = unique('scale');
    await root.registerJob(service(id, 1));
    expect((await root.latestDeployment(id))!.Status).toBe('running');
    const during = await caught(root.scaleJob(id, 'web', { count: 2, message: 'more' }));
    expect(during).toMatchObject({
      status: 400,
      serviceMessage: 'job scaling blocked due to active deployment',
    });

    let deployment = await root.latestDeployment(id);
    for (let i = 0; i < 50 && deployment?.Status === 'running'; i += 1) {
      await new Promise((r) => setTimeout(r, 50));
      deployment = await root.latestDeployment(id);
    }
    expect(deployment!.Status).toBe('successful');
    expect(await root.jobDeployments(id)).toHaveLength(1);

    const scaled = await root.scaleJob(id, 'web', { count: 3, message: 'busy day' });
    expect(scaled.EvalID).toBeDefined();
    const noted = await root.scaleJob(id, 'web', { error: 'metrics missing' });
    expect(noted.EvalID).toBeUndefined();
    const status = await root.jobScaleStatus(id);
    expect(status!.TaskGroups.web).toMatchObject({ Desired: 3 });
    expect(status!.TaskGroups.web!.Events!.map((e) => [e.Message, e.Error])).toEqual([
      ['metrics missing', true],
      ['busy day', false],
    ]);
    expect(await caught(root.scaleJob(id, 'nope', { count: 1, message: 'm' }))).toMatchObject({
      status: 400,
    });
  });

  it('evaluates again, stops, and purges', async () => {
    const id = unique('stop');
    await root.registerJob(service(id, 1, { Update: { MaxParallel: 0 } }));
    const evaluated = await root.evaluateJob(id, { forceReschedule: true });
    expect(evaluated.EvalID).toMatch(/^[0-9a-f-]{36}$/);
    await root.stopJob(id);
    expect(await root.readJob(id)).toMatchObject({ Stop: true, Status: 'dead' });
    await root.stopJob(id, { purge: true });
    expect(await root.readJob(id)).toBeUndefined();
    expect(await root.jobAllocations(id, { all: true })).not.toHaveLength(0);
  });

  it('lists jobs by prefix and across namespaces, and holds a blocking read until the job changes', async () => {
    const id = unique('list');
    await root.registerJob(service(id, 1), { namespace: 'team-a' });
    expect(await root.listJobs({ prefix: id })).toEqual([]);
    expect((await root.listJobs({ prefix: id, namespace: 'team-a' })).map((j) => j.ID)).toEqual([id]);
    expect((await root.listJobs({ prefix: id, namespace: '*' })).map((j) => j.Namespace)).toEqual(['team-a']);

    const { index } = await root.readJobWithIndex(id, { namespace: 'team-a' });
    const held = root.readJobWithIndex(id, { namespace: 'team-a', index: index!, wait: '5s' });
    await new Promise((r) => setTimeout(r, 100));
    await root.registerJob(service(id, 2), { namespace: 'team-a' });
    const after = await held;
    expect(after.index!).toBeGreaterThan(index!);
    expect(after.value!.TaskGroups![0]!.Count).toBe(2);

    // The count change opened a deployment (its allocations updated in place): once it settles it
    // marks them healthy, a change of its own a blocking read would wake for. Let it settle first.
    for (let i = 0; i < 50; i++) {
      const res = await fetch(`${sandbox.url}/v1/job/${id}/deployment?namespace=team-a`, {
        headers: { 'X-Nomad-Token': ROOT },
      });
      const d = (await res.json()) as { Status?: string } | null;
      if (d?.Status !== 'running') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    // Every job read hands back its own index for the next blocking read.
    const allocs = await root.readJobPart(id, 'allocations', { namespace: 'team-a' });
    expect(allocs.value).toHaveLength(2);
    const nextAllocs = root.readJobPart(id, 'allocations', {
      namespace: 'team-a',
      index: allocs.index!,
      wait: '5s',
    });
    await new Promise((r) => setTimeout(r, 100));
    await root.stopJob(id, { namespace: 'team-a' });
    const stopped = await nextAllocs;
    expect(stopped.index!).toBeGreaterThan(allocs.index!);
    expect(stopped.value!.every((a) => a.DesiredStatus === 'stop')).toBe(true);
    expect((await root.readJobPart(unique('none'), 'summary')).value).toBeUndefined();
  });
});
