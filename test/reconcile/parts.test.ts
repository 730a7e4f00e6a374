/**
 * The reconcile loop's pure parts: the backoff's growth and cap, the listen addresses a user writes,
 * the bearer check, and the log line, which carries service text and so must stay one line with no
 * secret in it whatever a hostile service sends.
 */
import { describe, expect, it } from 'vitest';
import { backoffDelayMs } from '../../src/reconcile/backoff.js';
import { parseListenAddress } from '../../src/reconcile/listen-address.js';
import { JsonLog } from '../../src/reconcile/log.js';
import { bearerMatches } from '../../src/reconcile/token.js';
import { startStatusServer } from '../../src/reconcile/server.js';
import { createServer } from 'node:net';
import { once } from 'node:events';

describe('backoff', () => {
  it('doubles from the base up to the cap, jitter taking at most half of each wait', () => {
    const at = (random: number) =>
      [1, 2, 3, 4, 5, 40].map((n) =>
        backoffDelayMs(n, { baseMs: 1_000, maxMs: 5_000, random: () => random }),
      );
    expect(at(1)).toEqual([1_000, 2_000, 4_000, 5_000, 5_000, 5_000]);
    expect(at(0)).toEqual([500, 1_000, 2_000, 2_500, 2_500, 2_500]);
  });
});

describe('--listen addresses', () => {
  it('reads HOST:PORT, [IPv6]:PORT and :PORT (every interface)', () => {
    expect(parseListenAddress('127.0.0.1:9464')).toEqual({ host: '127.0.0.1', port: 9464 });
    expect(parseListenAddress('[::1]:9464')).toEqual({ host: '::1', port: 9464 });
    expect(parseListenAddress(':9464')).toEqual({ host: '0.0.0.0', port: 9464 });
  });

  it.each(['9464', 'host:', 'host:70000', 'a b:1', '[::1:9464', 'host:12x'])('refuses %j', (text) => {
    expect(() => parseListenAddress(text)).toThrow(/--listen must be HOST:PORT/);
  });
});

describe('bearer check', () => {
  it('accepts exactly the token and nothing near it', () => {
    expect(bearerMatches('Bearer s3cret', 's3cret')).toBe(true);
    for (const header of [
      undefined,
      '',
      'Bearer',
      'Bearer ',
      'Bearer s3cre',
      'Bearer s3cret ',
      'Basic s3cret',
      's3cret',
    ])
      expect(bearerMatches(header, 's3cret'), String(header)).toBe(false);
  });
});

describe('JSON log lines', () => {
  it('keep a hostile service message on one line, bounded, without the secrets it echoes', () => {
    const out: string[] = [];
    const log = new JsonLog({ write: (t: string) => out.push(t) }, () => 0, ['tok-9f8e7d6c5b4a']);
    const hostile = `denied\n{"type":"shutdown","reason":"fake"}\u001b[2J tok-9f8e7d6c5b4a ${'x'.repeat(10_000)}`;
    log.line('change', { message: log.message(hostile) });
    expect(out).toHaveLength(1);
    expect(out[0]!.trimEnd().split('\n')).toHaveLength(1);
    const parsed = JSON.parse(out[0]!) as { type: string; message: string; ts: string };
    expect(parsed.type).toBe('change');
    expect(parsed.ts).toBe('1970-01-01T00:00:00.000Z');
    expect(parsed.message).not.toContain('tok-9f8e7d6c5b4a');
    expect(parsed.message.length).toBeLessThan(2_100);
  });
});

describe('--listen on a port another process holds', () => {
  it('says so in words, naming the address and the flag', async () => {
    const holder = createServer().listen(0, '127.0.0.1');
    await once(holder, 'listening');
    const port = (holder.address() as { port: number }).port;
    try {
      const handlers = {
        health: () => ({ healthy: true, reason: 'ok', ageSeconds: 0 }),
        metrics: async () => ({ contentType: 'text/plain', body: '' }),
        trigger: () => ({ inFlight: false }),
        token: undefined,
      };
      await expect(startStatusServer({ host: '127.0.0.1', port }, handlers)).rejects.toThrow(
        `cannot listen on 127.0.0.1:${port} (--listen): another process listens there; choose another port`,
      );
    } finally {
      holder.close();
    }
  });
});
