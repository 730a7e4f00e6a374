import { describe, expect, it } from 'vitest';
import { applyPlan } from '../../src/applier/applier.js';
import { buildPlan } from '../../src/planner/planner.js';
import type { AnyResourceKind } from '../../src/resources/contract.js';
import { desired, memoryKind, memoryStore, noContext } from './memory-kind.js';

function lookupOf(...kinds: AnyResourceKind[]) {
  return (name: string) => kinds.find((k) => k.kind === name);
}

describe('applier', () => {
  it('applies creates, updates and deletes and then plans to no changes', async () => {
    const store = memoryStore();
    store.objects.set('Thing/old', { value: { owner: 'converge' }, version: 1 });
    store.objects.set('Thing/changed', { value: { v: 1 }, version: 1 });
    const lookup = lookupOf(memoryKind(store));
    const want = [desired('Thing', 'new', { v: 1 }), desired('Thing', 'changed', { v: 2 })];
    const plan = await buildPlan(want, lookup, noContext, { prune: [{ kind: 'Thing' }] });
    const result = await applyPlan(plan, lookup, noContext);
    expect(result.counts).toEqual({ applied: 3, failed: 0, skipped: 0, stale: 0 });
    expect([...store.objects.keys()].sort()).toEqual(['Thing/changed', 'Thing/new']);
    const again = await buildPlan(want, lookup, noContext, { prune: [{ kind: 'Thing' }] });
    expect(again.summary).toMatchObject({ create: 0, update: 0, delete: 0, noop: 2 });
  });

  it('with a stop signal, finishes the change in flight and starts no other', async () => {
    const store = memoryStore();
    store.delayMs = 20;
    const lookup = lookupOf(memoryKind(store));
    const plan = await buildPlan(
      [desired('Thing', 'a', {}), desired('Thing', 'b', {}), desired('Thing', 'c', {})],
      lookup,
      noContext,
    );
    const stop = new AbortController();
    const result = await applyPlan(plan, lookup, noContext, {
      parallelism: 1,
      stop: stop.signal,
      // Stopped as the first change starts: it runs to its end, the two after it do not start.
      onEvent: (e) => e.type === 'start' && stop.abort('SIGTERM'),
    });
    expect(result.counts).toEqual({ applied: 1, failed: 0, skipped: 2, stale: 0 });
    expect(store.objects.size).toBe(1);
    expect(result.results.filter((r) => r.status === 'skipped').map((r) => r.message)).toEqual([
      'not attempted: interrupted',
      'not attempted: interrupted',
    ]);
  });

  it('counts a change waiting on one the stop left alone as left alone by the stop too', async () => {
    const store = memoryStore();
    store.delayMs = 20;
    const kind = memoryKind(store, {
      deps: (d) => (d.spec.needs ? [{ kind: 'Thing', name: String(d.spec.needs) }] : []),
    });
    const lookup = lookupOf(kind);
    // a heads the longest chain, so it starts first and b waits for the slot.
    const plan = await buildPlan(
      [
        desired('Thing', 'a', {}),
        desired('Thing', 'a2', { needs: 'a' }),
        desired('Thing', 'a3', { needs: 'a2' }),
        desired('Thing', 'b', {}),
        desired('Thing', 'c', { needs: 'b' }),
      ],
      lookup,
      noContext,
    );
    const stop = new AbortController();
    const result = await applyPlan(plan, lookup, noContext, {
      parallelism: 1,
      stop: stop.signal,
      onEvent: (e) => e.type === 'start' && stop.abort('SIGINT'),
    });
    expect(result.results.find((r) => r.address === 'Thing/a')?.status).toBe('applied');
    const skipped = result.results.filter((r) => ['Thing/b', 'Thing/c'].includes(r.address));
    // c never started because b did not: the interrupt is why, and it is marked so (one line in the
    // interrupt's summary, none of its own while the apply winds down).
    expect(skipped.map((r) => [r.address, r.message, r.interrupted])).toEqual([
      ['Thing/b', 'not attempted: interrupted', true],
      ['Thing/c', 'not attempted: interrupted', true],
    ]);
  });

  it('reports a change finished before the next one starts in its slot', async () => {
    const store = memoryStore();
    store.delayMs = 5;
    const lookup = lookupOf(memoryKind(store));
    const plan = await buildPlan([desired('Thing', 'a', {}), desired('Thing', 'b', {})], lookup, noContext);
    const events: string[] = [];
    await applyPlan(plan, lookup, noContext, {
      parallelism: 1,
      onEvent: (e) => events.push(`${e.type} ${e.change.address}`),
    });
    // At parallelism 1 no two changes may show as under way at once.
    expect(events).toEqual(['start Thing/a', 'finish Thing/a', 'start Thing/b', 'finish Thing/b']);
  });

  it('runs dependants only after what they need, and skips them when it fails', async () => {
    const store = memoryStore();
    store.failOn.add('create Thing/base');
    const kind = memoryKind(store, {
      deps: (d) => (d.spec.needs ? [{ kind: 'Thing', name: String(d.spec.needs) }] : []),
    });
    const lookup = lookupOf(kind);
    const plan = await buildPlan(
      [
        desired('Thing', 'base', {}),
        desired('Thing', 'child', { needs: 'base' }),
        desired('Thing', 'grandchild', { needs: 'child' }),
        desired('Thing', 'independent', {}),
      ],
      lookup,
      noContext,
    );
    const result = await applyPlan(plan, lookup, noContext);
    const byAddress = Object.fromEntries(result.results.map((r) => [r.address, r]));
    expect(byAddress['Thing/base']?.status).toBe('failed');
    expect(byAddress['Thing/base']?.message).toMatch(/injected failure/);
    expect(byAddress['Thing/child']?.status).toBe('skipped');
    expect(byAddress['Thing/child']?.message).toMatch(/Thing\/base failed/);
    expect(byAddress['Thing/grandchild']?.status).toBe('skipped');
    expect(byAddress['Thing/independent']?.status).toBe('applied');
    expect(store.calls).not.toContain('create Thing/child');
  });

  it('executes in dependency order', async () => {
    const store = memoryStore();
    store.delayMs = 5;
    const kind = memoryKind(store, {
      deps: (d) => (d.spec.needs ? [{ kind: 'Thing', name: String(d.spec.needs) }] : []),
    });
    const lookup = lookupOf(kind);
    const plan = await buildPlan(
      [
        desired('Thing', 'c', { needs: 'b' }),
        desired('Thing', 'b', { needs: 'a' }),
        desired('Thing', 'a', {}),
      ],
      lookup,
      noContext,
    );
    store.calls.length = 0;
    await applyPlan(plan, lookup, noContext);
    expect(store.calls).toEqual(['create Thing/a', 'create Thing/b', 'create Thing/c']);
  });

  it('starts what others wait for first, and reports every change in plan order', async () => {
    const store = memoryStore();
    const kind = memoryKind(store, {
      deps: (d) => (d.spec.needs ? [{ kind: 'Thing', name: String(d.spec.needs) }] : []),
    });
    const lookup = lookupOf(kind);
    // A group and its user after two independent objects: first come, first served, the group
    // waited for both and its user ran last, alone in the run's slots.
    const plan = await buildPlan(
      [
        desired('Thing', 'role1', {}),
        desired('Thing', 'role2', {}),
        desired('Thing', 'group', {}),
        desired('Thing', 'user', { needs: 'group' }),
      ],
      lookup,
      noContext,
    );
    const started: string[] = [];
    const result = await applyPlan(plan, lookup, noContext, {
      parallelism: 1,
      onEvent: (e) => e.type === 'start' && started.push(e.change.address),
    });
    expect(started).toEqual(['Thing/group', 'Thing/role1', 'Thing/role2', 'Thing/user']);
    expect(result.results.map((r) => r.address)).toEqual(plan.changes.map((c) => c.address));
    expect(result.counts.applied).toBe(4);
  });

  it('keeps at most `parallelism` changes in flight', async () => {
    const store = memoryStore();
    const lookup = lookupOf(memoryKind(store));
    const plan = await buildPlan(
      Array.from({ length: 10 }, (_, i) => desired('Thing', `t${i}`, {})),
      lookup,
      noContext,
    );
    store.delayMs = 15;
    store.maxInFlight = 0;
    const result = await applyPlan(plan, lookup, noContext, { parallelism: 4 });
    expect(result.counts.applied).toBe(10);
    expect(store.maxInFlight).toBe(4);
  });

  it('times each change from its own start, not from when it was queued', async () => {
    const store = memoryStore();
    const lookup = lookupOf(memoryKind(store));
    const plan = await buildPlan(
      Array.from({ length: 5 }, (_, i) => desired('Thing', `t${i}`, {})),
      lookup,
      noContext,
    );
    store.delayMs = 50;
    const finished: number[] = [];
    const result = await applyPlan(plan, lookup, noContext, {
      parallelism: 1,
      onEvent: (e) => {
        if (e.result) finished.push(e.result.durationMs);
      },
    });
    expect(result.counts.applied).toBe(5);
    // One at a time, the fifth waits about 200 ms for a slot; that wait is not its own time.
    // Bounds are loose (a slow machine may stretch one sleep) but far below the queued total.
    for (const r of result.results) {
      expect(r.durationMs).toBeGreaterThanOrEqual(40);
      expect(r.durationMs).toBeLessThan(150);
    }
    expect(finished).toEqual(result.results.map((r) => r.durationMs));
  });

  it('refuses, with checkStale, objects that moved since the plan', async () => {
    const store = memoryStore();
    store.objects.set('Thing/a', { value: { v: 1 }, version: 1 });
    const lookup = lookupOf(memoryKind(store));
    const plan = await buildPlan(
      [desired('Thing', 'a', { v: 2 }), desired('Thing', 'b', {})],
      lookup,
      noContext,
    );
    // Someone else changes a and creates b between plan and apply.
    store.objects.set('Thing/a', { value: { v: 3 }, version: 2 });
    store.objects.set('Thing/b', { value: {}, version: 1 });
    const result = await applyPlan(plan, lookup, noContext, { checkStale: true });
    expect(result.counts).toEqual({ applied: 0, failed: 0, skipped: 0, stale: 2 });
    expect(result.results[0]?.message).toMatch(/changed since the plan \(version 1 → 2\)/);
    expect(store.objects.get('Thing/a')?.value).toEqual({ v: 3 });
  });

  it('says a dependant was skipped because what it needs went stale, not failed', async () => {
    const store = memoryStore();
    store.objects.set('Thing/base', { value: { v: 1 }, version: 1 });
    const lookup = lookupOf(
      memoryKind(store, {
        deps: (d) => (d.spec.needs ? [{ kind: 'Thing', name: String(d.spec.needs) }] : []),
      }),
    );
    const plan = await buildPlan(
      [desired('Thing', 'base', { v: 2 }), desired('Thing', 'child', { needs: 'base' })],
      lookup,
      noContext,
    );
    store.objects.set('Thing/base', { value: { v: 3 }, version: 2 });
    const result = await applyPlan(plan, lookup, noContext, { checkStale: true });
    const child = result.results.find((r) => r.address === 'Thing/child');
    expect(child).toMatchObject({ status: 'skipped', planStale: true });
    expect(child?.message).toBe(
      'not attempted: the saved plan is stale (1 of its objects changed since it was saved)',
    );
  });

  it("masks a copy of another object's secret in a change's error, as the plan does", async () => {
    const password = 'hunter2-secret';
    const kind = Object.assign(memoryKind(memoryStore()), { sensitive: ['password'] });
    kind.create = async (_ctx, d) => {
      throw new Error(`the service refuses note "${String(d.spec.note)}"`);
    };
    const lookup = lookupOf(kind);
    const plan = await buildPlan(
      [desired('Thing', 'login', { password }), desired('Thing', 'label', { note: `pw ${password}` })],
      lookup,
      noContext,
    );
    const result = await applyPlan(plan, lookup, noContext);
    const label = result.results.find((r) => r.address === 'Thing/label');
    expect(label?.message).toBe('the service refuses note "pw (sensitive value)"');
  });

  it('scrubs a sensitive value a service echoes back JSON-escaped in an error, as it scrubs a secret', async () => {
    const password = 'my"pass\\word9';
    const kind = memoryKind(memoryStore());
    kind.create = async (_ctx, d) => {
      throw new Error(`invalid job: ${JSON.stringify({ Env: d.spec.env })}`);
    };
    const lookup = lookupOf(kind);
    const plan = await buildPlan(
      [desired('Thing', 'job', { env: { DB_PASSWORD: password } })],
      lookup,
      noContext,
      {
        sensitiveValues: [password],
      },
    );
    const result = await applyPlan(plan, lookup, noContext);
    const message = result.results[0]?.message ?? '';
    expect(message).toContain('invalid job');
    expect(message).not.toContain('pass');
  });

  it('applies a saved plan not at all when one of its objects cannot be read again', async () => {
    const store = memoryStore();
    store.objects.set('Thing/a', { value: { v: 1 }, version: 1 });
    const kind = memoryKind(store);
    const lookup = lookupOf(kind);
    const plan = await buildPlan(
      [desired('Thing', 'a', { v: 2 }), desired('Thing', 'c', {})],
      lookup,
      noContext,
    );
    const observe = kind.observe.bind(kind);
    kind.observe = async (ctx, key) => {
      if (key.name === 'a') throw new Error('registry: GET /v1/acl/role/name/a → 403 Permission denied');
      return observe(ctx, key);
    };
    const result = await applyPlan(plan, lookup, noContext, { checkStale: true });
    expect(result.results.find((r) => r.address === 'Thing/a')).toMatchObject({
      status: 'failed',
      message: expect.stringContaining('could not be read again before the plan was applied: registry: GET'),
    });
    expect(result.results.find((r) => r.address === 'Thing/c')).toMatchObject({
      status: 'skipped',
      planStale: true,
      message: "not attempted: 1 of the saved plan's objects could not be read again",
    });
    expect(store.objects.has('Thing/c')).toBe(false);
  });

  it('applies a stale saved plan not at all: every object is checked before anything is sent', async () => {
    const store = memoryStore();
    store.objects.set('Thing/a', { value: { v: 1 }, version: 1 });
    const lookup = lookupOf(memoryKind(store));
    const plan = await buildPlan(
      [desired('Thing', 'a', { v: 2 }), desired('Thing', 'c', {})],
      lookup,
      noContext,
    );
    store.objects.set('Thing/a', { value: { v: 3 }, version: 2 });
    const events: string[] = [];
    await applyPlan(plan, lookup, noContext, {
      checkStale: true,
      onEvent: (e) => events.push(`${e.type} ${e.change.address}${e.result ? ` ${e.result.status}` : ''}`),
    });
    expect(events.filter((e) => e.includes('Thing/a'))).toEqual(['finish Thing/a stale']);
    // The other change was reviewed as part of the same plan: it is held back, not applied alone.
    expect(events.filter((e) => e.includes('Thing/c'))).toEqual(['finish Thing/c skipped']);
    expect(store.objects.has('Thing/c')).toBe(false);
    expect(store.objects.get('Thing/a')?.value).toEqual({ v: 3 });
  });

  it('reports progress events for every change', async () => {
    const store = memoryStore();
    const lookup = lookupOf(memoryKind(store));
    const plan = await buildPlan([desired('Thing', 'a', {}), desired('Thing', 'b', {})], lookup, noContext);
    const events: string[] = [];
    await applyPlan(plan, lookup, noContext, {
      onEvent: (e) => events.push(`${e.type} ${e.change.address}`),
    });
    expect(events.filter((e) => e.startsWith('finish')).sort()).toEqual(['finish Thing/a', 'finish Thing/b']);
    expect(events.filter((e) => e.startsWith('start'))).toHaveLength(2);
  });
});

describe('applier after an interrupt', () => {
  it('starts no further change once the signal is aborted', async () => {
    const store = memoryStore();
    const lookup = (name: string) => (name === 'Thing' ? kind : undefined);
    const kind = memoryKind(store);
    const plan = await buildPlan(
      Array.from({ length: 6 }, (_, i) => desired('Thing', `t${i}`, {})),
      lookup,
      noContext,
    );
    const controller = new AbortController();
    store.delayMs = 10;
    const ctx = { ...noContext, signal: controller.signal };
    const running = applyPlan(plan, lookup, ctx, {
      parallelism: 2,
      onEvent: (e) => {
        if (e.type === 'start' && e.change.address === 'Thing/t1') controller.abort();
      },
    });
    const result = await running;
    expect(result.counts.applied).toBe(2);
    expect(result.counts.skipped).toBe(4);
    expect(result.results.find((r) => r.address === 'Thing/t5')?.message).toBe('not attempted: interrupted');
  });
});

describe('applier deletions', () => {
  it('deletes only after every create and update succeeded', async () => {
    const store = memoryStore();
    store.objects.set('Thing/old', { value: { owner: 'converge' }, version: 1 });
    const lookup = (name: string) => (name === 'Thing' ? kind : undefined);
    const kind = memoryKind(store);
    const plan = await buildPlan([desired('Thing', 'new', { owner: 'converge' })], lookup, noContext, {
      prune: [{ kind: 'Thing' }],
    });
    store.delayMs = 10;
    store.calls.length = 0;
    await applyPlan(plan, lookup, noContext);
    expect(store.calls).toEqual(['create Thing/new', 'delete Thing/old']);
  });

  it('skips deletions when a create or update failed', async () => {
    const store = memoryStore();
    store.objects.set('Thing/old', { value: { owner: 'converge' }, version: 1 });
    store.failOn.add('create Thing/new');
    const lookup = (name: string) => (name === 'Thing' ? kind : undefined);
    const kind = memoryKind(store);
    const plan = await buildPlan([desired('Thing', 'new', { owner: 'converge' })], lookup, noContext, {
      prune: [{ kind: 'Thing' }],
    });
    const result = await applyPlan(plan, lookup, noContext);
    expect(result.counts).toEqual({ applied: 0, failed: 1, skipped: 1, stale: 0 });
    expect(result.results[1]?.message).toMatch(/deletions run only after every other change succeeded/);
    expect(store.objects.has('Thing/old')).toBe(true);
  });
});
