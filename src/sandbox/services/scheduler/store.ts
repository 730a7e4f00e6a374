/**
 * The scheduler's state and its simulated scheduler. One raft-like index only ever grows (also across
 * restarts with a data folder); every write takes the next one. Registering a job stores a new version
 * and an evaluation at one index (as the real server submits the evaluation with the job); the
 * simulated scheduler then processes that evaluation at the next index: it places or stops
 * allocations round-robin on the configured nodes, completes the evaluation and sets the job status.
 * No resources are modelled: every node takes any number of allocations.
 */
import { createHash, randomUUID } from 'node:crypto';
import { ChangeFeed } from '../../core/blocking.js';
import {
  type AllocRecord,
  type EvalRecord,
  isPeriodicOrParameterized,
  type Json,
  type JobRecord,
  type NodeInfo,
  nowNanos,
  SchedulerError,
  specOf,
  TERMINAL_CLIENT,
  TERMINAL_EVAL,
  TRACKED_VERSIONS,
} from './model.js';

export interface SchedulerSnapshot {
  index: number;
  jobs: { namespace: string; id: string; versions: Json[] }[];
  evals: EvalRecord[];
  allocs: AllocRecord[];
  tables: { jobs: number; evals: number; allocs: number };
  cursor: number;
}

export interface RegisterOptions {
  enforceIndex: boolean;
  jobModifyIndex: number;
  preserveCounts: boolean;
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

/** Datacenter globs (`*`, `dc*`), as job `Datacenters` accept since the real 1.5. */
function dcMatches(pattern: string, dc: string): boolean {
  const re = new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`);
  return re.test(dc);
}

export class SchedulerStore {
  private index = 0;
  private readonly jobs = new Map<string, JobRecord>();
  private readonly evals = new Map<string, EvalRecord>();
  private readonly allocs = new Map<string, AllocRecord>();
  private readonly tables = { jobs: 0, evals: 0, allocs: 0 };
  /** Round-robin position over the nodes. */
  private cursor = 0;
  readonly changes = new ChangeFeed();
  /** Set while `dryRun` runs: writes then notify nobody and mark nothing for persistence. */
  private dry = false;

  constructor(
    readonly namespaces: ReadonlySet<string>,
    readonly nodes: readonly NodeInfo[],
    private readonly onChange: () => void = () => {},
  ) {}

  get currentIndex(): number {
    return this.index;
  }

  tableIndex(table: 'jobs' | 'evals' | 'allocs'): number {
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
    const groups: Record<string, Record<string, number>> = {};
    const blank = () => ({ Queued: 0, Complete: 0, Failed: 0, Running: 0, Starting: 0, Lost: 0, Unknown: 0 });
    for (const tg of job.TaskGroups as Json[]) groups[tg.Name as string] = blank();
    let modifyIndex = job.CreateIndex as number;
    const field: Record<string, string> = {
      pending: 'Starting',
      running: 'Running',
      complete: 'Complete',
      failed: 'Failed',
      lost: 'Lost',
      unknown: 'Unknown',
    };
    for (const a of this.allocsOf(namespace, id, false)) {
      const g = (groups[a.TaskGroup] ??= blank());
      const f = field[a.ClientStatus];
      if (f) g[f]! += 1;
      modifyIndex = Math.max(modifyIndex, a.ModifyIndex);
    }
    const blocked = this.evalsOf(namespace, id).find((e) => e.Status === 'blocked');
    for (const [tg, n] of Object.entries((blocked?.QueuedAllocations as Record<string, number>) ?? {})) {
      const g = (groups[tg] ??= blank());
      g.Queued = n;
      modifyIndex = Math.max(modifyIndex, blocked!.ModifyIndex);
    }
    return {
      JobID: id,
      Namespace: namespace,
      Summary: groups,
      Children: { Pending: 0, Running: 0, Dead: 0 },
      CreateIndex: job.CreateIndex,
      ModifyIndex: modifyIndex,
    };
  }

  // ---- writes ----

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
    if (!existing || specOf(existing) !== specOf(job)) {
      this.upsertVersion(job, existing, index);
      jobModifyIndex = index;
    }
    return this.evaluate(ns, id, 'job-register', index, jobModifyIndex);
  }

  /** Stop (a new version with `Stop: true`) or purge; the real `Job.Deregister`. */
  deregister(namespace: string, id: string, purge: boolean): WriteResult {
    const existing = this.job(namespace, id);
    // A missing job succeeds with empty fields, as in the real product.
    if (!existing) return { EvalID: '', EvalCreateIndex: 0, JobModifyIndex: 0, Index: 0 };
    const index = this.commit();
    if (purge) {
      this.jobs.delete(key(namespace, id));
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
    this.changed();
    return { EvalID: evaluation.ID, EvalCreateIndex: index, JobModifyIndex: jobModifyIndex, Index: index };
  }

  /** The simulated scheduler: reconciles the job's allocations with its groups, at a new index. */
  private schedule(evaluation: EvalRecord, job: Json | undefined): void {
    const index = this.commit();
    const now = nowNanos();
    evaluation.SnapshotIndex = index - 1;
    const live = this.allocsOf(evaluation.Namespace, evaluation.JobID, true).filter(
      (a) => a.DesiredStatus === 'run' && !TERMINAL_CLIENT.has(a.ClientStatus),
    );
    const stop = (a: AllocRecord, why: string) => this.stopAlloc(a, why, index, now);
    // Earlier blocked evaluations of the job are superseded by this one.
    for (const e of this.evalsOf(evaluation.Namespace, evaluation.JobID))
      if (e.Status === 'blocked')
        Object.assign(e, { Status: 'canceled', ModifyIndex: index, ModifyTime: now });

    const queued: Record<string, number> = {};
    const failed: Record<string, Json> = {};
    if (!job || job.Stop === true) {
      for (const a of live) stop(a, 'alloc not needed due to job update');
    } else {
      const groups = job.TaskGroups as Json[];
      const eligible = this.nodes.filter((n) =>
        (job.Datacenters as string[]).some((p) => dcMatches(p, n.Datacenter)),
      );
      for (const a of live) {
        const tg = groups.find((g) => g.Name === a.TaskGroup);
        if (!tg || a.JobCreateIndex !== job.CreateIndex) stop(a, 'alloc not needed due to job update');
        else if (a.GroupSpec !== groupSpec(tg)) stop(a, 'alloc is being updated due to job update');
      }
      for (const tg of groups) {
        const name = tg.Name as string;
        const count = tg.Count as number;
        const mine = live
          .filter((a) => a.TaskGroup === name && a.DesiredStatus === 'run')
          .sort((a, b) => nameIndex(a) - nameIndex(b));
        for (const a of mine.slice(count)) stop(a, 'alloc not needed due to job update');
        const used = new Set(mine.slice(0, count).map(nameIndex));
        queued[name] = 0;
        let missing = count - Math.min(count, mine.length);
        for (let i = 0; missing > 0; i++) {
          if (used.has(i)) continue;
          if (eligible.length === 0) {
            queued[name] = missing;
            failed[name] = placementFailure(this.nodes.length);
            break;
          }
          this.place(evaluation, job, tg, i, eligible, index, now);
          missing--;
        }
      }
    }
    Object.assign(evaluation, {
      Status: 'complete',
      QueuedAllocations: queued,
      FailedTGAllocs: Object.keys(failed).length > 0 ? failed : null,
      ModifyIndex: index,
      ModifyTime: now,
    });
    if (Object.keys(failed).length > 0) {
      // As the real scheduler: a blocked evaluation waits for capacity (here: forever, nodes are fixed).
      const blocked: EvalRecord = {
        ...structuredClone(evaluation),
        ID: randomUUID(),
        Status: 'blocked',
        StatusDescription: 'created due to placement conflicts',
        TriggeredBy: 'queued-allocs',
        PreviousEval: evaluation.ID,
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

  private place(
    evaluation: EvalRecord,
    job: Json,
    tg: Json,
    nameIdx: number,
    eligible: readonly NodeInfo[],
    index: number,
    now: number,
  ): void {
    const node = eligible[this.cursor % eligible.length]!;
    this.cursor++;
    const started = new Date(now / 1_000_000).toISOString();
    const taskStates: Record<string, Json> = {};
    for (const task of tg.Tasks as Json[]) {
      taskStates[task.Name as string] = {
        State: 'running',
        Failed: false,
        Restarts: 0,
        StartedAt: started,
        FinishedAt: null,
        Events: [
          taskEvent('Received', 'Task received by client', now),
          taskEvent('Task Setup', 'Building Task Directory', now),
          taskEvent('Started', 'Task started by client', now),
        ],
      };
    }
    const alloc: AllocRecord = {
      ID: randomUUID(),
      Namespace: job.Namespace as string,
      EvalID: evaluation.ID,
      Name: `${String(job.ID)}.${String(tg.Name)}[${nameIdx}]`,
      NodeID: node.ID,
      NodeName: node.Name,
      JobID: job.ID as string,
      JobType: job.Type,
      JobVersion: job.Version,
      TaskGroup: tg.Name as string,
      DesiredStatus: 'run',
      DesiredDescription: '',
      ClientStatus: 'running',
      ClientDescription: 'Tasks are running',
      TaskStates: taskStates,
      PreviousAllocation: '',
      NextAllocation: '',
      RescheduleTracker: null,
      FollowupEvalID: '',
      CreateIndex: index,
      ModifyIndex: index,
      CreateTime: now,
      ModifyTime: now,
      JobCreateIndex: job.CreateIndex as number,
      GroupSpec: groupSpec(tg),
    };
    this.allocs.set(alloc.ID, alloc);
    this.tables.allocs = index;
  }

  private stopAlloc(a: AllocRecord, why: string, index: number, now: number): void {
    const finished = new Date(now / 1_000_000).toISOString();
    for (const state of Object.values(a.TaskStates as Record<string, Json>)) {
      state.State = 'dead';
      state.FinishedAt = finished;
      (state.Events as Json[]).push(taskEvent('Killed', 'Task successfully killed', now));
    }
    Object.assign(a, {
      DesiredStatus: 'stop',
      DesiredDescription: why,
      ClientStatus: 'complete',
      ClientDescription: 'All tasks have completed',
      ModifyIndex: index,
      ModifyTime: now,
    });
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
      this.allocsOf(ns, id, false).some(
        (a) => a.DesiredStatus === 'run' && !TERMINAL_CLIENT.has(a.ClientStatus),
      )
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
    };
  }

  /** Replaces the whole state with `s` (maps are cleared first, so `dryRun` can put state back). */
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
  }

  /**
   * Runs `fn` on the current state, then puts the state back as it was: the real plan runs the
   * scheduler on a snapshot of the state store. `fn` sees its own writes (so the placement logic is
   * the real one); afterwards nothing is visible: no index advance, no wake-up of blocking queries,
   * no persistence write. State added to `snapshot`/`restore` is covered automatically.
   */
  dryRun<T>(fn: () => T): T {
    const saved = structuredClone(this.snapshot());
    const wasDry = this.dry;
    this.dry = true;
    try {
      return fn();
    } finally {
      this.restore(saved);
      this.dry = wasDry;
    }
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

function groupSpec(tg: Json): string {
  return specOf({ ...tg, Count: undefined });
}

function nameIndex(a: AllocRecord): number {
  return Number(/\[(\d+)\]$/.exec(a.Name as string)?.[1] ?? 0);
}

function taskEvent(type: string, message: string, time: number): Json {
  return { Type: type, Time: time, DisplayMessage: message, Message: '', FailsTask: false };
}

/** The real AllocMetric of a group no node could take; here only a datacenter mismatch causes it. */
function placementFailure(nodes: number): Json {
  return {
    NodesEvaluated: 0,
    NodesFiltered: 0,
    NodesInPool: nodes,
    NodesAvailable: {},
    ClassFiltered: null,
    ConstraintFiltered: null,
    NodesExhausted: 0,
    ClassExhausted: null,
    DimensionExhausted: null,
    QuotaExhausted: null,
    Scores: null,
    AllocationTime: 0,
    CoalescedFailures: 0,
  };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Checks the shape of a loaded state file before trusting it. */
export function isSchedulerSnapshot(value: unknown): value is SchedulerSnapshot {
  const v = value as Partial<SchedulerSnapshot> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    Number.isInteger(v.index) &&
    Array.isArray(v.jobs) &&
    Array.isArray(v.evals) &&
    Array.isArray(v.allocs) &&
    typeof v.tables === 'object' &&
    v.tables !== null &&
    Number.isInteger(v.cursor)
  );
}
