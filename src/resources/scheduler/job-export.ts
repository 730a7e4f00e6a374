/**
 * A live job written back as an inline manifest job (`converge export`): the fields a manifest may
 * write at each level and nothing the service keeps about the job itself (status, indexes, version,
 * submit time), without the ID (metadata.name says it), the namespace (metadata.namespace), the
 * Name when it is the ID, the ownership marker, and the zero values and nulls the service fills in
 * for what a job leaves out. The comparison is the service's own plan, which fills the same
 * defaults in again, so planning the export shows no changes.
 */
import type { Job } from '../../clients/scheduler/client.js';
import { compact } from '../compare.js';
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
  return compact(withoutZeros(top)) as Record<string, unknown>;
}
