/**
 * The HTTP layer against hostile services, each a real server on 127.0.0.1: one that echoes the
 * request's secrets back in its errors, one that streams an endless body, one that announces an
 * absurd rate limit. None may leak a secret, exhaust memory or hang past the deadline or an abort.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  HttpClient,
  type HttpClientOptions,
  type RetryEvent,
  ServiceError,
  UnexpectedResponseError,
  WaitTimeoutError,
} from '../../src/clients/http/index.js';
import { type HostileServer, hostileServer, leaks, pieces, reply } from '../support/hostile.js';
import { caught, everyRendering, TOKEN } from './helpers.js';

const servers: HostileServer[] = [];
const clients: HttpClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(handler: Parameters<typeof hostileServer>[0]): Promise<string> {
  const server = await hostileServer(handler);
  servers.push(server);
  return server.url;
}

function client(baseUrl: string, options: Partial<HttpClientOptions> = {}): HttpClient {
  const c = new HttpClient({
    service: 'registry',
    baseUrl,
    token: TOKEN,
    ...options,
    retry: { minDelayMs: 1, maxDelayMs: 5, ...options.retry },
  });
  clients.push(c);
  return c;
}

/** Every form an echoing service writes a value back in, in one message. */
function echo(value: string): string {
  const json = JSON.stringify(value).slice(1, -1);
  return [
    `got ${value}`,
    `json ${json}`,
    `url ${encodeURIComponent(value)}`,
    `b64 ${Buffer.from(`{"password":"${json}"}`).toString('base64')}`,
    `b64url ${Buffer.from(`x${value}`).toString('base64url')}`,
  ].join('; ');
}

describe('secrets echoed back by the service', () => {
  const password = 'hunter2-"quoted"\\-päss/word+1 ' + 'c0ffee';

  it('scrubs every secret of the request from a 4xx in every encoding, message and details', async () => {
    const url = await serve((_req, res) => reply(res, 400, { errors: [echo(password), echo(TOKEN)] }));
    const err = await caught(
      client(url).request({
        method: 'POST',
        path: '/v1/login',
        body: { password },
        secrets: [password],
        idempotent: false,
      }),
    );
    expect(err).toBeInstanceOf(ServiceError);
    const shown = everyRendering(err);
    expect(leaks(shown, password)).toEqual([]);
    expect(leaks(shown, TOKEN)).toEqual([]);
  });

  it('scrubs a 5xx after retries, the retry events and the cause', async () => {
    const url = await serve((_req, res) => reply(res, 503, { message: echo(password) }));
    const events: RetryEvent[] = [];
    const err = await caught(
      client(url, { onRetry: (e) => events.push(e), retry: { maxRetries: 2 } }).request({
        method: 'PUT',
        path: '/v1/thing',
        body: { password },
        secrets: [password],
      }),
    );
    expect((err as ServiceError).attempts).toBe(3);
    expect(events).toHaveLength(2);
    expect(leaks(everyRendering(err) + JSON.stringify(events), password)).toEqual([]);
  });

  it('scrubs a token sent in the query string when the service echoes it', async () => {
    const queryToken = 'query-token-5d1e2c3b';
    const url = await serve((req, res) => reply(res, 403, { error: `refused ${req.url}` }));
    const err = await caught(
      client(url).request({ method: 'GET', path: '/v1/x', query: { token: queryToken } }),
    );
    expect(pieces(everyRendering(err), queryToken)).toEqual([]);
  });

  it.each([
    ['straddling the 500-character cut', 488],
    ['at the end of a 2,000-character message', 2000 - TOKEN.length],
  ])('shows no part of a token %s', async (_what, at) => {
    const message = `${'m'.repeat(at)}${TOKEN}`.padEnd(2000, 'n');
    const url = await serve((_req, res) => reply(res, 422, { message }));
    const err = await caught(client(url).request({ method: 'PUT', path: '/v1/thing', body: {} }));
    expect((err as ServiceError).serviceMessage!.length).toBeLessThanOrEqual(501);
    expect(pieces(everyRendering(err), TOKEN)).toEqual([]);
  });
});

describe('response bodies past the cap', () => {
  const MiB = 1024 * 1024;

  it('stops reading a streamed body at the cap, with an error naming the limit, and does not retry', async () => {
    let requests = 0;
    let written = 0;
    let finished = false;
    const url = await serve((_req, res) => {
      requests++;
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      const pump = () => {
        while (written < 10 * MiB) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        finished = true;
        res.end();
      };
      res.on('error', () => undefined);
      pump();
    });
    const started = performance.now();
    const err = await caught(
      client(url, { maxResponseBytes: MiB }).request({ method: 'GET', path: '/v1/big' }),
    );
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(err).toBeInstanceOf(UnexpectedResponseError);
    expect((err as Error).message).toMatch(
      /^registry: GET \/v1\/big → 200 response body larger than the 1 MiB limit/,
    );
    expect((err as Error).message).toContain('CONVERGE_MAX_RESPONSE_BYTES');
    expect(requests).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(finished).toBe(false);
  });

  it('refuses at once an answer whose Content-Length is over the cap', async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(10 * MiB) });
      res.write('a'.repeat(1024)); // and then nothing: a client that waits for the rest would hang
    });
    const err = await caught(
      client(url, { maxResponseBytes: MiB, requestTimeoutMs: 20_000 }).request({
        method: 'GET',
        path: '/v1/big',
      }),
    );
    expect(err).toBeInstanceOf(UnexpectedResponseError);
    expect((err as Error).message).toContain('its Content-Length is 10 MiB');
  });
});

describe('waits a hostile service asks for', () => {
  it('clamps X-RateLimit-Limit: 0.000001 and fails at once when the wait would pass the deadline', async () => {
    const url = await serve((_req, res) => reply(res, 200, {}, { 'x-ratelimit-limit': '0.000001' }));
    const pauses: { reason: string; throttlePerSecond?: number }[] = [];
    const c = client(url, { deadlineMs: 1_500, onRateLimitPause: (e) => pauses.push(e) });
    const started = performance.now();
    const err = await caught(
      (async () => {
        for (let i = 0; i < 10; i++) await c.request({ method: 'GET', path: '/v1/x' });
      })(),
    );
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(err).toBeInstanceOf(WaitTimeoutError);
    expect(err).toMatchObject({ kind: 'timeout', deadlineMs: 1_500 });
    expect((err as Error).message).toContain('X-RateLimit-Limit 0.000001');
    // Not "past its deadline" for a wait shorter than the deadline: what does not fit is the wait
    // plus the time an attempt is given.
    expect((err as Error).message).toMatch(
      /would hold the request \S+ before sending, leaving less than the 1s an attempt is given before its deadline/,
    );
    expect(c.announcedRateLimit).toBe(0.000001);
    // The throttle it keeps says it is not the announced limit, and why.
    expect(pauses[0]).toMatchObject({
      reason: expect.stringContaining(
        'X-RateLimit-Limit 0.000001, taken as 1: Converge believes limits from 1',
      ),
      throttlePerSecond: 0.9,
    });
  }, 10_000);

  it("aborts a rate-limiter wait at once when the run's signal fires", async () => {
    const url = await serve((_req, res) => reply(res, 200, {}, { 'x-ratelimit-limit': '1' }));
    const run = new AbortController();
    const c = client(url, { signal: run.signal });
    await c.request({ method: 'GET', path: '/v1/x' }); // learns the limit: 0.9/s, burst 1
    await c.request({ method: 'GET', path: '/v1/x' });
    const reason = new Error('interrupted by SIGTERM');
    setTimeout(() => run.abort(reason), 50);
    const started = performance.now();
    await expect(c.request({ method: 'GET', path: '/v1/x' })).rejects.toBe(reason);
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it("aborts a Retry-After sleep when the run's signal fires", async () => {
    const url = await serve((_req, res) => reply(res, 429, {}, { 'retry-after': '30' }));
    const run = new AbortController();
    const reason = new Error('interrupted by SIGINT');
    setTimeout(() => run.abort(reason), 100);
    const started = performance.now();
    await expect(client(url, { signal: run.signal }).request({ method: 'GET', path: '/v1/x' })).rejects.toBe(
      reason,
    );
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('lets a request marked not interruptible finish after the run is aborted', async () => {
    const url = await serve((_req, res) => setTimeout(() => reply(res, 200, { unlocked: true }), 100));
    const run = new AbortController();
    run.abort(new Error('interrupted'));
    const res = await client(url, { signal: run.signal }).request({
      method: 'POST',
      path: '/v1/unlock',
      interruptible: false,
    });
    expect(res.body).toEqual({ unlocked: true });
  });
});
