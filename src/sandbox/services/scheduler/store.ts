/**
 * The scheduler's state and its simulated scheduler. One raft-like index only ever grows (also across
 * restarts with a data folder); every write takes the next one. Registering a job stores a new version
 * and an evaluation at one index (as the real server submits the evaluation with the job); the
 * simulated scheduler then processes that evaluation at the next index: it places or stops
 * allocations round-robin on the configured nodes as far as their CPU and memory allow (`capacity.ts`),
 * completes the evaluation, opens deployments (`deployments.ts`) and sets the job status. A shortfall
 * leaves a blocked evaluation, which is processed again when a later write frees capacity.
 */
import { createHash, randomUUID } from 'node:crypto';
import { ChangeFeed } from '../../core/blocking.js';
import { askOf, NodeUsage, nodesInDatacenters, pickNode, placementFailure } from './capacity.js';
import { DEPLOYMENT_TEXT, DeploymentTable, groupsToDeploy, isActive, placedAll } from './deployments.js';
import {
  type AllocRecord,
  type DeploymentRecord,
  type EvalRecord,
  isPeriodicOrParameterized,
  type Json,
  type JobRecord,
  type NodeInfo,
  nowNanos,
  putBackRecords,
  sameSpec,
  SchedulerError,
  TERMINAL_CLIENT,
  TERMINAL_EVAL,
  TRACKED_VERSIONS,
} from './model.js';
import { tasksUpdated } from './annotate.js';
import { groupSpec, newAllocation, stopAllocation } from './allocations.js';
import { jobSummary } from './summary.js';
import { hasFields } from '../shared/record-shape.js';

export interface SchedulerSnapshot {
  index: number;
  jobs: { namespace: string; id: string; versions: Json[] }[];
  evals: EvalRecord[];
  allocs: AllocRecord[];
  tables: { jobs: number; evals: number; allocs: number; deployments?: number; scaling?: number };
  cursor: number;
  /** Absent in state files written before deployments and scaling events were emulated. */
  deployments?: DeploymentRecord[];
  scalingEvents?: { namespace: string; id: string; groups: Record<string, Json[]> }[];
}

export interface StoreOptions {
  /** How long a deployment runs before the sandbox settles it. */
  deploymentSeconds: number;
  /** Aborted when the sandbox closes: pending deployment timers are dropped. */
  shutdown?: AbortSignal;
}

/** The real `JobTrackedScalingEvents`: events kept per task group. */
const TRACKED_SCALING_EVENTS = 20;

export interface RegisterOptions {
  enforceIndex: boolean;
  jobModifyIndex: number;
  preserveCounts: boolean;
  /** The evaluation's trigger: `job-register` unless a scale, dispatch or periodic launch says otherwise. */
  triggeredBy?: string;
  /**
   * Store a new version even when the spec is unchanged, as the real scale does (it writes the job
   * straight to the state store, which bumps the version on every upsert).
   */
  forceVersion?: boolean;
}

export interface WriteResult {
  EvalID: string;
  EvalCreateIndex: number;
  JobModifyIndex: number;
  Index: number;
}

const key = (namespace: string, id: string) => `${namespace}\u0000${id}`;

/** A node id derived from its name, so allocations keep pointing at the same node across restarts. */
export function nodeIdOf(name: string): string {
  const h = createHash('sha256').update(`converge-sandbox-node:${name}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

export class SchedulerStore {
  private index = 0;
  private readonly jobs = new Map<string, JobRecord>();
  private readonly evals = new Map<string, EvalRecord>();
  private readonly allocs = new Map<string, AllocRecord>();
  private readonly tables = { jobs: 0, evals: 0, allocs: 0, deployments: 0, scaling: 0 };
  private readonly deployments = new DeploymentTable();
  /** Scaling events by job key, then task group; newest first. */
  private readonly scaling = new Map<string, Record<string, Json[]>>();
  /** Round-robin position over the nodes. */
  private cursor = 0;
  /** One timer, for the earliest running deployment's due time (so restores never pile timers up). */
  private timer: ReturnType<typeof setTimeout> | undefined;
  private timerDue = Infinity;
  readonly changes = new ChangeFeed();
  /** Set while `dryRun` runs: writes then notify nobody and mark nothing for persistence. */
  private dry = false;

  constructor(
    readonly namespaces: ReadonlySet<string>,
    readonly nodes: readonly NodeInfo[],
    private readonly onChange: () => void = () => {},
    private readonly options: StoreOptions = { deploymentSeconds: 10 },
  ) {
    options.shutdown?.addEventListener('abort', () => {
      clearTimeout(this.timer);
      this.timer = undefined;
    });
  }

  get currentIndex(): number {
    return this.index;
  }

  tableIndex(table: 'jobs' | 'evals' | 'allocs' | 'deployments' | 'scaling'): number {
    return this.tables[table];
  }

  // ---- reads ----

  job(namespace: string, id: string): Json | undefined {
    return this.jobs.get(key(namespace, id))?.versions[0];
  }

  versions(namespace: string, id: string): Json[] | undefined {
    return this.jobs.get(key(namespace, id))?.versions;
  }

  /** Sorted by namespace, then ID: the order of the real jobs table's (Namespace, ID) index. */
  listJobs(namespaces: (ns: string) => boolean, prefix: string): Json[] {
    return [...this.jobs.values()]
      .map((r) => r.versions[0]!)
      .filter((j) => namespaces(j.Namespace as string) && (j.ID as string).startsWith(prefix))
      .sort(
        (a, b) =>
          compare(a.Namespace as string, b.Namespace as string) || compare(a.ID as string, b.ID as string),
      );
  }

  /**
   * A job's allocations, by ID. Without `all`, only those of the current job instance (same
   * CreateIndex), as the real `AllocsByJob`; when the job is gone, all of them.
   */
  allocsOf(namespace: string, id: string, all: boolean): AllocRecord[] {
    const job = this.job(namespace, id);
    return [...this.allocs.values()]
      .filter(
        (a) =>
          a.Namespace === namespace &&
          a.JobID === id &&
          (all || !job || a.JobCreateIndex === job.CreateIndex),
      )
      .sort((a, b) => compare(a.ID, b.ID));
  }

  evalsOf(namespace: string, id: string): EvalRecord[] {
    return [...this.evals.values()]
      .filter((e) => e.Namespace === namespace && e.JobID === id)
      .sort((a, b) => compare(a.ID, b.ID));
  }

  /** `{JobID, Namespace, Summary, Children, CreateIndex, ModifyIndex}` counted from the allocations. */
  summary(namespace: string, id: string): Json | undefined {
    const job = this.job(namespace, id);
    if (!job) return undefined;
    const children = [...this.jobs.values()]
      .map((r) => r.versions[0]!)
      .filter((c) => c.Namespace === namespace && c.ParentID === id);
    const blocked = this.evalsOf(namespace, id).find((e) => e.Status === 'blocked');
    return jobSummary(job, this.allocsOf(namespace, id, false), blocked, children);
  }

  /** A job's deployments, newest first; `all` adds those of an earlier job with the same ID. */
  deploymentsOf(namespace: string, id: string, all: boolean): DeploymentRecord[] {
    const job = this.job(namespace, id);
    return this.deployments.ofJob(namespace, id, job?.CreateIndex as number | undefined, all);
  }

  /** The most recent deployment of the current job (the real `LatestDeploymentByJobID`). */
  latestDeployment(namespace: string, id: string): DeploymentRecord | undefined {
    return this.deploymentsOf(namespace, id, false)[0];
  }

  scalingEvents(namespace: string, id: string): Record<string, Json[]> {
    return this.scaling.get(key(namespace, id)) ?? {};
  }

  // ---- writes ----

  /** Stores a scaling event for a task group (the real `UpsertScalingEvent`); returns its index. */
  recordScalingEvent(namespace: string, id: string, group: string, event: Json): number {
    const index = this.commit();
    const groups = this.scaling.get(key(namespace, id)) ?? {};
    groups[group] = [{ ...event, CreateIndex: index }, ...(groups[group] ?? [])].slice(
      0,
      TRACKED_SCALING_EVENTS,
    );
    this.scaling.set(key(namespace, id), groups);
    this.tables.scaling = index;
    this.changed();
    return index;
  }

  /**
   * A new evaluation of an existing job without changing it (the real `Job.Evaluate`, also used by
   * the real `evaluate` endpoint). Undefined when the job does not exist.
   */
  reevaluate(namespace: string, id: string): WriteResult | undefined {
    const job = this.job(namespace, id);
    if (!job) return undefined;
    const index = this.commit();
    return this.evaluate(namespace, id, 'job-register', index, job.ModifyIndex as number);
  }

  /** Register or update a canonical, valid job; the real `Job.Register` after validation. */
  register(job: Json, opts: RegisterOptions): WriteResult {
    const ns = job.Namespace as string;
    const id = job.ID as string;
    const existing = this.job(ns, id);
    if (opts.enforceIndex) {
      const want = opts.jobModifyIndex;
      if (want === 0 && existing)
        throw new SchedulerError(500, 'Enforcing job modify index 0: job already exists');
      if (want !== 0 && !existing)
        throw new SchedulerError(500, `Enforcing job modify index ${want}: job does not exist`);
      if (existing && want !== existing.JobModifyIndex)
        throw new SchedulerError(
          500,
          `Enforcing job modify index ${want}: job exists with conflicting job modify index: ${String(existing.JobModifyIndex)}`,
        );
    }
    if (existing && existing.Type !== job.Type)
      throw new SchedulerError(
        500,
        `cannot update job from type "${String(existing.Type)}" to "${String(job.Type)}"`,
      );
    if (existing && opts.preserveCounts) {
      const counts = new Map((existing.TaskGroups as Json[]).map((tg) => [tg.Name, tg.Count]));
      for (const tg of job.TaskGroups as Json[]) if (counts.has(tg.Name)) tg.Count = counts.get(tg.Name);
    }

    // An unchanged spec stores nothing (the real `SpecChanged` check); the evaluation is still made.
    const index = this.commit();
    let jobModifyIndex = existing?.JobModifyIndex as number;
    if (!existing || opts.forceVersion === true || !sameSpec(existing, job)) {
      this.upsertVersion(job, existing, index);
      jobModifyIndex = index;
    }
    return this.evaluate(ns, id, opts.triggeredBy ?? 'job-register', index, jobModifyIndex);
  }

  /** Stop (a new version with `Stop: true`) or purge; the real `Job.Deregister`. */
  deregister(namespace: string, id: string, purge: boolean): WriteResult {
    const existing = this.job(namespace, id);
    // A missing job succeeds with empty fields, as in the real product.
    if (!existing) return { EvalID: '', EvalCreateIndex: 0, JobModifyIndex: 0, Index: 0 };
    const index = this.commit();
    if (purge) {
      this.jobs.delete(key(namespace, id));
      // The real purge deletes the job's scaling events with it; deployments stay for `?all`.
      this.scaling.delete(key(namespace, id));
      this.tables.jobs = index;
    } else {
      this.upsertVersion({ ...structuredClone(existing), Stop: true }, existing, index);
    }
    if (isPeriodicOrParameterized(existing)) {
      this.changed();
      return { EvalID: '', EvalCreateIndex: 0, JobModifyIndex: index, Index: index };
    }
    return this.evaluate(namespace, id, 'job-deregister', index, index, existing);
  }

  /**
   * Sets one version's `Stable` flag (the real `UpdateJobStability`): no new version, no new
   * JobModifyIndex; the current job's ModifyIndex moves when it is that version. Undefined when the
   * version does not exist.
   */
  setStability(namespace: string, id: string, version: number, stable: boolean): number | undefined {
    const versions = this.versions(namespace, id);
    const target = versions?.find((v) => v.Version === version);
    if (!target) return undefined;
    if (target.Stable === stable) return this.index;
    const index = this.commit();
    target.Stable = stable;
    target.ModifyIndex = index;
    this.tables.jobs = index;
    this.changed();
    return index;
  }

  private upsertVersion(job: Json, existing: Json | undefined, index: number): void {
    const stored: Json = {
      ...job,
      Version: existing ? (existing.Version as number) + 1 : 0,
      Stable: false,
      SubmitTime: nowNanos(),
      CreateIndex: existing ? existing.CreateIndex : index,
      ModifyIndex: index,
      JobModifyIndex: index,
      Status: 'pending',
      StatusDescription: '',
    };
    const k = key(job.Namespace as string, job.ID as string);
    const record = this.jobs.get(k) ?? { versions: [] };
    record.versions = [stored, ...record.versions].slice(0, TRACKED_VERSIONS);
    this.jobs.set(k, record);
    this.tables.jobs = index;
    this.setStatus(stored, index);
  }

  /**
   * Creates an evaluation at `index` and runs the simulated scheduler on it at the next index.
   * `gone` is the job as it was before a purge (for the evaluation's priority and type).
   */
  private evaluate(
    ns: string,
    id: string,
    triggeredBy: string,
    index: number,
    jobModifyIndex: number,
    gone?: Json,
  ): WriteResult {
    const job = this.job(ns, id) ?? gone!;
    if (isPeriodicOrParameterized(job)) {
      this.changed();
      return { EvalID: '', EvalCreateIndex: 0, JobModifyIndex: jobModifyIndex, Index: index };
    }
    const now = nowNanos();
    const evaluation: EvalRecord = {
      ID: randomUUID(),
      Namespace: ns,
      Priority: job.Priority,
      Type: job.Type,
      TriggeredBy: triggeredBy,
      JobID: id,
      JobModifyIndex: jobModifyIndex,
      NodeID: '',
      NodeModifyIndex: 0,
      Status: 'pending',
      StatusDescription: '',
      Wait: 0,
      NextEval: '',
      PreviousEval: '',
      BlockedEval: '',
      FailedTGAllocs: null,
      ClassEligibility: null,
      EscapedComputedClass: false,
      AnnotatePlan: false,
      QueuedAllocations: null,
      SnapshotIndex: 0,
      CreateIndex: index,
      ModifyIndex: index,
      CreateTime: now,
      ModifyTime: now,
    };
    this.evals.set(evaluation.ID, evaluation);
    this.tables.evals = index;
    this.schedule(evaluation, this.job(ns, id));
    this.unblock();
    this.changed();
    return { EvalID: evaluation.ID, EvalCreateIndex: index, JobModifyIndex: jobModifyIndex, Index: index };
  }

  /** The simulated scheduler: reconciles the job's allocations with its groups, at a new index. */
  private schedule(evaluation: EvalRecord, job: Json | undefined): void {
    const index = this.commit();
    const now = nowNanos();
    evaluation.SnapshotIndex = index - 1;
    const live = this.allocsOf(evaluation.Namespace, evaluation.JobID, true).filter(isLive);
    const stop = (a: AllocRecord, why: string) => this.stopAlloc(a, why, index, now);
    // Earlier blocked evaluations of the job are superseded by this one.
    for (const e of this.evalsOf(evaluation.Namespace, evaluation.JobID))
      if (e.Status === 'blocked' && e !== evaluation)
        Object.assign(e, { Status: 'canceled', ModifyIndex: index, ModifyTime: now });

    const queued: Record<string, number> = {};
    const failed: Record<string, Json> = {};
    if (!job || job.Stop === true) {
      for (const a of live) stop(a, 'alloc not needed due to job update');
      for (const d of this.deploymentsOf(evaluation.Namespace, evaluation.JobID, true))
        if (isActive(d)) this.deploymentStatus(d, 'cancelled', DEPLOYMENT_TEXT.stoppedJob, index);
    } else {
      const groups = job.TaskGroups as Json[];
      // First every stop, so that the capacity they free is there for this evaluation's placements.
      const replaced = new Map<string, number>();
      /**
       * Allocations a destructive change replaces, by name index: stopped only once their replacement
       * is placed (the real generic scheduler's `stopPrevAlloc`), so an update that fits on no node
       * leaves the old version running rather than stopping it for nothing.
       */
      const replacing = new Map<string, Map<number, AllocRecord>>();
      /** Allocations updated in place, by group: part of the new version's deployment, as placed. */
      const inPlace = new Map<string, AllocRecord[]>();
      for (const a of live) {
        const tg = groups.find((g) => g.Name === a.TaskGroup);
        if (!tg || a.JobCreateIndex !== job.CreateIndex) stop(a, 'alloc not needed due to job update');
        else if (a.GroupSpec !== groupSpec(tg) || a.JobVersion !== job.Version) {
          // As the plan says it (`tasksUpdated`): a destructive change replaces the allocation, any
          // other updates it in place. Judged by its group spec alone, a job's Meta (which its tasks
          // see) replaced nothing while the plan said "create/destroy update", and a restart policy
          // replaced every allocation while the plan said "in-place update".
          const was = this.versions(evaluation.Namespace, evaluation.JobID)?.find(
            (v) => v.Version === a.JobVersion && v.CreateIndex === a.JobCreateIndex,
          );
          const wasGroup = (was?.TaskGroups as Json[] | undefined)?.find((g) => g.Name === a.TaskGroup);
          const destructive =
            was && wasGroup ? tasksUpdated(was, job, wasGroup, tg) : a.GroupSpec !== groupSpec(tg);
          if (destructive) {
            const mine = replacing.get(a.TaskGroup) ?? new Map<number, AllocRecord>();
            mine.set(nameIndex(a), a);
            replacing.set(a.TaskGroup, mine);
            replaced.set(a.TaskGroup, (replaced.get(a.TaskGroup) ?? 0) + 1);
          } else {
            Object.assign(a, {
              JobVersion: job.Version,
              GroupSpec: groupSpec(tg),
              ModifyIndex: index,
              ModifyTime: now,
            });
            inPlace.set(a.TaskGroup, [...(inPlace.get(a.TaskGroup) ?? []), a]);
          }
        }
      }
      const kept = new Map<string, AllocRecord[]>();
      for (const tg of groups) {
        const toReplace = replacing.get(tg.Name as string);
        const mine = live
          .filter(
            (a) => a.TaskGroup === tg.Name && a.DesiredStatus === 'run' && !toReplace?.has(nameIndex(a)),
          )
          .sort((a, b) => nameIndex(a) - nameIndex(b));
        for (const a of mine.slice(tg.Count as number)) stop(a, 'alloc not needed due to job update');
        kept.set(tg.Name as string, mine.slice(0, tg.Count as number));
        // Those beyond what the lower count leaves room for are not replaced, only stopped.
        const room = (tg.Count as number) - Math.min(mine.length, tg.Count as number);
        for (const [i, a] of [...(toReplace ?? [])].sort(([x], [y]) => x - y).slice(room)) {
          stop(a, 'alloc not needed due to job update');
          toReplace!.delete(i);
        }
      }
      // The real reconciler's `updatingSpec`: destructive and in-place updates both open one.
      const updating = new Set([...replaced.keys(), ...inPlace.keys()]);
      const deployment = this.deploymentFor(job, kept, updating, index);
      for (const [name, updated] of inPlace) {
        const group = deployment?.TaskGroups[name];
        if (!group) continue;
        // Those a lower count stopped meanwhile are not part of it.
        const allocs = updated.filter((a) => a.DesiredStatus === 'run');
        // The real scheduler clears the health of an allocation that joins a new deployment.
        for (const a of allocs) Object.assign(a, { DeploymentID: deployment!.ID, DeploymentStatus: null });
        group.PlacedAllocs = (group.PlacedAllocs as number) + allocs.length;
        deployment!.ModifyIndex = index;
        evaluation.DeploymentID = deployment!.ID;
        this.tables.deployments = index;
      }
      const eligible = nodesInDatacenters(this.nodes, job);
      const usage = new NodeUsage([...this.allocs.values()].filter(isLive));
      for (const tg of groups) {
        const name = tg.Name as string;
        const mine = kept.get(name)!;
        const used = new Set(mine.map(nameIndex));
        const ask = askOf(tg);
        queued[name] = 0;
        let missing = (tg.Count as number) - mine.length;
        const toReplace = replacing.get(name);
        for (let i = 0; missing > 0; i++) {
          if (used.has(i)) continue;
          // The one this placement replaces counts as stopped while its replacement is looked for.
          const previous = toReplace?.get(i);
          if (previous) usage.release(previous);
          const pick = pickNode(eligible, usage, ask, this.cursor);
          if (!pick) {
            if (previous) usage.hold(previous);
            queued[name] = missing;
            failed[name] = placementFailure(this.nodes, eligible, usage, ask, job, missing);
            break;
          }
          if (previous) stop(previous, 'alloc is being updated due to job update');
          this.cursor += pick.offset + 1;
          usage.add(pick.node.ID, ask);
          this.place(evaluation, job, tg, i, pick.node, deployment, index, now, previous);
          missing--;
        }
        // Every place filled: one still waiting for its replacement (a name index past the count
        // the others took) is not needed.
        if (missing === 0)
          for (const a of toReplace?.values() ?? [])
            if (a.DesiredStatus === 'run') stop(a, 'alloc not needed due to job update');
      }
    }
    Object.assign(evaluation, {
      Status: 'complete',
      QueuedAllocations: queued,
      FailedTGAllocs: Object.keys(failed).length > 0 ? failed : null,
      DeploymentID: evaluation.DeploymentID ?? '',
      ModifyIndex: index,
      ModifyTime: now,
    });
    if (Object.keys(failed).length > 0) {
      // As the real scheduler: a blocked evaluation waits until a write frees capacity (see unblock).
      const blocked: EvalRecord = {
        ...structuredClone(evaluation),
        ID: randomUUID(),
        Status: 'blocked',
        StatusDescription: 'created due to placement conflicts',
        TriggeredBy: 'queued-allocs',
        PreviousEval: evaluation.ID,
        BlockedEval: '',
        FailedTGAllocs: null,
        CreateIndex: index,
        ModifyIndex: index,
      };
      this.evals.set(blocked.ID, blocked);
      evaluation.BlockedEval = blocked.ID;
    }
    this.tables.evals = index;
    if (job) this.setStatus(job, index);
  }

  /**
   * The deployment this evaluation's placements belong to (the real reconciler's rule): an active one
   * of an older job version is cancelled; a new one opens for the groups with an update strategy that
   * have no allocations yet or have some replaced or updated in place by a spec change, unless this
   * version has one.
   */
  private deploymentFor(
    job: Json,
    kept: Map<string, AllocRecord[]>,
    updating: Set<string>,
    index: number,
  ): DeploymentRecord | undefined {
    const ns = job.Namespace as string;
    const id = job.ID as string;
    let current: DeploymentRecord | undefined;
    for (const d of this.deploymentsOf(ns, id, true)) {
      if (d.JobCreateIndex === job.CreateIndex && d.JobVersion === job.Version) current ??= d;
      else if (isActive(d)) this.deploymentStatus(d, 'cancelled', DEPLOYMENT_TEXT.newerJob, index);
    }
    if (current) return isActive(current) ? current : undefined;
    const counts = new Map([...kept].map(([name, allocs]) => [name, allocs.length]));
    const deploying = groupsToDeploy(job, counts, updating);
    if (Object.keys(deploying).length === 0) return undefined;
    const ms = this.options.deploymentSeconds * 1000;
    const d = this.deployments.create(job, deploying, index, Date.now() + ms);
    this.tables.deployments = index;
    this.armTimer();
    return d;
  }

  private deploymentStatus(d: DeploymentRecord, status: string, text: string, index: number): void {
    this.deployments.setStatus(d, status, text, index);
    this.tables.deployments = index;
  }

  /** Makes sure a timer fires when the earliest running deployment is due. */
  private armTimer(): void {
    // A dry run's deployments are thrown away with it; the real state's timer is left as it was.
    if (this.dry) return;
    if (this.options.shutdown?.aborted) return;
    const due = Math.min(...this.deployments.running().map((d) => d.DueAt ?? 0));
    if (!Number.isFinite(due) || (this.timer !== undefined && due >= this.timerDue)) return;
    clearTimeout(this.timer);
    this.timerDue = due;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.settleDeployments();
        this.armTimer();
      },
      Math.max(0, due - Date.now()),
    );
    this.timer.unref?.();
  }

  /**
   * Settles the running deployments whose time is up: successful when every group placed what it
   * wanted (its allocations are then healthy and the job version stable, as the real state store
   * marks it), else failed on the progress deadline. Harmless when nothing is due.
   */
  settleDeployments(now: number = Date.now()): void {
    const due = this.deployments.running().filter((d) => (d.DueAt ?? 0) <= now);
    if (due.length === 0) return;
    const index = this.commit();
    for (const d of due) {
      if (placedAll(d)) {
        for (const g of Object.values(d.TaskGroups)) g.HealthyAllocs = g.PlacedAllocs;
        for (const a of this.allocs.values())
          if (a.DeploymentID === d.ID && isLive(a)) {
            a.DeploymentStatus = { Healthy: true, Timestamp: new Date(now).toISOString(), Canary: false };
            a.ModifyIndex = index;
            this.tables.allocs = index;
          }
        this.deploymentStatus(d, 'successful', DEPLOYMENT_TEXT.successful, index);
        const version = this.versions(d.Namespace, d.JobID)?.find(
          (v) => v.Version === d.JobVersion && v.CreateIndex === d.JobCreateIndex,
        );
        if (version && version.Stable !== true) {
          version.Stable = true;
          version.ModifyIndex = index;
          this.tables.jobs = index;
        }
      } else {
        this.deploymentStatus(d, 'failed', DEPLOYMENT_TEXT.progressDeadline, index);
      }
      const job = this.job(d.Namespace, d.JobID);
      if (job) this.setStatus(job, index);
    }
    this.changed();
  }

  /**
   * Processes again the blocked evaluations that could now place something (the real blocked-evals
   * tracker unblocks them when a node's capacity changes); oldest first. A processed one completes;
   * what still does not fit waits in a new blocked evaluation.
   */
  private unblock(): void {
    const blocked = [...this.evals.values()]
      .filter((e) => e.Status === 'blocked')
      .sort((a, b) => a.CreateIndex - b.CreateIndex);
    for (const e of blocked) {
      if (e.Status !== 'blocked') continue;
      const job = this.job(e.Namespace, e.JobID);
      if (job && job.Stop !== true && this.couldPlace(job)) this.schedule(e, job);
    }
  }

  private couldPlace(job: Json): boolean {
    const eligible = nodesInDatacenters(this.nodes, job);
    const usage = new NodeUsage([...this.allocs.values()].filter(isLive));
    const live = this.allocsOf(job.Namespace as string, job.ID as string, false).filter(isLive);
    return (job.TaskGroups as Json[]).some(
      (tg) =>
        live.filter((a) => a.TaskGroup === tg.Name).length < (tg.Count as number) &&
        pickNode(eligible, usage, askOf(tg), 0) !== undefined,
    );
  }

  private place(
    evaluation: EvalRecord,
    job: Json,
    tg: Json,
    nameIdx: number,
    node: NodeInfo,
    deployment: DeploymentRecord | undefined,
    index: number,
    now: number,
    previous?: AllocRecord,
  ): void {
    const group = deployment?.TaskGroups[tg.Name as string];
    if (group) {
      group.PlacedAllocs = (group.PlacedAllocs as number) + 1;
      deployment!.ModifyIndex = index;
      evaluation.DeploymentID = deployment!.ID;
      this.tables.deployments = index;
    }
    const alloc = newAllocation({
      evalId: evaluation.ID,
      job,
      tg,
      nameIdx,
      node,
      deploymentId: group ? deployment!.ID : '',
      index,
      now,
    });
    // A replacement and the allocation it replaced name each other, as the real scheduler links them.
    if (previous) {
      alloc.PreviousAllocation = previous.ID;
      previous.NextAllocation = alloc.ID;
      previous.ModifyIndex = index;
    }
    this.allocs.set(alloc.ID, alloc);
    this.tables.allocs = index;
  }

  private stopAlloc(a: AllocRecord, why: string, index: number, now: number): void {
    stopAllocation(a, why, index, now);
    this.tables.allocs = index;
  }

  /**
   * The real `getJobStatus`: system, periodic and parameterized jobs are running until stopped; others
   * are running with a live allocation, pending with an open evaluation, dead once evaluated or
   * stopped. A status change bumps the job's ModifyIndex (not its JobModifyIndex).
   */
  private setStatus(job: Json, index: number): void {
    const ns = job.Namespace as string;
    const id = job.ID as string;
    let status: string;
    if (job.Type === 'system' || isPeriodicOrParameterized(job)) {
      status = job.Stop === true ? 'dead' : 'running';
    } else if (
      this.allocsOf(ns, id, false).some(isLive) ||
      this.deploymentsOf(ns, id, false).some(isActive)
    ) {
      status = 'running';
    } else {
      const evals = this.evalsOf(ns, id);
      if (evals.some((e) => !TERMINAL_EVAL.has(e.Status))) status = 'pending';
      else status = evals.length > 0 || job.Stop === true ? 'dead' : 'pending';
    }
    if (job.Status !== status) {
      job.Status = status;
      job.ModifyIndex = index;
      this.tables.jobs = index;
    }
  }

  // ---- persistence ----

  snapshot(): SchedulerSnapshot {
    return {
      index: this.index,
      jobs: [...this.jobs.values()].map((r) => ({
        namespace: r.versions[0]!.Namespace as string,
        id: r.versions[0]!.ID as string,
        versions: r.versions,
      })),
      evals: [...this.evals.values()],
      allocs: [...this.allocs.values()],
      tables: { ...this.tables },
      cursor: this.cursor,
      deployments: this.deployments.snapshot(),
      scalingEvents: [...this.scaling.entries()].map(([k, groups]) => {
        const [namespace, id] = k.split('\u0000') as [string, string];
        return { namespace, id, groups };
      }),
    };
  }

  /** Replaces the whole state with a snapshot's (what a dry run's rollback relies on too). */
  restore(s: SchedulerSnapshot): void {
    this.jobs.clear();
    this.evals.clear();
    this.allocs.clear();
    this.index = s.index;
    for (const j of s.jobs) this.jobs.set(key(j.namespace, j.id), { versions: j.versions });
    for (const e of s.evals) this.evals.set(e.ID, e);
    for (const a of s.allocs) this.allocs.set(a.ID, a);
    Object.assign(this.tables, s.tables);
    this.cursor = s.cursor;
    this.deployments.restore(s.deployments);
    this.scaling.clear();
    for (const e of s.scalingEvents ?? []) this.scaling.set(key(e.namespace, e.id), e.groups);
    // Deployments that were running when the state was saved settle on their own clock again.
    this.armTimer();
  }

  /**
   * Runs `fn` on the current state, then puts the state back as it was: the real plan runs the
   * scheduler on a snapshot of the state store. `fn` sees its own writes (so the placement logic is
   * the real one); afterwards nothing is visible: no index advance, no wake-up of blocking queries,
   * no persistence write. Without `only`, state added to `snapshot`/`restore` is covered
   * automatically.
   *
   * With `only` (the job a plan registers), `fn` promises to write nothing but that job's register:
   * then only the records such a write can change are copied and put back, not the whole state (see
   * `writableBy` for which records those are, and `scopedSave`, which new per-job state must join).
   */
  dryRun<T>(fn: () => T, only?: { namespace: string; id: string }): T {
    const rollback = only ? this.scopedSave(this.writableBy(only)) : this.fullSave();
    const wasDry = this.dry;
    this.dry = true;
    try {
      return fn();
    } finally {
      rollback();
      this.dry = wasDry;
    }
  }

  /** A deep copy of the whole state; the rollback replaces the state with it. */
  private fullSave(): () => void {
    const saved = structuredClone(this.snapshot());
    return () => this.restore(saved);
  }

  /**
   * The jobs whose records a register of `job` may write: the job itself (its versions, evaluations,
   * allocations, deployments), and every job with a blocked evaluation, since the register ends by
   * processing blocked evaluations again (`unblock`), which schedules those jobs.
   */
  private writableBy(job: { namespace: string; id: string }): { namespace: string; id: string }[] {
    const jobs = [job];
    const listed = new Set([key(job.namespace, job.id)]);
    for (const e of this.evals.values()) {
      if (e.Status !== 'blocked' || listed.has(key(e.Namespace, e.JobID))) continue;
      listed.add(key(e.Namespace, e.JobID));
      jobs.push({ namespace: e.Namespace, id: e.JobID });
    }
    return jobs;
  }

  /**
   * Deep copies of the records of `jobs` and the counters; the rollback puts them back in place,
   * drops the records of those jobs the run added, and leaves every other record as it is (no other
   * is written). A plan then costs a pass over the tables, not a copy and a rebuild of them: with
   * 100 jobs, copying and rebuilding the whole state was most of a plan's time.
   */
  private scopedSave(jobs: readonly { namespace: string; id: string }[]): () => void {
    const belongs = (r: { Namespace: unknown; JobID: unknown }) =>
      jobs.some((j) => j.namespace === r.Namespace && j.id === r.JobID);
    const keys = jobs.map((j) => key(j.namespace, j.id));
    const savedJobs = keys.map((k) => [k, savedRecord(this.jobs.get(k))] as const);
    const savedScaling = keys.map((k) => [k, structuredClone(this.scaling.get(k))] as const);
    const savedEvals = structuredClone([...this.evals.values()].filter(belongs));
    const savedAllocs = structuredClone([...this.allocs.values()].filter(belongs));
    const savedDeployments = structuredClone(this.deployments.select(belongs));
    const { index, cursor } = this;
    const tables = { ...this.tables };
    return () => {
      this.index = index;
      this.cursor = cursor;
      Object.assign(this.tables, tables);
      for (const [k, record] of savedJobs) {
        if (record) this.jobs.set(k, record);
        else this.jobs.delete(k);
      }
      for (const [k, groups] of savedScaling) {
        if (groups) this.scaling.set(k, groups);
        else this.scaling.delete(k);
      }
      putBackRecords(this.evals, belongs, savedEvals);
      putBackRecords(this.allocs, belongs, savedAllocs);
      this.deployments.putBack(belongs, savedDeployments);
      // Deployments that were running before the run settle on their own clock again.
      this.armTimer();
    };
  }

  private commit(): number {
    this.index += 1;
    return this.index;
  }

  private changed(): void {
    if (this.dry) return;
    this.onChange();
    this.changes.notify();
  }
}

/**
 * A job record as a dry run must put it back: a register writes the current version in place (its
 * status and indexes) and adds versions in front, but never writes an older version (only a stability
 * update does, and a register makes none). So the current version is copied and the older ones are
 * shared, not copied up to TRACKED_VERSIONS times for nothing.
 */
function savedRecord(record: JobRecord | undefined): JobRecord | undefined {
  if (!record) return undefined;
  const [current, ...older] = record.versions;
  return { versions: current ? [structuredClone(current), ...older] : [] };
}

function nameIndex(a: AllocRecord): number {
  return Number(/\[(\d+)\]$/.exec(a.Name as string)?.[1] ?? 0);
}

/** An allocation that should run and still does: it holds capacity on its node. */
function isLive(a: AllocRecord): boolean {
  return a.DesiredStatus === 'run' && !TERMINAL_CLIENT.has(a.ClientStatus);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Checks the shape of a loaded state file before trusting it. */
export function isSchedulerSnapshot(value: unknown): value is SchedulerSnapshot {
  return hasFields(value, {
    index: 'integer',
    jobs: 'array',
    evals: 'array',
    allocs: 'array',
    tables: 'object',
    cursor: 'integer',
  });
}
