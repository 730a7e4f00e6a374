/**
 * A job's summary (the real `JobSummary`): allocations counted per group and client status, the queued
 * placements of its blocked evaluation, and its children (dispatched or periodic instances) by status.
 * The real server keeps these counts up to date on every change; counting on read gives the same.
 */
import type { AllocRecord, EvalRecord, Json } from './model.js';

const FIELD_OF_STATUS: Record<string, string> = {
  pending: 'Starting',
  running: 'Running',
  complete: 'Complete',
  failed: 'Failed',
  lost: 'Lost',
  unknown: 'Unknown',
};

export function jobSummary(
  job: Json,
  allocs: readonly AllocRecord[],
  blocked: EvalRecord | undefined,
  children: readonly Json[],
): Json {
  const groups: Record<string, Record<string, number>> = {};
  const blank = () => ({ Queued: 0, Complete: 0, Failed: 0, Running: 0, Starting: 0, Lost: 0, Unknown: 0 });
  for (const tg of job.TaskGroups as Json[]) groups[tg.Name as string] = blank();
  let modifyIndex = job.CreateIndex as number;
  for (const a of allocs) {
    const g = (groups[a.TaskGroup] ??= blank());
    const f = FIELD_OF_STATUS[a.ClientStatus];
    if (f) g[f]! += 1;
    modifyIndex = Math.max(modifyIndex, a.ModifyIndex);
  }
  for (const [tg, n] of Object.entries((blocked?.QueuedAllocations as Record<string, number>) ?? {})) {
    const g = (groups[tg] ??= blank());
    g.Queued = n;
    modifyIndex = Math.max(modifyIndex, blocked!.ModifyIndex);
  }
  const counts = { Pending: 0, Running: 0, Dead: 0 };
  for (const child of children) {
    if (child.Status === 'running') counts.Running++;
    else if (child.Status === 'dead') counts.Dead++;
    else counts.Pending++;
    modifyIndex = Math.max(modifyIndex, child.ModifyIndex as number);
  }
  return {
    JobID: job.ID,
    Namespace: job.Namespace,
    Summary: groups,
    Children: counts,
    CreateIndex: job.CreateIndex,
    ModifyIndex: modifyIndex,
  };
}
