/**
 * The scheduler's data: jobs as the JSON objects clients send (kept free-form, so fields this slice
 * does not model survive a round trip), plus the evaluations and allocations the simulated scheduler
 * makes. Validation follows the real product (`nomad/structs Job.Validate`), limited to what this
 * slice needs; canonicalisation has its own module (canonicalize.ts).
 */
import { jsonEqual } from '../../../common/json-equal.js';

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
        want(`Job.TaskGroups[${i}].Tasks[${j}].KillTimeout`, t.KillTimeout, 'integer');
        want(`Job.TaskGroups[${i}].Tasks[${j}].Env`, t.Env, 'object');
        want(`Job.TaskGroups[${i}].Tasks[${j}].Resources`, t.Resources, 'object');
        // Go decodes these into ints: `CPU: "lots"` is refused before anything else looks at it.
        if (isObject(t.Resources))
          for (const f of ['CPU', 'Cores', 'MemoryMB', 'MemoryMaxMB', 'DiskMB', 'IOPS'])
            want(`Job.TaskGroups[${i}].Tasks[${j}].Resources.${f}`, t.Resources[f], 'integer');
      }
    });
  });
}

const unset = (v: unknown) => v === undefined || v === null;

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

/**
 * A field sent as null is the field not sent: the real agent decodes the JSON into Go structs, where
 * both leave the field at its zero value (a nil pointer, slice or map; a struct's own zero), so
 * `"UI": null` (which an HCL job parsed by the service carries for every block it does not use) and
 * no `UI` at all are the same job. Spec comparisons skip null members as the diff does (diff.ts
 * `canonical`); a null inside a list stays, as it does in Go.
 */
const nullIsAbsent = (v: unknown) => v === null;

export function specOf(job: Json): string {
  const copy: Json = { ...job };
  for (const f of SERVER_FIELDS) delete copy[f];
  return stableStringify(copy);
}

const IGNORED_BY_SPEC = new Set(SERVER_FIELDS);

/**
 * Whether two jobs have the same spec (the real `SpecChanged`, null members counting as absent):
 * `specOf(a) === specOf(b)` without building either string (a
 * plan compares the stored job with the planned one twice, and the strings were most of its cost).
 */
export function sameSpec(a: Json, b: Json): boolean {
  return jsonEqual(a, b, { ignored: IGNORED_BY_SPEC, absent: nullIsAbsent });
}

/**
 * Puts `saved` back into `table` over the records `belongs` picks, each at its place (a record set
 * again keeps its position), and drops those picked records that `saved` does not have: a scoped dry
 * run's rollback of evaluations, allocations and deployments.
 */
export function putBackRecords<R extends { ID: string }>(
  table: Map<string, R>,
  belongs: (r: R) => boolean,
  saved: readonly R[],
): void {
  const kept = new Set(saved.map((r) => r.ID));
  for (const [id, r] of table) if (belongs(r) && !kept.has(id)) table.delete(id);
  for (const r of saved) table.set(r.ID, r);
}

/**
 * JSON with sorted keys and without null members (see `nullIsAbsent`), so equal specs compare equal
 * whatever the order clients send keys in and whether they send unused fields as null. Built
 * by appending rather than through filter/map/join: every placed allocation stringifies its group
 * (`groupSpec`), and the intermediate arrays were half of a new job's plan.
 */
function stableStringify(value: unknown): string {
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i += 1) out += (i === 0 ? '' : ',') + stableStringify(value[i]);
    return `${out}]`;
  }
  if (isObject(value)) {
    let out = '{';
    for (const k of Object.keys(value).sort()) {
      const v = value[k];
      if (v === undefined || v === null) continue;
      out += `${out.length === 1 ? '' : ','}${JSON.stringify(k)}:${stableStringify(v)}`;
    }
    return `${out}}`;
  }
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
