/**
 * What a service receives from a run whose clients share one rate limiter and one retry budget per
 * host: workers slow down together after a 429 or an exhausted window instead of each finding its own
 * 429, and a failing service gets at most the budget's extra requests, not five times the load.
 * Against a tiny server on 127.0.0.1 that keeps its own window, as a rate-limited service does.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  HostRegistry,
  HttpClient,
  HttpStatusError,
  type HttpClientOptions,
  type RateLimitPauseEvent,
  type RetryEvent,
  WaitTimeoutError,
} from '../../src/clients/http/index.js';
import { RETRY_BUDGET_FLOOR, RETRY_BUDGET_RATIO } from '../../src/clients/http/retry-budget.js';
import { caught } from './helpers.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const { port } = server.address() as { port: number };
  return `http://127.0.0.1:${port}`;
}

function client(baseUrl: string, extra: Partial<HttpClientOptions> = {}): HttpClient {
  const c = new HttpClient({
    service: 'registry',
    baseUrl,
    ...extra,
    retry: { minDelayMs: 1, maxDelayMs: 5, ...extra.retry },
  });
  closers.push(() => c.close());
  return c;
}

/**
 * A service with a fixed window: `limit` requests, then 429 until the window (`windowMs`) ends.
 * Every answer carries X-RateLimit-Limit/Remaining/Reset, as the sandbox's rate limit does; the
 * announced limit is high enough that the steady throttle alone would not have kept to the window.
 */
function windowedService(limit: number, windowMs: number, announced = 1000) {
  let windowStart = Date.now();
  let used = 0;
  const seen = { ok: 0, tooMany: 0 };
  const handler = (_req: IncomingMessage, res: ServerResponse) => {
    const now = Date.now();
    if (now - windowStart >= windowMs) {
      windowStart = now;
      used = 0;
    }
    const resetSeconds = ((windowStart + windowMs - now) / 1000).toFixed(3);
    const headers = {
      'content-type': 'application/json',
      'x-ratelimit-limit': String(announced),
      'x-ratelimit-reset': resetSeconds,
    };
    if (used >= limit) {
      seen.tooMany++;
      res.writeHead(429, { ...headers, 'x-ratelimit-remaining': '0', 'retry-after': resetSeconds });
      res.end('{"errors":["rate limited"]}');
      return;
    }
    used++;
    seen.ok++;
    res.writeHead(200, { ...headers, 'x-ratelimit-remaining': String(limit - used) });
    res.end('{}');
  };
  return { handler, seen };
}

describe('one rate limiter per service and host, shared by the run', () => {
  it('holds every client of the host back once the window is used up, so none of them meets a 429', async () => {
    const service = windowedService(3, 300);
    const base = await serve(service.handler);
    const hosts = new HostRegistry();
    const pauses: RateLimitPauseEvent[] = [];
    const a = client(base, { hosts, onRateLimitPause: (e) => pauses.push(e) });
    const b = client(base, { hosts, onRateLimitPause: (e) => pauses.push(e) });
    // Three requests use up the window; the third answer says Remaining 0.
    for (const c of [a, b, a]) await c.request({ method: 'GET', path: '/v1/acl/roles' });
    // Sent at once into the used-up window: without the shared pause, each would be refused.
    await Promise.all([a, b, b].map((c) => c.request({ method: 'GET', path: '/v1/acl/roles' })));
    expect(service.seen).toEqual({ ok: 6, tooMany: 0 });
    const held = pauses.filter((p) => p.throttlePerSecond === undefined);
    expect(held.length).toBeGreaterThanOrEqual(1);
    expect(held[0]).toMatchObject({ service: 'registry', reason: 'X-RateLimit-Remaining 0' });
    // The announced limit came into force once for the host, said once whichever client met it.
    expect(pauses.filter((p) => p.throttlePerSecond !== undefined)).toEqual([
      {
        service: 'registry',
        origin: new URL(base).origin,
        waitMs: 0,
        reason: 'X-RateLimit-Limit 1000',
        throttlePerSecond: 900,
      },
    ]);
  });

  it("keeps each service on one host to its own limit: one service's used-up window holds no other", async () => {
    // Two services behind one host, each with its own window, as the sandbox serves all four.
    const registry = windowedService(2, 600);
    const scheduler = windowedService(1000, 600);
    const base = await serve((req, res) =>
      (req.url?.startsWith('/v1/acl') ? registry : scheduler).handler(req, res),
    );
    const hosts = new HostRegistry();
    const roles = client(base, { hosts });
    const jobs = client(base, { hosts, service: 'scheduler' });
    // The registry's window is used up: its second answer says Remaining 0 for the rest of it.
    for (let i = 0; i < 2; i += 1) await roles.request({ method: 'GET', path: '/v1/acl/roles' });
    const started = Date.now();
    await jobs.request({ method: 'GET', path: '/v1/jobs' });
    const jobsTook = Date.now() - started;
    await roles.request({ method: 'GET', path: '/v1/acl/roles' });
    const rolesTook = Date.now() - started;
    // The scheduler's request goes at once; the registry's waits out its own window.
    expect(jobsTook).toBeLessThan(300);
    expect(rolesTook).toBeGreaterThanOrEqual(300);
    expect(registry.seen.tooMany + scheduler.seen.tooMany).toBe(0);
  });

  it('says the throttle before the pause when one answer brings both, so the pause reads explained', async () => {
    const base = await serve((_req, res) => {
      res.writeHead(200, {
        'x-ratelimit-limit': '5',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': '0.2',
      });
      res.end('{}');
    });
    const pauses: RateLimitPauseEvent[] = [];
    const c = client(base, { hosts: new HostRegistry(), onRateLimitPause: (e) => pauses.push(e) });
    await c.request({ method: 'GET', path: '/v1/acl/roles' });
    expect(pauses.map((p) => (p.throttlePerSecond === undefined ? p.reason : 'throttle'))).toEqual([
      'throttle',
      'X-RateLimit-Remaining 0',
    ]);
  });

  it('marks the 429s a pause holds, so the pause is said once for all of them, and a 429 without one not', async () => {
    let windowEnds = 0;
    let bare = false;
    const base = await serve((_req, res) => {
      if (bare) {
        bare = false;
        res.writeHead(429);
        res.end();
        return;
      }
      if (windowEnds === 0) windowEnds = Date.now() + 300;
      if (Date.now() < windowEnds) {
        res.writeHead(429, { 'retry-after': '0.3' });
        res.end();
        return;
      }
      res.writeHead(204);
      res.end();
    });
    const hosts = new HostRegistry();
    const pauses: RateLimitPauseEvent[] = [];
    const retries: RetryEvent[] = [];
    const c = client(base, {
      hosts,
      onRateLimitPause: (e) => pauses.push(e),
      onRetry: (e) => retries.push(e),
    });
    // Four workers meet the same window at once.
    await Promise.all([1, 2, 3, 4].map(() => c.request({ method: 'GET', path: '/v1/x' })));
    expect(pauses.filter((p) => p.reason === '429')).toHaveLength(1);
    expect(retries.length).toBeGreaterThanOrEqual(1);
    expect(retries.every((r) => r.heldByPause === true)).toBe(true);
    // A 429 that asks for no wait starts no pause: its retry is news of its own.
    retries.length = 0;
    await new Promise((resolve) => setTimeout(resolve, 350));
    bare = true;
    await c.request({ method: 'GET', path: '/v1/x' });
    expect(retries).toHaveLength(1);
    expect(retries[0]!.heldByPause).toBeUndefined();
  });

  it('after a 429, the other workers of the host wait out its Retry-After instead of each being refused', async () => {
    let refused = 0;
    let pausedUntil = 0;
    const base = await serve((_req, res) => {
      // Refuses everything for 300 ms after the first request, with Retry-After saying so.
      if (pausedUntil === 0) pausedUntil = Date.now() + 300;
      if (Date.now() < pausedUntil) {
        refused++;
        res.writeHead(429, { 'retry-after': '0.3' });
        res.end();
        return;
      }
      res.writeHead(204);
      res.end();
    });
    const hosts = new HostRegistry();
    const pauses: RateLimitPauseEvent[] = [];
    const first = client(base, { hosts, onRateLimitPause: (e) => pauses.push(e) });
    const others = [1, 2, 3, 4].map(() => client(base, { hosts }));
    await first.request({ method: 'GET', path: '/v1/x' }).then(() => undefined);
    // The first request met the 429 and retried after the pause; the others, sent after it, wait too.
    await Promise.all(others.map((c) => c.request({ method: 'GET', path: '/v1/x' })));
    expect(refused).toBe(1);
    expect(pauses).toEqual([
      { service: 'registry', origin: new URL(base).origin, waitMs: 300, reason: '429' },
    ]);
  });

  it('caps a hostile reset (a day) and fails the request at its deadline instead of freezing the run', async () => {
    const base = await serve((_req, res) => {
      res.writeHead(200, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '86400' });
      res.end();
    });
    const c = client(base, { deadlineMs: 3_000 });
    await c.request({ method: 'GET', path: '/v1/x' });
    const err = await caught(c.request({ method: 'GET', path: '/v1/x' }));
    expect(err).toBeInstanceOf(WaitTimeoutError);
    // Capped at a minute, whatever the service said.
    expect((err as WaitTimeoutError).waitMs).toBeLessThanOrEqual(60_000);
    expect((err as Error).message).toMatch(/rate limit/);
  });

  it("names the setting to change as its caller spells it: the client's option by default, a front end's flag when given", async () => {
    const base = await serve((_req, res) => {
      res.writeHead(200, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '86400' });
      res.end();
    });
    const failure = async (extra: Partial<HttpClientOptions>) => {
      const c = client(base, { deadlineMs: 2_000, ...extra });
      await c.request({ method: 'GET', path: '/v1/x' });
      return ((await caught(c.request({ method: 'GET', path: '/v1/x' }))) as Error).message;
    };
    const library = await failure({});
    expect(library).toContain('allow more time (deadlineMs)');
    expect(library).not.toContain('--');
    const cli = await failure({ settingNames: { timeout: '--timeout', parallelism: '--parallelism' } });
    expect(cli).toContain('allow more time (--timeout) or send fewer requests at once (--parallelism)');
  });
});

describe('retry budget per host and run', () => {
  it('sends a failing service at most the budget in retries, then fails fast naming the service and the retries used', async () => {
    let received = 0;
    const base = await serve((_req, res) => {
      received++;
      res.writeHead(503);
      res.end();
    });
    const hosts = new HostRegistry();
    const c = client(base, { hosts, retry: { maxRetries: 4 } });
    const errors: Error[] = [];
    for (let i = 0; i < 40; i++) {
      errors.push((await caught(c.request({ method: 'GET', path: '/v1/x' }))) as Error);
    }
    // Without a budget: 40 × 5 = 200 requests. With it: 40 plus the floor plus the ratio's share of 40.
    expect(received).toBeLessThanOrEqual(40 + RETRY_BUDGET_FLOOR + RETRY_BUDGET_RATIO * 40);
    expect(received).toBeLessThan(100);
    const last = errors.at(-1)!;
    expect(last).toBeInstanceOf(HttpStatusError);
    expect(last.message).toMatch(/registry: GET \/v1\/x → 503/);
    expect(last.message).toMatch(/registry retry budget of this run is spent \(\d+ retries for 40 requests/);
    // The service answered: more retries might help, and the setting is named.
    expect(last.message).toContain('CONVERGE_RETRY_BUDGET allows more');
  });

  it('does not offer a larger budget when nothing listens at the address', async () => {
    // A port nothing listens on: every attempt is refused.
    const closed = await new Promise<string>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(`http://127.0.0.1:${port}`));
      });
    });
    const c = client(closed, { hosts: new HostRegistry(), retry: { maxRetries: 4, maxRefusedRetries: 2 } });
    const errors: Error[] = [];
    for (let i = 0; i < 20; i++)
      errors.push((await caught(c.request({ method: 'GET', path: '/v1/x' }))) as Error);
    const spent = errors.find((e) => /retry budget of this run is spent/.test(e.message));
    expect(spent?.message, errors.at(-1)?.message).toMatch(/cannot reach .*connection refused/);
    expect(spent!.message).not.toContain('CONVERGE_RETRY_BUDGET');
  });

  it("names the host and the services sharing it when several services spent the host's budget", async () => {
    const base = await serve((_req, res) => {
      res.writeHead(503);
      res.end();
    });
    const hosts = new HostRegistry();
    const scheduler = client(base, { service: 'scheduler', hosts, retry: { maxRetries: 4 } });
    const workspaces = client(base, { service: 'workspaces', hosts, retry: { maxRetries: 4 } });
    const errors: Error[] = [];
    for (let i = 0; i < 20; i++) {
      for (const c of [scheduler, workspaces])
        errors.push((await caught(c.request({ method: 'GET', path: '/v1/x' }))) as Error);
    }
    const host = new URL(base).host;
    // One budget, so one sentence for both: "the scheduler retry budget" and "the workspaces retry
    // budget" with the same numbers read as two budgets.
    for (const last of errors.slice(-2))
      expect(last.message).toMatch(
        new RegExp(
          `the retry budget of this run for ${host.replace(/\./g, '\\.')} \\(shared by scheduler, workspaces\\) is spent \\(\\d+ retries for \\d+ requests`,
        ),
      );
  });

  it('still retries a blip when the service is mostly healthy', async () => {
    let n = 0;
    const base = await serve((_req, res) => {
      n++;
      // Every tenth request fails once.
      res.writeHead(n % 10 === 0 ? 503 : 204);
      res.end();
    });
    const c = client(base, { hosts: new HostRegistry() });
    for (let i = 0; i < 50; i++) await c.request({ method: 'GET', path: '/v1/x' });
    expect(c.retryCount).toBeGreaterThan(0);
  });

  it('rides out a service failing 15% of attempts (10% 5xx and 5% resets) over a long run', async () => {
    let attempts = 0;
    const base = await serve((req, res) => {
      attempts++;
      // 3 of every 20 attempts fail: two 503s and one dropped connection.
      const slot = attempts % 20;
      if (slot === 0) req.socket.destroy();
      else {
        res.writeHead(slot < 3 ? 503 : 204);
        res.end();
      }
    });
    const c = client(base, { hosts: new HostRegistry() });
    // Enough requests that the floor alone does not carry the run: the ratio must cover 15% faults.
    for (let i = 0; i < 300; i++) await c.request({ method: 'GET', path: '/v1/x' });
    expect(attempts).toBeGreaterThan(300 + RETRY_BUDGET_FLOOR);
  });
});
