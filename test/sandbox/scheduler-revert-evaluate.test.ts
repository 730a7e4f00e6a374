/**
 * Reverting a job to an earlier version (with and without EnforcePriorVersion) and forcing a new
 * evaluation, with the real request and state errors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { type Api, apiFor, UUID_RE } from './helpers.js';
import { getJson, type Json, jobSpec, register } from './scheduler-helpers.js';

let sandbox: RunningSandbox;
let api: Api;

const noDeploy = { Update: { MaxParallel: 0 } };

beforeAll(async () => {
  sandbox = await startSandbox({});
  api = apiFor(sandbox);
  // Versions 0, 1 and 2 with counts 1, 2 and 3.
  for (const count of [1, 2, 3]) await register(api, jobSpec('rv', { web: count }, noDeploy));
});

afterAll(async () => {
  await sandbox.close();
});

const revert = (id: string, body: Json) => api('POST', `/v1/job/${id}/revert`, { body });
const countOf = (job: Json) => (job.TaskGroups as Json[])[0]!.Count;

describe('revert', () => {
  it("re-registers the old version's spec as a new, unstable version and evaluates it", async () => {
    const before = await getJson(api, '/v1/job/rv');
    expect(before.Version).toBe(2);
    const res = await revert('rv', { JobID: 'rv', JobVersion: 0 });
    expect(res.status).toBe(200);
    const reply = res.json<Json>();
    expect(reply.EvalID).toMatch(UUID_RE);
    expect(reply.JobModifyIndex as number).toBeGreaterThan(before.JobModifyIndex as number);
    expect(reply.EvalCreateIndex).toBe(reply.JobModifyIndex);
    expect(res.headers.get('x-nomad-index')).toBe(String(reply.Index));
    const job = await getJson(api, '/v1/job/rv');
    expect(job).toMatchObject({ Version: 3, Stable: false, JobModifyIndex: reply.JobModifyIndex });
    expect(countOf(job)).toBe(1);
    const evals = await getJson<Json[]>(api, '/v1/job/rv/evaluations');
    expect(evals.find((e) => e.ID === reply.EvalID)).toMatchObject({
      TriggeredBy: 'job-register',
      Status: 'complete',
    });
    const allocs = await getJson<Json[]>(api, '/v1/job/rv/allocations');
    expect(allocs.filter((a) => a.DesiredStatus === 'run')).toHaveLength(1);
  });

  it('EnforcePriorVersion must name the current version', async () => {
    const wrong = await revert('rv', { JobID: 'rv', JobVersion: 1, EnforcePriorVersion: 1 });
    expect([wrong.status, wrong.text]).toEqual([500, 'Current job has version 3; enforcing version 1']);
    expect((await getJson(api, '/v1/job/rv')).Version).toBe(3);
    const right = await revert('rv', { JobID: 'rv', JobVersion: 1, EnforcePriorVersion: 3 });
    expect(right.status).toBe(200);
    const job = await getJson(api, '/v1/job/rv');
    expect(job.Version).toBe(4);
    expect(countOf(job)).toBe(2);
  });

  it.each([
    [{ JobID: 'rv', JobVersion: 4 }, 500, "can't revert to current version"],
    [{ JobID: 'rv', JobVersion: 99 }, 500, 'job "rv" in namespace "default" at version 99 not found'],
    [{ JobVersion: 1 }, 400, 'JobID must be specified'],
    [{ JobID: 'other', JobVersion: 1 }, 400, 'Job ID does not match'],
    [{ JobID: 'rv', JobVersion: -1 }, 400, 'json: cannot unmarshal JobVersion: expected unsigned integer'],
  ])('%j → %i %s', async (body, code, text) => {
    const res = await revert('rv', body);
    expect([res.status, res.text]).toEqual([code, text]);
  });

  it('JobVersion defaults to 0; a missing job is 500 with its ID', async () => {
    const res = await revert('rv', { JobID: 'rv' });
    expect(res.status).toBe(200);
    expect(countOf(await getJson(api, '/v1/job/rv'))).toBe(1);
    const missing = await revert('rv-missing', { JobID: 'rv-missing', JobVersion: 0 });
    expect([missing.status, missing.text]).toEqual([500, 'job "rv-missing" not found']);
  });
});

describe('evaluate', () => {
  it('creates a new evaluation of the unchanged job', async () => {
    const before = await getJson(api, '/v1/job/rv');
    const evalsBefore = await getJson<Json[]>(api, '/v1/job/rv/evaluations');
    const res = await api('POST', '/v1/job/rv/evaluate', {
      body: { JobID: 'rv', EvalOptions: { ForceReschedule: true } },
    });
    expect(res.status).toBe(200);
    const reply = res.json<Json>();
    expect(reply.EvalID).toMatch(UUID_RE);
    expect(reply.EvalCreateIndex as number).toBeGreaterThan(before.ModifyIndex as number);
    // The real server answers the job's ModifyIndex here.
    expect(reply.JobModifyIndex).toBe(before.ModifyIndex);
    const evals = await getJson<Json[]>(api, '/v1/job/rv/evaluations');
    expect(evals).toHaveLength(evalsBefore.length + 1);
    expect(evals.find((e) => e.ID === reply.EvalID)).toMatchObject({
      TriggeredBy: 'job-register',
      Status: 'complete',
      CreateIndex: reply.EvalCreateIndex,
    });
    const after = await getJson(api, '/v1/job/rv');
    expect(after.Version).toBe(before.Version);
    expect(after.JobModifyIndex).toBe(before.JobModifyIndex);
  });

  it('accepts the old form without a body', async () => {
    const res = await api('PUT', '/v1/job/rv/evaluate');
    expect(res.status).toBe(200);
    expect(res.json<Json>().EvalID).toMatch(UUID_RE);
  });

  it('refuses periodic and parameterized jobs and missing ones (500)', async () => {
    await register(
      api,
      jobSpec('ev-cron', { w: 1 }, { Type: 'batch', Periodic: { Enabled: true, Spec: '@daily' } }),
    );
    await register(api, jobSpec('ev-param', { w: 1 }, { Type: 'batch', ParameterizedJob: {} }));
    for (const [id, text] of [
      ['ev-cron', "can't evaluate periodic job"],
      ['ev-param', "can't evaluate parameterized job"],
      ['ev-missing', 'job not found'],
    ]) {
      const res = await api('POST', `/v1/job/${id}/evaluate`, { body: { JobID: id } });
      expect([id, res.status, res.text]).toEqual([id, 500, text]);
    }
  });

  it('request errors are 400', async () => {
    const noId = await api('POST', '/v1/job/rv/evaluate', { body: { EvalOptions: {} } });
    expect([noId.status, noId.text]).toEqual([400, 'Job ID must be specified']);
    const other = await api('POST', '/v1/job/rv/evaluate', { body: { JobID: 'x' } });
    expect([other.status, other.text]).toEqual([400, 'JobID not same as job name']);
    const bad = await api('POST', '/v1/job/rv/evaluate', {
      body: { JobID: 'rv', EvalOptions: { ForceReschedule: 'y' } },
    });
    expect(bad.status).toBe(400);
    const get = await api('GET', '/v1/job/rv/evaluate');
    expect([get.status, get.text]).toEqual([405, 'Invalid method']);
  });
});
