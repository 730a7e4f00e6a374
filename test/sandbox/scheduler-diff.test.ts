/**
 * The scheduler's structured job diff (the real `nomad/structs/diff.go` rules) as a pure function:
 * added, unchanged and edited jobs, flattened field names, nested objects, sets, ordering and the
 * null lists Go's encoder writes; plus the plan annotations built on it and the store's dry run.
 */
import { describe, expect, it, vi } from 'vitest';
import { annotateDiff, desiredUpdates, tasksUpdated } from '../../src/sandbox/services/scheduler/annotate.js';
import {
  canonical,
  jobDiff,
  sameCanonical,
  versionDiffs,
} from '../../src/sandbox/services/scheduler/diff.js';
import { canonicalizeJob } from '../../src/sandbox/services/scheduler/canonicalize.js';
import { type AllocRecord, sameSpec, specOf } from '../../src/sandbox/services/scheduler/model.js';
import { planJob } from '../../src/sandbox/services/scheduler/plan.js';
import { SchedulerStore } from '../../src/sandbox/services/scheduler/store.js';
import { type Json, jobSpec } from './scheduler-helpers.js';

const canon = (job: Json) => canonicalizeJob(job, 'default', 'global');
const base = () => canon(jobSpec('web', { web: 2 }, { Datacenters: ['dc1'], Meta: { owner: 'team-a' } }));
/** The stored form: server fields the diff must ignore. */
const stored = (job: Json, version = 0) => ({
  ...job,
  Version: version,
  Status: 'running',
  Stable: false,
  SubmitTime: 1,
  CreateIndex: 10,
  ModifyIndex: 12 + version,
  JobModifyIndex: 10 + version,
});
const group = (job: Json, name = 'web') => (job.TaskGroups as Json[]).find((g) => g.Name === name)!;
const task = (job: Json, name = 'web') => (group(job, name).Tasks as Json[])[0]!;

describe('jobDiff', () => {
  it('a new job is Added, with every non-empty primitive field listed as Added', () => {
    const d = jobDiff(undefined, base(), true);
    expect(d.Type).toBe('Added');
    expect(d.ID).toBe('web');
    const names = d.Fields!.map((f) => f.Name);
    expect(names).toEqual([...names].sort());
    expect(names).toContain('Meta[owner]');
    expect(names).not.toContain('ID');
    expect(d.Fields!.find((f) => f.Name === 'Priority')).toEqual({
      Type: 'Added',
      Name: 'Priority',
      Old: '',
      New: '50',
      Annotations: null,
    });
    expect(d.Objects).toEqual([
      {
        Type: 'Added',
        Name: 'Datacenters',
        Fields: [{ Type: 'Added', Name: 'Datacenters', Old: '', New: 'dc1', Annotations: null }],
        Objects: null,
      },
    ]);
    const tg = d.TaskGroups![0]!;
    expect(tg).toMatchObject({ Type: 'Added', Name: 'web', Updates: null });
    expect(tg.Fields).toContainEqual({ Type: 'Added', Name: 'Count', Old: '', New: '2', Annotations: null });
    // Objects come in the real code's order (not sorted): restart policy, the migrate strategy and
    // reschedule policy every canonical service group gets, ephemeral disk, then the update strategy.
    expect(tg.Objects!.map((o) => o.Name)).toEqual([
      'RestartPolicy',
      'Migrate',
      'ReschedulePolicy',
      'EphemeralDisk',
      'Update',
    ]);
    const t = tg.Tasks![0]!;
    expect(t).toMatchObject({ Type: 'Added', Name: 'app', Annotations: null });
    expect(t.Fields).toContainEqual({
      Type: 'Added',
      Name: 'Driver',
      Old: '',
      New: 'docker',
      Annotations: null,
    });
    expect(t.Objects!.map((o) => o.Name)).toEqual(['Config', 'Resources', 'LogConfig']);
    expect(t.Objects!.find((o) => o.Name === 'Config')!.Fields).toEqual([
      { Type: 'Added', Name: 'image', Old: '', New: 'nginx:1.27', Annotations: null },
    ]);
  });

  it('an unchanged job is None with null lists, whatever the server fields say', () => {
    const d = jobDiff(stored(base(), 0), base(), true);
    expect(d).toEqual({
      Type: 'None',
      ID: 'web',
      Fields: null,
      Objects: null,
      TaskGroups: [
        {
          Type: 'None',
          Name: 'web',
          Fields: null,
          Objects: null,
          Tasks: [{ Type: 'None', Name: 'app', Fields: null, Objects: null, Annotations: null }],
          Updates: null,
        },
      ],
    });
  });

  it('an edit lists changed primitive fields only, and whole changed objects when contextual', () => {
    const next = base();
    next.Meta = { owner: 'team-b', tier: 'gold' };
    group(next).Count = 3;
    (task(next).Resources as Json).MemoryMB = 512;
    (task(next).Config as Json).args = ['-v'];
    task(next).Env = { A: '1' };
    const d = jobDiff(base(), next, true);
    expect(d.Type).toBe('Edited');
    expect(d.Fields).toEqual([
      { Type: 'Edited', Name: 'Meta[owner]', Old: 'team-a', New: 'team-b', Annotations: null },
      { Type: 'Added', Name: 'Meta[tier]', Old: '', New: 'gold', Annotations: null },
    ]);
    const tg = d.TaskGroups![0]!;
    expect(tg.Type).toBe('Edited');
    expect(tg.Fields).toEqual([{ Type: 'Edited', Name: 'Count', Old: '2', New: '3', Annotations: null }]);
    const t = tg.Tasks![0]!;
    expect(t.Fields).toEqual([{ Type: 'Added', Name: 'Env[A]', Old: '', New: '1', Annotations: null }]);
    const config = t.Objects!.find((o) => o.Name === 'Config')!;
    expect(config.Type).toBe('Edited');
    expect(config.Fields).toEqual([
      { Type: 'Added', Name: 'args[0]', Old: '', New: '-v', Annotations: null },
      { Type: 'None', Name: 'image', Old: 'nginx:1.27', New: 'nginx:1.27', Annotations: null },
    ]);
    const resources = t.Objects!.find((o) => o.Name === 'Resources')!;
    expect(resources.Fields).toContainEqual({
      Type: 'Edited',
      Name: 'MemoryMB',
      Old: '300',
      New: '512',
      Annotations: null,
    });
    expect(resources.Fields).toContainEqual({
      Type: 'None',
      Name: 'CPU',
      Old: '100',
      New: '100',
      Annotations: null,
    });
    // Not contextual: unchanged fields of a changed object are left out.
    const plain = jobDiff(base(), next, false).TaskGroups![0]!.Tasks![0]!.Objects!.find(
      (o) => o.Name === 'Resources',
    )!;
    expect(plain.Fields).toEqual([
      { Type: 'Edited', Name: 'MemoryMB', Old: '300', New: '512', Annotations: null },
    ]);
  });

  it('groups are matched by name and sorted; removed ones are Deleted', () => {
    const old = canon(jobSpec('web', { web: 1, api: 1 }));
    const next = canon(jobSpec('web', { web: 1, cache: 1 }));
    const d = jobDiff(old, next, true);
    expect(d.TaskGroups!.map((g) => [g.Name, g.Type])).toEqual([
      ['api', 'Deleted'],
      ['cache', 'Added'],
      ['web', 'None'],
    ]);
    expect(d.TaskGroups![0]!.Fields).toContainEqual({
      Type: 'Deleted',
      Name: 'Count',
      Old: '1',
      New: '',
      Annotations: null,
    });
  });

  it('constraints are a set: an edit is a Deleted and an Added object', () => {
    const c = (v: string) => ({ LTarget: '${attr.kernel.name}', RTarget: v, Operand: '=' });
    const old = canon(jobSpec('web', { web: 1 }, { Constraints: [c('linux')] }));
    const next = canon(jobSpec('web', { web: 1 }, { Constraints: [c('darwin')] }));
    const objects = jobDiff(old, next, true).Objects!;
    expect(objects.map((o) => [o.Name, o.Type])).toEqual([
      ['Constraint', 'Added'],
      ['Constraint', 'Deleted'],
    ]);
    expect(objects[0]!.Fields).toContainEqual({
      Type: 'Added',
      Name: 'RTarget',
      Old: '',
      New: 'darwin',
      Annotations: null,
    });
  });

  it("a group's StopAfterClientDisconnect and MaxClientDisconnect are diffed, as the real TaskGroup.Diff adds them", () => {
    const old = base();
    group(old).StopAfterClientDisconnect = 30_000_000_000;
    const next = structuredClone(old);
    group(next).StopAfterClientDisconnect = 45_000_000_000;
    group(next).MaxClientDisconnect = 60_000_000_000;
    const tg = jobDiff(stored(old), next, true).TaskGroups![0]!;
    expect(tg.Type).toBe('Edited');
    expect(tg.Fields).toEqual([
      { Type: 'Added', Name: 'MaxClientDisconnect', Old: '', New: '60000000000', Annotations: null },
      {
        Type: 'Edited',
        Name: 'StopAfterClientDisconnect',
        Old: '30000000000',
        New: '45000000000',
        Annotations: null,
      },
    ]);
  });

  it('templates are matched by DestPath, as the real templateDiffs: a reorder diffs no template', () => {
    const withTemplates = (dests: string[], body = (d: string) => d.toUpperCase()) => {
      const job = base();
      task(job).Templates = dests.map((d) => ({ DestPath: d, EmbeddedTmpl: body(d) }));
      return job;
    };
    const old = stored(withTemplates(['local/a', 'local/b']));
    // The task still differs (the real code's DeepEqual sees the order), with no template to show.
    const reordered = jobDiff(old, withTemplates(['local/b', 'local/a']), true);
    expect(reordered.TaskGroups![0]!.Tasks![0]!.Objects).toBeNull();
    // An edit is diffed against the template of the same destination, whatever its position.
    const edited = withTemplates(['local/b', 'local/a'], (d) => (d === 'local/b' ? 'B2' : d.toUpperCase()));
    const templates = jobDiff(old, edited, true).TaskGroups![0]!.Tasks![0]!.Objects!;
    expect(templates).toHaveLength(1);
    expect(templates[0]!.Fields).toEqual([
      { Type: 'None', Name: 'DestPath', Old: 'local/b', New: 'local/b', Annotations: null },
      { Type: 'Edited', Name: 'EmbeddedTmpl', Old: 'LOCAL/B', New: 'B2', Annotations: null },
    ]);
  });

  it('changes to fields the real diff ignores (job Update, Version) are no change', () => {
    const next = base();
    next.Update = { MaxParallel: 3 };
    expect(jobDiff(stored(base(), 4), next, true).Type).toBe('None');
  });

  it('periodic and parameterized blocks are objects with their own sets', () => {
    const old = canon(jobSpec('p', { p: 1 }, { Type: 'batch' }));
    const next = canon(
      jobSpec(
        'p',
        { p: 1 },
        {
          Type: 'batch',
          Periodic: { Enabled: true, Spec: '*/5 * * * *', SpecType: 'cron', ProhibitOverlap: true },
          ParameterizedJob: { Payload: 'optional', MetaRequired: ['a'] },
        },
      ),
    );
    const objects = jobDiff(old, next, true).Objects!;
    expect(objects.map((o) => [o.Name, o.Type])).toEqual([
      ['Periodic', 'Added'],
      ['ParameterizedJob', 'Added'],
    ]);
    expect(objects[1]!.Objects).toEqual([
      {
        Type: 'Added',
        Name: 'MetaRequired',
        Fields: [{ Type: 'Added', Name: 'MetaRequired', Old: '', New: 'a', Annotations: null }],
        Objects: null,
      },
    ]);
    expect(objects[0]!.Fields).toContainEqual({
      Type: 'Added',
      Name: 'Spec',
      Old: '',
      New: '*/5 * * * *',
      Annotations: null,
    });
  });

  it('versionDiffs compares each version with the one before it, newest first', () => {
    const v0 = stored(base(), 0);
    const v1 = stored({ ...base(), Meta: { owner: 'x' } }, 1);
    const v2 = stored({ ...base(), Meta: { owner: 'y' } }, 2);
    const diffs = versionDiffs([v2, v1, v0])!;
    expect(diffs).toHaveLength(2);
    expect(diffs[0]!.Fields).toEqual([
      { Type: 'Edited', Name: 'Meta[owner]', Old: 'x', New: 'y', Annotations: null },
    ]);
    expect(diffs[1]!.Fields).toEqual([
      { Type: 'Edited', Name: 'Meta[owner]', Old: 'team-a', New: 'x', Annotations: null },
    ]);
    expect(versionDiffs([v0])).toBeNull();
  });
});

describe('plan annotations', () => {
  const alloc = (group: string, i: number): AllocRecord => ({
    ID: `a${group}${i}`,
    Namespace: 'default',
    JobID: 'web',
    Name: `web.${group}[${i}]`,
    TaskGroup: group,
    DesiredStatus: 'run',
    ClientStatus: 'running',
    CreateIndex: 1,
    ModifyIndex: 1,
  });
  const live = [alloc('web', 0), alloc('web', 1)];

  it('tasksUpdated: config, env, meta and resources are destructive; count, kill timeout and restart are not', () => {
    const old = base();
    const edit = (fn: (j: Json) => void) => {
      const j = base();
      fn(j);
      return tasksUpdated(old, j, group(old), group(j));
    };
    expect(edit((j) => ((task(j).Config as Json).image = 'nginx:1.28'))).toBe(true);
    expect(edit((j) => (task(j).Env = { A: '1' }))).toBe(true);
    expect(edit((j) => (j.Meta = { owner: 'other' }))).toBe(true);
    expect(edit((j) => ((task(j).Resources as Json).CPU = 500))).toBe(true);
    expect(edit((j) => (group(j).Count = 9))).toBe(false);
    expect(edit((j) => (task(j).KillTimeout = 1))).toBe(false);
    expect(edit((j) => ((group(j).RestartPolicy as Json).Attempts = 9))).toBe(false);
  });

  it('desired updates: unchanged ignores, count changes place or stop, edits update in place or destructively', () => {
    expect(desiredUpdates(base(), base(), live, false).web).toMatchObject({ Ignore: 2, Place: 0, Stop: 0 });
    const up = base();
    group(up).Count = 3;
    expect(desiredUpdates(base(), up, live, true).web).toMatchObject({ Place: 1, InPlaceUpdate: 2 });
    const down = base();
    group(down).Count = 1;
    expect(desiredUpdates(base(), down, live, true).web).toMatchObject({ Stop: 1, InPlaceUpdate: 1 });
    const image = base();
    (task(image).Config as Json).image = 'nginx:1.28';
    // Without a rolling update strategy every allocation is replaced at once.
    group(image).Update = { MaxParallel: 0 };
    expect(desiredUpdates(base(), image, live, true).web).toMatchObject({ DestructiveUpdate: 2, Ignore: 0 });
    // The canonical strategy (MaxParallel 1) rolls them; canaries leave the old allocations alone.
    group(image).Update = { MaxParallel: 1 };
    expect(desiredUpdates(base(), image, live, true).web).toMatchObject({ DestructiveUpdate: 1, Ignore: 1 });
    group(image).Update = { MaxParallel: 1, Canary: 1 };
    expect(desiredUpdates(base(), image, live, true).web).toMatchObject({
      Canary: 1,
      Ignore: 2,
      DestructiveUpdate: 0,
    });
    // A removed group stops its allocations.
    const renamed = canon(jobSpec('web', { api: 1 }, { Datacenters: ['dc1'], Meta: { owner: 'team-a' } }));
    const removed = desiredUpdates(base(), renamed, live, true);
    expect(removed.web).toMatchObject({ Stop: 2 });
    expect(removed.api).toMatchObject({ Place: 1 });
  });

  it('annotateDiff adds group Updates, count and task annotations', () => {
    const next = base();
    group(next).Count = 3;
    (task(next).Config as Json).image = 'nginx:1.28';
    const d = jobDiff(base(), next, true);
    annotateDiff(d, desiredUpdates(base(), next, live, true));
    const tg = d.TaskGroups![0]!;
    // The canonical rolling update replaces one allocation at a time; the other waits (ignore).
    expect(tg.Updates).toEqual({ create: 1, 'create/destroy update': 1, ignore: 1 });
    expect(tg.Fields![0]!.Annotations).toEqual(['forces create']);
    expect(tg.Tasks![0]!.Annotations).toEqual(['forces create/destroy update']);

    const inPlace = base();
    task(inPlace).KillTimeout = 10_000_000_000;
    const d2 = jobDiff(base(), inPlace, true);
    annotateDiff(d2, desiredUpdates(base(), inPlace, live, true));
    expect(d2.TaskGroups![0]!.Tasks![0]!.Annotations).toEqual(['forces in-place update']);
    expect(d2.TaskGroups![0]!.Updates).toEqual({ 'in-place update': 2 });
  });
});

describe('SchedulerStore.dryRun', () => {
  it('lets fn see its writes, then restores everything: no index advance, no notification, no persistence mark', async () => {
    let marks = 0;
    const store = new SchedulerStore(
      new Set(['default']),
      [{ ID: 'n1', Name: 'n1', Datacenter: 'dc1', CPU: 4000, MemoryMB: 8192 }],
      () => {
        marks += 1;
      },
    );
    store.register(base(), { enforceIndex: false, jobModifyIndex: 0, preserveCounts: false });
    const before = { index: store.currentIndex, marks, snapshot: JSON.stringify(store.snapshot()) };
    const woken = store.changes.next(50, new AbortController().signal);
    const seen = store.dryRun(() => {
      const next = base();
      group(next).Count = 5;
      store.register(next, { enforceIndex: false, jobModifyIndex: 0, preserveCounts: false });
      return { index: store.currentIndex, allocs: store.allocsOf('default', 'web', false).length };
    });
    expect(seen.index).toBeGreaterThan(before.index);
    expect(seen.allocs).toBeGreaterThan(2);
    expect(store.currentIndex).toBe(before.index);
    expect(marks).toBe(before.marks);
    expect(await woken).toBe('timeout');
    expect(JSON.stringify(store.snapshot())).toBe(before.snapshot);
  });

  it('scoped to the planned job, still restores every job the register unblocked', () => {
    // Room for two default tasks: "web" takes both, so "queued" waits in a blocked evaluation.
    const store = new SchedulerStore(new Set(['default']), [
      { ID: 'n1', Name: 'n1', Datacenter: 'dc1', CPU: 250, MemoryMB: 8192 },
    ]);
    const register = (job: Json) =>
      store.register(job, { enforceIndex: false, jobModifyIndex: 0, preserveCounts: false });
    register(base());
    register(canon(jobSpec('queued', { q: 1 }, { Datacenters: ['dc1'] })));
    expect(store.evalsOf('default', 'queued').some((e) => e.Status === 'blocked')).toBe(true);
    const before = { index: store.currentIndex, snapshot: JSON.stringify(store.snapshot()) };

    const placed = store.dryRun(
      () => {
        // One "web" fewer frees room: the register's unblock places "queued" (another job's records).
        const next = base();
        group(next).Count = 1;
        register(next);
        return store.allocsOf('default', 'queued', false).length;
      },
      { namespace: 'default', id: 'web' },
    );
    expect(placed).toBe(1);
    expect(store.currentIndex).toBe(before.index);
    expect(JSON.stringify(store.snapshot())).toBe(before.snapshot);
    expect(store.allocsOf('default', 'queued', false)).toEqual([]);
  });
});

describe('string-free comparisons agree with the strings they replace', () => {
  // Values where key order, absent keys, null, undefined and numbers JSON writes alike disagree
  // between a naive deep-equal and the canonical strings.
  const variants: unknown[] = [
    undefined,
    null,
    0,
    -0,
    1,
    NaN,
    Infinity,
    '',
    '0',
    'null',
    true,
    false,
    [],
    [null],
    [undefined],
    [1, 2],
    [2, 1],
    {},
    { a: 1 },
    { a: 1, b: undefined },
    { b: undefined, a: 1 },
    { a: 1, b: null },
    { a: null },
    { a: undefined },
    { a: [null] },
    { a: [undefined] },
    { a: { b: null } },
    { a: { b: 1 }, c: [1, { d: null }] },
    { c: [1, { d: undefined }], a: { b: 1 } },
    { c: [1, {}], a: { b: 1 } },
    { a: NaN },
    { a: '1' },
  ];

  it('sameCanonical(a, b) is canonical(a) === canonical(b)', () => {
    const disagreements = variants.flatMap((a) =>
      variants.filter((b) => sameCanonical(a, b) !== (canonical(a) === canonical(b))).map((b) => [a, b]),
    );
    expect(disagreements).toEqual([]);
  });

  it('sameSpec(a, b) is specOf(a) === specOf(b), server fields ignored at the top only', () => {
    const jobs = variants.flatMap((v) => [
      { ID: 'x', Meta: v },
      { Meta: v, ID: 'x', Version: 3, Status: 'running' },
      { ID: 'x', Meta: { Version: v } },
    ]);
    const disagreements = jobs.flatMap((a) =>
      jobs.filter((b) => sameSpec(a, b) !== (specOf(a) === specOf(b))).map((b) => [a, b]),
    );
    expect(disagreements).toEqual([]);
  });
});

describe('SchedulerStore.dryRun scoped to one job', () => {
  const options = { enforceIndex: false, jobModifyIndex: 0, preserveCounts: false };
  const deploying = () =>
    canon(jobSpec('api', { api: 2 }, { Datacenters: ['dc1'], Update: { MaxParallel: 1 } }) as Json);

  it('puts back a job with a deployment and scaling events, and leaves no trace of a new job', () => {
    const store = new SchedulerStore(new Set(['default']), [
      { ID: 'n1', Name: 'n1', Datacenter: 'dc1', CPU: 4000, MemoryMB: 8192 },
    ]);
    store.register(base(), options);
    store.register(deploying(), options);
    store.recordScalingEvent('default', 'api', 'api', { Message: 'scaled', Count: 2 });
    expect(store.deploymentsOf('default', 'api', false)).toHaveLength(1);
    const before = { index: store.currentIndex, snapshot: JSON.stringify(store.snapshot()) };

    store.dryRun(
      () => {
        const next = deploying();
        group(next, 'api').Count = 3;
        (group(next, 'api').Tasks as Json[])[0]!.Config = { image: 'nginx:1.28' };
        store.register(next, options);
        store.recordScalingEvent('default', 'api', 'api', { Message: 'again', Count: 3 });
        expect(store.deploymentsOf('default', 'api', false).length).toBeGreaterThan(1);
      },
      { namespace: 'default', id: 'api' },
    );
    expect(store.currentIndex).toBe(before.index);
    expect(JSON.stringify(store.snapshot())).toBe(before.snapshot);

    store.dryRun(() => store.register(canon(jobSpec('fresh', { f: 1 }, { Datacenters: ['dc1'] })), options), {
      namespace: 'default',
      id: 'fresh',
    });
    expect(store.job('default', 'fresh')).toBeUndefined();
    expect(store.evalsOf('default', 'fresh')).toEqual([]);
    expect(store.allocsOf('default', 'fresh', true)).toEqual([]);
    expect(JSON.stringify(store.snapshot())).toBe(before.snapshot);
  });
});

describe('planJob without a dry run for an unchanged, fully placed job', () => {
  const options = { enforceIndex: false, jobModifyIndex: 0, preserveCounts: false };
  const outcomeOf = (plan: Json) => ({
    FailedTGAllocs: plan.FailedTGAllocs,
    CreatedEvals: (plan.CreatedEvals as Json[] | null)?.map((e) => [e.Status, e.TriggeredBy]) ?? null,
    Diff: plan.Diff,
    Annotations: plan.Annotations,
  });

  it('answers as the dry run does, and runs it only when something would be placed', () => {
    // Room for three default tasks: "web" (2) fits whole, "big" (2 more) only half.
    const store = new SchedulerStore(new Set(['default']), [
      { ID: 'n1', Name: 'n1', Datacenter: 'dc1', CPU: 300, MemoryMB: 8192 },
    ]);
    store.register(base(), options);
    const big = canon(jobSpec('big', { big: 2 }, { Datacenters: ['dc1'] }));
    store.register(structuredClone(big), options);
    const dryRuns = vi.spyOn(store, 'dryRun');

    const placed = planJob(store, base(), true);
    expect(dryRuns).not.toHaveBeenCalled();
    expect(outcomeOf(placed)).toEqual(outcomeOf(planJob(store, base(), true, { shortcut: false })));
    expect(placed).toMatchObject({ FailedTGAllocs: null, CreatedEvals: null });

    dryRuns.mockClear();
    const short = planJob(store, structuredClone(big), true);
    expect(dryRuns).toHaveBeenCalledTimes(1);
    expect(outcomeOf(short)).toEqual(
      outcomeOf(planJob(store, structuredClone(big), true, { shortcut: false })),
    );
    expect(Object.keys(short.FailedTGAllocs as Json)).toEqual(['big']);

    dryRuns.mockClear();
    const grown = base();
    group(grown).Count = 3;
    planJob(store, grown, true);
    expect(dryRuns).toHaveBeenCalledTimes(1);
  });
});
