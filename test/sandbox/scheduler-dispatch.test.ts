/**
 * Children of template jobs: dispatching a parameterized job (payload and meta rules, the 16 KiB
 * limit, the child's fields, the parent's Children counts) and forcing a periodic launch.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { type Api, apiFor, UUID_RE } from './helpers.js';
import { getJson, type Json, jobSpec, register } from './scheduler-helpers.js';

let sandbox: RunningSandbox;
let api: Api;

const parameterized = (id: string, params: Json, meta: Json | null = { team: 'ops' }) =>
  jobSpec(id, { work: 1 }, { Type: 'batch', ParameterizedJob: params, Meta: meta });

beforeAll(async () => {
  sandbox = await startSandbox({});
  api = apiFor(sandbox);
  await register(
    api,
    parameterized('param', { Payload: 'required', MetaRequired: ['owner'], MetaOptional: ['note'] }),
  );
  await register(api, parameterized('param-free', {}));
  await register(api, parameterized('param-none', { Payload: 'forbidden' }));
  await register(api, jobSpec('plain', { web: 1 }));
});

afterAll(async () => {
  await sandbox.close();
});

const dispatch = (id: string, body: Json) => api('POST', `/v1/job/${id}/dispatch`, { body });
const bytes = (n: number) => Buffer.alloc(n, 7).toString('base64');

describe('dispatch', () => {
  it('creates an evaluated child job and answers its ID', async () => {
    const payload = bytes(16384);
    const res = await dispatch('param', { Payload: payload, Meta: { owner: 'ana', note: 'hi' } });
    expect(res.status).toBe(200);
    const reply = res.json<Json>();
    expect(reply.DispatchedJobID).toMatch(/^param\/dispatch-\d{10}-[0-9a-f]{8}$/);
    expect(reply.EvalID).toMatch(UUID_RE);
    expect(reply.JobCreateIndex).toBe(reply.EvalCreateIndex);
    expect(reply.Index).toBe(reply.JobCreateIndex);
    expect(res.headers.get('x-nomad-index')).toBe(String(reply.Index));

    const childId = reply.DispatchedJobID as string;
    const child = await getJson(api, `/v1/job/${childId}`);
    expect(child).toMatchObject({
      ID: childId,
      Name: childId,
      ParentID: 'param',
      Dispatched: true,
      Payload: payload,
      Meta: { team: 'ops', owner: 'ana', note: 'hi' },
      Type: 'batch',
      Status: 'running',
      Version: 0,
      CreateIndex: reply.JobCreateIndex,
    });
    // As in the real product the child keeps the parent's block; `Dispatched` makes it a normal job.
    expect(child.ParameterizedJob).toMatchObject({ Payload: 'required' });
    const evals = await getJson<Json[]>(api, `/v1/job/${childId}/evaluations`);
    expect(evals).toEqual([expect.objectContaining({ ID: reply.EvalID, TriggeredBy: 'job-register' })]);
    expect(await getJson<Json[]>(api, `/v1/job/${childId}/allocations`)).toHaveLength(1);
    // The parent itself is never evaluated.
    expect(await getJson<Json[]>(api, '/v1/job/param/evaluations')).toEqual([]);
    // In the job list only the parent counts as parameterized.
    const listed = await getJson<Json[]>(api, '/v1/jobs?prefix=param/dispatch-');
    expect(listed.map((j) => [j.ID, j.ParentID, j.ParameterizedJob])).toEqual([[childId, 'param', false]]);
    const [parent] = await getJson<Json[]>(api, '/v1/jobs?prefix=param');
    expect(parent).toMatchObject({ ID: 'param', ParameterizedJob: true });
  });

  it("counts the parent's children by status", async () => {
    const first = (await dispatch('param-free', {})).json<Json>();
    const second = (await dispatch('param-free', { Meta: {} })).json<Json>();
    expect(first.DispatchedJobID).not.toBe(second.DispatchedJobID);
    expect((await getJson(api, '/v1/job/param-free/summary')).Children).toEqual({
      Pending: 0,
      Running: 2,
      Dead: 0,
    });
    await api('DELETE', `/v1/job/${String(first.DispatchedJobID)}`);
    expect((await getJson(api, '/v1/job/param-free/summary')).Children).toEqual({
      Pending: 0,
      Running: 1,
      Dead: 1,
    });
    const child = await getJson(api, `/v1/job/${String(second.DispatchedJobID)}`);
    expect(child.Meta).toEqual({ team: 'ops' });
    expect(child.Payload).toBeNull();
  });

  it.each([
    ['param', { Payload: bytes(16385), Meta: { owner: 'a' } }, 'Payload exceeds maximum size; 16385 > 16384'],
    ['param', { Meta: { owner: 'a' } }, 'Payload is not provided but required by parameterized job'],
    ['param-none', { Payload: bytes(1) }, 'Payload provided but forbidden by parameterized job'],
    [
      'param',
      { Payload: bytes(1), Meta: { owner: 'a', zzz: '1', bad: '2' } },
      'Dispatch request included unpermitted metadata keys: [bad zzz]',
    ],
    [
      'param',
      { Payload: bytes(1), Meta: { note: 'n' } },
      'Dispatch did not provide required meta keys: [owner]',
    ],
    ['param-free', { Priority: 101 }, 'dispatch job priority must be between [1, 100]'],
    ['plain', {}, 'Specified job "plain" is not a parameterized job'],
    ['nothing-here', {}, 'parameterized job not found'],
  ])('%s %j → 500 %s', async (id, body, text) => {
    const res = await dispatch(id, body);
    expect([res.status, res.text]).toEqual([500, text]);
    expect(res.headers.get('content-type')).toContain('text/plain');
  });

  it('a stopped parameterized job cannot be dispatched', async () => {
    await register(api, parameterized('param-stopped', {}));
    await api('DELETE', '/v1/job/param-stopped');
    const res = await dispatch('param-stopped', {});
    expect([res.status, res.text]).toEqual([500, 'Specified job "param-stopped" is stopped']);
  });

  it('request errors are 400: a JobID other than the path, bad base64, non-string meta', async () => {
    const mismatch = await dispatch('param-free', { JobID: 'other' });
    expect([mismatch.status, mismatch.text]).toEqual([400, 'Job ID does not match']);
    expect((await dispatch('param-free', { Payload: '***' })).status).toBe(400);
    expect((await dispatch('param-free', { Meta: { a: 1 } })).status).toBe(400);
    const get = await api('GET', '/v1/job/param-free/dispatch');
    expect([get.status, get.text]).toEqual([405, 'Invalid method']);
  });
});

describe('periodic force', () => {
  const periodic = {
    Type: 'batch',
    Periodic: { Enabled: true, Spec: '*/5 * * * *', SpecType: 'cron', ProhibitOverlap: true },
  };

  it('launches a child now and answers its evaluation', async () => {
    await register(api, jobSpec('cron', { work: 1 }, periodic));
    const res = await api('POST', '/v1/job/cron/periodic/force');
    expect(res.status).toBe(200);
    const reply = res.json<Json>();
    expect(Object.keys(reply).sort()).toEqual(['EvalCreateIndex', 'EvalID', 'Index']);
    expect(reply.EvalID).toMatch(UUID_RE);
    expect(reply.Index).toBe(reply.EvalCreateIndex);
    const jobs = await getJson<Json[]>(api, '/v1/jobs?prefix=cron/periodic-');
    expect(jobs).toHaveLength(1);
    const childId = jobs[0]!.ID as string;
    expect(childId).toMatch(/^cron\/periodic-\d{10}$/);
    const child = await getJson(api, `/v1/job/${childId}`);
    expect(child).toMatchObject({ ParentID: 'cron', Periodic: null, Status: 'running' });
    const evals = await getJson<Json[]>(api, `/v1/job/${childId}/evaluations`);
    expect(evals).toEqual([expect.objectContaining({ ID: reply.EvalID, TriggeredBy: 'periodic-job' })]);
    expect((await getJson(api, '/v1/job/cron/summary')).Children).toMatchObject({ Running: 1 });
  });

  it('each force is a new instance, even two in the same second (spec: periodic force, new instance)', async () => {
    await register(api, jobSpec('twice', { work: 1 }, periodic));
    const first = await api('POST', '/v1/job/twice/periodic/force');
    const second = await api('POST', '/v1/job/twice/periodic/force');
    expect([first.status, second.status]).toEqual([200, 200]);
    const children = await getJson<Json[]>(api, '/v1/jobs?prefix=twice/periodic-');
    expect(children).toHaveLength(2);
    for (const c of children) expect(c.ID).toMatch(/^twice\/periodic-\d{10}$/);
    expect((await getJson(api, '/v1/job/twice/summary')).Children).toMatchObject({ Running: 2 });
  });

  it('a disabled or stopped periodic job is not tracked, so it cannot be forced', async () => {
    await register(
      api,
      jobSpec('cron-off', { work: 1 }, { ...periodic, Periodic: { ...periodic.Periodic, Enabled: false } }),
    );
    const off = await api('POST', '/v1/job/cron-off/periodic/force');
    expect([off.status, off.text]).toEqual([
      500,
      'force launch for job "cron-off" failed: can\'t force run non-tracked job "cron-off" (default)',
    ]);
    await register(api, jobSpec('cron-stop', { work: 1 }, periodic));
    await api('DELETE', '/v1/job/cron-stop');
    expect((await api('POST', '/v1/job/cron-stop/periodic/force')).status).toBe(500);
    expect(await getJson<Json[]>(api, '/v1/jobs?prefix=cron-')).toHaveLength(2);
  });

  it('a non-periodic job is refused (500); a missing one is "job not found"', async () => {
    const plain = await api('POST', '/v1/job/plain/periodic/force');
    expect([plain.status, plain.text]).toEqual([500, "can't force launch non-periodic job"]);
    const missing = await api('PUT', '/v1/job/nope/periodic/force');
    expect([missing.status, missing.text]).toEqual([500, 'job not found']);
    const get = await api('GET', '/v1/job/cron/periodic/force');
    expect(get.status).toBe(405);
  });
});
