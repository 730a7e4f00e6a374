/** Fault injection from the config: added latency, failing first requests, random errors, rate limits. */
import { describe, expect, it } from 'vitest';
import { credentialKey } from '../../src/sandbox/core/credential.js';
import { FaultInjector } from '../../src/sandbox/core/faults.js';
import { RateBuckets } from '../../src/sandbox/core/rate-buckets.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { apiFor } from './helpers.js';

describe('faults over HTTP', () => {
  it('answers 503 to the first N requests, then normally', async () => {
    const sandbox = await startSandbox({ config: { faults: { failFirst: 3 } } });
    try {
      const api = apiFor(sandbox);
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await api('GET', '/v1/acl/roles')).status);
      expect(statuses).toEqual([503, 503, 503, 200, 200]);
    } finally {
      await sandbox.close();
    }
  });

  it('renders injected errors in the service style (plain text for the registry)', async () => {
    const sandbox = await startSandbox({ config: { faults: { failFirst: 1 } } });
    try {
      const res = await apiFor(sandbox)('GET', '/v1/acl/roles');
      expect(res.status).toBe(503);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(res.text).toMatch(/^Service Unavailable \(sandbox fault/);
    } finally {
      await sandbox.close();
    }
  });

  it('answers 429 with Retry-After over the rate limit, and recovers', async () => {
    const sandbox = await startSandbox({ config: { faults: { rateLimit: { perSecond: 5 } } } });
    try {
      const api = apiFor(sandbox);
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await api('GET', '/v1/acl/roles')).status);
      expect(statuses).toEqual([200, 200, 200, 200, 200]);
      const limited = await api('GET', '/v1/acl/roles');
      expect(limited.status).toBe(429);
      expect(limited.headers.get('retry-after')).toBe('1');
      expect(limited.headers.get('x-ratelimit-limit')).toBe('5');
      expect(Number(limited.headers.get('x-ratelimit-reset'))).toBeGreaterThan(0);
      expect(Number(limited.headers.get('x-ratelimit-reset'))).toBeLessThanOrEqual(0.2);
      await new Promise((r) => setTimeout(r, 250)); // one request's worth of budget at 5/s
      expect((await api('GET', '/v1/acl/roles')).status).toBe(200);
    } finally {
      await sandbox.close();
    }
  });

  it('adds latency to every response', async () => {
    const sandbox = await startSandbox({ config: { faults: { latencyMs: 150 } } });
    try {
      const started = performance.now();
      const res = await apiFor(sandbox)('GET', '/v1/acl/roles');
      expect(res.status).toBe(200);
      expect(performance.now() - started).toBeGreaterThanOrEqual(145);
    } finally {
      await sandbox.close();
    }
  });

  it('fails every request with errorRate 1', async () => {
    const sandbox = await startSandbox({ config: { faults: { errorRate: 1 } } });
    try {
      const api = apiFor(sandbox);
      expect((await api('GET', '/v1/acl/roles')).status).toBe(503);
      expect((await api('GET', '/v1/acl/policies')).status).toBe(503);
    } finally {
      await sandbox.close();
    }
  });
});

describe('FaultInjector', () => {
  it('refills the rate-limit bucket over time and honours burst', () => {
    let now = 0;
    const faults = new FaultInjector({ rateLimit: { perSecond: 2, burst: 1 } }, () => now);
    expect(faults.decide().kind).toBe('pass');
    const limited = faults.decide();
    expect(limited.kind).toBe('rate-limited');
    if (limited.kind === 'rate-limited') {
      expect(limited.headers['Retry-After']).toBe('1');
      expect(limited.headers['X-RateLimit-Reset']).toBe('0.500');
    }
    now = 499;
    expect(faults.decide().kind).toBe('rate-limited');
    now = 1000;
    expect(faults.decide().kind).toBe('pass');
  });

  it('rounds Retry-After up to whole seconds', () => {
    let now = 0;
    const faults = new FaultInjector({ rateLimit: { perSecond: 0.25 } }, () => now);
    faults.decide();
    const limited = faults.decide();
    expect(limited.kind === 'rate-limited' && limited.headers['Retry-After']).toBe('4');
    now = 4000;
    expect(faults.decide().kind).toBe('pass');
  });

  it('uses the random source for errorRate', () => {
    // Each request draws three values: outcome, phase of a reset, jitter.
    const values = [0.1, 0, 0, 0.9, 0, 0];
    const faults = new FaultInjector({ errorRate: 0.5 }, undefined, () => values.shift()!);
    expect(faults.decide().kind).toBe('unavailable');
    expect(faults.decide().kind).toBe('pass');
  });

  it('gives each share its own part of one draw: 503s, then resets before or after acting', () => {
    const draws = (outcome: number, phase: number) => [outcome, phase, 0];
    const values = [...draws(0.05, 0), ...draws(0.12, 0.2), ...draws(0.14, 0.7), ...draws(0.2, 0)];
    const faults = new FaultInjector({ failRate: 0.1, resetRate: 0.05 }, undefined, () => values.shift()!);
    expect(faults.decide()).toMatchObject({ kind: 'unavailable' });
    expect(faults.decide()).toMatchObject({ kind: 'reset', afterActing: true });
    expect(faults.decide()).toMatchObject({ kind: 'reset', afterActing: false });
    expect(faults.decide()).toMatchObject({ kind: 'pass' });
  });

  it('keeps a bounded number of rate buckets however many tokens a flood of requests brings', () => {
    let now = 0;
    const faults = new FaultInjector({ rateLimit: 1 }, () => now, undefined, 100);
    const buckets = new RateBuckets(() => now, 100);
    for (let i = 0; i < 10_000; i++) {
      buckets.take(`token-${i}`, { perSecond: 1, burst: 1 });
      expect(faults.decide('registry', `token-${i}`).kind).toBe('pass');
    }
    expect(buckets.size).toBe(100);
    // The most recent callers keep their (empty) bucket.
    expect(faults.decide('registry', 'token-9999').kind).toBe('rate-limited');
    now = 1000;
    expect(faults.decide('registry', 'token-9999').kind).toBe('pass');
  });

  it('keys a caller by a fixed-size hash, whatever the size of its token', () => {
    const huge = 'x'.repeat(16_000);
    const key = credentialKey({ authorization: `Bearer ${huge}` }, new URLSearchParams(), '127.0.0.1');
    expect(key.length).toBeLessThan(50);
    expect(key).not.toContain('xxxx');
    // Any token header or ?token= counts; without one the address does.
    const other = credentialKey({ 'x-anything-token': huge }, new URLSearchParams(), '127.0.0.1');
    const query = credentialKey({}, new URLSearchParams({ token: huge }), '127.0.0.1');
    const anonymous = credentialKey({}, new URLSearchParams(), '127.0.0.1');
    expect(new Set([key, other, query, anonymous]).size).toBe(4);
    expect(credentialKey({}, new URLSearchParams(), '127.0.0.1')).toBe(anonymous);
  });

  it('passes everything without faults configured', () => {
    const faults = new FaultInjector({});
    for (let i = 0; i < 100; i++) expect(faults.decide().kind).toBe('pass');
  });
});
