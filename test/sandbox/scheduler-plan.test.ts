/**
 * The scheduler's plan endpoint over HTTP: desired changes per group, the annotated diff, placement
 * failures from the dry run, the JobModifyIndex to register with, periodic launches, the request
 * errors and ACL, and that a plan changes nothing. Also versions with `diffs=true`.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { type Api, apiFor } from './helpers.js';
import { getJson, type Json, jobSpec, register } from './scheduler-helpers.js';

let sandbox: RunningSandbox;
let api: Api;

beforeAll(async () => {
  sandbox = await startSandbox({
    config: {
      tokens: [
        { name: 'writer', secret: 'writer-token', scheduler: { namespaces: { '*': { policy: 'write' } } } },
        { name: 'reader', secret: 'reader-token', scheduler: { namespaces: { '*': { policy: 'read' } } } },
      ],
      scheduler: {
        nodes: [
          { name: 'n1', datacenter: 'dc1' },
          { name: 'n2', datacenter: 'dc1' },
        ],
      },
    },
  });
  api = apiFor(sandbox);
});

afterAll(async () => {
  await sandbox.close();
});

interface Plan {
  Annotations: { DesiredTGUpdates: Record<string, Json>; PreemptedAllocs: null };
  FailedTGAllocs: Record<string, Json> | null;
  JobModifyIndex: number;
  CreatedEvals: Json[] | null;
  Diff: Diff | null;
  NextPeriodicLaunch: string;
  Warnings: string;
  Index: number;
}
interface Field {
  Type: string;
  Name: string;
  Old: string;
  New: string;
  Annotations: string[] | null;
}
interface Diff {
  Type: string;
  ID: string;
  Fields: Field[] | null;
  Objects: Json[] | null;
  TaskGroups: {
    Type: string;
    Name: string;
    Fields: Field[] | null;
    Updates: Record<string, number> | null;
    Tasks: { Type: string; Name: string; Annotations: string[] | null }[] | null;
  }[];
}

async function plan(job: Json, body: Json = { Diff: true }, opts = {}): Promise<Plan> {
  const res = await api('POST', `/v1/job/${String(job.ID)}/plan`, { ...opts, body: { Job: job, ...body } });
  if (res.status !== 200) throw new Error(`plan failed: ${res.status} ${res.text}`);
  return res.json<Plan>();
}

const updates = (p: Plan, group = 'web') => p.Annotations.DesiredTGUpdates[group];
const zero = { Ignore: 0, Place: 0, Migrate: 0, Stop: 0, InPlaceUpdate: 0, DestructiveUpdate: 0, Canary: 0 };
/** A job with one group `web` of `count` docker tasks in dc1. */
const web = (id: string, count = 2, extra: Json = {}) =>
  jobSpec(id, { web: count }, { Datacenters: ['dc1'], ...extra });
const taskOf = (job: Json) => ((job.TaskGroups as Json[])[0]!.Tasks as Json[])[0]!;

describe('plan', () => {
  it('of a new job: Place = Count, an Added diff, JobModifyIndex 0, the full response shape', async () => {
    const res = await api('PUT', '/v1/job/plan-new/plan', { body: { Job: web('plan-new', 3), Diff: true } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-scheduler-index')).toBe('0');
    const p = res.json<Plan>();
    expect(Object.keys(p)).toEqual([
      'Annotations',
      'FailedTGAllocs',
      'JobModifyIndex',
      'CreatedEvals',
      'Diff',
      'NextPeriodicLaunch',
      'Warnings',
      'Index',
    ]);
    expect(p).toMatchObject({
      FailedTGAllocs: null,
      JobModifyIndex: 0,
      CreatedEvals: null,
      NextPeriodicLaunch: '0001-01-01T00:00:00Z',
      Warnings: '',
      Index: 0,
      Annotations: { PreemptedAllocs: null },
    });
    expect(updates(p)).toEqual({ ...zero, Place: 3, Preemptions: 0 });
    expect(p.Diff!.Type).toBe('Added');
    expect(p.Diff!.ID).toBe('plan-new');
    const tg = p.Diff!.TaskGroups[0]!;
    expect(tg).toMatchObject({ Type: 'Added', Name: 'web', Updates: { create: 3 } });
    expect(tg.Fields).toContainEqual({
      Type: 'Added',
      Name: 'Count',
      Old: '',
      New: '3',
      Annotations: ['forces create'],
    });
    expect(tg.Tasks![0]).toMatchObject({ Type: 'Added', Name: 'app', Annotations: ['forces create'] });
    // Nothing was registered.
    expect((await api('GET', '/v1/job/plan-new')).status).toBe(404);
  });

  it('without Diff: true the diff is null', async () => {
    const p = await plan(web('plan-nodiff'), {});
    expect(p.Diff).toBeNull();
    expect(updates(p)).toMatchObject({ Place: 2 });
  });

  it('of an unchanged job: Diff None, everything ignored, the stored JobModifyIndex', async () => {
    const reg = await register(api, web('plan-same'));
    const p = await plan(web('plan-same'));
    expect(p.JobModifyIndex).toBe(reg.JobModifyIndex);
    expect(p.Index).toBe(reg.JobModifyIndex);
    expect(updates(p)).toMatchObject({ ...zero, Ignore: 2 });
    expect(p.Diff!.Type).toBe('None');
    expect(p.Diff!.TaskGroups[0]).toMatchObject({ Type: 'None', Updates: { ignore: 2 } });
  });

  it('a config change is a destructive update, annotated so, rolled one at a time by default', async () => {
    await register(api, web('plan-destr'));
    const job = web('plan-destr');
    taskOf(job).Config = { image: 'nginx:1.28' };
    const p = await plan(job);
    // A service job's canonical update strategy (MaxParallel 1) replaces one allocation per step.
    expect(updates(p)).toMatchObject({ ...zero, DestructiveUpdate: 1, Ignore: 1 });
    const tg = p.Diff!.TaskGroups[0]!;
    expect(tg.Updates).toEqual({ 'create/destroy update': 1, ignore: 1 });
    expect(tg.Tasks![0]!.Annotations).toEqual(['forces create/destroy update']);
    expect(p.Diff!.Type).toBe('Edited');
  });

  it('a kill timeout or restart policy change is an in-place update, annotated so', async () => {
    await register(api, web('plan-inplace'));
    const job = web('plan-inplace');
    taskOf(job).KillTimeout = 30_000_000_000;
    const p = await plan(job);
    expect(updates(p)).toMatchObject({ ...zero, InPlaceUpdate: 2 });
    expect(p.Diff!.TaskGroups[0]!.Tasks![0]!.Annotations).toEqual(['forces in-place update']);

    const restart = web('plan-inplace');
    (restart.TaskGroups as Json[])[0]!.RestartPolicy = { Attempts: 5, Interval: 1, Delay: 1, Mode: 'delay' };
    expect(updates(await plan(restart))).toMatchObject({ ...zero, InPlaceUpdate: 2 });
  });

  it('a count decrease stops allocations and is annotated "forces destroy"', async () => {
    await register(api, web('plan-down', 3));
    const p = await plan(web('plan-down', 1));
    expect(updates(p)).toMatchObject({ ...zero, Stop: 2, InPlaceUpdate: 1 });
    const tg = p.Diff!.TaskGroups[0]!;
    expect(tg.Fields).toEqual([
      { Type: 'Edited', Name: 'Count', Old: '3', New: '1', Annotations: ['forces destroy'] },
    ]);
    expect(tg.Updates).toEqual({ destroy: 2, 'in-place update': 1 });
  });

  it('a removed group stops all its allocations and is Deleted in the diff', async () => {
    await register(api, jobSpec('plan-rm', { web: 1, worker: 2 }, { Datacenters: ['dc1'] }));
    const p = await plan(jobSpec('plan-rm', { web: 1 }, { Datacenters: ['dc1'] }));
    expect(p.Annotations.DesiredTGUpdates.worker).toMatchObject({ ...zero, Stop: 2 });
    expect(updates(p)).toMatchObject({ ...zero, Ignore: 0, InPlaceUpdate: 1 });
    const worker = p.Diff!.TaskGroups.find((g) => g.Name === 'worker')!;
    expect(worker).toMatchObject({ Type: 'Deleted', Updates: { destroy: 2 } });
    expect(worker.Tasks![0]!.Annotations).toEqual(['forces destroy']);
  });

  it('FailedTGAllocs and a blocked CreatedEval when no node is in the datacenters, from the dry run', async () => {
    const p = await plan(web('plan-nowhere', 2, { Datacenters: ['mars'] }));
    expect(updates(p)).toMatchObject({ Place: 2 });
    expect(Object.keys(p.FailedTGAllocs!)).toEqual(['web']);
    // Two allocations failed alike: the first is the metric, the second a coalesced failure.
    expect(p.FailedTGAllocs!.web).toMatchObject({ NodesEvaluated: 0, CoalescedFailures: 1 });
    expect(p.CreatedEvals).toHaveLength(1);
    expect(p.CreatedEvals![0]).toMatchObject({
      Status: 'blocked',
      JobID: 'plan-nowhere',
      TriggeredBy: 'queued-allocs',
    });
    // The dry run's evaluations are not stored.
    expect((await api('GET', '/v1/job/plan-nowhere/evaluations')).json()).toEqual([]);
  });

  it('changes nothing: the job, its indexes, evaluations, allocations and X-Scheduler-Index stay', async () => {
    await register(api, web('plan-still'));
    const before = await api('GET', '/v1/job/plan-still');
    const evals = await getJson(api, '/v1/job/plan-still/evaluations');
    const allocs = await getJson(api, '/v1/job/plan-still/allocations');
    const list = await api('GET', '/v1/jobs');
    const job = web('plan-still', 5);
    taskOf(job).Config = { image: 'redis' };
    await plan(job);
    await plan(web('plan-brand-new', 1, { Datacenters: ['mars'] }));
    const after = await api('GET', '/v1/job/plan-still');
    expect(after.json()).toEqual(before.json());
    expect(after.headers.get('x-scheduler-index')).toBe(before.headers.get('x-scheduler-index'));
    expect(await getJson(api, '/v1/job/plan-still/evaluations')).toEqual(evals);
    expect(await getJson(api, '/v1/job/plan-still/allocations')).toEqual(allocs);
    const listAfter = await api('GET', '/v1/jobs');
    expect(listAfter.headers.get('x-scheduler-index')).toBe(list.headers.get('x-scheduler-index'));
    expect(listAfter.json()).toEqual(list.json());
    // A blocking query is not woken by a plan.
    const index = list.headers.get('x-scheduler-index')!;
    const pending = api('GET', `/v1/jobs?index=${index}&wait=300ms`);
    await plan(job);
    const woke = await pending;
    expect(woke.headers.get('x-scheduler-index')).toBe(index);
  });

  it("registering with EnforceIndex and the plan's JobModifyIndex succeeds; a stale one then fails", async () => {
    const p1 = await plan(web('plan-enforce'));
    expect(p1.JobModifyIndex).toBe(0);
    const first = await api('PUT', '/v1/jobs', {
      body: { Job: web('plan-enforce'), EnforceIndex: true, JobModifyIndex: p1.JobModifyIndex },
    });
    expect(first.status).toBe(200);
    const changed = web('plan-enforce', 3);
    const p2 = await plan(changed);
    expect(p2.JobModifyIndex).toBe(first.json<Json>().JobModifyIndex);
    const second = await api('PUT', '/v1/job/plan-enforce', {
      body: { Job: changed, EnforceIndex: true, JobModifyIndex: p2.JobModifyIndex },
    });
    expect(second.status).toBe(200);
    const stale = await api('PUT', '/v1/job/plan-enforce', {
      body: { Job: web('plan-enforce', 4), EnforceIndex: true, JobModifyIndex: p2.JobModifyIndex },
    });
    expect(stale.status).toBe(500);
    expect(stale.text).toBe(
      `Enforcing job modify index ${p2.JobModifyIndex}: job exists with conflicting job modify index: ${String(second.json<Json>().JobModifyIndex)}`,
    );
  });

  it('a periodic job reports its next launch from the cron spec', async () => {
    const job = jobSpec(
      'plan-cron',
      { run: 1 },
      {
        Type: 'batch',
        Periodic: { Enabled: true, Spec: '*/15 * * * *', SpecType: 'cron', ProhibitOverlap: true },
      },
    );
    const p = await plan(job);
    expect(p.NextPeriodicLaunch).toMatch(/^\d{4}-\d\d-\d\dT\d\d:(00|15|30|45):00Z$/);
    const next = Date.parse(p.NextPeriodicLaunch);
    expect(next).toBeGreaterThan(Date.now());
    expect(next - Date.now()).toBeLessThanOrEqual(15 * 60_000);
    const disabled = await plan({ ...job, Periodic: { Enabled: false, Spec: '*/15 * * * *' } });
    expect(disabled.NextPeriodicLaunch).toBe('0001-01-01T00:00:00Z');
  });

  it('request errors: 400s as the real agent, then 403, then validation 500', async () => {
    const call = (id: string, body: unknown, opts = {}) =>
      api('POST', `/v1/job/${id}/plan`, { ...opts, body });
    const mismatch = await call('other', { Job: web('plan-err') });
    expect([mismatch.status, mismatch.text]).toEqual([400, 'Job ID does not match']);
    const missing = await call('x', {});
    expect([missing.status, missing.text]).toEqual([400, 'Job must be specified']);
    const noId = await call('x', { Job: { TaskGroups: [] } });
    expect([noId.status, noId.text]).toEqual([400, 'Job must have a valid ID']);
    const reader = await call('plan-err', { Job: web('plan-err') }, { token: 'reader-token' });
    expect([reader.status, reader.text]).toEqual([403, 'Permission denied']);
    const override = await call(
      'plan-err',
      { Job: web('plan-err'), PolicyOverride: true },
      { token: 'writer-token' },
    );
    expect([override.status, override.text]).toEqual([403, 'Permission denied']);
    const writer = await call('plan-err', { Job: web('plan-err') }, { token: 'writer-token' });
    expect(writer.status).toBe(200);
    const invalid = await call('plan-err', { Job: { ID: 'plan-err', TaskGroups: [] } });
    expect(invalid.status).toBe(500);
    expect(invalid.text).toContain('Missing job task groups');
    const get = await api('GET', '/v1/job/plan-err/plan');
    expect([get.status, get.text]).toEqual([405, 'Invalid method']);
  });
});

describe('versions with diffs', () => {
  it('fills Diffs with each version against the one before it, newest first', async () => {
    await register(api, web('hist-diff', 1, { Meta: { v: '0' } }));
    await register(api, web('hist-diff', 2, { Meta: { v: '1' } }));
    await register(api, web('hist-diff', 2, { Meta: { v: '2' } }));
    const body = await getJson<{ Diffs: Diff[]; Versions: Json[] }>(
      api,
      '/v1/job/hist-diff/versions?diffs=true',
    );
    expect(body.Versions.map((v) => v.Version)).toEqual([2, 1, 0]);
    expect(body.Diffs).toHaveLength(2);
    expect(body.Diffs[0]!).toMatchObject({
      Type: 'Edited',
      ID: 'hist-diff',
      Fields: [{ Type: 'Edited', Name: 'Meta[v]', Old: '1', New: '2', Annotations: null }],
    });
    expect(body.Diffs[0]!.TaskGroups[0]!.Type).toBe('None');
    expect(body.Diffs[1]!.Fields).toEqual([
      { Type: 'Edited', Name: 'Meta[v]', Old: '0', New: '1', Annotations: null },
    ]);
    expect(body.Diffs[1]!.TaskGroups[0]!.Fields).toEqual([
      { Type: 'Edited', Name: 'Count', Old: '1', New: '2', Annotations: null },
    ]);
    // Not requested, or a single version: null.
    expect((await getJson<Json>(api, '/v1/job/hist-diff/versions')).Diffs).toBeNull();
    expect((await getJson<Json>(api, '/v1/job/hist-diff/versions?diffs=false')).Diffs).toBeNull();
    await register(api, web('hist-one'));
    expect((await getJson<Json>(api, '/v1/job/hist-one/versions?diffs=true')).Diffs).toBeNull();
    const bad = await api('GET', '/v1/job/hist-diff/versions?diffs=maybe');
    expect(bad.status).toBe(500);
    expect(bad.text).toContain('Failed to parse value of "diffs" (maybe) as a bool');
  });
});

/** The paths of an object's null members, at any depth (list items by index). */
function nullPaths(value: unknown, at: (string | number)[] = []): (string | number)[][] {
  if (Array.isArray(value)) return value.flatMap((v, i) => nullPaths(v, [...at, i]));
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([k, v]) => (v === null ? [[...at, k]] : nullPaths(v, [...at, k])));
}

/** A copy of `value` without the member at `path`. */
function withoutMember(value: Json, path: (string | number)[]): Json {
  const copy = structuredClone(value);
  let parent: Record<string | number, unknown> = copy;
  for (const step of path.slice(0, -1)) parent = parent[step] as Record<string | number, unknown>;
  delete parent[path.at(-1)!];
  return copy;
}

/** A copy of `value` with every null member left out, at any depth: the job as JSON without them. */
function withoutNulls(value: Json): Json {
  return nullPaths(value)
    .reverse()
    .reduce((job, path) => withoutMember(job, path), value);
}

describe('a field sent as null is the field not sent (the real agent decodes both to a nil pointer)', () => {
  // The demo's service job under a name of its own.
  const HCL = readFileSync(
    path.join(import.meta.dirname, '../../examples/demo/jobs/web.nomad.hcl'),
    'utf8',
  ).replace('job "web"', 'job "null-web"');

  it('the live job of an HCL spec (null for every block it does not use), each null left out, plans no change', async () => {
    const parsed = await api('POST', '/v1/jobs/parse', { body: { JobHCL: HCL } });
    expect(parsed.status, parsed.text).toBe(200);
    const reg = await register(api, parsed.json<Json>());
    const live = await getJson(api, '/v1/job/null-web');
    const paths = nullPaths(live);
    // The fields only the HCL path sends as null: no default fills them, so they stay as sent.
    for (const field of ['UI', 'Multiregion', 'VersionTag', 'ConsulNamespace', 'VaultNamespace'])
      expect(paths).toContainEqual([field]);
    expect(paths).toContainEqual(['TaskGroups', 0, 'Disconnect']);
    expect(paths).toContainEqual(['TaskGroups', 0, 'Tasks', 0, 'Vault']);

    // One at a time, so the answer names the field that made a difference.
    const changed: string[] = [];
    for (const path of paths) {
      const p = await plan(withoutMember(live, path));
      if (p.Diff!.Type !== 'None' || updates(p)!.Ignore !== 2) changed.push(path.join('.'));
    }
    expect(changed).toEqual([]);

    // All of them at once, as a JSON job written without them: no change, and no new version.
    const bare = withoutNulls(live);
    const p = await plan(bare);
    expect(updates(p)).toMatchObject({ ...zero, Ignore: 2 });
    expect(p.Diff!.Type).toBe('None');
    expect(p.Diff!.TaskGroups[0]).toMatchObject({ Type: 'None', Updates: { ignore: 2 } });
    expect((await register(api, bare)).JobModifyIndex).toBe(reg.JobModifyIndex);
    const versions = await getJson<{ Versions: Json[] }>(api, '/v1/job/null-web/versions');
    expect(versions.Versions).toHaveLength(1);
  });

  it('a JSON job without those fields, sent again with them null, plans no change', async () => {
    const job = web('null-json', 2);
    const reg = await register(api, job);
    const nulls = structuredClone(job);
    Object.assign(nulls, { UI: null, Multiregion: null, VersionTag: null, ConsulNamespace: null });
    const group = (nulls.TaskGroups as Json[])[0]!;
    Object.assign(group, { Disconnect: null, MaxClientDisconnect: null, PreventRescheduleOnLost: null });
    Object.assign(taskOf(nulls), { Vault: null, Consul: null, Identity: null, Actions: null });
    const p = await plan(nulls);
    expect(updates(p)).toMatchObject({ ...zero, Ignore: 2 });
    expect(p.Diff!.Type).toBe('None');
    expect((await register(api, nulls)).JobModifyIndex).toBe(reg.JobModifyIndex);
  });
});
