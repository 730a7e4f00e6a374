/**
 * A job plan (`POST /v1/job/:id/plan`): what registering the job would do, without doing it. As the
 * real `Job.Plan`, the scheduler runs on a throw-away copy of the state (`SchedulerStore.dryRun`), so
 * placement failures and blocked evaluations come from the same placement logic as a real register;
 * the desired changes per group and the diff's annotations follow the real reconciler and
 * `scheduler/annotate.go` (see annotate.ts).
 */
import { annotateDiff, desiredUpdates } from './annotate.js';
import { jobDiff } from './diff.js';
import { groupSpec } from './allocations.js';
import { type AllocRecord, type Json, sameSpec, TERMINAL_CLIENT } from './model.js';
import { nextPeriodicLaunch } from './periodic.js';
import type { SchedulerStore } from './store.js';

/**
 * The real `JobPlanResponse` for a canonical, valid job: `{Annotations, FailedTGAllocs,
 * JobModifyIndex, CreatedEvals, Diff, NextPeriodicLaunch, Warnings, Index}`. `JobModifyIndex` (and
 * `Index`, as in the real reply) is the stored job's, 0 for a new job: the value to pass as
 * `JobModifyIndex` with `EnforceIndex` to register exactly what was planned.
 */
export function planJob(
  store: SchedulerStore,
  job: Json,
  withDiff: boolean,
  options: { shortcut?: boolean } = {},
): Json {
  const ns = job.Namespace as string;
  const id = job.ID as string;
  const existing = store.job(ns, id);
  const changed = !existing || !sameSpec(existing, job);
  const live = existing
    ? store
        .allocsOf(ns, id, false)
        .filter((a) => a.DesiredStatus === 'run' && !TERMINAL_CLIENT.has(a.ClientStatus))
    : [];
  const desired = desiredUpdates(existing, job, live, changed);

  const outcome =
    options.shortcut !== false && existing && !changed && placesNothing(existing, live)
      ? { failed: null, created: null }
      : dryRunOutcome(store, job);

  let diff: Json | null = null;
  if (withDiff) {
    // The real plan asks for a contextual diff: changed objects list their unchanged fields too.
    const d = jobDiff(existing, job, true);
    annotateDiff(d, desired);
    diff = d as unknown as Json;
  }
  const index = (existing?.JobModifyIndex as number | undefined) ?? 0;
  return {
    Annotations: { DesiredTGUpdates: desired, PreemptedAllocs: null },
    FailedTGAllocs: outcome.failed,
    JobModifyIndex: index,
    CreatedEvals: outcome.created,
    Diff: diff,
    NextPeriodicLaunch: nextPeriodicLaunch(job),
    Warnings: '',
    Index: index,
  };
}

interface DryRunOutcome {
  failed: Json | null;
  created: Json[] | null;
}

/** Registers `job` on a throw-away copy of the state: the placements that fail, the evaluations blocked. */
function dryRunOutcome(store: SchedulerStore, job: Json): DryRunOutcome {
  const ns = job.Namespace as string;
  const id = job.ID as string;
  return store.dryRun(
    () => {
      const before = store.currentIndex;
      store.register(structuredClone(job), { enforceIndex: false, jobModifyIndex: 0, preserveCounts: false });
      const made = store.evalsOf(ns, id).filter((e) => e.CreateIndex > before);
      const evaluation = made.find((e) => e.Status !== 'blocked');
      const blocked = made.filter((e) => e.Status === 'blocked');
      return {
        failed: (evaluation?.FailedTGAllocs as Json | null | undefined) ?? null,
        created: blocked.length > 0 ? blocked : null,
      };
    },
    { namespace: ns, id },
  );
}

/**
 * Whether registering the stored job again, unchanged, would place nothing: every group already runs
 * its count of allocations of this job and of its group's spec (the allocations the scheduler keeps,
 * see `SchedulerStore.schedule`). The dry run then has nothing to report (no failed placement, no
 * blocked evaluation), so it is not run: for the commonest plan, that of an unchanged job, it was
 * most of the plan's cost. `live` is the job's running allocations of its current instance.
 */
function placesNothing(existing: Json, live: readonly AllocRecord[]): boolean {
  return (existing.TaskGroups as Json[]).every((tg) => {
    const spec = groupSpec(tg);
    const kept = live.filter((a) => a.TaskGroup === tg.Name && a.GroupSpec === spec).length;
    return kept >= (tg.Count as number);
  });
}
