/**
 * The applier's create after a lost answer, against an in-memory kind whose "service" acts and then
 * loses the answer: what the service ends up holding and how often it was asked to create. The
 * errors carry what the HTTP layer decides (whether a resend is granted); that layer's own part is
 * in create-once-http.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { createOnce } from '../../src/applier/create-once.js';
import { claimCreateRequest } from '../../src/clients/http/create-sends.js';
import { requestScopeOf } from '../../src/applier/scoped-context.js';
import { ConnectionError, HttpStatusError } from '../../src/clients/http/index.js';
import type { AnyResourceKind } from '../../src/resources/contract.js';
import { desired, memoryKind, memoryStore, noContext } from './memory-kind.js';

/** A lost answer for which the HTTP layer granted another send (attempt `attempt` of 9). */
const lost503 = (attempt = 2, delayMs = 0) =>
  new HttpStatusError({
    service: 'registry',
    method: 'PUT',
    path: '/v1/thing',
    status: 503,
    resend: { attempt, maxAttempts: 9, delayMs },
  });
/** A lost answer for which the HTTP layer granted nothing more (its limit reached). */
const lastLost503 = () =>
  new HttpStatusError({ service: 'registry', method: 'PUT', path: '/v1/thing', status: 503, attempts: 9 });
const spentBudget = () =>
  new HttpStatusError({
    service: 'registry',
    method: 'PUT',
    path: '/v1/thing',
    status: 503,
    budgetSpent: { service: 'registry', retries: 12, requests: 20 },
  });
const refused = () =>
  new ConnectionError({
    service: 'registry',
    method: 'PUT',
    path: '/v1/thing',
    address: 'http://127.0.0.1:1',
    code: 'ECONNREFUSED',
    reason: 'connection refused',
  });

/**
 * The memory kind, whose create fails with `failures` in turn: `acted` says whether the service
 * carried the create out before the answer was lost.
 */
function flaky(failures: { error: (attempt: number) => Error; acted: boolean }[], upsert = false) {
  const store = memoryStore();
  const base = memoryKind(store);
  let sends = 0;
  const kind: AnyResourceKind = {
    ...base,
    ...(upsert ? { createIsUpsert: true } : {}),
    async create(ctx, d) {
      sends++;
      const failure = failures.shift();
      if (!failure) return base.create(ctx, d);
      if (failure.acted) await base.create(ctx, d);
      throw failure.error(sends + 1);
    },
  };
  return { kind, store, sends: () => sends };
}

const thing = desired('Thing', 'a', { size: 1 });

describe('createOnce', () => {
  it('names a later step whose answer was lost, not the create that landed', async () => {
    const store = memoryStore();
    const base = memoryKind(store);
    const kind: AnyResourceKind = {
      ...base,
      async create(ctx, d) {
        // As the HTTP layer does: the send's first write is the create's own request.
        claimCreateRequest(requestScopeOf(ctx), 'PUT', '/v1/thing');
        await base.create(ctx, d);
        // The next step (a lock, say) loses its answer for good.
        throw new HttpStatusError({
          service: 'registry',
          method: 'POST',
          path: '/v1/thing/lock',
          status: 503,
        });
      },
    };
    const notes: string[] = [];
    await createOnce(kind, noContext, thing, { onRetry: (m) => notes.push(m) });
    expect(notes).toEqual([
      'the answer to a later step of the create was lost (POST /v1/thing/lock: 503); found by its key, so it is not created again (any step it left undone is done now)',
    ]);
  });

  it('reads back after a 503 from a service that acted, and does not send the create again', async () => {
    const { kind, store, sends } = flaky([{ error: lost503, acted: true }]);
    const notes: string[] = [];
    const observed = await createOnce(kind, noContext, thing, { onRetry: (m) => notes.push(m) });
    expect(observed.live).toEqual({ size: 1 });
    expect(sends()).toBe(1);
    expect(store.objects.size).toBe(1);
    // The read back is explained in the output: the object was there, nothing is sent again.
    expect(notes).toEqual([
      'create answer lost (503); found by its key, so it is not created again (any step it left undone is done now)',
    ]);
  });

  it('sends it again when the read back finds nothing, and says so', async () => {
    const { kind, store, sends } = flaky([{ error: lost503, acted: false }]);
    const notes: string[] = [];
    await createOnce(kind, noContext, thing, { onRetry: (m) => notes.push(m) });
    expect(sends()).toBe(2);
    expect(store.objects.size).toBe(1);
    expect(notes).toEqual([
      expect.stringMatching(/^create answer lost \(503\); not found by its key.*attempt 2 of 9/),
    ]);
  });

  it("names a dropped connection in words, not by undici's code", async () => {
    const reset = (attempt: number) =>
      new ConnectionError({
        service: 'registry',
        method: 'PUT',
        path: '/v1/thing',
        address: 'http://127.0.0.1:1',
        code: 'UND_ERR_SOCKET',
        reason: 'connection closed by the service',
        reasonDetail: 'UND_ERR_SOCKET',
        reached: true,
        resend: { attempt, maxAttempts: 9, delayMs: 0 },
      });
    const { kind } = flaky([{ error: reset, acted: false }]);
    const notes: string[] = [];
    await createOnce(kind, noContext, thing, { onRetry: (m) => notes.push(m) });
    expect(notes).toEqual([
      expect.stringMatching(/^create answer lost \(connection closed by the service\); not found by its key/),
    ]);
  });

  it('says a short wait before sending again in ms, never as "0.0s"', async () => {
    // The HTTP layer's backoff for the resend: a few ms.
    const { kind } = flaky([{ error: (n) => lost503(n, 7), acted: false }]);
    const notes: string[] = [];
    await createOnce(kind, noContext, thing, { onRetry: (m) => notes.push(m) });
    expect(notes[0]).toMatch(/sent again in 7ms \(attempt 2 of 9\)/);
    expect(notes[0]).not.toContain('0.0s');
  });

  it('accepts "already exists" after a lost answer when the object turns out to be there', async () => {
    // The first send acted late: the read back missed it, the second send is refused.
    const conflict = () =>
      new HttpStatusError({ service: 'registry', method: 'PUT', path: '/v1/thing', status: 422 });
    const { kind, store } = flaky([
      { error: lost503, acted: false },
      { error: conflict, acted: true },
    ]);
    const notes: string[] = [];
    await expect(
      createOnce(kind, noContext, thing, { onRetry: (m) => notes.push(m) }),
    ).resolves.toMatchObject({ live: { size: 1 } });
    // The 422 answered the resend: it is named so, not as a second lost answer.
    expect(notes.at(-1)).toBe(
      'the resend was answered 422; found by its key, so it is not created again (any step it left undone is done now)',
    );
    expect(store.objects.size).toBe(1);
  });

  it('brings an object a lost create left half-made to the manifest', async () => {
    const store = memoryStore();
    const base = memoryKind(store);
    const kind: AnyResourceKind = {
      ...base,
      async create(ctx, d) {
        // The first step lands with a default; the step that would set the rest loses its answer.
        await base.create(ctx, { ...d, spec: { size: 0 } });
        throw lost503();
      },
    };
    await createOnce(kind, noContext, thing);
    expect(store.objects.get('Thing/a')?.value).toEqual({ size: 1 });
    expect(store.calls.filter((c) => c.startsWith('update'))).toHaveLength(1);
  });

  // Was: an upsert was sent again by this loop after a lost answer, on top of the HTTP layer's own
  // retries of its idempotent write (up to 25 sends). Now the HTTP layer's retries are the only ones.
  it('does not send an upsert again: the HTTP layer already retried its write by name', async () => {
    const { kind, store, sends } = flaky([{ error: lost503, acted: false }], true);
    await expect(createOnce(kind, noContext, thing)).rejects.toThrow(/503/);
    expect(sends()).toBe(1);
    // Read back once, found nothing: the failure stands.
    expect(store.calls.filter((c) => c.startsWith('observe'))).toHaveLength(1);
  });

  // Was: a directory group whose last send landed with its answer lost (the retry budget spent) was
  // reported failed, never recorded as Converge's, and so beyond --prune's reach.
  it('reads an upsert back once when its answer is lost for good, and takes a write that landed', async () => {
    const { kind, store, sends } = flaky([{ error: spentBudget, acted: true }], true);
    const notes: string[] = [];
    const created = await createOnce(kind, noContext, thing, { onRetry: (m) => notes.push(m) });
    expect(created.key).toEqual(thing.key);
    expect(sends()).toBe(1);
    expect(notes).toEqual([expect.stringMatching(/found by its key, so it is not created again/)]);
    expect(store.calls.filter((c) => c.startsWith('observe'))).toHaveLength(1);
  });

  it('does not read an upsert back after a refusal that cannot have landed (a 4xx)', async () => {
    const refusedWrite = () =>
      new HttpStatusError({ service: 'registry', method: 'PUT', path: '/v1/thing', status: 400 });
    const { kind, store } = flaky([{ error: refusedWrite, acted: false }], true);
    await expect(createOnce(kind, noContext, thing)).rejects.toThrow(/400/);
    expect(store.calls.filter((c) => c.startsWith('observe'))).toHaveLength(0);
  });

  it('gives up when the HTTP layer grants no further send, reading back one last time', async () => {
    const { kind, store, sends } = flaky([
      ...[0, 1, 2].map(() => ({ error: lost503, acted: false })),
      { error: lastLost503, acted: false },
      { error: lost503, acted: false },
    ]);
    await expect(createOnce(kind, noContext, thing)).rejects.toThrow(/503/);
    expect(sends()).toBe(4);
    expect(store.calls.filter((c) => c.startsWith('observe'))).toHaveLength(4);
  });

  it('rides out eight lost answers in a row (9 attempts) and creates the object once', async () => {
    const { kind, store, sends } = flaky(
      [0, 1, 2, 3, 4, 5, 6, 7].map(() => ({ error: lost503, acted: false })),
    );
    const notes: string[] = [];
    await createOnce(kind, noContext, thing, { onRetry: (m) => notes.push(m) });
    expect(sends()).toBe(9);
    expect(store.objects.size).toBe(1);
    expect(notes.at(-1)).toMatch(/\(attempt 9 of 9\)$/);
  });

  it('does not follow a grant past its own limit (the loop cannot run without end)', async () => {
    const { kind, sends } = flaky([0, 1, 2].map(() => ({ error: () => lost503(10), acted: false })));
    await expect(createOnce(kind, noContext, thing)).rejects.toThrow(/503/);
    expect(sends()).toBe(1);
  });

  it('does not send again once the run retry budget is spent (no retry storm)', async () => {
    const { kind, sends } = flaky([{ error: spentBudget, acted: false }]);
    await expect(createOnce(kind, noContext, thing)).rejects.toThrow(/retry budget of this run is spent/);
    expect(sends()).toBe(1);
  });

  it('does not retry what cannot have reached the service (refused connection) or a 4xx', async () => {
    const bad = () =>
      new HttpStatusError({ service: 'registry', method: 'PUT', path: '/v1/thing', status: 400 });
    for (const error of [refused, bad]) {
      const { kind, store, sends } = flaky([{ error, acted: false }]);
      await expect(createOnce(kind, noContext, thing)).rejects.toThrow();
      expect(sends()).toBe(1);
      expect(store.calls.filter((c) => c.startsWith('observe'))).toHaveLength(0);
    }
  });
});
