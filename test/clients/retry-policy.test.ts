/** The pure parts of the retry policy, the rate limiter and redaction. */
import { describe, expect, it } from 'vitest';
import { AdaptiveRateLimiter } from '../../src/clients/http/rate-limiter.js';
import { redactPath, scrubSecrets } from '../../src/clients/http/redact.js';
import {
  backoffDelayMs,
  classifyNetworkError,
  isIdempotentMethod,
  parseRateLimitResetMs,
  parseRetryAfterMs,
  serverRequestedWaitMs,
} from '../../src/clients/http/retry-policy.js';

describe('retry policy', () => {
  it('treats GET, HEAD, PUT, DELETE and OPTIONS as idempotent', () => {
    expect(['GET', 'head', 'LIST', 'PUT', 'DELETE', 'OPTIONS'].every(isIdempotentMethod)).toBe(true);
    expect(['POST', 'PATCH'].some(isIdempotentMethod)).toBe(false);
  });

  it('backs off exponentially with full jitter, capped', () => {
    const opts = { minDelayMs: 100, maxDelayMs: 1000 };
    expect(backoffDelayMs(0, opts, () => 0.999)).toBe(99);
    expect(backoffDelayMs(2, opts, () => 0.999)).toBe(399);
    expect(backoffDelayMs(10, opts, () => 0.999)).toBe(999);
    expect(backoffDelayMs(3, opts, () => 0)).toBe(0);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfterMs('2', now)).toBe(2000);
    expect(parseRetryAfterMs('0', now)).toBe(0);
    expect(parseRetryAfterMs('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfterMs('Wed, 31 Dec 2025 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfterMs('soon', now)).toBeUndefined();
    expect(parseRetryAfterMs(undefined, now)).toBeUndefined();
  });

  it('reads X-RateLimit-Reset as float seconds, or as a Unix time when that large', () => {
    const now = 1_800_000_000_000;
    expect(parseRateLimitResetMs('0.35', now)).toBe(350);
    expect(parseRateLimitResetMs('1800000002', now)).toBe(2000);
    expect(parseRateLimitResetMs('-1', now)).toBeUndefined();
  });

  it('prefers Retry-After, and reads X-RateLimit-Reset only on 429', () => {
    expect(serverRequestedWaitMs({ 'retry-after': '1', 'x-ratelimit-reset': '5' }, 429)).toBe(1000);
    expect(serverRequestedWaitMs({ 'x-ratelimit-reset': '0.5' }, 429)).toBe(500);
    // Retry-After rounds up to whole seconds; the fractional reset says when the window really opens.
    expect(serverRequestedWaitMs({ 'retry-after': '1', 'x-ratelimit-reset': '0.3' }, 429)).toBe(300);
    expect(serverRequestedWaitMs({ 'x-ratelimit-reset': '0.5' }, 503)).toBeUndefined();
  });

  it('classifies network errors by what may have reached the service', () => {
    expect(classifyNetworkError({ code: 'ECONNREFUSED' })).toMatchObject({
      nothingSent: true,
      transient: true,
    });
    expect(classifyNetworkError({ code: 'UND_ERR_CONNECT_TIMEOUT' })).toMatchObject({
      nothingSent: true,
      timeoutPhase: 'connect',
    });
    expect(classifyNetworkError({ code: 'ECONNRESET' })).toMatchObject({
      nothingSent: false,
      connected: true,
      transient: true,
    });
    // The system's timeout also ends a connect to an address that drops packets: not "connected".
    expect(classifyNetworkError({ code: 'ETIMEDOUT' })).toMatchObject({
      nothingSent: false,
      connected: false,
    });
    expect(classifyNetworkError({ code: 'UND_ERR_HEADERS_TIMEOUT' })).toMatchObject({
      timeoutPhase: 'response',
    });
    expect(classifyNetworkError({ code: 'ENOTFOUND' })).toMatchObject({ transient: false });
    expect(
      classifyNetworkError({ code: 'DEPTH_ZERO_SELF_SIGNED_CERT', message: 'self-signed' }),
    ).toMatchObject({
      transient: false,
      tls: 'certificate',
    });
    // OpenSSL's internals (its error line, source file and line) are dropped; the reason stays.
    const plain = classifyNetworkError({
      code: 'ERR_SSL_WRONG_VERSION_NUMBER',
      message:
        '801C041A167F0000:error:0A00010B:SSL routines:ssl3_get_record:wrong version number:../deps/openssl/openssl/ssl/record/ssl3_record.c:350:\n',
    });
    expect(plain).toMatchObject({ tls: 'protocol', transient: false });
    expect(plain?.reason).toBe('TLS: the server did not answer in TLS (wrong version number)');
    // Node tries every address of `localhost` and throws an AggregateError.
    const aggregate = new AggregateError(
      [Object.assign(new Error('x'), { code: 'ECONNREFUSED' })],
      'all failed',
    );
    expect(classifyNetworkError(aggregate)).toMatchObject({ code: 'ECONNREFUSED' });
    expect(classifyNetworkError(new TypeError('bug'))).toBeUndefined();
  });
});

describe('adaptive rate limiter', () => {
  it('does nothing until a limit is announced', () => {
    const limiter = new AdaptiveRateLimiter(() => 0);
    for (let i = 0; i < 100; i++) expect(limiter.reserve()).toBe(0);
  });

  // 90% since issue 20 (an apply must sustain 90% of a service's limit); it was 66%.
  it('keeps to 90% of the announced limit with a burst of 33%', () => {
    let now = 0;
    const limiter = new AdaptiveRateLimiter(() => now);
    limiter.observe({ 'x-ratelimit-limit': '30' }); // 27/s, burst 9
    const waits = Array.from({ length: 12 }, () => limiter.reserve());
    expect(waits.slice(0, 9)).toEqual(Array(9).fill(0));
    expect(waits[9]).toBe(38); // 1 / 27 s
    expect(waits[11]).toBe(112);
    now = 10_000; // long idle: the bucket refills to the burst, not beyond
    expect(Array.from({ length: 10 }, () => limiter.reserve()).filter((w) => w === 0)).toHaveLength(9);
  });

  it('keeps to less after a 429 that came despite the throttle, and wins it back slowly', () => {
    let now = 0;
    const limiter = new AdaptiveRateLimiter(() => now);
    limiter.observe({ 'x-ratelimit-limit': '10' }); // 9/s, burst 3
    for (let i = 0; i < 3; i++) limiter.reserve();
    expect(limiter.reserve()).toBe(112); // 1 / 9 s
    now = 10_000;
    for (let i = 0; i < 3; i++) limiter.reserve();
    limiter.backOff(); // 7.2/s
    expect(limiter.reserve()).toBe(139);
    for (let i = 0; i < 5; i++) limiter.backOff(); // never below 50%: 5/s
    now = 20_000;
    for (let i = 0; i < 3; i++) limiter.reserve();
    expect(limiter.reserve()).toBe(200);
    for (let i = 0; i < 1_000; i++) limiter.recover(); // back to 9/s, not beyond
    now = 30_000;
    for (let i = 0; i < 3; i++) limiter.reserve();
    expect(limiter.reserve()).toBe(112);
  });

  it('pauses every caller until the reset when the window is used up, capped at a minute', () => {
    let now = 0;
    const limiter = new AdaptiveRateLimiter(() => now);
    expect(limiter.observe({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '0.25' })).toEqual({
      waitMs: 250,
      reason: 'X-RateLimit-Remaining 0',
    });
    expect(limiter.reserve()).toBe(250);
    expect(limiter.reserve()).toBe(250);
    now = 250;
    expect(limiter.reserve()).toBe(0);
    // A hostile reset of a day holds callers for a minute at most.
    limiter.observe({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '86400' });
    expect(limiter.reserve()).toBe(60_000);
  });

  it("stops waiting when the caller aborts, rejecting with the caller's reason", async () => {
    const limiter = new AdaptiveRateLimiter();
    limiter.observe({ 'x-ratelimit-limit': '1' }); // 0.9/s, burst 1: the second caller waits ~1.1 s
    await limiter.acquire();
    const controller = new AbortController();
    const reason = new Error('interrupted');
    setTimeout(() => controller.abort(reason), 20);
    const started = performance.now();
    await expect(limiter.acquire(controller.signal)).rejects.toBe(reason);
    expect(performance.now() - started).toBeLessThan(1000);
    await expect(limiter.acquire(controller.signal)).rejects.toBe(reason); // aborted before the call
  });

  it('ignores missing or nonsense limits', () => {
    const limiter = new AdaptiveRateLimiter(() => 0);
    limiter.observe({ 'x-ratelimit-limit': 'lots' });
    limiter.observe({ 'x-ratelimit-limit': '0' });
    expect(limiter.announcedLimit).toBeUndefined();
  });
});

describe('redaction', () => {
  it('redacts secret query parameters and keeps the rest', () => {
    expect(redactPath('/v1/acl/roles?token=abc&ns=x')).toBe('/v1/acl/roles?token=[redacted]&ns=x');
    expect(redactPath('/v1/x?TOKEN=abc')).toBe('/v1/x?TOKEN=[redacted]');
    expect(redactPath('/v1/x?access_token=abc&password=p')).toBe(
      '/v1/x?access_token=[redacted]&password=[redacted]',
    );
    expect(redactPath('/v1/x?tokens=fine')).toBe('/v1/x?tokens=fine');
    expect(redactPath('/v1/x')).toBe('/v1/x');
  });

  it('scrubs secrets from text, leaving very short ones alone', () => {
    expect(scrubSecrets('token abcd1234 and abcd1234', ['abcd1234'])).toBe('token [redacted] and [redacted]');
    expect(scrubSecrets('a b c', ['a', undefined])).toBe('a b c');
  });
});
