/**
 * A live job written back as an inline manifest job (`converge export`): the fields a manifest may
 * write at each level and nothing the service keeps about the job itself (status, indexes, version,
 * submit time), without the ID (metadata.name says it), the namespace (metadata.namespace), the
 * Name when it is the ID, the ownership marker, and the zero values and nulls the service fills in
 * for what a job leaves out. The comparison is the service's own plan, which fills the same
 * defaults in again, so planning the export shows no changes.
 */
import { withDurations } from './job-durations.js';
import type { Job } from '../../clients/scheduler/client.js';
import {
  DEFAULT_CPU_MHZ,
  DEFAULT_DATACENTERS,
  DEFAULT_EPHEMERAL_DISK,
  DEFAULT_JOB_PRIORITY,
  DEFAULT_KILL_TIMEOUT,
  DEFAULT_LOG_CONFIG,
  DEFAULT_MEMORY_MB,
  DEFAULT_MIGRATE,
  DEFAULT_NODE_POOL,
  DEFAULT_REGION,
  DEFAULT_UPDATE,
  defaultReschedulePolicy,
  defaultRestartPolicy,
} from '../../clients/scheduler/defaults.js';
import { compact, deepEqual } from '../compare.js';
import { INLINE_FIELDS, OWNERSHIP_META_KEY } from './job-spec.js';

/** Zero values that still say something: a group scaled to nothing. */
const MEANINGFUL_ZERO = new Set(['Count']);
/** Maps whose entries the user wrote, zero values included. */
const FREE_FORM = new Set(['Config', 'Env', 'Meta']);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function withoutZeros(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutZeros);
  if (!isObject(value)) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k, v]) => MEANINGFUL_ZERO.has(k) || !(v === '' || v === false || v === 0))
      .map(([k, v]) => [k, FREE_FORM.has(k) ? v : withoutZeros(v)]),
  );
}

function pick(value: unknown, fields: readonly string[]): Record<string, unknown> {
  if (!isObject(value)) return {};
  return Object.fromEntries(fields.filter((f) => value[f] !== undefined).map((f) => [f, value[f]]));
}

/** Deletes `field` when it holds what the scheduler would fill in anyway (extra zero fields aside). */
function dropDefault(object: Record<string, unknown>, field: string, fallback: unknown): void {
  const value = object[field];
  if (value === undefined) return;
  const same =
    isObject(value) && isObject(fallback)
      ? deepEqual(withoutZeros(value), withoutZeros(fallback))
      : deepEqual(value, fallback);
  if (same) delete object[field];
}

/**
 * A strategy the service completes field by field (an update or migrate block that names a few
 * fields gets the defaults for the rest): the fields that hold their default are left out, and the
 * block too when nothing else is left. A job file's `update { max_parallel = 2 }` exports as
 * `MaxParallel: 2`, not with the six defaults the service filled in beside it.
 */
function dropDefaultFields(object: Record<string, unknown>, field: string, fallback: unknown): void {
  const value = object[field];
  if (!isObject(value) || !isObject(fallback)) return dropDefault(object, field, fallback);
  const kept = Object.entries(value).filter(
    ([k, v]) => !deepEqual(withoutZeros(v), withoutZeros(fallback[k])),
  );
  if (kept.length === 0) delete object[field];
  else object[field] = Object.fromEntries(kept);
}

/**
 * Leaves out what the service filled in for a job that did not say (the `api` package's defaults),
 * so the export reads as a user writes a job. The scheduler fills the same in again on plan.
 */
function withoutServiceDefaults(job: Record<string, unknown>): void {
  const type = job.Type ?? 'service';
  dropDefault(job, 'Region', DEFAULT_REGION);
  dropDefault(job, 'Priority', DEFAULT_JOB_PRIORITY);
  dropDefault(job, 'NodePool', DEFAULT_NODE_POOL);
  dropDefault(job, 'Datacenters', DEFAULT_DATACENTERS);
  // The job's own update as the service completed it: what each group's falls back to.
  const jobUpdate = isObject(job.Update) ? { ...DEFAULT_UPDATE, ...job.Update } : DEFAULT_UPDATE;
  for (const group of Array.isArray(job.TaskGroups) ? job.TaskGroups : []) {
    if (!isObject(group)) continue;
    // A group's update is the job's (or the default) unless it says otherwise.
    dropDefaultFields(group, 'Update', jobUpdate);
    dropDefaultFields(group, 'Migrate', DEFAULT_MIGRATE);
    dropDefault(group, 'EphemeralDisk', DEFAULT_EPHEMERAL_DISK);
    dropDefault(group, 'ReschedulePolicy', defaultReschedulePolicy(type));
    const groupRestart = group.RestartPolicy;
    dropDefault(group, 'RestartPolicy', defaultRestartPolicy(type));
    for (const task of Array.isArray(group.Tasks) ? group.Tasks : []) {
      if (!isObject(task)) continue;
      dropDefault(task, 'KillTimeout', DEFAULT_KILL_TIMEOUT);
      dropDefault(task, 'LogConfig', DEFAULT_LOG_CONFIG);
      // A task's restart policy is its group's unless it says otherwise.
      dropDefault(task, 'RestartPolicy', groupRestart ?? defaultRestartPolicy(type));
      const resources = task.Resources;
      if (isObject(resources)) {
        if (resources.Cores === undefined || resources.Cores === null)
          dropDefault(resources, 'CPU', DEFAULT_CPU_MHZ);
        dropDefault(resources, 'MemoryMB', DEFAULT_MEMORY_MB);
      }
    }
  }
  dropDefaultFields(job, 'Update', DEFAULT_UPDATE);
}

export function exportJob(job: Job): Record<string, unknown> {
  const top = pick(job, INLINE_FIELDS.job);
  delete top.ID;
  delete top.Namespace;
  if (top.Name === job.ID) delete top.Name;
  if (isObject(top.Meta)) {
    const { [OWNERSHIP_META_KEY]: _marker, ...meta } = top.Meta;
    top.Meta = meta;
  }
  top.TaskGroups = (Array.isArray(top.TaskGroups) ? top.TaskGroups : []).map((g: unknown) => {
    const group = pick(g, INLINE_FIELDS.group);
    group.Tasks = (Array.isArray(group.Tasks) ? group.Tasks : []).map((t: unknown) =>
      pick(t, INLINE_FIELDS.task),
    );
    return group;
  });
  withoutServiceDefaults(top);
  const exported = compact(withoutZeros(top)) as Record<string, unknown>;
  restoreGroupUpdateZeros(top, exported);
  // As a job file writes them (`30s`, not 30000000000): the manifest takes both, and a reader one.
  return withDurations(exported);
}

/**
 * A group's update falls back to the job's, field by field: a zero it keeps after the defaults were
 * dropped (`auto_revert = false`, `canary = 0` under a job that says `true` and `2`) says something,
 * and is put back where the zero values were taken out.
 */
function restoreGroupUpdateZeros(source: Record<string, unknown>, exported: Record<string, unknown>): void {
  const from = Array.isArray(source.TaskGroups) ? source.TaskGroups : [];
  const to = Array.isArray(exported.TaskGroups) ? exported.TaskGroups : [];
  from.forEach((group: unknown, i) => {
    const target: unknown = to[i];
    if (!isObject(group) || !isObject(group.Update) || !isObject(target)) return;
    const zeros = Object.entries(group.Update).filter(([, v]) => v === false || v === 0 || v === '');
    if (zeros.length === 0) return;
    target.Update = { ...(isObject(target.Update) ? target.Update : {}), ...Object.fromEntries(zeros) };
  });
}
