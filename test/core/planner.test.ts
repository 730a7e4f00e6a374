import { describe, expect, it } from 'vitest';
import { buildPlan } from '../../src/planner/planner.js';
import type { AnyResourceKind, ServerSidePlan } from '../../src/resources/contract.js';
import { desired, type MemoryKind, memoryKind, memoryStore, noContext } from './memory-kind.js';

function lookupOf(...kinds: AnyResourceKind[]) {
  return (name: string) => kinds.find((k) => k.kind === name);
}

describe('planner', () => {
  it('plans creates for absent objects and noop for matching ones', async () => {
    const store = memoryStore();
    store.objects.set('Thing/a', { value: { size: 1 }, version: 1 });
    const plan = await buildPlan(
      [desired('Thing', 'a', { size: 1 }), desired('Thing', 'b', { size: 2 })],
      lookupOf(memoryKind(store)),
      noContext,
    );
    expect(plan.changes.map((c) => [c.address, c.action])).toEqual([
      ['Thing/a', 'noop'],
      ['Thing/b', 'create'],
    ]);
    expect(plan.summary).toEqual({ create: 1, update: 0, replace: 0, delete: 0, noop: 1 });
  });

  it('masks a secret wherever the manifest copies it, in this object and in others, desired and live', async () => {
    const password = 'hunter2-secret';
    const store = memoryStore();
    // Someone pasted it into a live object as well: the plan shows neither copy.
    store.objects.set('Thing/label', { value: { note: `old ${password}` }, version: 1 });
    const kind = Object.assign(memoryKind(store), { sensitive: ['password'] });
    const plan = await buildPlan(
      [
        desired('Thing', 'login', { password, note: `pw is ${password}` }),
        desired('Thing', 'label', { note: `copy of ${password}!` }),
        // Short values are ordinary words: never masked elsewhere.
        desired('Thing', 'short', { password: 'abc', note: 'abc stays' }),
      ],
      lookupOf(kind),
      noContext,
    );
    const shown = JSON.stringify(plan.changes.map(({ desired: _d, observed: _o, ...c }) => c));
    expect(shown).not.toContain(password);
    const byName = Object.fromEntries(plan.changes.map((c) => [c.key.name, c]));
    expect(byName.login?.after).toEqual({ password: '(sensitive value)', note: 'pw is (sensitive value)' });
    expect(byName.label?.diffs).toEqual([
      expect.objectContaining({ before: 'old (sensitive value)', after: 'copy of (sensitive value)!' }),
    ]);
    expect(byName.label?.before).toEqual({ note: 'old (sensitive value)' });

    // The secret was rotated: the live value holds the old one, which the manifest no longer knows.
    // Where the new value carries a copy and the old does not, the old is masked whole.
    store.objects.set('Thing/rotated', { value: { note: 'pw Rotated-Old-99' }, version: 1 });
    const rotated = await buildPlan(
      [desired('Thing', 'login', { password }), desired('Thing', 'rotated', { note: `pw ${password}` })],
      lookupOf(kind),
      noContext,
    );
    const change = rotated.changes.find((c) => c.key.name === 'rotated');
    expect(change?.diffs).toEqual([
      expect.objectContaining({ before: '(sensitive value)', after: 'pw (sensitive value)' }),
    ]);
    expect(JSON.stringify(change?.before)).not.toContain('Rotated-Old-99');

    // Two secrets in one value, one of them rotated: the other still being on both sides does not
    // make the old value safe to show (it holds the rotated secret's old value).
    const token = 'region-token-222';
    const two = Object.assign(memoryKind(store), { sensitive: ['password', 'token'] });
    store.objects.set('Thing/conn', { value: { note: `user:Rotated-Old-99@${token}` }, version: 1 });
    store.objects.set('Thing/lines', {
      value: { note: `header\npw Rotated-Old-99 here\ntok ${token} there` },
      version: 1,
    });
    const partly = await buildPlan(
      [
        desired('Thing', 'login', { password, token }),
        desired('Thing', 'conn', { note: `user:${password}@${token}` }),
        desired('Thing', 'lines', { note: `header\npw ${password} here\ntok ${token} there` }),
      ],
      lookupOf(two),
      noContext,
    );
    const partlyShown = JSON.stringify(partly.changes.map(({ desired: _d, observed: _o, ...c }) => c));
    expect(partlyShown).not.toContain('Rotated-Old-99');
    expect(partlyShown).not.toContain(token);
    expect(partly.changes.find((c) => c.key.name === 'conn')?.diffs).toEqual([
      expect.objectContaining({
        before: '(sensitive value)',
        after: 'user:(sensitive value)@(sensitive value)',
      }),
    ]);
    expect(partly.changes.find((c) => c.key.name === 'lines')?.diffs).toEqual([
      expect.objectContaining({
        before: 'header\n(sensitive value)\ntok (sensitive value) there',
      }),
    ]);

    // A spot that now holds a second copy of a secret already there held something else before
    // (the old credential), and overlapping secrets are each found.
    store.objects.set('Thing/twice', {
      value: { note: `primary=${token} replica=Replica-Old-77` },
      version: 1,
    });
    store.objects.set('Thing/overlap', { value: { note: 'abcdef123old456' }, version: 1 });
    const more = await buildPlan(
      [
        desired('Thing', 'login', { password, token }),
        desired('Thing', 'keys', { password: 'abcdef123', token: '123xyz789' }),
        desired('Thing', 'twice', { note: `primary=${token} replica=${token}` }),
        desired('Thing', 'overlap', { note: 'abcdef123xyz789' }),
      ],
      lookupOf(two),
      noContext,
    );
    const moreShown = JSON.stringify(more.changes.map(({ desired: _d, observed: _o, ...c }) => c));
    expect(moreShown).not.toContain('Replica-Old-77');
    expect(moreShown).not.toContain('old456');

    // In text of several lines, only the old lines the new text does not keep are hidden.
    store.objects.set('Thing/script', {
      value: { note: 'set -e\nexport PW=Rotated-Old-99\nrun --fast' },
      version: 1,
    });
    const script = await buildPlan(
      [
        desired('Thing', 'login', { password }),
        desired('Thing', 'script', { note: `set -e\nexport PW=${password}\nrun --fast` }),
      ],
      lookupOf(kind),
      noContext,
    );
    const scripted = script.changes.find((c) => c.key.name === 'script');
    expect(scripted?.diffs).toEqual([
      expect.objectContaining({
        before: 'set -e\n(sensitive value)\nrun --fast',
        after: 'set -e\nexport PW=(sensitive value)\nrun --fast',
      }),
    ]);
    expect(JSON.stringify(scripted?.before)).not.toContain('Rotated-Old-99');

    // A secret of several lines (a key read from a file) copied in part, here without its last line
    // break: none of its lines shows, on either side, kept line or not.
    const key =
      '-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIJ3sG8oQk1bR2yTzq\n-----END PRIVATE KEY-----\n';
    const keyKind = Object.assign(memoryKind(store), { sensitive: ['password', 'key'] });
    store.objects.set('Thing/pem', { value: { note: `Notes\n${key.trimEnd()}` }, version: 1 });
    store.objects.set('Thing/pasted', {
      value: { note: 'see MC4CAQAwBQYDK2VwBCIEIJ3sG8oQk1bR2yTzq' },
      version: 1,
    });
    const pem = await buildPlan(
      [
        desired('Thing', 'tls', { key }),
        desired('Thing', 'pem', { note: `Notes\n${key}rotated` }),
        desired('Thing', 'pasted', { note: 'see the vault' }),
      ],
      lookupOf(keyKind),
      noContext,
    );
    const pemShown = JSON.stringify(pem.changes.map(({ desired: _d, observed: _o, ...c }) => c));
    expect(pemShown).not.toContain('MC4CAQAwBQYDK2VwBCIEIJ3sG8oQk1bR2yTzq');
    expect(pem.changes.find((c) => c.key.name === 'pem')?.diffs[0]?.before).toContain('Notes');

    // Both sides carry the copy (the secret did not change, the text around it did): readable.
    store.objects.set('Thing/label', { value: { note: `was ${password}` }, version: 2 });
    const edited = await buildPlan(
      [desired('Thing', 'login', { password }), desired('Thing', 'label', { note: `now ${password}` })],
      lookupOf(kind),
      noContext,
    );
    expect(edited.changes.find((c) => c.key.name === 'label')?.diffs).toEqual([
      expect.objectContaining({ before: 'was (sensitive value)', after: 'now (sensitive value)' }),
    ]);
    expect(byName.short?.after).toEqual({ password: '(sensitive value)', note: 'abc stays' });
    // What the applier acts on is untouched.
    expect(byName.login?.desired?.spec).toEqual({ password, note: `pw is ${password}` });

    // A service refusing the value names it in its problem: masked there too.
    const existing = memoryStore();
    existing.objects.set('Thing/login', { value: {}, version: 1 });
    const refusing = Object.assign(memoryKind(existing), { sensitive: ['password'] });
    refusing.compare = (d) => ({
      diffs: [],
      problems: [{ message: `no such thing "${String(d.spec.note)}"` }],
    });
    const refused = await buildPlan(
      [desired('Thing', 'login', { password, note: password })],
      lookupOf(refusing),
      noContext,
    );
    expect(refused.problems.map((p) => p.message)).toEqual(['no such thing "(sensitive value)"']);
  });

  it('hides only the part of a nested value that could have held a rotated secret', async () => {
    const password = 'nested-secret-4711';
    const store = memoryStore();
    const kind = Object.assign(memoryKind(store), { sensitive: ['password'] });
    // A summary of the live object (a job's: no task's env) beside the whole desired one: one secret
    // in one task's env hid every group; the rest is the same on both sides, or could hold no text.
    store.objects.set('Thing/job', {
      value: { groups: [{ name: 'web', count: 1, tasks: [{ name: 's', image: 'nginx' }] }] },
      version: 1,
    });
    // A secret moved to another key, the old key now plain; a key only the live side has.
    store.objects.set('Thing/moved', {
      value: { env: { OLD_PW: 'Moved-Old-55', MODE: 'a', LEGACY: 'Legacy-Old-11' } },
      version: 1,
    });
    // A list whose secret changed places.
    store.objects.set('Thing/list', { value: { list: ['Old-Secret-33', 'x'] }, version: 1 });
    const plan = await buildPlan(
      [
        desired('Thing', 'login', { password }),
        desired('Thing', 'job', {
          groups: [{ name: 'web', tasks: [{ name: 's', image: 'nginx', env: { PW: password } }] }],
        }),
        desired('Thing', 'moved', { env: { OLD_PW: 'plain', NEW_PW: password, MODE: 'a' } }),
        desired('Thing', 'list', { list: ['x', password] }),
      ],
      lookupOf(kind),
      noContext,
    );
    // The whole values (`before`): what their diffs show of a value not known as a secret (a
    // removed key's, a plain value's old one) is the diffs' rule, unchanged here.
    const before = JSON.stringify(plan.changes.map((c) => c.before));
    for (const old of [password, 'Moved-Old-55', 'Legacy-Old-11', 'Old-Secret-33'])
      expect(before).not.toContain(old);
    const byName = Object.fromEntries(plan.changes.map((c) => [c.key.name, c]));
    expect(byName.job?.before).toEqual({
      groups: [{ name: 'web', count: 1, tasks: [{ name: 's', image: 'nginx' }] }],
    });
    expect(byName.moved?.before).toEqual({
      env: { OLD_PW: '(sensitive value)', MODE: 'a', LEGACY: '(sensitive value)' },
    });
    expect(byName.list?.before).toEqual({ list: ['(sensitive value)', '(sensitive value)'] });
  });

  it("copies the kind's notes onto the change, noop included", async () => {
    const store = memoryStore();
    store.objects.set('Thing/a', { value: { size: 1 }, version: 1 });
    store.objects.set('Thing/b', { value: { size: 1 }, version: 1 });
    const kind = memoryKind(store);
    const compare = kind.compare.bind(kind);
    kind.compare = (d, o) => ({ ...compare(d, o), notes: [`about ${d.key.name}`] });
    const plan = await buildPlan(
      [desired('Thing', 'a', { size: 1 }), desired('Thing', 'b', { size: 2 })],
      lookupOf(kind),
      noContext,
    );
    expect(plan.changes.map((c) => [c.action, c.notes])).toEqual([
      ['noop', ['about a']],
      ['update', ['about b']],
    ]);
  });

  it('reports attribute-level diffs for updates', async () => {
    const store = memoryStore();
    store.objects.set('Thing/a', { value: { size: 1, tags: ['x', 'y'] }, version: 4 });
    const plan = await buildPlan(
      [desired('Thing', 'a', { size: 2, tags: ['y', 'z'] })],
      lookupOf(memoryKind(store)),
      noContext,
    );
    const [change] = plan.changes;
    expect(change?.action).toBe('update');
    expect(change?.observedVersion).toBe(4);
    expect(change?.diffs).toEqual([
      { path: 'size', op: 'change', before: 1, after: 2 },
      { path: 'tags', op: 'remove', before: 'x' },
      { path: 'tags', op: 'add', after: 'z' },
    ]);
  });

  it('reads several objects of one scope with a single list call instead of one read each', async () => {
    const store = memoryStore();
    const items = Array.from({ length: 25 }, (_, i) => desired('Thing', `t${i}`, { i }));
    await buildPlan(items, lookupOf(memoryKind(store)), noContext);
    expect(store.calls).toEqual(['list Thing']);
  });

  it('reads a lone object with observe, and kinds without list one by one', async () => {
    const store = memoryStore();
    await buildPlan([desired('Thing', 'only', {})], lookupOf(memoryKind(store)), noContext);
    expect(store.calls).toEqual(['observe Thing/only']);
    const store2 = memoryStore();
    await buildPlan(
      [desired('Thing', 'a', {}), desired('Thing', 'b', {})],
      lookupOf(memoryKind(store2, { withList: false })),
      noContext,
    );
    expect(store2.calls.sort()).toEqual(['observe Thing/a', 'observe Thing/b']);
  });

  it('keeps at most `parallelism` reads in flight', async () => {
    const store = memoryStore();
    store.delayMs = 15;
    const items = Array.from({ length: 12 }, (_, i) => desired('Thing', `t${i}`, {}));
    await buildPlan(items, lookupOf(memoryKind(store, { withList: false })), noContext, { parallelism: 3 });
    expect(store.calls).toHaveLength(12);
    expect(store.maxInFlight).toBe(3);
  });

  it('orders creates after the objects they depend on, of any kind', async () => {
    const store = memoryStore();
    const parent = memoryKind(store, { kind: 'Parent' });
    const child = memoryKind(store, {
      kind: 'Child',
      deps: (d) => [
        { kind: 'Parent', name: String(d.spec.parent ?? '') },
        { kind: 'Child', name: String(d.spec.needs ?? '') },
      ],
    });
    const plan = await buildPlan(
      [
        desired('Child', 'c2', { needs: 'c1', parent: 'p' }),
        desired('Child', 'c1', { parent: 'p' }),
        desired('Parent', 'p', {}),
      ],
      lookupOf(parent, child),
      noContext,
    );
    expect(plan.changes.map((c) => c.address)).toEqual(['Parent/p', 'Child/c1', 'Child/c2']);
    expect(plan.changes.find((c) => c.address === 'Child/c2')?.dependsOn.sort()).toEqual([
      'Child/c1',
      'Parent/p',
    ]);
  });

  it('refuses a dependency cycle with the objects named', async () => {
    const store = memoryStore();
    const kind = memoryKind(store, { deps: (d) => [{ kind: 'Thing', name: String(d.spec.needs) }] });
    await expect(
      buildPlan(
        [desired('Thing', 'a', { needs: 'b' }), desired('Thing', 'b', { needs: 'a' })],
        lookupOf(kind),
        noContext,
      ),
    ).rejects.toThrow(/cycle between Thing\/a, Thing\/b/);
  });

  it('prunes only owned objects the manifest dropped', async () => {
    const store = memoryStore();
    store.objects.set('Thing/kept', { value: { owner: 'converge' }, version: 1 });
    store.objects.set('Thing/dropped', { value: { owner: 'converge' }, version: 2 });
    store.objects.set('Thing/foreign', { value: { owner: 'someone' }, version: 1 });
    const plan = await buildPlan(
      [desired('Thing', 'kept', { owner: 'converge' })],
      lookupOf(memoryKind(store)),
      noContext,
      {
        prune: [{ kind: 'Thing' }],
      },
    );
    expect(plan.changes.map((c) => [c.address, c.action])).toEqual([
      ['Thing/kept', 'noop'],
      ['Thing/dropped', 'delete'],
    ]);
    expect(plan.changes[1]?.reason).toBe(
      "created by Converge (ownership marker), among the manifest's Thing objects, and no longer in the manifest",
    );
  });

  it('does not claim Converge created what it prunes by a declared scope alone', async () => {
    const store = memoryStore();
    store.objects.set('Thing/web-kept', { value: {}, version: 1 });
    store.objects.set('Thing/web-stray', { value: {}, version: 1 });
    // Like roles: the service keeps no marker, so everything in the declared scope counts.
    const kind: MemoryKind = { ...memoryKind(store), ownership: 'declared-scope', owns: () => true };
    const plan = await buildPlan([desired('Thing', 'web-kept', {})], lookupOf(kind), noContext, {
      prune: [{ kind: 'Thing', name: 'web-things', namePrefix: 'web-' }],
    });
    expect(plan.changes.filter((c) => c.action === 'delete').map((c) => [c.address, c.reason])).toEqual([
      [
        'Thing/web-stray',
        'among PruneScope "web-things" (Thing, names starting "web-") and not in the manifest',
      ],
    ]);
  });

  it('deletes dependants before what they depend on', async () => {
    const store = memoryStore();
    const parent = memoryKind(store, { kind: 'Parent' });
    const child = memoryKind(store, {
      kind: 'Child',
      deps: (d) => [{ kind: 'Parent', name: String(d.spec.parent) }],
    });
    store.objects.set('Parent/p', { value: { owner: 'converge' }, version: 1 });
    store.objects.set('Child/c', { value: { owner: 'converge', parent: 'p' }, version: 1 });
    store.objects.set('Parent/keep', { value: { owner: 'converge' }, version: 1 });
    const plan = await buildPlan(
      [desired('Parent', 'keep', { owner: 'converge' })],
      lookupOf(parent, child),
      noContext,
      {
        prune: [{ kind: 'Parent' }, { kind: 'Child', allowEmpty: true }],
      },
    );
    const deletes = plan.changes.filter((c) => c.action === 'delete').map((c) => c.address);
    expect(deletes).toEqual(['Child/c', 'Parent/p']);
    expect(plan.changes.find((c) => c.address === 'Parent/p')?.dependsOn).toEqual(['Child/c']);
  });

  it('refuses to prune a whole scope the manifest declares nothing in, unless allowed', async () => {
    const store = memoryStore();
    store.objects.set('Thing/a', { value: { owner: 'converge' }, version: 1 });
    store.objects.set('Thing/b', { value: { owner: 'converge' }, version: 1 });
    const kind = memoryKind(store);
    const refused = await buildPlan([], lookupOf(kind), noContext, {
      prune: [{ kind: 'Thing', name: 'things' }],
    });
    expect(refused.changes).toEqual([]);
    expect(refused.problems[0]?.message).toMatch(
      /PruneScope "things" \(Thing\): the manifest declares no object in it, so prune would delete all 2/,
    );
    const allowed = await buildPlan([], lookupOf(kind), noContext, {
      prune: [{ kind: 'Thing', allowEmpty: true }],
    });
    expect(allowed.summary.delete).toBe(2);
    expect(allowed.problems).toEqual([]);
  });

  it('collects plan-time problems from kinds', async () => {
    const store = memoryStore();
    const kind = memoryKind(store);
    kind.check = async (_ctx, ds) => ds.map((d) => ({ key: d.key, message: `bad ${d.key.name}` }));
    const plan = await buildPlan([desired('Thing', 'a', {})], lookupOf(kind), noContext);
    expect(plan.problems).toEqual([{ key: { kind: 'Thing', name: 'a' }, message: 'bad a' }]);
  });
});

describe('planner hooks', () => {
  it('plans a delete for an object declared absent, and nothing when it is already gone', async () => {
    const store = memoryStore();
    store.objects.set('Thing/old', { value: { v: 1 }, version: 3 });
    const plan = await buildPlan(
      [
        { ...desired('Thing', 'old', {}), ensure: 'absent' },
        { ...desired('Thing', 'never', {}), ensure: 'absent' },
      ],
      lookupOf(memoryKind(store)),
      noContext,
    );
    expect(plan.changes.map((c) => [c.address, c.action])).toEqual([
      ['Thing/never', 'noop'],
      ['Thing/old', 'delete'],
    ]);
    expect(plan.changes[1]?.reason).toBe('declared absent in the manifest');
    expect(plan.changes[1]?.desired?.ensure).toBe('absent');
  });

  it("hands the service's own plan to compare and keeps it beside the observation, for updates only", async () => {
    const store = memoryStore();
    store.objects.set('Thing/a', { value: { v: 1 }, version: 4 });
    const asked: string[] = [];
    const kind: MemoryKind & ServerSidePlan = {
      ...memoryKind(store),
      prepare: async (_ctx, d) => ({ desired: d, problems: [] }),
      serverPlan: async (_ctx, d, o) => {
        asked.push(d.key.name);
        return { against: o.version };
      },
      previewCreate: async () => ({ notes: ['would place 1 allocation'] }),
      compare: (_d, _o, plan) => ({
        diffs: [{ path: 'v', op: 'change', before: 1, after: 2, note: JSON.stringify(plan) }],
      }),
    };
    const plan = await buildPlan(
      [desired('Thing', 'a', { v: 2 }), desired('Thing', 'new', { v: 1 })],
      lookupOf(kind),
      noContext,
    );
    expect(asked).toEqual(['a']);
    const update = plan.changes.find((c) => c.address === 'Thing/a')!;
    expect(update.diffs[0]?.note).toBe('{"against":4}');
    expect(update.serverPlan).toEqual({ against: 4 });
    expect(update.observed?.live).toEqual({ v: 1 });
    expect(plan.changes.find((c) => c.address === 'Thing/new')?.notes).toEqual(['would place 1 allocation']);
  });

  it('sends the lists before the plan-time steps (local files) are done, and lists each scope once', async () => {
    const store = memoryStore();
    store.objects.set('Thing/a', { value: { v: 1 }, version: 1 });
    const kind = memoryKind(store);
    let release!: () => void;
    const resolving = new Promise<void>((r) => (release = r));
    let listedWhileResolving = false;
    kind.resolve = async (d) => {
      await resolving;
      return { desired: d, problems: [] };
    };
    const planned = buildPlan(
      [desired('Thing', 'a', { v: 1 }), desired('Thing', 'b', { v: 2 })],
      lookupOf(kind),
      noContext,
    );
    // Give the plan turns: the list goes out while every object's local inputs are still unresolved.
    for (let i = 0; i < 5; i += 1) await new Promise((r) => setImmediate(r));
    listedWhileResolving = store.calls.some((c) => c.startsWith('list'));
    release();
    const plan = await planned;
    expect(listedWhileResolving).toBe(true);
    expect(store.calls.filter((c) => c.startsWith('list'))).toHaveLength(1);
    expect(plan.changes.map((c) => [c.address, c.action])).toEqual([
      ['Thing/a', 'noop'],
      ['Thing/b', 'create'],
    ]);
  });

  it('reports a failed list where the reads are awaited, not as an unhandled rejection', async () => {
    const store = memoryStore();
    const kind = memoryKind(store);
    store.failOn.add('list Thing');
    const unhandled: unknown[] = [];
    const onUnhandled = (err: unknown) => unhandled.push(err);
    process.on('unhandledRejection', onUnhandled);
    kind.resolve = async (d) => {
      await new Promise((r) => setTimeout(r, 20));
      return { desired: d, problems: [] };
    };
    try {
      await expect(
        buildPlan(
          [desired('Thing', 'a', { v: 1 }), desired('Thing', 'b', { v: 2 })],
          lookupOf(kind),
          noContext,
        ),
      ).rejects.toThrow();
      await new Promise((r) => setTimeout(r, 10));
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
    expect(unhandled).toEqual([]);
  });

  it('resolves local inputs, reads details, and turns comparison problems into plan problems', async () => {
    const store = memoryStore();
    store.objects.set('Thing/a', { value: { v: 1 }, version: 1 });
    const kind = memoryKind(store);
    kind.resolve = async (d) => ({ desired: { ...d, local: { file: 'seen' } }, problems: [] });
    kind.readDetails = async (_ctx, d, o) => ({
      ...o,
      live: { ...(o.live as object), local: (d.local as { file: string }).file },
    });
    kind.compare = (d, o) => ({
      diffs: [],
      problems: [{ message: `live ${JSON.stringify(o.live)} for ${d.key.name}`, pointer: '/spec/v' }],
    });
    const plan = await buildPlan([desired('Thing', 'a', { v: 1 })], lookupOf(kind), noContext);
    expect(plan.problems).toEqual([
      { key: { kind: 'Thing', name: 'a' }, message: 'live {"v":1,"local":"seen"} for a' },
    ]);
  });
});

describe('the planner shares the event loop while it compares', () => {
  it('gives timers and sockets turns between objects, also when their detail reads need no request', async () => {
    const store = memoryStore();
    const names = Array.from({ length: 200 }, (_, i) => `t${i}`);
    for (const n of names) store.objects.set(`Thing/${n}`, { value: { v: 1 }, version: 1 });
    const base = memoryKind(store);
    let turns = 0;
    /** Objects compared in each turn of the event loop, by turn. */
    const comparedInTurn = new Map<number, number>();
    const kind: AnyResourceKind = {
      ...base,
      // Nothing more to read: the follow-up settles at once, in the microtask queue.
      readDetails: async (_ctx: unknown, _d: unknown, observed: unknown) => observed,
      compare: (d, o) => {
        comparedInTurn.set(turns, (comparedInTurn.get(turns) ?? 0) + 1);
        // Half a millisecond of work per object, as a large object's first comparison can take.
        const until = performance.now() + 0.5;
        while (performance.now() < until);
        return base.compare(d, o);
      },
    } as AnyResourceKind;
    const ticker = setInterval(() => (turns += 1), 0);
    try {
      const plan = await buildPlan(
        names.map((n) => desired('Thing', n, { v: 1 })),
        (k) => (k === 'Thing' ? kind : undefined),
        noContext,
      );
      expect(plan.summary.noop).toBe(200);
    } finally {
      clearInterval(ticker);
    }
    // A few milliseconds of comparing per turn (the budget is 4 ms: about 8 objects here; a slow
    // machine only fits fewer), where the follow-ups once settled back to back, a hundred and more
    // in one turn, while no timer or socket was served.
    expect(Math.max(...comparedInTurn.values())).toBeLessThanOrEqual(20);
  });
});
