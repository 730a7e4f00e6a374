/**
 * Many requests in flight on one long-lived signal (a reconcile cycle's, the run's Ctrl-C) put one
 * abort listener on it between them, not one per request, attempt or retry wait: with one each, a
 * loop against a failing service printed Node's MaxListenersExceededWarning on every cycle.
 */
import { getEventListeners } from 'node:events';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { followAbort } from '../../src/clients/http/abort-fanout.js';
import { HttpClient } from '../../src/clients/http/index.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';

const listeners = (signal: AbortSignal) => getEventListeners(signal, 'abort').length;

/** The process warnings emitted while the test runs (emitWarning delivers them on a later tick). */
function collectWarnings(): { names: () => string[]; stop: () => void } {
  const seen: string[] = [];
  const onWarning = (warning: Error) => seen.push(`${warning.name}: ${warning.message}`);
  process.on('warning', onWarning);
  return { names: () => seen, stop: () => process.off('warning', onWarning) };
}

describe('abort listeners on a shared signal', () => {
  let sandbox: RunningSandbox;
  beforeEach(async () => {
    // The faults of the user's trial: 503s and dropped connections, so requests retry and wait.
    sandbox = await startSandbox({
      faults: { failRate: 0.2, resetRate: 0.15, latencyMs: 5, jitterMs: 5, seed: 7 },
    });
  });
  afterEach(() => sandbox.close());

  it('keeps one listener for all requests in flight and none once they end, with no warning', async () => {
    const warnings = collectWarnings();
    const run = new AbortController();
    const before = listeners(run.signal);
    let retries = 0;
    let most = 0;
    const client = new HttpClient({
      service: 'registry',
      baseUrl: sandbox.url,
      token: sandbox.rootToken,
      signal: run.signal,
      retry: { minDelayMs: 1, maxDelayMs: 5 },
      onRetry: () => retries++,
      // Sampled as each attempt starts: when the most requests are in flight and waiting.
      onRequest: () => (most = Math.max(most, listeners(run.signal))),
    });
    try {
      const reads = Array.from({ length: 30 }, (_, i) =>
        // Some run out of retries (the host's budget): what matters is that each ends.
        client.request({ method: 'GET', path: `/v1/acl/role/name/r${i}` }).catch(() => undefined),
      );
      await Promise.all(reads);
      await new Promise((resolve) => setImmediate(resolve));
      expect(retries).toBeGreaterThan(0);
      expect(warnings.names().filter((w) => w.startsWith('MaxListenersExceededWarning'))).toEqual([]);
      expect(most).toBe(before + 1);
      expect(listeners(run.signal)).toBe(before);
    } finally {
      warnings.stop();
    }
  });

  it("still aborts every request in flight with the shared signal's reason", async () => {
    const run = new AbortController();
    const client = new HttpClient({
      service: 'registry',
      baseUrl: sandbox.url,
      token: sandbox.rootToken,
      signal: run.signal,
      retry: { minDelayMs: 5_000, maxDelayMs: 5_000 },
    });
    const reason = new Error('SIGTERM');
    const reads = Array.from({ length: 12 }, () =>
      client.request({ method: 'GET', path: '/v1/acl/roles' }).then(
        () => 'answered',
        (err: unknown) => err,
      ),
    );
    run.abort(reason);
    for (const outcome of await Promise.all(reads)) expect(outcome).toBe(reason);
    expect(listeners(run.signal)).toBe(0);
  });
});

describe('followAbort', () => {
  it('aborts each follower once with the reason, and lets go of the signal when the last leaves', () => {
    const shared = new AbortController();
    const a = new AbortController();
    const b = new AbortController();
    const leaveA = followAbort(shared.signal, a);
    const leaveB = followAbort(shared.signal, b);
    expect(listeners(shared.signal)).toBe(1);
    leaveA();
    expect(listeners(shared.signal)).toBe(1);
    shared.abort('stop');
    expect([a.signal.reason, b.signal.reason]).toEqual([undefined, 'stop']);
    leaveB();
    expect(listeners(shared.signal)).toBe(0);
  });

  it('aborts a follower of a signal that has already aborted at once, adding no listener', () => {
    const shared = new AbortController();
    shared.abort('gone');
    const follower = new AbortController();
    followAbort(shared.signal, follower)();
    expect(follower.signal.reason).toBe('gone');
    expect(listeners(shared.signal)).toBe(0);
  });

  it('listens again for followers that come after the last one left', () => {
    const shared = new AbortController();
    followAbort(shared.signal, new AbortController())();
    const late = new AbortController();
    const leave = followAbort(shared.signal, late);
    expect(listeners(shared.signal)).toBe(1);
    shared.abort('late');
    expect(late.signal.reason).toBe('late');
    leave();
  });
});
