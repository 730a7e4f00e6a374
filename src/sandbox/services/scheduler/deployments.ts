/**
 * Deployments, as the real scheduler's reconciler and deployment watcher make them, simplified: a
 * service job's evaluation that places allocations for a new job version in a group with an update
 * strategy (`MaxParallel > 0`) opens a deployment for that version; an older running one is cancelled
 * ("Cancelled due to newer version of job"), a stop cancels it ("Cancelled because job is stopped").
 * Instead of watching allocation health, a deployment succeeds `deploymentSeconds` after it opened when
 * every group placed its allocations, and fails ("Failed due to progress deadline") otherwise. Canaries
 * are not emulated: `DesiredCanaries` echoes the strategy but none are placed or awaited.
 */
import { randomUUID } from 'node:crypto';
import { type DeploymentRecord, type Json, putBackRecords } from './model.js';

/** The real `DeploymentStatusDescription*` texts. */
export const DEPLOYMENT_TEXT = {
  running: 'Deployment is running',
  successful: 'Deployment completed successfully',
  newerJob: 'Cancelled due to newer version of job',
  stoppedJob: 'Cancelled because job is stopped',
  progressDeadline: 'Failed due to progress deadline',
} as const;

/** The real `Deployment.Active`: statuses that still hold the job (and refuse scaling). */
const ACTIVE = new Set(['running', 'paused', 'pending', 'blocked', 'unblocking', 'initializing']);

export function isActive(d: DeploymentRecord): boolean {
  return ACTIVE.has(d.Status);
}

/** A group takes part in deployments when its (canonical) update strategy allows any parallelism. */
export function deploysGroup(job: Json, tg: Json): boolean {
  if (job.Type !== 'service') return false;
  const update = tg.Update as Json | null | undefined;
  return typeof update?.MaxParallel === 'number' && update.MaxParallel > 0;
}

/**
 * The groups a new deployment covers (the real reconciler's `computeGroup` rule): those with an
 * update strategy and a count that had no running allocations before, or had some replaced by a
 * spec change. A count change of running allocations deploys nothing.
 */
export function groupsToDeploy(
  job: Json,
  keptRunning: Map<string, number>,
  replaced: Set<string>,
): Record<string, Json> {
  const deploying: Record<string, Json> = {};
  for (const tg of job.TaskGroups as Json[]) {
    const name = tg.Name as string;
    const hadRunning = (keptRunning.get(name) ?? 0) > 0 && !replaced.has(name);
    if (deploysGroup(job, tg) && (tg.Count as number) > 0 && (!hadRunning || replaced.has(name)))
      deploying[name] = tg;
  }
  return deploying;
}

/** The sandbox's stand-in for health: a deployment succeeds when every group placed all it wanted. */
export function placedAll(d: DeploymentRecord): boolean {
  return Object.values(d.TaskGroups).every((g) => (g.PlacedAllocs as number) >= (g.DesiredTotal as number));
}

export class DeploymentTable {
  private readonly byId = new Map<string, DeploymentRecord>();

  get(id: string): DeploymentRecord | undefined {
    return this.byId.get(id);
  }

  /**
   * A job's deployments, newest first (the real `Job.Deployments` order). Without `all`, only those of
   * the current job instance (`jobCreateIndex`); with it, also those of a purged job with the same ID.
   */
  ofJob(
    namespace: string,
    jobId: string,
    jobCreateIndex: number | undefined,
    all: boolean,
  ): DeploymentRecord[] {
    return [...this.byId.values()]
      .filter(
        (d) =>
          d.Namespace === namespace &&
          d.JobID === jobId &&
          (all || jobCreateIndex === undefined || d.JobCreateIndex === jobCreateIndex),
      )
      .sort((a, b) => b.CreateIndex - a.CreateIndex);
  }

  running(): DeploymentRecord[] {
    return [...this.byId.values()].filter((d) => d.Status === 'running');
  }

  create(job: Json, groups: Record<string, Json>, index: number, dueAt: number): DeploymentRecord {
    const now = Date.now() * 1_000_000;
    const taskGroups: Record<string, Json> = {};
    for (const [name, tg] of Object.entries(groups)) {
      const update = (tg.Update as Json | undefined) ?? {};
      const deadline = (update.ProgressDeadline as number | undefined) ?? 0;
      taskGroups[name] = {
        AutoRevert: update.AutoRevert === true,
        AutoPromote: update.AutoPromote === true,
        ProgressDeadline: deadline,
        RequireProgressBy: new Date(Date.now() + deadline / 1_000_000).toISOString(),
        Promoted: false,
        PlacedCanaries: null,
        DesiredCanaries: (update.Canary as number | undefined) ?? 0,
        DesiredTotal: tg.Count as number,
        PlacedAllocs: 0,
        HealthyAllocs: 0,
        UnhealthyAllocs: 0,
      };
    }
    const d: DeploymentRecord = {
      ID: randomUUID(),
      Namespace: job.Namespace as string,
      JobID: job.ID as string,
      JobVersion: job.Version as number,
      JobModifyIndex: job.JobModifyIndex,
      JobSpecModifyIndex: job.JobModifyIndex,
      JobCreateIndex: job.CreateIndex as number,
      IsMultiregion: false,
      TaskGroups: taskGroups,
      Status: 'running',
      StatusDescription: DEPLOYMENT_TEXT.running,
      EvalPriority: job.Priority,
      CreateIndex: index,
      ModifyIndex: index,
      CreateTime: now,
      ModifyTime: now,
      DueAt: dueAt,
    };
    this.byId.set(d.ID, d);
    return d;
  }

  setStatus(d: DeploymentRecord, status: string, description: string, index: number): void {
    Object.assign(d, {
      Status: status,
      StatusDescription: description,
      ModifyIndex: index,
      ModifyTime: Date.now() * 1_000_000,
    });
  }

  snapshot(): DeploymentRecord[] {
    return [...this.byId.values()];
  }

  /** The deployments `belongs` picks (a dry run saves them, to put them back). */
  select(belongs: (d: DeploymentRecord) => boolean): DeploymentRecord[] {
    return [...this.byId.values()].filter(belongs);
  }

  /** Puts `saved` back over the deployments `belongs` picks, dropping those it does not have. */
  putBack(belongs: (d: DeploymentRecord) => boolean, saved: readonly DeploymentRecord[]): void {
    putBackRecords(this.byId, belongs, saved);
  }

  restore(list: readonly DeploymentRecord[] | undefined): void {
    this.byId.clear();
    for (const d of list ?? []) this.byId.set(d.ID, d);
  }
}

/** A deployment as the API shows it, without the sandbox's bookkeeping. */
export function deploymentView(d: DeploymentRecord): Json {
  const { DueAt: _due, ...rest } = d;
  return rest;
}
