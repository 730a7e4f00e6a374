/**
 * What a plan shows of a whole job: the job to create as its manifest wrote it (a text job's
 * nanoseconds as durations again), the job to delete by what identifies it, durations as durations.
 */
import type { Job } from '../../clients/scheduler/client.js';
import { compact } from '../compare.js';
import { withDurations } from './job-durations.js';
import { OWNERSHIP_META_KEY } from './job-spec.js';

/** Maps whose entries the user wrote, zero values included (`privileged = false` in a config). */
const FREE_FORM = new Set(['Config', 'Env', 'Meta']);

/** Zero values that still say something: a group scaled to nothing. */
const MEANINGFUL_ZERO = new Set(['Count']);

function isZero(value: unknown): boolean {
  return value === '' || value === false || value === 0;
}

/**
 * The job without the zero values a text job's parser fills in for every field the file leaves out
 * (`User = ""`, `Leader = false`, `ShutdownDelay = 0`, `KillSignal = ""`, `Dispatched = false`):
 * each is the service's default, so leaving it out of the plan says the same thing, shorter.
 */
function withoutParserZeros(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutParserZeros);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k, v]) => MEANINGFUL_ZERO.has(k) || !isZero(v))
      .map(([k, v]) => [k, FREE_FORM.has(k) ? v : withoutParserZeros(v)]),
  );
}

/**
 * The job to create as the plan shows it. An inline or JSON job is what the manifest wrote (nulls
 * and empty lists aside). A text job comes back from the service's parser with every field, so its
 * zero values are left out, and its `Name`, which the parser copies from the ID, unless it differs.
 */
export function createView(job: Job, fromText: boolean): Record<string, unknown> {
  const written = withoutOwnershipMarker(job);
  // As written: durations in the form the manifest or the JSON file gave them (the manifest's units).
  if (!fromText) return compact({ ...written });
  const { Name, ...rest } = withoutParserZeros(written) as Job;
  return withDurations(compact({ ...rest, ...(Name !== undefined && Name !== job.ID ? { Name } : {}) }));
}

/**
 * The job without the `Meta` entry Converge adds to mark the jobs it owns: the manifest did not
 * write it, and a reviewer of a create decides on what the manifest asks for.
 */
function withoutOwnershipMarker(job: Job): Job {
  if (!job.Meta || !(OWNERSHIP_META_KEY in job.Meta)) return job;
  const { [OWNERSHIP_META_KEY]: _marker, ...meta } = job.Meta;
  const { Meta: _meta, ...rest } = job;
  return Object.keys(meta).length > 0 ? { ...rest, Meta: meta } : (rest as Job);
}

/**
 * A task group or task that a change adds, as the manifest wrote it (a text job's parser zeros left
 * out, durations as durations), or that it removes, by its name and count: the service's diff lists
 * every default of a new group field by field, as text, which says nothing a reviewer decides on.
 */
export function addedPartView(part: unknown, fromText: boolean): unknown {
  return fromText ? withDurations(compact(withoutParserZeros(part))) : compact(part);
}

export function removedPartView(part: unknown): unknown {
  const { Name, Count, Driver } = (part ?? {}) as { Name?: unknown; Count?: unknown; Driver?: unknown };
  return compact({ Name, Count, Driver });
}

/**
 * The job to delete as the plan shows it: what identifies it and what it runs (type, datacenters,
 * a periodic schedule, its groups and their counts, each task's driver and the image or command it
 * starts). The live job holds every default the service filled in, which says nothing about what
 * goes away; a reviewer deciding on a deletion needs to see what stops running, not only a count.
 */
export function deleteView(job: Job): Record<string, unknown> {
  return compact({
    ID: job.ID,
    Namespace: job.Namespace,
    Type: job.Type,
    Datacenters: job.Datacenters,
    ...(job.Periodic?.Spec ? { Periodic: { Spec: job.Periodic.Spec } } : {}),
    TaskGroups: (job.TaskGroups ?? []).map((g) => ({
      Name: g.Name,
      Count: g.Count,
      Tasks: (g.Tasks ?? []).map((t) => ({ Name: t.Name, Driver: t.Driver, Config: whatItRuns(t.Config) })),
    })),
  });
}

/** Of a task's driver config, what names the program it runs: the image, the command. */
function whatItRuns(config: unknown): Record<string, unknown> | undefined {
  if (typeof config !== 'object' || config === null) return undefined;
  const { image, command } = config as Record<string, unknown>;
  return image === undefined && command === undefined ? undefined : { image, command };
}

/**
 * What the service adds to a job to create that changes what runs, told beside the plan because the
 * manifest does not say it: a group without a count runs the service's default (its scaling
 * minimum, or 1). Other defaults the service fills in (a priority, a region) change nothing a
 * reviewer decides on, and are left out.
 */
export function serviceDefaultNotes(job: Job): string[] {
  return (job.TaskGroups ?? [])
    .filter((g) => g.Count === undefined || g.Count === null)
    .map((g) => {
      const min = (g.Scaling as { Min?: unknown } | null | undefined)?.Min;
      const count = typeof min === 'number' ? `${min} (its scaling minimum)` : '1 (its default)';
      return `group ${g.Name}: Count not set: the scheduler runs ${count}`;
    });
}
