/**
 * Injected faults over real HTTP on loopback, with a fixed seed: reproducible sequences, shares that
 * hold over many requests, dropped connections (before and after the service acted), rate limits per
 * token and per service, added latency, and per-service overrides.
 */
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { type FaultsConfig, type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';

type Outcome = number | 'reset';

interface Sent {
  outcome: Outcome;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** The socket error a client saw when the connection was dropped. */
  error?: NodeJS.ErrnoException;
}

/**
 * One request on a fresh connection (no keep-alive, so a dropped connection never leaves a client
 * retrying on another): the status, or 'reset' when the connection ended without an answer.
 */
function send(
  sandbox: RunningSandbox,
  method: string,
  path: string,
  opts: { token?: string | null; body?: unknown } = {},
): Promise<Sent> {
  const token = opts.token === undefined ? sandbox.rootToken : opts.token;
  const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  return new Promise((resolve, reject) => {
    const req = request(
      `${sandbox.url}${path}`,
      {
        method,
        agent: false,
        headers: { ...(token !== null ? { Authorization: `Bearer ${token}` } : {}) },
        timeout: 10_000,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ outcome: res.statusCode!, headers: res.headers, body: text }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('no answer within 10 s')));
    req.on('error', (error: NodeJS.ErrnoException) =>
      error.code === 'ECONNRESET'
        ? resolve({ outcome: 'reset', headers: {}, body: '', error })
        : reject(error),
    );
    req.end(body);
  });
}

async function withSandbox<T>(faults: FaultsConfig, fn: (sandbox: RunningSandbox) => Promise<T>): Promise<T> {
  const sandbox = await startSandbox({ config: { faults } });
  try {
    return await fn(sandbox);
  } finally {
    await sandbox.close();
  }
}

async function outcomes(sandbox: RunningSandbox, n: number, path = '/v1/acl/roles'): Promise<Outcome[]> {
  const seen: Outcome[] = [];
  for (let i = 0; i < n; i++) seen.push((await send(sandbox, 'GET', path)).outcome);
  return seen;
}

const count = (list: Outcome[], outcome: Outcome) => list.filter((o) => o === outcome).length;

describe('seeded faults', () => {
  it('the same seed gives the same faults for the same requests; another seed other faults', async () => {
    const faults = { failRate: 0.3, resetRate: 0.2 };
    const first = await withSandbox({ ...faults, seed: 7 }, (s) => outcomes(s, 40));
    const again = await withSandbox({ ...faults, seed: 7 }, (s) => outcomes(s, 40));
    const other = await withSandbox({ ...faults, seed: 8 }, (s) => outcomes(s, 40));
    expect(again).toEqual(first);
    expect(other).not.toEqual(first);
    expect(count(first, 503)).toBeGreaterThan(0);
    expect(count(first, 'reset')).toBeGreaterThan(0);
    expect(count(first, 200)).toBeGreaterThan(0);
  });

  it('answers about the asked share with 503 and drops about the asked share of connections', async () => {
    const n = 400;
    const seen = await withSandbox({ failRate: 0.2, resetRate: 0.1, seed: 42 }, (s) => outcomes(s, n));
    // Deterministic with the seed; the bounds say what the user asked for, not this seed's counts.
    expect(count(seen, 503)).toBeGreaterThanOrEqual(0.15 * n);
    expect(count(seen, 503)).toBeLessThanOrEqual(0.25 * n);
    expect(count(seen, 'reset')).toBeGreaterThanOrEqual(0.06 * n);
    expect(count(seen, 'reset')).toBeLessThanOrEqual(0.14 * n);
    expect(count(seen, 200)).toBe(n - count(seen, 503) - count(seen, 'reset'));
  });

  it('a connection dropped after acting has stored the change; one dropped before has not', async () => {
    await withSandbox({ resetRate: 0.5, seed: 3 }, async (sandbox) => {
      const results: { name: string; sent: Sent }[] = [];
      for (let i = 0; i < 24; i++) {
        const name = `reset-${i}`;
        results.push({ name, sent: await send(sandbox, 'PUT', '/v1/acl/role', { body: { Name: name } }) });
      }
      // Read back until an answer comes (reads are dropped too); a bounded number of tries.
      let stored: string[] | undefined;
      for (let i = 0; i < 30 && !stored; i++) {
        const read = await send(sandbox, 'GET', '/v1/acl/roles');
        if (read.outcome === 200) stored = (JSON.parse(read.body) as { Name: string }[]).map((r) => r.Name);
      }
      expect(stored).toBeDefined();
      const dropped = results.filter((r) => r.sent.outcome === 'reset');
      for (const r of dropped) expect(r.sent.error?.code).toBe('ECONNRESET');
      const droppedButStored = dropped.filter((r) => stored!.includes(r.name));
      const droppedNotStored = dropped.filter((r) => !stored!.includes(r.name));
      expect(droppedButStored.length).toBeGreaterThan(0);
      expect(droppedNotStored.length).toBeGreaterThan(0);
      // Every create that was answered is stored, and nothing else.
      const answered = results.filter((r) => r.sent.outcome === 200).map((r) => r.name);
      expect([...stored!].sort()).toEqual([...answered, ...droppedButStored.map((r) => r.name)].sort());
    });
  });
});

describe('rate limit', () => {
  const config = { rateLimit: { perSecond: 1, burst: 2 } };

  it('limits each token on its own, with consistent Retry-After and X-RateLimit-* headers', async () => {
    const sandbox = await startSandbox({
      config: {
        faults: config,
        tokens: [{ name: 'other', secret: 'other-token', registry: { acl: 'read' } }],
      },
    });
    try {
      const root = [];
      for (let i = 0; i < 3; i++) root.push(await send(sandbox, 'GET', '/v1/acl/roles'));
      expect(root.map((r) => r.outcome)).toEqual([200, 200, 429]);
      const limited = root[2]!;
      const reset = Number(limited.headers['x-ratelimit-reset']);
      expect(limited.headers['x-ratelimit-limit']).toBe('1');
      expect(limited.headers['x-ratelimit-remaining']).toBe('0');
      expect(reset).toBeGreaterThan(0);
      expect(reset).toBeLessThanOrEqual(1);
      expect(Number(limited.headers['retry-after'])).toBe(Math.max(1, Math.ceil(reset)));
      expect(limited.body).toMatch(/Too Many Requests/);

      // Another token has a bucket of its own, and so has a caller with no token at all.
      const other = [];
      for (let i = 0; i < 2; i++)
        other.push((await send(sandbox, 'GET', '/v1/acl/roles', { token: 'other-token' })).outcome);
      expect(other).toEqual([200, 200]);
      expect((await send(sandbox, 'GET', '/v1/acl/roles', { token: null })).outcome).toBe(403);
      // The first token is still over its limit.
      expect((await send(sandbox, 'GET', '/v1/acl/roles')).outcome).toBe(429);
    } finally {
      await sandbox.close();
    }
  });

  it('limits each service on its own, and a per-service limit only that service', async () => {
    await withSandbox({ ...config, services: { scheduler: { rateLimit: 0 } } }, async (sandbox) => {
      expect(await outcomes(sandbox, 3)).toEqual([200, 200, 429]);
      // The same token still has its budget at the workspace service; the scheduler has no limit.
      expect(await outcomes(sandbox, 2, '/api/v2/organizations/sandbox/workspaces')).toEqual([200, 200]);
      expect(await outcomes(sandbox, 5, '/v1/jobs')).toEqual([200, 200, 200, 200, 200]);
    });
  });

  it('answers the workspace service 429 in its own words', async () => {
    await withSandbox({ rateLimit: { perSecond: 1, burst: 1 } }, async (sandbox) => {
      const path = '/api/v2/organizations/sandbox/workspaces';
      await send(sandbox, 'GET', path);
      const limited = await send(sandbox, 'GET', path);
      expect(limited.outcome).toBe(429);
      expect(JSON.parse(limited.body)).toEqual({
        errors: [
          { detail: "You have exceeded the API's rate limit.", status: 429, title: 'Too many requests' },
        ],
      });
      expect(limited.headers['x-ratelimit-limit']).toBe('1');
    });
  });
});

describe('latency and per-service overrides', () => {
  it('adds at least the configured latency, jitter on top, to the service it is set for', async () => {
    await withSandbox(
      { latencyMs: 20, jitterMs: 30, services: { scheduler: { latencyMs: 150 } } },
      async (sandbox) => {
        for (const [path, least] of [
          ['/v1/acl/roles', 20],
          ['/v1/jobs', 150],
        ] as const) {
          const started = performance.now();
          expect((await send(sandbox, 'GET', path)).outcome).toBe(200);
          expect(performance.now() - started).toBeGreaterThanOrEqual(least - 2);
        }
      },
    );
  });

  it('a fail rate for one service fails only that service', async () => {
    await withSandbox({ seed: 1, services: { scheduler: { failRate: 1 } } }, async (sandbox) => {
      expect(count(await outcomes(sandbox, 10, '/v1/jobs'), 503)).toBe(10);
      expect(count(await outcomes(sandbox, 10, '/v1/acl/roles'), 200)).toBe(10);
      expect(count(await outcomes(sandbox, 10, '/api/v2/organizations/sandbox/workspaces'), 200)).toBe(10);
    });
  });
});
