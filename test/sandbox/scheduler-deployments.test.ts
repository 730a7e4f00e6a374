/**
 * Deployments of the sandbox scheduler: which registrations open one (service groups with an update
 * strategy, which canonicalisation gives every service job, as the real product does), their fields,
 * running → successful after `deploymentSeconds` (waking blocking queries), cancellation by a newer
 * version or a stop, failure when placements fall short, `?all` after a purge and re-register, and
 * persistence across a restart.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { type Api, apiFor, tempDir, UUID_RE } from './helpers.js';
import { getJson, type Json, jobSpec, register } from './scheduler-helpers.js';

/** Deployments that settle quickly (blocking reads wait for them). */
let fast: RunningSandbox;
let fastApi: Api;
/** Deployments that stay running for the whole file. */
let slow: RunningSandbox;
let slowApi: Api;

const nodes = [
  { name: 'n1', datacenter: 'dc1' },
  { name: 'n2', datacenter: 'dc1' },
  { name: 'tiny', datacenter: 'tiny', memoryMB: 400 },
];

beforeAll(async () => {
  fast = await startSandbox({ config: { scheduler: { nodes, deploymentSeconds: 0.2 } } });
  fastApi = apiFor(fast);
  slow = await startSandbox({ config: { scheduler: { nodes, deploymentSeconds: 3600 } } });
  slowApi = apiFor(slow);
});

afterAll(async () => {
  await Promise.all([fast.close(), slow.close()]);
});

/** Keeps a job off the tiny node, which the shortfall test needs empty. */
const dc1 = { Datacenters: ['dc1'] };

type Deployment = Json & {
  ID: string;
  Status: string;
  StatusDescription: string;
  JobVersion: number;
  TaskGroups: Record<string, Json>;
  CreateIndex: number;
  ModifyIndex: number;
};

/** Reads the job's latest deployment, waiting (blocking query) until its status is no longer running. */
async function settled(api: Api, id: string): Promise<Deployment> {
  let res = await api('GET', `/v1/job/${id}/deployment`);
  for (let i = 0; i < 20; i++) {
    const d = res.json<Deployment>();
    if (d.Status !== 'running') return d;
    const index = res.headers.get('x-nomad-index')!;
    res = await api('GET', `/v1/job/${id}/deployment?index=${index}&wait=5s`);
  }
  throw new Error('deployment did not settle');
}

describe('deployment creation', () => {
  it('a service job gets the real default update strategy, merged into its groups', async () => {
    await register(slowApi, jobSpec('dep-canon', { web: 1 }, { Update: { AutoRevert: true } }));
    const job = await getJson(slowApi, '/v1/job/dep-canon');
    expect(job.Update).toMatchObject({ MaxParallel: 1, AutoRevert: true, HealthCheck: 'checks', Canary: 0 });
    const tg = (job.TaskGroups as Json[])[0]!;
    expect(tg.Update).toMatchObject({
      MaxParallel: 1,
      AutoRevert: true,
      MinHealthyTime: 10_000_000_000,
      HealthyDeadline: 300_000_000_000,
      ProgressDeadline: 600_000_000_000,
    });
    const d = await getJson<Deployment>(slowApi, '/v1/job/dep-canon/deployment');
    expect(d.TaskGroups.web).toMatchObject({ AutoRevert: true });
  });

  it('registering a service job opens a running deployment for its version', async () => {
    const reply = await register(slowApi, jobSpec('dep-new', { web: 2, cache: 1 }));
    const job = await getJson(slowApi, '/v1/job/dep-new');
    const res = await slowApi('GET', '/v1/job/dep-new/deployment');
    expect(res.status).toBe(200);
    const d = res.json<Deployment>();
    expect(d.ID).toMatch(UUID_RE);
    expect(d).toMatchObject({
      JobID: 'dep-new',
      Namespace: 'default',
      JobVersion: 0,
      JobModifyIndex: reply.JobModifyIndex,
      JobCreateIndex: job.CreateIndex,
      Status: 'running',
      StatusDescription: 'Deployment is running',
    });
    expect(d.TaskGroups).toEqual({
      web: expect.objectContaining({
        AutoRevert: false,
        Promoted: false,
        PlacedCanaries: null,
        DesiredCanaries: 0,
        DesiredTotal: 2,
        PlacedAllocs: 2,
        HealthyAllocs: 0,
        UnhealthyAllocs: 0,
      }),
      cache: expect.objectContaining({ DesiredTotal: 1, PlacedAllocs: 1 }),
    });
    expect(d).not.toHaveProperty('DueAt');
    const allocs = await getJson<Json[]>(slowApi, '/v1/job/dep-new/allocations');
    expect(allocs.every((a) => a.DeploymentID === d.ID)).toBe(true);
    const evals = await getJson<Json[]>(slowApi, '/v1/job/dep-new/evaluations');
    expect(evals[0]!.DeploymentID).toBe(d.ID);
    expect(await getJson<Deployment[]>(slowApi, '/v1/job/dep-new/deployments')).toEqual([d]);
  });

  it('a batch job, or a service group without MaxParallel, gets none: /deployment is null', async () => {
    await register(slowApi, jobSpec('dep-batch', { work: 1 }, { Type: 'batch' }));
    await register(slowApi, jobSpec('dep-nopar', { web: 1 }, { Update: { MaxParallel: 0 } }));
    for (const id of ['dep-batch', 'dep-nopar', 'dep-missing']) {
      const res = await slowApi('GET', `/v1/job/${id}/deployment`);
      expect([id, res.status, res.text]).toEqual([id, 200, 'null']);
      expect(await getJson(slowApi, `/v1/job/${id}/deployments`)).toEqual([]);
    }
    expect((await getJson(slowApi, '/v1/job/dep-batch')).Update ?? null).toBeNull();
  });

  it('a newer version cancels the running deployment and opens its own', async () => {
    await register(slowApi, jobSpec('dep-newer', { web: 1 }));
    const first = await getJson<Deployment>(slowApi, '/v1/job/dep-newer/deployment');
    const changed = jobSpec('dep-newer', { web: 1 });
    ((changed.TaskGroups as Json[])[0]!.Tasks as Json[])[0]!.Config = { image: 'nginx:1.28' };
    await register(slowApi, changed);
    const list = await getJson<Deployment[]>(slowApi, '/v1/job/dep-newer/deployments');
    expect(list.map((d) => [d.JobVersion, d.Status])).toEqual([
      [1, 'running'],
      [0, 'cancelled'],
    ]);
    expect(list[1]).toMatchObject({
      ID: first.ID,
      StatusDescription: 'Cancelled due to newer version of job',
    });
    expect(list[0]!.TaskGroups.web).toMatchObject({ PlacedAllocs: 1, DesiredTotal: 1 });
    expect((await getJson<Deployment>(slowApi, '/v1/job/dep-newer/deployment')).ID).toBe(list[0]!.ID);
  });

  it('a stop cancels the running deployment', async () => {
    await register(slowApi, jobSpec('dep-stop', { web: 1 }));
    await slowApi('DELETE', '/v1/job/dep-stop');
    const d = await getJson<Deployment>(slowApi, '/v1/job/dep-stop/deployment');
    expect(d).toMatchObject({ Status: 'cancelled', StatusDescription: 'Cancelled because job is stopped' });
    expect((await getJson(slowApi, '/v1/job/dep-stop')).Status).toBe('dead');
  });

  it('a running deployment keeps the job running even when nothing could be placed', async () => {
    await register(slowApi, jobSpec('dep-noplace', { web: 1 }, { Datacenters: ['nowhere'] }));
    expect((await getJson(slowApi, '/v1/job/dep-noplace')).Status).toBe('running');
    const d = await getJson<Deployment>(slowApi, '/v1/job/dep-noplace/deployment');
    expect(d.TaskGroups.web).toMatchObject({ DesiredTotal: 1, PlacedAllocs: 0 });
  });
});

describe('deployment progress', () => {
  it('running → successful after deploymentSeconds; a blocking read wakes for it', async () => {
    await register(fastApi, jobSpec('dep-ok', { web: 2 }, dc1));
    const d = await settled(fastApi, 'dep-ok');
    expect(d).toMatchObject({ Status: 'successful', StatusDescription: 'Deployment completed successfully' });
    expect(d.TaskGroups.web).toMatchObject({ PlacedAllocs: 2, HealthyAllocs: 2, UnhealthyAllocs: 0 });
    expect(d.ModifyIndex).toBeGreaterThan(d.CreateIndex);
    // As the real state store does, a successful deployment marks its job version stable.
    expect((await getJson(fastApi, '/v1/job/dep-ok')).Stable).toBe(true);
    const allocs = await getJson<Json[]>(fastApi, '/v1/job/dep-ok/allocations');
    for (const a of allocs) expect(a.DeploymentStatus).toMatchObject({ Healthy: true, Canary: false });
    const status = await getJson(fastApi, '/v1/job/dep-ok/scale');
    expect((status.TaskGroups as Record<string, Json>).web).toMatchObject({ Healthy: 2, Placed: 2 });
  });

  it('an unchanged register opens no new deployment; in-place, count and destructive changes each open one', async () => {
    const deployments = () => getJson<Deployment[]>(fastApi, '/v1/job/dep-upd/deployments');
    await register(fastApi, jobSpec('dep-upd', { web: 3 }, dc1));
    expect(await deployments()).toHaveLength(1);
    await register(fastApi, jobSpec('dep-upd', { web: 3 }, dc1));
    expect(await deployments()).toHaveLength(1);
    // A restart policy is updated in place (the real `tasksUpdated`), and the real reconciler's
    // `updatingSpec` counts in-place updates too: a deployment of the new version, its three kept
    // allocations placed.
    const inPlace = jobSpec('dep-upd', { web: 3 }, dc1);
    (inPlace.TaskGroups as Json[])[0]!.RestartPolicy = { Attempts: 5, Mode: 'fail' };
    await register(fastApi, inPlace);
    const afterInPlace = await deployments();
    expect(afterInPlace).toHaveLength(2);
    expect(afterInPlace[0]).toMatchObject({ JobVersion: 1 });
    expect(afterInPlace[0]!.TaskGroups.web).toMatchObject({ DesiredTotal: 3, PlacedAllocs: 3 });
    // A count change updates the running ones in place and places the rest.
    const scaled = structuredClone(inPlace);
    (scaled.TaskGroups as Json[])[0]!.Count = 4;
    await register(fastApi, scaled);
    const afterScale = await deployments();
    expect(afterScale).toHaveLength(3);
    expect(afterScale[0]!.TaskGroups.web).toMatchObject({ DesiredTotal: 4, PlacedAllocs: 4 });
    const changed = structuredClone(scaled);
    ((changed.TaskGroups as Json[])[0]!.Tasks as Json[])[0]!.Env = { MODE: 'new' };
    await register(fastApi, changed);
    const list = await deployments();
    expect(list).toHaveLength(4);
    expect(list[0]).toMatchObject({ JobVersion: 3 });
    expect(list[0]!.TaskGroups.web).toMatchObject({ DesiredTotal: 4, PlacedAllocs: 4 });
    expect((await settled(fastApi, 'dep-upd')).Status).toBe('successful');
  });

  it('deployments opened one after another each settle', async () => {
    await register(fastApi, jobSpec('dep-one', { web: 1 }, dc1));
    await register(fastApi, jobSpec('dep-two', { web: 1 }, dc1));
    const [one, two] = await Promise.all([settled(fastApi, 'dep-one'), settled(fastApi, 'dep-two')]);
    expect([one.Status, two.Status]).toEqual(['successful', 'successful']);
  });

  it('fails on the progress deadline when placements fall short', async () => {
    // The tiny node holds one 300 MB task, not two.
    await register(fastApi, jobSpec('dep-short', { web: 2 }, { Datacenters: ['tiny'] }));
    const d = await settled(fastApi, 'dep-short');
    expect(d).toMatchObject({ Status: 'failed', StatusDescription: 'Failed due to progress deadline' });
    expect(d.TaskGroups.web).toMatchObject({ PlacedAllocs: 1, DesiredTotal: 2 });
    expect((await getJson(fastApi, '/v1/job/dep-short')).Stable).toBe(false);
  });
});

describe('?all after a purge and re-register', () => {
  it('deployments and allocations of the earlier job show only with all=true', async () => {
    await register(slowApi, jobSpec('dep-again', { web: 1 }));
    const old = await getJson<Deployment>(slowApi, '/v1/job/dep-again/deployment');
    const oldAllocs = await getJson<Json[]>(slowApi, '/v1/job/dep-again/allocations');
    await slowApi('DELETE', '/v1/job/dep-again?purge=true');
    await register(slowApi, jobSpec('dep-again', { web: 1 }));
    const current = await getJson<Deployment>(slowApi, '/v1/job/dep-again/deployment');
    expect(current.ID).not.toBe(old.ID);
    expect((await getJson<Deployment[]>(slowApi, '/v1/job/dep-again/deployments')).map((d) => d.ID)).toEqual([
      current.ID,
    ]);
    const all = await getJson<Deployment[]>(slowApi, '/v1/job/dep-again/deployments?all=true');
    expect(all.map((d) => d.ID)).toEqual([current.ID, old.ID]);
    expect(all[1]!.Status).toBe('cancelled');
    const allocs = await getJson<Json[]>(slowApi, '/v1/job/dep-again/allocations');
    const allAllocs = await getJson<Json[]>(slowApi, '/v1/job/dep-again/allocations?all=true');
    expect(allocs.map((a) => a.ID)).not.toContain(oldAllocs[0]!.ID);
    expect(allAllocs.map((a) => a.ID)).toContain(oldAllocs[0]!.ID);
    expect(allAllocs).toHaveLength(allocs.length + 1);
  });
});

describe('reads', () => {
  it('carry the query-meta headers and block on ?index', async () => {
    const res = await slowApi('GET', '/v1/job/dep-new/deployments');
    const index = Number(res.headers.get('x-nomad-index'));
    expect(index).toBeGreaterThan(0);
    expect(res.headers.get('x-scheduler-index')).toBe(String(index));
    const waiting = slowApi('GET', `/v1/job/dep-new/deployments?index=${index}&wait=5s`);
    const changed = jobSpec('dep-new', { web: 2, cache: 1 });
    ((changed.TaskGroups as Json[])[0]!.Tasks as Json[])[0]!.Env = { X: '1' };
    await register(slowApi, changed);
    const woke = await waiting;
    expect(Number(woke.headers.get('x-nomad-index'))).toBeGreaterThan(index);
    expect(woke.json<Deployment[]>()).toHaveLength(2);
  });

  it('answer 405 to other methods', async () => {
    for (const path of ['/v1/job/dep-new/deployments', '/v1/job/dep-new/deployment']) {
      const res = await slowApi('POST', path, { body: {} });
      expect([path, res.status, res.text]).toEqual([path, 405, 'Invalid method']);
    }
  });
});

describe('persistence', () => {
  it('keeps deployments and scaling events across a restart; a running one settles afterwards', async () => {
    const dir = tempDir('scheduler-deployments');
    try {
      const config = { scheduler: { nodes, deploymentSeconds: 0.3 } };
      const first = await startSandbox({ dataDir: dir.path, config });
      const api1 = apiFor(first);
      await register(api1, jobSpec('kept', { web: 1 }));
      const scaled = await api1('POST', '/v1/job/kept/scale', {
        body: { Target: { Group: 'web' }, Message: 'noted' },
      });
      expect(scaled.status).toBe(200);
      const before = await getJson<Deployment>(api1, '/v1/job/kept/deployment');
      expect(before.Status).toBe('running');
      await first.close();

      const second = await startSandbox({ dataDir: dir.path, config });
      try {
        const api2 = apiFor(second);
        const after = await settled(api2, 'kept');
        expect(after).toMatchObject({ ID: before.ID, Status: 'successful' });
        const status = await getJson(api2, '/v1/job/kept/scale');
        const events = (status.TaskGroups as Record<string, Json>).web!.Events as Json[];
        expect(events).toEqual([expect.objectContaining({ Message: 'noted', Count: null })]);
      } finally {
        await second.close();
      }
    } finally {
      dir.remove();
    }
  });

  it('loads a state file written before deployments, scaling events and capacity existed', async () => {
    const dir = tempDir('scheduler-old-state');
    try {
      const config = { scheduler: { nodes: [{ name: 'only', memoryMB: 600 }], deploymentSeconds: 3600 } };
      const first = await startSandbox({ dataDir: dir.path, config });
      await register(apiFor(first), jobSpec('old', { web: 2 }, { Update: { MaxParallel: 0 } }));
      await first.close();
      // Strip what older versions did not write.
      const file = join(dir.path, 'scheduler.json');
      const doc = JSON.parse(readFileSync(file, 'utf8')) as { state: Json };
      const state = doc.state;
      delete state.deployments;
      delete state.scalingEvents;
      const tables = state.tables as Json;
      delete tables.deployments;
      delete tables.scaling;
      for (const a of state.allocs as Json[]) delete a.AllocatedResources;
      writeFileSync(file, JSON.stringify(doc));

      const second = await startSandbox({ dataDir: dir.path, config });
      try {
        const api2 = apiFor(second);
        expect(await getJson(api2, '/v1/job/old/deployments')).toEqual([]);
        const s = await getJson(api2, '/v1/job/old/scale');
        expect((s.TaskGroups as Record<string, Json>).web).toMatchObject({ Placed: 2, Events: null });
        // The old allocations hold no capacity, so the 600 MB node still takes two more.
        await register(api2, jobSpec('new', { web: 2 }, { Update: { MaxParallel: 0 } }));
        const allocs = await getJson<Json[]>(api2, '/v1/job/new/allocations');
        expect(allocs).toHaveLength(2);
      } finally {
        await second.close();
      }
    } finally {
      dir.remove();
    }
  });
});
