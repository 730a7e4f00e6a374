/**
 * The applier's create after a lost answer, against an in-memory kind whose "service" acts and then
 * loses the answer: what the service ends up holding and how often it was asked to create.
 */
import { describe, expect, it } from 'vitest';
import { createOnce } from '../../src/applier/create-once.js';
import { ConnectionError, HttpStatusError } from '../../src/clients/http/index.js';
import type { AnyResourceKind } from '../../src/resources/contract.js';
import { desired, memoryKind, memoryStore, noContext } from './memory-kind.js';

const lost503 = () =>
  new HttpStatusError({ service: 'registry', method: 'PUT', path: '/v1/thing', status: 503 });
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
function flaky(failures: { error: () => Error; acted: boolean }[], upsert = false) {
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
      throw failure.error();
    },
  };
  return { kind, store, sends: () => sends };
}

const thing = desired('Thing', 'a', { size: 1 });
const instant = { random: () => 0 };

describe('createOnce', () => {
  it('reads back after a 503 from a service that acted, and does not send the create again', async () => {
    const { kind, store, sends } = flaky([{ error: lost503, acted: true }]);
    const observed = await createOnce(kind, noContext, thing, instant);
    expect(observed.live).toEqual({ size: 1 });
    expect(sends()).toBe(1);
    expect(store.objects.size).toBe(1);
  });

  it('sends it again when the read back finds nothing, and says so', async () => {
    const { kind, store, sends } = flaky([{ error: lost503, acted: false }]);
    const notes: string[] = [];
    await createOnce(kind, noContext, thing, { ...instant, onRetry: (m) => notes.push(m) });
    expect(sends()).toBe(2);
    expect(store.objects.size).toBe(1);
    expect(notes).toEqual([
      expect.stringMatching(/^create answer lost \(503\); not found by its key.*attempt 2 of 5/),
    ]);
  });

  it('says a short wait before sending again in ms, never as "0.0s"', async () => {
    const { kind } = flaky([{ error: lost503, acted: false }]);
    const notes: string[] = [];
    // random 0.05 of the first backoff: a wait of a few ms.
    await createOnce(kind, noContext, thing, { random: () => 0.05, onRetry: (m) => notes.push(m) });
    expect(notes[0]).toMatch(/sent again in \d+ms \(attempt 2 of 5\)/);
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
    await expect(createOnce(kind, noContext, thing, instant)).resolves.toMatchObject({ live: { size: 1 } });
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
    await createOnce(kind, noContext, thing, instant);
    expect(store.objects.get('Thing/a')?.value).toEqual({ size: 1 });
    expect(store.calls.filter((c) => c.startsWith('update'))).toHaveLength(1);
  });

  it('sends an upsert again without reading back', async () => {
    const { kind, store, sends } = flaky([{ error: lost503, acted: true }], true);
    await createOnce(kind, noContext, thing, instant);
    expect(sends()).toBe(2);
    expect(store.calls.filter((c) => c.startsWith('observe'))).toHaveLength(0);
    expect(store.objects.size).toBe(1);
  });

  it('gives up after five sends against a service that keeps losing answers', async () => {
    const { kind, sends } = flaky([0, 1, 2, 3, 4, 5].map(() => ({ error: lost503, acted: false })));
    await expect(createOnce(kind, noContext, thing, instant)).rejects.toThrow(/503/);
    expect(sends()).toBe(5);
  });

  it('rides out four lost answers in a row and creates the object once', async () => {
    const { kind, store, sends } = flaky([0, 1, 2, 3].map(() => ({ error: lost503, acted: false })));
    await createOnce(kind, noContext, thing, instant);
    expect(sends()).toBe(5);
    expect(store.objects.size).toBe(1);
  });

  it('does not send again once the run retry budget is spent (no retry storm)', async () => {
    const { kind, sends } = flaky([{ error: spentBudget, acted: false }]);
    await expect(createOnce(kind, noContext, thing, instant)).rejects.toThrow(
      /retry budget of this run is spent/,
    );
    expect(sends()).toBe(1);
  });

  it('does not retry what cannot have reached the service (refused connection) or a 4xx', async () => {
    const bad = () =>
      new HttpStatusError({ service: 'registry', method: 'PUT', path: '/v1/thing', status: 400 });
    for (const error of [refused, bad]) {
      const { kind, store, sends } = flaky([{ error, acted: false }]);
      await expect(createOnce(kind, noContext, thing, instant)).rejects.toThrow();
      expect(sends()).toBe(1);
      expect(store.calls.filter((c) => c.startsWith('observe'))).toHaveLength(0);
    }
  });
});
