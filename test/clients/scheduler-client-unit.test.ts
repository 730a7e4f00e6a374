/**
 * What the scheduler client puts on the wire (token, namespace, blocking queries, payloads, retry
 * choices), checked against a MockAgent for the cases the sandbox cannot produce (a 503 after a write
 * was sent, a missing index header). Behaviour against the sandbox is in scheduler-client.test.ts.
 */
import type { MockAgent } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HttpStatusError } from '../../src/clients/http/index.js';
import { SchedulerClient } from '../../src/clients/scheduler/client.js';
import { caught, jsonHeaders, mockAgent, ORIGIN, TOKEN } from './helpers.js';

let agent: MockAgent;
let pool: ReturnType<MockAgent['get']>;

beforeEach(() => {
  agent = mockAgent();
  pool = agent.get(ORIGIN);
});

afterEach(async () => {
  agent.assertNoPendingInterceptors();
  await agent.close();
});

function scheduler(): SchedulerClient {
  return SchedulerClient.fromConnection({
    address: ORIGIN,
    token: TOKEN,
    dispatcher: agent,
    http: { retry: { minDelayMs: 1, maxDelayMs: 5 } },
  });
}

interface Seen {
  path: string;
  headers: Record<string, string>;
  body: unknown;
}

function capture(
  seen: Seen[],
  statusCode: number,
  data: unknown,
  headers: Record<string, string> = jsonHeaders,
) {
  return (opts: { path: string; headers?: unknown; body?: unknown }) => {
    seen.push({
      path: opts.path,
      headers: opts.headers as Record<string, string>,
      body: typeof opts.body === 'string' ? JSON.parse(opts.body) : undefined,
    });
    return { statusCode, data: JSON.stringify(data), responseOptions: { headers } };
  };
}

const writeResponse = { EvalID: 'e-1', EvalCreateIndex: 12, JobModifyIndex: 11 };

describe('SchedulerClient on the wire', () => {
  it('sends the token as Bearer and the namespace as query namespace', async () => {
    const seen: Seen[] = [];
    pool.intercept({ path: /^\/v1\/job\/web/, method: 'GET' }).reply(capture(seen, 200, { ID: 'web' }));
    await scheduler().readJob('web', { namespace: 'team-a' });
    expect(seen[0]!.path).toBe('/v1/job/web?namespace=team-a');
    expect(seen[0]!.headers.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it('keeps the slashes of a dispatched child ID and escapes the rest', async () => {
    const seen: Seen[] = [];
    pool.intercept({ path: () => true, method: 'GET' }).reply(capture(seen, 404, ''));
    expect(await scheduler().readJob('report/dispatch-1700000000-0a1b2c3d')).toBeUndefined();
    expect(seen[0]!.path).toBe('/v1/job/report/dispatch-1700000000-0a1b2c3d');
    await expect(scheduler().readJob('')).rejects.toThrow('job ID must not be empty');
  });

  it('registers with the check-and-set fields the spec names', async () => {
    const seen: Seen[] = [];
    pool.intercept({ path: '/v1/jobs', method: 'POST' }).reply(capture(seen, 200, writeResponse));
    const res = await scheduler().registerJob(
      { ID: 'web' },
      { enforceIndex: true, jobModifyIndex: 10, preserveCounts: true },
    );
    expect(res).toEqual(writeResponse);
    expect(seen[0]!.body).toEqual({
      Job: { ID: 'web' },
      EnforceIndex: true,
      JobModifyIndex: 10,
      PolicyOverride: false,
      PreserveCounts: true,
    });
  });

  it('passes blocking-query parameters and reads the index header', async () => {
    const seen: Seen[] = [];
    pool
      .intercept({ path: /^\/v1\/jobs/, method: 'GET' })
      .reply(capture(seen, 200, [], { ...jsonHeaders, 'x-scheduler-index': '41' }));
    pool
      .intercept({ path: /^\/v1\/job\/web/, method: 'GET' })
      .reply(capture(seen, 200, { ID: 'web' }, { ...jsonHeaders, 'x-nomad-index': '42' }));
    const client = scheduler();
    expect(await client.listJobsWithIndex({ prefix: 'we', index: 40, wait: '10s', namespace: '*' })).toEqual({
      value: [],
      index: 41,
    });
    expect(await client.readJobWithIndex('web', { index: 41, wait: 2500 })).toEqual({
      value: { ID: 'web' },
      index: 42,
    });
    expect(seen.map((s) => s.path)).toEqual([
      '/v1/jobs?prefix=we&index=40&wait=10s&namespace=*',
      '/v1/job/web?index=41&wait=3s',
    ]);
  });

  it('sends a dispatch payload base64-encoded, and refuses one over 16384 bytes before sending', async () => {
    const seen: Seen[] = [];
    pool.intercept({ path: '/v1/job/report/dispatch', method: 'POST' }).reply(
      capture(seen, 200, {
        DispatchedJobID: 'report/dispatch-1-abcd',
        EvalID: 'e',
        EvalCreateIndex: 3,
        JobCreateIndex: 3,
      }),
    );
    await scheduler().dispatchJob('report', { payload: 'hello', meta: { customer: 'acme' } });
    expect(seen[0]!.body).toEqual({
      Payload: Buffer.from('hello').toString('base64'),
      Meta: { customer: 'acme' },
    });
    await expect(scheduler().dispatchJob('report', { payload: new Uint8Array(16385) })).rejects.toThrow(
      'dispatch payload is 16385 bytes; the service accepts at most 16384',
    );
  });

  it('sends scale, revert, stability and evaluate bodies as the spec lists them', async () => {
    const seen: Seen[] = [];
    pool
      .intercept({ path: () => true, method: 'POST' })
      .reply(capture(seen, 200, writeResponse))
      .times(4);
    const c = scheduler();
    await c.scaleJob('web', 'api', { count: 3, message: 'busy', meta: { by: 'ops' } });
    await c.revertJob('web', 2, { enforcePriorVersion: 4, registryToken: 'r-tok', secretsToken: 's-tok' });
    await c.setJobStability('web', 2, true);
    await c.evaluateJob('web', { forceReschedule: true });
    expect(seen.map((s) => [s.path, s.body])).toEqual([
      ['/v1/job/web/scale', { Target: { Group: 'api' }, Count: 3, Message: 'busy', Meta: { by: 'ops' } }],
      [
        '/v1/job/web/revert',
        {
          JobID: 'web',
          JobVersion: 2,
          EnforcePriorVersion: 4,
          RegistryToken: 'r-tok',
          SecretsToken: 's-tok',
        },
      ],
      ['/v1/job/web/stable', { JobID: 'web', JobVersion: 2, Stable: true }],
      ['/v1/job/web/evaluate', { JobID: 'web', EvalOptions: { ForceReschedule: true } }],
    ]);
  });

  it('does not retry 500 (how the service answers refusals such as a failed check-and-set)', async () => {
    pool
      .intercept({ path: '/v1/job/web', method: 'POST' })
      .reply(500, 'Enforcing job modify index 3: job exists with conflicting job modify index: 5');
    const err = await caught(scheduler().updateJob({ ID: 'web' }, { enforceIndex: true, jobModifyIndex: 3 }));
    expect(err).toBeInstanceOf(HttpStatusError);
    expect(err).toMatchObject({ status: 500, attempts: 1 });
    expect((err as HttpStatusError).serviceMessage).toContain('conflicting job modify index: 5');
  });

  it('does not send a dispatch again after a 503: a second dispatch would be a second job', async () => {
    pool.intercept({ path: '/v1/job/report/dispatch', method: 'POST' }).reply(503, 'overloaded');
    const err = await caught(scheduler().dispatchJob('report'));
    expect(err).toMatchObject({ status: 503, attempts: 1 });
  });

  it('retries a plan after a 503: a dry run changes nothing', async () => {
    pool.intercept({ path: '/v1/job/web/plan', method: 'POST' }).reply(503, 'overloaded');
    pool
      .intercept({ path: '/v1/job/web/plan', method: 'POST' })
      .reply(200, JSON.stringify({ JobModifyIndex: 4 }), { headers: jsonHeaders });
    expect(await scheduler().planJob({ ID: 'web' })).toEqual({ JobModifyIndex: 4 });
  });
});
