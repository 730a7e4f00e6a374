/**
 * The applier's create over the real HTTP layer (an undici MockAgent: the sandbox cannot fail only
 * the create and not the read back, nor refuse connections between answers; the sandbox where it
 * can): one attempt count for the create across the HTTP layer's
 * retries and the applier's resends, one limit whatever the failure, and every resend a retry taken
 * from the host's budget. What the service receives is counted per method.
 */
import type { MockAgent } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createOnce } from '../../src/applier/create-once.js';
import { requestScopeOf } from '../../src/applier/scoped-context.js';
import { HttpClient } from '../../src/clients/http/index.js';
import { HostRegistry } from '../../src/clients/http/host-registry.js';
import { RetryBudget } from '../../src/clients/http/retry-budget.js';
import type { AnyResourceKind, KindContext } from '../../src/resources/contract.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { jsonHeaders, mockAgent, mockedClient, ORIGIN } from '../clients/helpers.js';
import { desired, memoryKind, memoryStore, noContext } from './memory-kind.js';

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

const refused = () =>
  Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:8500'), { code: 'ECONNREFUSED' });
const reset = () => Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });

/** A kind whose create is one HTTP request (`PUT /v1/thing` unless told) and whose read back finds nothing. */
function httpKind(
  http: HttpClient,
  options: { method?: string; path?: string; idempotent?: boolean; upsert?: boolean } = {},
) {
  const base = memoryKind(memoryStore());
  const kind: AnyResourceKind = {
    ...base,
    ...(options.upsert ? { createIsUpsert: true } : {}),
    async create(ctx, d) {
      // As a service client of the change's context would: the request carries the change's scope.
      await http.request({
        method: options.method ?? 'PUT',
        path: options.path ?? '/v1/thing',
        body: d.spec,
        idempotent: options.idempotent ?? false,
        scope: requestScopeOf(ctx),
      });
      return base.create(ctx, d);
    },
    observe: async () => undefined,
  };
  return kind;
}

/** A client whose host's retry budget is `new RetryBudget(...args)`, to read its usage after. */
function budgeted(...args: ConstructorParameters<typeof RetryBudget>) {
  const budget = new RetryBudget(...args);
  const hosts = new (class extends HostRegistry {
    override budget(): RetryBudget {
      return budget;
    }
  })();
  return { budget, http: mockedClient(agent, { hosts }) };
}

const thing = desired('Thing', 'a', { size: 1 });
const ctx: KindContext = noContext;

describe('a create over the HTTP layer', () => {
  it('gives up after 9 attempts in all, whatever mix of failures, saying so once', async () => {
    pool.intercept({ path: '/v1/thing', method: 'PUT' }).replyWithError(refused()).times(2);
    pool.intercept({ path: '/v1/thing', method: 'PUT' }).reply(503, 'busy').times(3);
    pool.intercept({ path: '/v1/thing', method: 'PUT' }).replyWithError(reset()).times(2);
    pool.intercept({ path: '/v1/thing', method: 'PUT' }).reply(503, 'busy').times(2);
    const http = mockedClient(agent);
    const notes: string[] = [];
    const error = await createOnce(httpKind(http), ctx, thing, { onRetry: (m) => notes.push(m) }).catch(
      (e: unknown) => e as Error,
    );
    expect(http.requestCount).toBe(9);
    expect(String(error)).toMatch(/503 busy \(gave up after 9 attempts\)/);
    // The two refusals were retried by the HTTP layer (nothing was sent); each lost answer was read
    // back and sent again by the applier, counting on: attempts 4 to 9 of 9.
    expect(notes.map((n) => /attempt (\d+) of (\d+)/.exec(n)!.slice(1).join('/'))).toEqual([
      '4/9',
      '5/9',
      '6/9',
      '7/9',
      '8/9',
      '9/9',
    ]);
  });

  it('creates after lost answers, each resend a retry from the budget rather than a new request', async () => {
    pool.intercept({ path: '/v1/thing', method: 'PUT' }).reply(503, 'busy').times(2);
    pool.intercept({ path: '/v1/thing', method: 'PUT' }).reply(200, {}, { headers: jsonHeaders });
    const { budget, http } = budgeted();
    await createOnce(httpKind(http), ctx, thing);
    expect(http.requestCount).toBe(3);
    expect(budget.usage).toEqual({ retries: 2, requests: 1, services: ['registry'] });
  });

  it('gives the retry back to the budget when the read back finds the create landed', async () => {
    pool.intercept({ path: '/v1/thing', method: 'PUT' }).reply(503, 'busy');
    const { budget, http } = budgeted();
    // The 503 came after the service acted: the read back finds the object.
    const landed = memoryKind(memoryStore());
    await landed.create(ctx, thing);
    const kind: AnyResourceKind = { ...httpKind(http), observe: (c, key) => landed.observe(c, key) };
    const notes: string[] = [];
    await createOnce(kind, ctx, thing, { onRetry: (m) => notes.push(m) });
    expect(http.requestCount).toBe(1);
    expect(notes).toEqual([expect.stringContaining('found by its key, so it is not created again')]);
    // Nothing was sent again: the run's "sent again" count and the budget's agree.
    expect(budget.usage.retries).toBe(0);
  });

  it('gives the retry back when the read back itself fails, so nothing was sent again', async () => {
    pool.intercept({ path: '/v1/thing', method: 'PUT' }).reply(503, 'busy');
    const { budget, http } = budgeted();
    const kind: AnyResourceKind = {
      ...httpKind(http),
      observe: async () => {
        throw new Error('the read back failed too');
      },
    };
    await expect(createOnce(kind, ctx, thing)).rejects.toThrow('the read back failed too');
    expect(http.requestCount).toBe(1);
    expect(budget.usage.retries).toBe(0);
  });

  // Was: after a resend, any failure was read back as an earlier send that had landed late, even one
  // after this send's create was answered 201. A workspace whose state push then could not release
  // its lock (three 503s on the unlock) was found by its key, reported created, and left locked: the
  // next apply failed on "already locked by you".
  it("reports a later step's failure after a resend whose create was answered, not reading it back as landed", async () => {
    pool.intercept({ path: '/v1/thing', method: 'PUT' }).reply(503, 'busy');
    pool.intercept({ path: '/v1/thing', method: 'PUT' }).reply(200, {}, { headers: jsonHeaders });
    const http = mockedClient(agent);
    const store = memoryStore();
    const base = memoryKind(store);
    let sends = 0;
    const kind: AnyResourceKind = {
      ...base,
      async create(c, d) {
        sends++;
        await http.request({
          method: 'PUT',
          path: '/v1/thing',
          body: d.spec,
          idempotent: false,
          scope: requestScopeOf(c),
        });
        await base.create(c, d);
        // The step after the create fails for good, with no answer lost (a push that cannot unlock).
        throw new Error('state version sv-1 was created, but unlocking workspace ws-1 failed');
      },
    };
    const notes: string[] = [];
    await expect(createOnce(kind, ctx, thing, { onRetry: (m) => notes.push(m) })).rejects.toThrow(
      'unlocking workspace ws-1 failed',
    );
    expect(sends).toBe(2);
    expect(notes).toEqual([expect.stringMatching(/^create answer lost \(503\); not found by its key/)]);
    // Only the read back after the lost answer: none after the later step's failure.
    expect(store.calls.filter((call) => call.startsWith('observe'))).toHaveLength(1);
  });

  it("still reads back a refusal of the create's own resend (an earlier send landed late)", async () => {
    pool.intercept({ path: '/v1/thing', method: 'PUT' }).reply(503, 'busy');
    pool
      .intercept({ path: '/v1/thing', method: 'PUT' })
      .reply(422, { errors: ['already exists'] }, { headers: jsonHeaders });
    const http = mockedClient(agent);
    const landed = memoryKind(memoryStore());
    let reads = 0;
    const kind: AnyResourceKind = {
      ...httpKind(http),
      // Absent at the first read back; the first send lands late, before the second read.
      observe: async (c, key) => {
        reads++;
        if (reads === 1) return undefined;
        if (reads === 2) await landed.create(c, thing);
        return landed.observe(c, key);
      },
    };
    const notes: string[] = [];
    await expect(createOnce(kind, ctx, thing, { onRetry: (m) => notes.push(m) })).resolves.toMatchObject({
      key: thing.key,
    });
    expect(notes.at(-1)).toMatch(/^the resend was answered 422; found by its key/);
  });

  it('sends no resend once the host retry budget is spent, and the error says why', async () => {
    pool.intercept({ path: '/v1/thing', method: 'PUT' }).reply(503, 'busy').times(3);
    // Two retries allowed in the whole run, whatever the number of requests.
    const { http } = budgeted(0, 2);
    const error = await createOnce(httpKind(http), ctx, thing).catch((e: unknown) => e as Error);
    expect(http.requestCount).toBe(3);
    expect(String(error)).toMatch(
      /\(stopped after 3 attempts: the registry retry budget of this run is spent \(2 retries for 1 request;/,
    );
  });

  it('sends an upsert only as the HTTP layer retries it: no resend on top (sandbox failing every request)', async () => {
    const log: string[] = [];
    const sandbox = await startSandbox({
      port: 0,
      config: { faults: { services: { secrets: { failRate: 1 } } } },
      log: (line: string) => log.push(line),
    });
    const http = new HttpClient({
      service: 'secrets',
      baseUrl: sandbox.url,
      token: sandbox.rootToken,
      retry: { minDelayMs: 1, maxDelayMs: 5 },
    });
    try {
      const notes: string[] = [];
      const error = await createOnce(
        httpKind(http, { method: 'POST', path: '/v1/auth/ldap/groups/g1', idempotent: true, upsert: true }),
        ctx,
        thing,
        { onRetry: (m) => notes.push(m) },
      ).catch((e: unknown) => e as Error);
      // One create, 9 attempts (its limit), all by the HTTP layer: before, up to 5 sends of 5 attempts.
      expect(log.filter((l) => l.startsWith('POST /v1/auth/ldap/groups/g1 '))).toHaveLength(9);
      expect(String(error)).toMatch(/gave up after 9 attempts/);
      expect(notes).toEqual([]);
    } finally {
      await http.close();
      await sandbox.close();
    }
  });

  it("is not sent again after a hostile Retry-After of an hour: the wait is the service's to ask, not to impose", async () => {
    pool
      .intercept({ path: '/v1/thing', method: 'PUT' })
      .reply(503, 'busy', { headers: { 'retry-after': '3600' } });
    const http = mockedClient(agent);
    const notes: string[] = [];
    const error = await createOnce(httpKind(http), ctx, thing, { onRetry: (m) => notes.push(m) }).catch(
      (e: unknown) => e as Error,
    );
    expect(http.requestCount).toBe(1);
    expect(notes).toEqual([]);
    expect(String(error)).toMatch(
      /the service asked to retry after 1h0m0s, longer than the 1m0s Converge waits/,
    );
  });

  it('grants nothing to a write outside a create: a lost POST is sent once, as before', async () => {
    pool.intercept({ path: '/v1/thing', method: 'POST' }).reply(503, 'busy');
    const http = mockedClient(agent);
    const error = await http.request({ method: 'POST', path: '/v1/thing' }).catch((e: unknown) => e);
    expect(http.requestCount).toBe(1);
    expect(error).toMatchObject({ status: 503 });
    expect((error as { resend?: unknown }).resend).toBeUndefined();
  });
});
