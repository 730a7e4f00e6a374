/**
 * The scheduler's data: jobs as the JSON objects clients send (kept free-form, so fields this slice
 * does not model survive a round trip), plus the evaluations and allocations the simulated scheduler
 * makes. Canonicalisation and validation follow the real product (`api/jobs.go Canonicalize`,
 * `nomad/structs Job.Validate`), limited to what this slice needs.
 */
export type Json = Record<string, unknown>;

/** An error answered as the real scheduler does: plain text with a status. */
export class SchedulerError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'SchedulerError';
  }
}

export const JOB_TYPES = ['service', 'batch', 'system', 'sysbatch'] as const;
/** The real `job_tracked_versions` default: older versions are dropped. */
export const TRACKED_VERSIONS = 6;
const NS_PER_SECOND = 1_000_000_000;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Type checks the real agent's JSON decoding would make (it decodes into typed Go structs), as 400s.
 * UNCONFIRMED: the texts; Go's decoder says `json: cannot unmarshal ...`.
 */
export function checkJobShape(job: unknown): asserts job is Json {
  if (!isObject(job)) throw new SchedulerError(400, 'json: cannot unmarshal Job: expected an object');
  const want = (
    where: string,
    value: unknown,
    type: 'string' | 'integer' | 'boolean' | 'array' | 'object',
  ) => {
    if (value === undefined || value === null) return;
    const ok =
      type === 'integer'
        ? Number.isInteger(value)
        : type === 'array'
          ? Array.isArray(value)
          : type === 'object'
            ? isObject(value)
            : typeof value === type;
    if (!ok) throw new SchedulerError(400, `json: cannot unmarshal ${where}: expected ${type}`);
  };
  for (const f of ['ID', 'Name', 'Namespace', 'Region', 'Type', 'ParentID'])
    want(`Job.${f}`, job[f], 'string');
  want('Job.Priority', job.Priority, 'integer');
  want('Job.Datacenters', job.Datacenters, 'array');
  want('Job.TaskGroups', job.TaskGroups, 'array');
  want('Job.Stop', job.Stop, 'boolean');
  ((job.TaskGroups as unknown[] | undefined) ?? []).forEach((tg, i) => {
    want(`Job.TaskGroups[${i}]`, tg, 'object');
    if (!isObject(tg)) return;
    want(`Job.TaskGroups[${i}].Name`, tg.Name, 'string');
    want(`Job.TaskGroups[${i}].Count`, tg.Count, 'integer');
    want(`Job.TaskGroups[${i}].Tasks`, tg.Tasks, 'array');
    ((tg.Tasks as unknown[] | undefined) ?? []).forEach((t, j) => {
      want(`Job.TaskGroups[${i}].Tasks[${j}]`, t, 'object');
      if (isObject(t)) {
        want(`Job.TaskGroups[${i}].Tasks[${j}].Name`, t.Name, 'string');
        want(`Job.TaskGroups[${i}].Tasks[${j}].Driver`, t.Driver, 'string');
      }
    });
  });
}

const unset = (v: unknown) => v === undefined || v === null;
const orDefault = (obj: Json, key: string, value: unknown) => {
  if (unset(obj[key])) obj[key] = value;
};

/**
 * Fills the defaults the real product fills on register (`api/jobs.go` and `api/tasks.go`
 * `Canonicalize`), minimally: the job header, group counts and the group and task blocks whose
 * defaults every client sees when it reads a job back. Durations are nanoseconds, as in the real JSON.
 */
export function canonicalizeJob(input: Json, namespace: string, region: string): Json {
  const job: Json = structuredClone(input);
  job.Namespace = namespace;
  // The real agent replaces an empty or `global` region with its own (here: the configured one).
  if (unset(job.Region) || job.Region === '' || job.Region === 'global') job.Region = region;
  if (unset(job.Name) || job.Name === '') job.Name = job.ID;
  orDefault(job, 'ParentID', '');
  orDefault(job, 'Type', 'service');
  orDefault(job, 'Priority', 50);
  orDefault(job, 'AllAtOnce', false);
  orDefault(job, 'Datacenters', ['*']); // the default since the real 1.5 (glob over every datacenter)
  orDefault(job, 'NodePool', 'default');
  orDefault(job, 'Stop', false);
  orDefault(job, 'Dispatched', false);
  orDefault(job, 'Meta', null);
  orDefault(job, 'Periodic', null);
  orDefault(job, 'ParameterizedJob', null);
  orDefault(job, 'TaskGroups', []);
  const batch = job.Type === 'batch' || job.Type === 'sysbatch';
  for (const tg of job.TaskGroups as Json[]) {
    orDefault(tg, 'Count', 1);
    orDefault(tg, 'EphemeralDisk', { Sticky: false, Migrate: false, SizeMB: 300 });
    // `api.NewDefaultRestartPolicy` by job type: service 2 attempts in 30m, batch 3 in 24h; 15s delay.
    orDefault(tg, 'RestartPolicy', {
      Attempts: batch ? 3 : 2,
      Interval: (batch ? 24 * 3600 : 30 * 60) * NS_PER_SECOND,
      Delay: 15 * NS_PER_SECOND,
      Mode: 'fail',
    });
    orDefault(tg, 'Tasks', []);
    for (const task of tg.Tasks as Json[]) {
      orDefault(task, 'KillTimeout', 5 * NS_PER_SECOND);
      orDefault(task, 'LogConfig', { MaxFiles: 10, MaxFileSizeMB: 10 });
      orDefault(task, 'Leader', false);
      const resources: Json = isObject(task.Resources) ? task.Resources : {};
      orDefault(resources, 'CPU', 100);
      orDefault(resources, 'MemoryMB', 300);
      task.Resources = resources;
    }
  }
  canonicalizeUpdate(job);
  return job;
}

const DEFAULT_UPDATE: Json = {
  Stagger: 30 * NS_PER_SECOND,
  MaxParallel: 1,
  HealthCheck: 'checks',
  MinHealthyTime: 10 * NS_PER_SECOND,
  HealthyDeadline: 5 * 60 * NS_PER_SECOND,
  ProgressDeadline: 10 * 60 * NS_PER_SECOND,
  AutoRevert: false,
  Canary: 0,
  AutoPromote: false,
};

/**
 * The real `api.Job.Canonicalize` update handling: a service or system job without `Update` gets
 * `DefaultUpdateStrategy`, unset fields take its defaults, and each group merges the job's block under
 * its own (a group inherits the job's only when that is non-empty). So every service group ends up
 * with `MaxParallel: 1` and its registrations make deployments, as with the real product.
 */
function canonicalizeUpdate(job: Json): void {
  const fill = (u: Json) => {
    for (const [k, v] of Object.entries(DEFAULT_UPDATE)) orDefault(u, k, v);
    return u;
  };
  if (isObject(job.Update)) fill(job.Update);
  else if (job.Type === 'service' || job.Type === 'system') job.Update = { ...DEFAULT_UPDATE };
  const jobUpdate = isObject(job.Update) ? job.Update : undefined;
  const empty = (u: Json) =>
    Object.entries(u).every(([, v]) => v === null || v === undefined || v === 0 || v === '' || v === false);
  for (const tg of job.TaskGroups as Json[]) {
    const own = isObject(tg.Update) ? tg.Update : undefined;
    if (jobUpdate && own) {
      const merged: Json = { ...jobUpdate };
      for (const [k, v] of Object.entries(own)) if (!unset(v)) merged[k] = v;
      tg.Update = fill(merged);
    } else if (jobUpdate && !empty(jobUpdate)) tg.Update = { ...jobUpdate };
    else if (own) fill(own);
  }
}

/**
 * The real `Job.Validate` checks this slice relies on, collected as a multierror; their texts are the
 * real ones (`nomad/structs/structs.go`). Returns undefined when valid.
 */
export function validateJob(job: Json): string | undefined {
  const errs: string[] = [];
  const id = job.ID as string;
  if (id === '') errs.push('Missing job ID');
  else if (id.includes(' ')) errs.push('Job ID contains a space');
  else if (id.includes('\0')) errs.push('Job ID contains a null character');
  if (job.Name === '') errs.push('Missing job name');
  if (!(JOB_TYPES as readonly string[]).includes(job.Type as string))
    errs.push(`Invalid job type: "${String(job.Type)}"`);
  const priority = job.Priority as number;
  if (priority < 1 || priority > 100) errs.push('Job priority must be between [1, 100]');
  const groups = job.TaskGroups as Json[];
  if (groups.length === 0) errs.push('Missing job task groups');
  const groupNames = new Map<string, number>();
  groups.forEach((tg, i) => {
    const name = (tg.Name as string | undefined) ?? '';
    if (name === '') errs.push(`Job task group ${i + 1} missing name`);
    else if (groupNames.has(name))
      errs.push(`Job task group ${i + 1} redefines '${name}' from group ${groupNames.get(name)! + 1}`);
    else groupNames.set(name, i);
    const inner: string[] = [];
    if ((tg.Count as number) < 0) inner.push("Task group count can't be negative");
    const tasks = tg.Tasks as Json[];
    if (tasks.length === 0) inner.push('Missing tasks for task group');
    const taskNames = new Map<string, number>();
    tasks.forEach((task, j) => {
      const tname = (task.Name as string | undefined) ?? '';
      if (tname === '') inner.push(`Task ${j + 1} missing name`);
      else if (taskNames.has(tname))
        inner.push(`Task ${j + 1} redefines '${tname}' from task ${taskNames.get(tname)! + 1}`);
      else taskNames.set(tname, j);
      if (!task.Driver) inner.push(`Task ${tname || j + 1} validation failed: Missing task driver`);
    });
    if (inner.length > 0) errs.push(`Task group ${name} validation failed: ${multiError(inner)}`);
  });
  return errs.length > 0 ? multiError(errs) : undefined;
}

/** go-multierror's format, which the real product's validation errors use. */
export function multiError(errs: string[]): string {
  const points = errs.map((e) => `* ${e}`).join('\n\t');
  return `${errs.length} error${errs.length === 1 ? '' : 's'} occurred:\n\t${points}\n\n`;
}

/** Fields the server sets, which the real `Job.SpecChanged` ignores when comparing. */
const SERVER_FIELDS = [
  'Status',
  'StatusDescription',
  'Stable',
  'Version',
  'SubmitTime',
  'CreateIndex',
  'ModifyIndex',
  'JobModifyIndex',
];

export function specOf(job: Json): string {
  const copy: Json = { ...job };
  for (const f of SERVER_FIELDS) delete copy[f];
  return stableStringify(copy);
}

/** JSON with sorted keys, so equal specs compare equal whatever the order clients send keys in. */
function stableStringify(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`;
  if (isObject(value))
    return `{${Object.keys(value)
      .filter((k) => value[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableStringify(value[k])}`)
      .join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

/**
 * The real `IsPeriodic() || IsParameterized()`: such jobs are templates and get no evaluation. A
 * dispatched child keeps its parent's `ParameterizedJob` block but is not parameterized itself.
 */
export function isPeriodicOrParameterized(job: Json): boolean {
  return !unset(job.Periodic) || (!unset(job.ParameterizedJob) && job.Dispatched !== true);
}

export function nowNanos(): number {
  return Date.now() * 1_000_000;
}

export interface EvalRecord extends Json {
  ID: string;
  Namespace: string;
  JobID: string;
  Status: string;
  CreateIndex: number;
  ModifyIndex: number;
}

export interface AllocRecord extends Json {
  ID: string;
  Namespace: string;
  JobID: string;
  TaskGroup: string;
  ClientStatus: string;
  DesiredStatus: string;
  CreateIndex: number;
  ModifyIndex: number;
  /** Internal: the CreateIndex of the job instance it belongs to (not sent; the real alloc embeds its job). */
  JobCreateIndex?: number;
}

export interface JobRecord {
  /** Newest first; `versions[0]` is the current job. At most TRACKED_VERSIONS. */
  versions: Json[];
}

export interface NodeInfo {
  ID: string;
  Name: string;
  Datacenter: string;
  /** Allocatable CPU (MHz) and memory (MB). */
  CPU: number;
  MemoryMB: number;
}

export interface DeploymentRecord extends Json {
  ID: string;
  Namespace: string;
  JobID: string;
  JobVersion: number;
  JobCreateIndex: number;
  Status: string;
  TaskGroups: Record<string, Json>;
  CreateIndex: number;
  ModifyIndex: number;
  /** Internal: when (ms since the epoch) the sandbox lets it succeed. Not sent. */
  DueAt?: number;
}

export const TERMINAL_CLIENT = new Set(['complete', 'failed', 'lost']);
export const TERMINAL_EVAL = new Set(['complete', 'failed', 'canceled']);
