/**
 * A job plan (`POST /v1/job/:id/plan`): what registering the job would do, without doing it. As the
 * real `Job.Plan`, the scheduler runs on a throw-away copy of the state (`SchedulerStore.dryRun`), so
 * placement failures and blocked evaluations come from the same placement logic as a real register;
 * the desired changes per group and the diff's annotations follow the real reconciler and
 * `scheduler/annotate.go` (see annotate.ts).
 */
import { annotateDiff, desiredUpdates } from './annotate.js';
import { jobDiff } from './diff.js';
import { type Json, sameSpec, TERMINAL_CLIENT } from './model.js';
import { nextPeriodicLaunch } from './periodic.js';
import type { SchedulerStore } from './store.js';

/**
 * The real `JobPlanResponse` for a canonical, valid job: `{Annotations, FailedTGAllocs,
 * JobModifyIndex, CreatedEvals, Diff, NextPeriodicLaunch, Warnings, Index}`. `JobModifyIndex` (and
 * `Index`, as in the real reply) is the stored job's, 0 for a new job: the value to pass as
 * `JobModifyIndex` with `EnforceIndex` to register exactly what was planned.
 */
export function planJob(store: SchedulerStore, job: Json, withDiff: boolean): Json {
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

  const outcome = store.dryRun(
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
