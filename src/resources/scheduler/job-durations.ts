/**
 * The scheduler counts every duration of a job in nanoseconds (spec part B: "Duration fields
 * (intervals, delays, timeouts) are integers"), where a job file writes `1m` or `24h`. A plan shows
 * them as Go durations again, so `HealthyDeadline = 60000000000` reads `HealthyDeadline = "1m"`.
 *
 * Fields are recognised by name: these names are durations wherever the job API uses them.
 */
import { formatNanoseconds, parseGoDuration } from '../../common/go-duration.js';
import type { AttributeDiff } from '../contract.js';

/**
 * The job API's duration fields. Spec part B lists them by object: task group `ShutdownDelay`,
 * `StopAfterClientDisconnect`; `RestartPolicy` and `ReschedulePolicy` `Interval`, `Delay`,
 * `MaxDelay`; `Migrate` and `Update` `HealthyDeadline`, `MinHealthyTime`, `ProgressDeadline`,
 * `Stagger`; task `KillTimeout`, `ShutdownDelay`; template `Splay`; service check `Interval`,
 * `Timeout`. The rest are the same service's durations the spec's examples do not show (a group's
 * `MaxClientDisconnect`, `Disconnect.LostAfter` and `StopOnClientAfter`, a check restart's `Grace`).
 */
export const JOB_DURATION_FIELDS: ReadonlySet<string> = new Set([
  'ShutdownDelay',
  'StopAfterClientDisconnect',
  'MaxClientDisconnect',
  'LostAfter',
  'StopOnClientAfter',
  'Interval',
  'Delay',
  'MaxDelay',
  'HealthyDeadline',
  'MinHealthyTime',
  'ProgressDeadline',
  'Stagger',
  'KillTimeout',
  'Splay',
  'Timeout',
  'Grace',
]);

/**
 * Maps whose keys are the user's own (a driver's config, environment, metadata): a key there that
 * happens to be called `Timeout` is not the scheduler's duration.
 */
const FREE_FORM = new Set(['Config', 'Env', 'Meta']);

/** A nanosecond count as a Go duration; anything else (a null, a text) as it is. */
function asDuration(value: unknown): unknown {
  if (typeof value === 'number' && Number.isInteger(value)) return formatNanoseconds(value);
  // The service's diffs carry every value as text.
  if (typeof value === 'string' && /^-?\d+$/.test(value)) return formatNanoseconds(Number(value));
  return value;
}

/**
 * A job (or any part of one) with `convert` applied to each duration field's value, wherever it is
 * nested, and the user's own maps left alone.
 */
function mapDurationFields<T>(value: T, convert: (value: unknown) => unknown): T {
  if (Array.isArray(value)) return value.map((v: unknown) => mapDurationFields(v, convert)) as T;
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [
      k,
      JOB_DURATION_FIELDS.has(k) ? convert(v) : FREE_FORM.has(k) ? v : mapDurationFields(v, convert),
    ]),
  ) as T;
}

/**
 * Duration fields holding a bare number under a millisecond (`KillTimeout: 5`), by JSON pointer below
 * `at`: the scheduler reads a number as nanoseconds, and no job means a 5 ns timeout; a job file's
 * writer meant seconds. Written as text (`5ns`), such a value is taken as meant.
 */
export function subMillisecondDurations(value: unknown, at = ''): { pointer: string; value: number }[] {
  if (Array.isArray(value)) return value.flatMap((v: unknown, i) => subMillisecondDurations(v, `${at}/${i}`));
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([k, v]) => {
    const pointer = `${at}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    if (JOB_DURATION_FIELDS.has(k))
      return typeof v === 'number' && v > 0 && v < 1_000_000 ? [{ pointer, value: v }] : [];
    return FREE_FORM.has(k) ? [] : subMillisecondDurations(v, pointer);
  });
}

/** A job (or any part of one) with its duration fields written as Go durations. */
export function withDurations<T>(value: T): T {
  return mapDurationFields(value, asDuration);
}

/** One `<number><unit>` of a Go duration, for a schema pattern (no sign: no job duration is negative). */
export const GO_DURATION_PART = '(\\d+(\\.\\d*)?|\\.\\d+)(ns|us|µs|μs|ms|s|m|h)';

/** A duration written as text (`20s`) in nanoseconds; anything else as it is. */
function asNanoseconds(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const ms = parseGoDuration(value.trim());
  return ms === undefined ? value : Math.round(ms * 1e6);
}

/**
 * A job (or any part of one) with its duration fields written as text turned into the nanoseconds
 * the service takes: what `withDurations` does the other way. The user's own maps are left alone.
 */
export function inNanoseconds<T>(value: T): T {
  return mapDurationFields(value, asNanoseconds);
}

/** The field a diff path ends in: `Interval` for `TaskGroups[web].RestartPolicy.Interval`. */
function fieldOf(path: string): string {
  return path.slice(path.lastIndexOf('.') + 1);
}

/** Whether a path runs through a user's own map (`…Config.Timeout`, `Meta.Interval`). */
function inFreeForm(path: string): boolean {
  return path
    .split('.')
    .slice(0, -1)
    .some((part) => FREE_FORM.has(part.replace(/\[.*$/, '')));
}

/**
 * A diff of a duration field in the form the job was written in (the manifest's units): where the
 * manifest or a JSON job file wrote nanoseconds, both sides stay nanoseconds; where it wrote `20s`,
 * the new value is that text and the old one a Go duration; where nothing was written for the field
 * (a default the service fills in) or a text job's parser turned `"20s"` into nanoseconds, both
 * sides are Go durations.
 */
export function diffWithDurations(diff: AttributeDiff, written?: unknown): AttributeDiff {
  if (!JOB_DURATION_FIELDS.has(fieldOf(diff.path)) || inFreeForm(diff.path)) return diff;
  if (typeof written === 'number') return diff;
  return {
    ...diff,
    ...('before' in diff ? { before: asDuration(diff.before) } : {}),
    ...('after' in diff ? { after: typeof written === 'string' ? written : asDuration(diff.after) } : {}),
  };
}
