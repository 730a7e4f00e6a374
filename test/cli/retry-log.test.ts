/** The one-line retry log: its wording, and that a real retry's line never carries a token. */
import { describe, expect, it } from 'vitest';
import type { RetryEvent } from '../../src/clients/http/index.js';
import { formatRateLimitPause, formatRetryEvent, retryReporter } from '../../src/cli/retry-log.js';
import { jsonHeaders, mockAgent, mockedClient, ORIGIN } from '../clients/helpers.js';

const event: RetryEvent = {
  service: 'registry',
  origin: 'http://127.0.0.1:8500',
  method: 'GET',
  path: '/v1/acl/roles',
  attempt: 1,
  reason: '503 Service Unavailable',
  delayMs: 400,
  maxAttempts: 5,
};

describe('formatRetryEvent', () => {
  it('says which attempt failed, why, when the next comes and how many are left', () => {
    expect(formatRetryEvent(event)).toBe(
      'registry: GET /v1/acl/roles: attempt 1 failed (503 Service Unavailable); retrying in 0.4s (attempt 2 of 5)',
    );
  });

  it('rounds waits up so that a short one never reads as 0s, in ms below a tenth of a second', () => {
    const line = (delayMs: number) => formatRetryEvent({ ...event, delayMs });
    expect(line(37)).toContain('retrying in 37ms');
    expect(line(0.4)).toContain('retrying in 1ms');
    expect(line(100)).toContain('retrying in 0.1s');
    expect(line(1_234)).toContain('retrying in 1.3s');
    expect(line(12_300)).toContain('retrying in 13s');
    expect(line(61_000)).toContain('retrying in 1m1s');
    expect(line(0)).toContain('retrying now');
  });

  it('shows the reasons of rate limits and network failures as the HTTP layer gives them', () => {
    expect(
      formatRetryEvent({
        ...event,
        service: 'workspaces',
        method: 'POST',
        path: '/api/v2/organizations/acme/workspaces',
        attempt: 3,
        reason: 'connection refused (ECONNREFUSED)',
        delayMs: 1_600,
      }),
    ).toBe(
      'workspaces: POST /api/v2/organizations/acme/workspaces: attempt 3 failed (connection refused (ECONNREFUSED)); retrying in 1.6s (attempt 4 of 5)',
    );
  });

  it('never shows a token sent in the query string', async () => {
    const secret = 'query-secret-91c3e7';
    const agent = mockAgent();
    const pool = agent.get(ORIGIN);
    pool.intercept({ path: `/v1/acl/roles?token=${secret}`, method: 'GET' }).reply(503, `bad ${secret}`);
    pool
      .intercept({ path: `/v1/acl/roles?token=${secret}`, method: 'GET' })
      .reply(200, [], { headers: jsonHeaders });
    const lines: string[] = [];
    const client = mockedClient(agent, { onRetry: (e) => lines.push(formatRetryEvent(e)) });

    await client.request({ method: 'GET', path: '/v1/acl/roles', query: { token: secret } });

    expect(lines).toEqual([
      expect.stringMatching(
        /^registry: GET \/v1\/acl\/roles\?token=\[redacted\]: attempt 1 failed \(503 Service Unavailable\); retrying (now|in 0\.\ds) \(attempt 2 of 9\)$/,
      ),
    ]);
    expect(lines.join('\n')).not.toContain(secret);
    await agent.close();
  });
});

describe('rate-limit pause line', () => {
  it('names the service, the wait and why, once for the whole host', () => {
    expect(
      formatRateLimitPause({
        service: 'registry',
        origin: 'http://127.0.0.1:8500',
        waitMs: 1_150,
        reason: '429',
      }),
    ).toBe('registry: rate limited, waiting 1.2s (429)');
    expect(
      formatRateLimitPause({
        service: 'workspaces',
        origin: 'http://127.0.0.1:8500',
        waitMs: 300,
        reason: 'X-RateLimit-Remaining 0',
      }),
    ).toBe('workspaces: rate limited, waiting 0.3s (X-RateLimit-Remaining 0)');
  });

  it('says once that a throttle began, so that slower objects are explained', () => {
    expect(
      formatRateLimitPause({
        service: 'registry',
        origin: 'http://127.0.0.1:8500',
        waitMs: 0,
        reason: 'X-RateLimit-Limit 5',
        throttlePerSecond: 4.5,
      }),
    ).toBe(
      "registry: keeping to the service's rate limit, 4.5 requests/s (X-RateLimit-Limit 5); requests wait their turn",
    );
  });
});

describe('retry lines with hostile text', () => {
  it("shows a reason and a path that quote the service's text as one inert line", () => {
    const line = formatRetryEvent({
      ...event,
      path: '/v1/acl/role/a\u001b[2K',
      reason: 'ECONNRESET: bye\n::error::forged\r\u202eevil',
    });
    expect(line).toBe(
      'registry: GET /v1/acl/role/a\\u001b[2K: attempt 1 failed (ECONNRESET: bye\\n::error::forged\\r\\u202eevil); retrying in 0.4s (attempt 2 of 5)',
    );
    expect(
      formatRateLimitPause({
        service: 'registry',
        origin: 'http://127.0.0.1:8500',
        waitMs: 300,
        reason: '429\n::error::x',
      }),
    ).toBe('registry: rate limited, waiting 0.3s (429\\n::error::x)');
  });
});

describe('retryReporter', () => {
  const EU = 'https://registry.eu.example:8501';
  const US = 'https://registry.us.example:8501';
  // `heldByPause` as the HTTP client sets it: a 429 while its host's pause runs.
  const retry = (service: string, reason: string, origin = EU, heldByPause = false) => ({
    service,
    origin,
    method: 'PUT',
    path: '/v1/acl/role',
    attempt: 1,
    reason,
    delayMs: 300,
    maxAttempts: 9,
    label: 'AclRole/default/web',
    ...(heldByPause ? { heldByPause } : {}),
  });

  it('says a pause once and not the 429s of the requests it held back, until the pause is over', () => {
    const lines: string[] = [];
    const report = retryReporter((l) => lines.push(l));
    report.onRateLimitPause({ service: 'registry', origin: EU, waitMs: 300, reason: '429' });
    for (let i = 0; i < 10; i++) report.onRetry(retry('registry', '429 Too Many Requests', EU, true));
    // Another host's 429 (another service, or another cluster of the same service: each host has
    // its own limiter, and no pause was said for it) and any other failure are news of their own.
    report.onRetry(retry('scheduler', '429 Too Many Requests', 'http://scheduler.example:4646'));
    report.onRetry(retry('registry', '429 Too Many Requests', US));
    report.onRetry(retry('registry', '503 Service Unavailable'));
    expect(lines).toEqual([
      'registry: rate limited, waiting 0.3s (429)',
      expect.stringMatching(/^AclRole\/default\/web: scheduler: PUT .* failed \(429 Too Many Requests\)/),
      expect.stringMatching(/^AclRole\/default\/web: registry: PUT .* failed \(429 Too Many Requests\)/),
      expect.stringMatching(/^AclRole\/default\/web: registry: PUT .* failed \(503 Service Unavailable\)/),
    ]);
    // The pause over, a 429 no pause holds is news again.
    report.onRetry(retry('registry', '429 Too Many Requests'));
    expect(lines).toHaveLength(5);
  });

  it('a throttle that began holds nobody back: a 429 after it is still said', () => {
    const lines: string[] = [];
    const report = retryReporter((l) => lines.push(l));
    report.onRateLimitPause({
      service: 'registry',
      origin: EU,
      waitMs: 0,
      reason: 'X-RateLimit-Limit 5',
      throttlePerSecond: 4.5,
    });
    report.onRetry(retry('registry', '429 Too Many Requests'));
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(/failed \(429 Too Many Requests\)/);
  });
});
