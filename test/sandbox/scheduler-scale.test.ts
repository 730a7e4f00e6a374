/**
 * Scaling through `/v1/job/:id/scale`: the scale status, a count change (a new job version and a
 * job-scaling evaluation), an event without a count (no evaluation), the refusal during an active
 * deployment, and every request error with the real code and text.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { type Api, apiFor, UUID_RE } from './helpers.js';
import { getJson, type Json, jobSpec, register } from './scheduler-helpers.js';

let sandbox: RunningSandbox;
let api: Api;

beforeAll(async () => {
  // Deployments stay running all along, so "active deployment" is stable to test.
  sandbox = await startSandbox({ config: { scheduler: { deploymentSeconds: 3600 } } });
  api = apiFor(sandbox);
});

afterAll(async () => {
  await sandbox.close();
});

/** No update strategy: no deployment, so the job may be scaled at once. */
const noDeploy = { Update: { MaxParallel: 0 } };
type Status = Json & { TaskGroups: Record<string, Json & { Events: Json[] | null }> };

const scale = (id: string, body: Json, method = 'POST') => api(method, `/v1/job/${id}/scale`, { body });
const status = (id: string) => getJson<Status>(api, `/v1/job/${id}/scale`);

describe('scale status', () => {
  it('reports desired, placed and running per group, no events yet', async () => {
    await register(api, jobSpec('sc-status', { web: 2, db: 1 }, noDeploy));
    const job = await getJson(api, '/v1/job/sc-status');
    const res = await api('GET', '/v1/job/sc-status/scale');
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({
      JobID: 'sc-status',
      Namespace: 'default',
      JobCreateIndex: job.CreateIndex,
      JobModifyIndex: job.ModifyIndex,
      JobStopped: false,
      TaskGroups: {
        web: { Desired: 2, Placed: 2, Running: 2, Healthy: 0, Unhealthy: 0, Events: null },
        db: { Desired: 1, Placed: 1, Running: 1, Healthy: 0, Unhealthy: 0, Events: null },
      },
    });
    expect(Number(res.headers.get('x-nomad-index'))).toBeGreaterThanOrEqual(job.ModifyIndex as number);
  });

  it('a missing job is 404 job not found', async () => {
    const res = await api('GET', '/v1/job/sc-missing/scale');
    expect([res.status, res.text]).toEqual([404, 'job not found']);
  });

  it('a stopped job reports JobStopped and no placed allocations', async () => {
    await register(api, jobSpec('sc-stopped', { web: 1 }, noDeploy));
    await api('DELETE', '/v1/job/sc-stopped');
    const s = await status('sc-stopped');
    expect(s.JobStopped).toBe(true);
    expect(s.TaskGroups.web).toMatchObject({ Desired: 1, Placed: 0, Running: 0 });
  });
});

describe('scale with a count', () => {
  it('changes the count in a new job version, evaluates it and records the event', async () => {
    await register(api, jobSpec('sc-up', { web: 1 }, noDeploy));
    const before = await getJson(api, '/v1/job/sc-up');
    const res = await scale('sc-up', {
      Count: 3,
      Target: { Group: 'web', Job: 'sc-up' },
      Message: 'more please',
      Meta: { reason: 'load' },
    });
    expect(res.status).toBe(200);
    const reply = res.json<Json>();
    expect(reply.EvalID).toMatch(UUID_RE);
    expect(reply).toMatchObject({ Warnings: '', KnownLeader: false, LastContact: 0 });
    expect(reply.JobModifyIndex as number).toBeGreaterThan(before.JobModifyIndex as number);
    expect(reply.EvalCreateIndex).toBe(reply.JobModifyIndex);
    expect(reply.Index as number).toBeGreaterThan(reply.EvalCreateIndex as number);
    expect(res.headers.get('x-nomad-index')).toBe(String(reply.Index));

    const job = await getJson(api, '/v1/job/sc-up');
    expect(job).toMatchObject({ Version: 1, JobModifyIndex: reply.JobModifyIndex });
    expect((job.TaskGroups as Json[])[0]!.Count).toBe(3);
    const evals = await getJson<Json[]>(api, '/v1/job/sc-up/evaluations');
    expect(evals.find((e) => e.ID === reply.EvalID)).toMatchObject({
      TriggeredBy: 'job-scaling',
      Status: 'complete',
      JobModifyIndex: reply.JobModifyIndex,
    });
    const s = await status('sc-up');
    expect(s.TaskGroups.web).toMatchObject({ Desired: 3, Placed: 3, Running: 3 });
    expect(s.TaskGroups.web!.Events).toEqual([
      {
        Count: 3,
        PreviousCount: 1,
        Message: 'more please',
        Error: false,
        Meta: { reason: 'load' },
        EvalID: reply.EvalID,
        Time: expect.any(Number),
        CreateIndex: reply.Index,
      },
    ]);
  });

  it('the same count records the event but needs no evaluation and no new version (the spec), and PUT works too', async () => {
    const evals = (await getJson(api, '/v1/job/sc-up/evaluations')).length;
    const res = await scale('sc-up', { Count: 3, Target: { Group: 'web' }, Message: 'again' }, 'PUT');
    expect(res.status).toBe(200);
    expect(res.json()).not.toHaveProperty('EvalID');
    expect(res.json()).not.toHaveProperty('EvalCreateIndex');
    expect((await getJson(api, '/v1/job/sc-up/evaluations')).length).toBe(evals);
    expect((await getJson(api, '/v1/job/sc-up')).Version).toBe(1);
    const events = (await status('sc-up')).TaskGroups.web!.Events!;
    expect(events.map((e) => e.Message)).toEqual(['again', 'more please']);
  });

  it('scaling down stops the surplus allocations', async () => {
    await scale('sc-up', { Count: 1, Target: { Group: 'web' }, Message: 'less' });
    const allocs = await getJson<Json[]>(api, '/v1/job/sc-up/allocations');
    expect(allocs.filter((a) => a.DesiredStatus === 'run')).toHaveLength(1);
    expect((await status('sc-up')).TaskGroups.web).toMatchObject({ Desired: 1, Placed: 1 });
  });

  it('a stale JobModifyIndex is refused with the EnforceIndex text (500)', async () => {
    const res = await scale('sc-up', { Count: 2, Target: { Group: 'web' }, Message: 'm', JobModifyIndex: 1 });
    const job = await getJson(api, '/v1/job/sc-up');
    expect([res.status, res.text]).toEqual([
      500,
      `Enforcing job modify index 1: job exists with conflicting job modify index: ${String(job.JobModifyIndex)}`,
    ]);
  });

  it('a scaling policy bounds the count', async () => {
    const job = jobSpec('sc-policy', { web: 2 }, noDeploy);
    (job.TaskGroups as Json[])[0]!.Scaling = { Min: 1, Max: 3, Enabled: true };
    await register(api, job);
    const high = await scale('sc-policy', { Count: 5, Target: { Group: 'web' }, Message: 'm' });
    expect([high.status, high.text]).toEqual([
      400,
      'group count was greater than scaling policy maximum: 5 > 3',
    ]);
    const low = await scale('sc-policy', { Count: 0, Target: { Group: 'web' }, Message: 'm' });
    expect([low.status, low.text]).toEqual([400, 'group count was less than scaling policy minimum: 0 < 1']);
  });
});

describe('scale without a count', () => {
  it('records the event only: no new version, no evaluation, no EvalID in the answer', async () => {
    await register(api, jobSpec('sc-note', { web: 2 }, noDeploy));
    const before = await getJson(api, '/v1/job/sc-note');
    const evalsBefore = await getJson<Json[]>(api, '/v1/job/sc-note/evaluations');
    const res = await scale('sc-note', { Target: { Group: 'web' }, Message: 'just saying', Meta: { a: 1 } });
    expect(res.status).toBe(200);
    const reply = res.json<Json>();
    expect(reply).not.toHaveProperty('EvalID');
    expect(reply).not.toHaveProperty('EvalCreateIndex');
    expect(reply.JobModifyIndex).toBe(before.ModifyIndex);
    expect(reply.Index as number).toBeGreaterThan(before.ModifyIndex as number);
    expect(await getJson<Json[]>(api, '/v1/job/sc-note/evaluations')).toHaveLength(evalsBefore.length);
    expect((await getJson(api, '/v1/job/sc-note')).Version).toBe(0);
    const [event] = (await status('sc-note')).TaskGroups.web!.Events!;
    expect(event).toMatchObject({ Count: null, PreviousCount: 2, Message: 'just saying', EvalID: null });
  });

  it("an error event given as the spec's string is recorded as an error with that text", async () => {
    const res = await scale('sc-note', { Target: { Group: 'web' }, Error: 'metrics source down' });
    expect(res.status).toBe(200);
    const [event] = (await status('sc-note')).TaskGroups.web!.Events!;
    expect(event).toMatchObject({ Error: true, Message: 'metrics source down', Count: null });
  });

  it('an error event (Error true) is recorded as such', async () => {
    const res = await scale('sc-note', {
      Target: { Group: 'web' },
      Error: true,
      Message: 'autoscaler failed',
    });
    expect(res.status).toBe(200);
    const [event] = (await status('sc-note')).TaskGroups.web!.Events!;
    expect(event).toMatchObject({ Error: true, Message: 'autoscaler failed', Count: null });
  });
});

describe('active deployment', () => {
  it('a count is refused with 400 while the job deploys; an event is still accepted', async () => {
    await register(api, jobSpec('sc-dep', { web: 1 }));
    expect((await getJson(api, '/v1/job/sc-dep/deployment')).Status).toBe('running');
    const res = await scale('sc-dep', { Count: 2, Target: { Group: 'web' }, Message: 'm' });
    expect([res.status, res.text]).toEqual([400, 'job scaling blocked due to active deployment']);
    expect(res.headers.get('content-type')).toContain('text/plain');
    expect((await getJson(api, '/v1/job/sc-dep')).Version).toBe(0);
    // Any count, the current one too: the spec's row has no exception, nor has the real service.
    const same = await scale('sc-dep', { Count: 1, Target: { Group: 'web' }, Message: 'm' });
    expect([same.status, same.text]).toEqual([400, 'job scaling blocked due to active deployment']);
    const note = await scale('sc-dep', { Target: { Group: 'web' }, Message: 'noted' });
    expect(note.status).toBe(200);
  });

  it('once the deployment is over (here: cancelled by a stop), scaling is allowed again', async () => {
    await register(api, jobSpec('sc-dep2', { web: 1 }));
    await api('DELETE', '/v1/job/sc-dep2');
    expect((await getJson(api, '/v1/job/sc-dep2/deployment')).Status).toBe('cancelled');
    const res = await scale('sc-dep2', { Count: 0, Target: { Group: 'web' }, Message: 'm' });
    expect(res.status).toBe(200);
  });
});

describe('request errors', () => {
  it.each([
    [{ Count: 1, Message: 'm' }, 400, 'missing task group name for scaling action'],
    [{ Count: 1, Target: {}, Message: 'm' }, 400, 'missing task group name for scaling action'],
    [{ Count: -1, Target: { Group: 'web' } }, 400, "scaling action count can't be negative"],
    [
      { Count: 2, Target: { Group: 'web' }, Error: true },
      400,
      'scaling action should not contain count if error is true',
    ],
    [{ Count: 1, Target: { Group: 'web', Job: 'other' } }, 400, 'job ID in payload did not match URL'],
    [
      { Count: 1, Target: { Group: 'web', Namespace: 'team-x' } },
      400,
      'namespace in payload did not match header',
    ],
    [
      { Count: 1, Target: { Group: 'nope' }, Message: 'm' },
      400,
      'task group "nope" specified for scaling does not exist in job',
    ],
    [{ Count: 'two', Target: { Group: 'web' } }, 400, 'json: cannot unmarshal Count: expected integer'],
    [{ Target: { Group: 'web' }, Error: 5 }, 400, 'json: cannot unmarshal Error: expected boolean or string'],
    [{ Count: 1, Target: { Group: 'web' } }, 400, 'one of Message or Error must be provided'],
    [{ Count: 1, Target: { Group: 'web' }, Message: '' }, 400, 'one of Message or Error must be provided'],
  ])('%j → %i %s', async (body, code, text) => {
    const res = await scale('sc-status', body);
    expect([res.status, res.text]).toEqual([code, text]);
  });

  it('a missing job is 404 with its ID quoted', async () => {
    const res = await scale('sc-nope', { Count: 1, Target: { Group: 'web' }, Message: 'm' });
    expect([res.status, res.text]).toEqual([404, 'job "sc-nope" not found']);
  });

  it('bad JSON is 400 and other methods are 405', async () => {
    const bad = await api('POST', '/v1/job/sc-status/scale', { rawBody: '{' });
    expect(bad.status).toBe(400);
    const del = await api('DELETE', '/v1/job/sc-status/scale');
    expect([del.status, del.text]).toEqual([405, 'Invalid method']);
  });
});
