/**
 * What happens to a job before the scheduler validates, plans or stores it: it is made canonical
 * (canonicalize.ts: every field, with the real defaults) and its submit tokens are cleared
 * (submit-tokens.ts). Register and plan both admit the job this way, so the job a plan diffs is the
 * job a register would store, and an unchanged job plans no change; a state file of an earlier
 * sandbox is admitted the same way when loaded, so what it stored before reads back canonical too.
 */
import { canonicalizeJob } from './canonicalize.js';
import type { Json } from './model.js';
import type { SchedulerSnapshot } from './store.js';
import { withoutSubmitTokens } from './submit-tokens.js';

/** The job a register or plan request sent, in namespace `namespace` of region `region`. */
export function admitJob(sent: Json, namespace: string, region: string): Json {
  return withoutSubmitTokens(canonicalizeJob(sent, namespace, region));
}

/**
 * A loaded state file with every stored version admitted (server-set fields such as the version,
 * status and indexes are kept: canonicalization only fills what is unset).
 */
export function admitSnapshot(snapshot: SchedulerSnapshot, region: string): SchedulerSnapshot {
  return {
    ...snapshot,
    jobs: snapshot.jobs.map((j) => ({
      ...j,
      versions: j.versions.map((v) => admitJob(v, j.namespace, region)),
    })),
  };
}
