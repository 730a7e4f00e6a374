/**
 * The service's plan of a job, in Converge's terms: its structured diff as attribute diffs (paths as a
 * manifest writes them: `Priority`, `Meta.owner`, `TaskGroups[web].Count`,
 * `TaskGroups[web].Tasks[server].Config.image`), the service's task annotations as notes on those
 * diffs, and what the scheduler would do with allocations as notes on the object.
 */
import type {
  AllocMetric,
  DesiredUpdates,
  DiffType,
  FieldDiff,
  Job,
  ObjectDiff,
  PlanResponse,
} from '../../clients/scheduler/client.js';
import type { AttributeDiff } from '../contract.js';
import { childPath, pathParts } from '../diff-path.js';
import { diffWithDurations } from './job-durations.js';
import { addedPartView, removedPartView } from './job-view.js';

const OP: Record<Exclude<DiffType, 'None'>, AttributeDiff['op']> = {
  Added: 'add',
  Deleted: 'remove',
  Edited: 'change',
};

/**
 * `Meta[owner]` is a map entry: written `Meta.owner` in a manifest (list items keep `args[0]`), and a
 * key that holds a dot stays one key (`Env["spring.datasource.url"]`, see diff-path.ts).
 */
function fieldPath(prefix: string, name: string): string {
  const entry = /^(Meta|Env)\[(.+)\]$/.exec(name);
  const own = entry ? childPath(entry[1]!, entry[2]!) : name;
  return prefix ? `${prefix}.${own}` : own;
}

/**
 * The value at a diff path in a job: `a.b`, `TaskGroups[web]` (the list item of that Name), `args[0]`.
 * Undefined when the path leads nowhere.
 */
export function valueAt(root: unknown, path: string): unknown {
  let at: unknown = root;
  for (const part of pathParts(path)) {
    if (at === null || typeof at !== 'object') return undefined;
    if (part.type === 'item') {
      const inner = part.selector;
      if (!Array.isArray(at)) return undefined;
      at = /^\d+$/.test(inner)
        ? at[Number(inner)]
        : at.find((item: unknown) => (item as { Name?: unknown } | null)?.Name === inner);
    } else {
      if (Array.isArray(at)) return undefined;
      const key = part.type === 'name' ? part.name : part.key;
      at = Object.hasOwn(at, key) ? (at as Record<string, unknown>)[key] : undefined;
    }
  }
  return at;
}

/**
 * The service writes every value as a string; the manifest's own value (a number, a boolean) is shown
 * instead when it is the same value, so `Priority: 70` diffs as 70, not "70".
 */
function typed(text: string | undefined, path: string, source: unknown, other: unknown): unknown {
  if (text === undefined) return text;
  const value = valueAt(source, path);
  if ((typeof value === 'number' || typeof value === 'boolean') && String(value) === text) return value;
  // A field the service filled in (a group's Update from the job's) is only on the other side: a
  // number there makes this number-looking text a number too.
  if (value === undefined && typeof valueAt(other, path) === 'number' && /^-?\d+(\.\d+)?$/.test(text))
    return Number(text);
  return text;
}

/** The jobs the diff was made between, for typed values: the live one and the one sent. */
export interface DiffSides {
  before?: unknown;
  after?: unknown;
  /** The job sent came from a text spec, whose parser fills every field the file leaves out. */
  fromText?: boolean;
  /**
   * The job as the manifest (inline) or a JSON job file wrote it, before its durations were turned
   * into nanoseconds: durations are shown in its form. Undefined for a text job.
   */
  written?: unknown;
}

function fieldDiffs(
  prefix: string,
  fields: readonly FieldDiff[] | null | undefined,
  note?: string,
): AttributeDiff[] {
  return (fields ?? [])
    .filter((f) => f.Type !== 'None')
    .map((f) => {
      const op = OP[f.Type as Exclude<DiffType, 'None'>];
      const annotations = [...(f.Annotations ?? []), ...(note ? [note] : [])];
      return {
        path: fieldPath(prefix, f.Name),
        op,
        ...(op !== 'add' ? { before: f.Old } : {}),
        ...(op !== 'remove' ? { after: f.New } : {}),
        ...(annotations.length ? { note: annotations.join('; ') } : {}),
      };
    });
}

/**
 * The service's diff names an item of a job's list by its type alone (`Template`, `Service`): two
 * templates' changes read as one block with a key twice, and `--json` gave both one path. Such an
 * item is written at the list the manifest writes (`Templates`), picked by the field that tells the
 * items apart when the diff carries it (a template's `DestPath`, a service's `Name`).
 */
const LIST_ITEMS: Readonly<Record<string, { list: string; keys: readonly string[] }>> = {
  Template: { list: 'Templates', keys: ['DestPath'] },
  Service: { list: 'Services', keys: ['Name'] },
  Artifact: { list: 'Artifacts', keys: ['RelativeDest', 'GetterSource'] },
  Check: { list: 'Checks', keys: ['Name'] },
};

function objectPath(prefix: string, o: ObjectDiff): string {
  const item = LIST_ITEMS[o.Name];
  if (!item) return fieldPath(prefix, o.Name);
  const list = prefix ? `${prefix}.${item.list}` : item.list;
  for (const key of item.keys) {
    const field = (o.Fields ?? []).find((f) => f.Name === key);
    const value = field ? (field.New !== '' && field.New !== undefined ? field.New : field.Old) : undefined;
    if (typeof value === 'string' && value !== '' && !/[\]"]/.test(value)) return `${list}[${value}]`;
  }
  return list;
}

/** A nested object's diffs; one that appeared or went away with nothing inside is one diff of its own. */
function objectDiffs(
  prefix: string,
  objects: readonly ObjectDiff[] | null | undefined,
  note?: string,
): AttributeDiff[] {
  return (objects ?? []).flatMap((o) => nodeDiffs(objectPath(prefix, o), o, note));
}

function nodeDiffs(
  at: string,
  node: { Type: DiffType; Fields?: FieldDiff[] | null; Objects?: ObjectDiff[] | null },
  note?: string,
): AttributeDiff[] {
  if (node.Type === 'None') return [];
  const inner = [...fieldDiffs(at, node.Fields, note), ...objectDiffs(at, node.Objects, note)];
  if (inner.length > 0) return inner;
  const op = OP[node.Type];
  return [{ path: at, op, ...(note ? { note } : {}) }];
}

/**
 * Every attribute the service's diff says changes; empty when the job is unchanged (`Type: None`).
 * Durations show as the job file writes them (`"1m"`), not the service's nanoseconds.
 */
export function planDiffs(plan: PlanResponse, sides: DiffSides = {}): AttributeDiff[] {
  return rawDiffs(plan, sides).map((d) =>
    d.whole
      ? d.diff
      : diffWithDurations(
          {
            ...d.diff,
            ...('before' in d.diff
              ? { before: typed(d.diff.before as string, d.diff.path, sides.before, sides.after) }
              : {}),
            ...('after' in d.diff
              ? { after: typed(d.diff.after as string, d.diff.path, sides.after, sides.before) }
              : {}),
          },
          writtenAt(sides.written, d.diff.path),
        ),
  );
}

/** `TaskGroups[web].Update.MinHealthyTime` → `MinHealthyTime`, for a group's update strategy. */
const GROUP_UPDATE_FIELD = /^TaskGroups\[[^\]]*\]\.Update\.([^.[]+)$/;

/**
 * What the manifest wrote for a diff's path, where the service moved it: a job-level `Update` is
 * copied into each group that does not set the field itself, so the service's diff names the group
 * (`TaskGroups[web].Update.MinHealthyTime`) and the value written is the job's (`Update.…`).
 */
function writtenAt(written: unknown, path: string): unknown {
  const own = valueAt(written, path);
  if (own !== undefined) return own;
  const field = GROUP_UPDATE_FIELD.exec(path)?.[1];
  return field === undefined ? undefined : valueAt(written, `Update.${field}`);
}

/**
 * A group or task the change adds or removes as one diff of its own, carrying the part itself (as the
 * manifest wrote it, or by name and count when it goes away) rather than a line per field and default.
 */
function wholePart(
  at: string,
  type: DiffType,
  sides: DiffSides,
): { whole: true; diff: AttributeDiff } | undefined {
  if (type === 'Added') {
    // As written where the manifest or a JSON file wrote it (its durations in its own form).
    const part = valueAt(sides.written, at) ?? valueAt(sides.after, at);
    if (part === undefined) return undefined;
    return {
      whole: true,
      diff: { path: at, op: 'add', after: addedPartView(part, sides.fromText === true) },
    };
  }
  if (type === 'Deleted') {
    const part = valueAt(sides.before, at);
    if (part === undefined) return undefined;
    return { whole: true, diff: { path: at, op: 'remove', before: removedPartView(part) } };
  }
  return undefined;
}

type RawDiff = { whole: boolean; diff: AttributeDiff };

function rawDiffs(plan: PlanResponse, sides: DiffSides): RawDiff[] {
  const diff = plan.Diff;
  if (!diff || diff.Type === 'None') return [];
  const field = (d: AttributeDiff): RawDiff => ({ whole: false, diff: d });
  const out: RawDiff[] = [...fieldDiffs('', diff.Fields), ...objectDiffs('', diff.Objects)].map(field);
  for (const group of diff.TaskGroups ?? []) {
    if (group.Type === 'None') continue;
    const at = `TaskGroups[${group.Name}]`;
    const whole = wholePart(at, group.Type, sides);
    if (whole) {
      out.push(whole);
      continue;
    }
    const inner: RawDiff[] = [...fieldDiffs(at, group.Fields), ...objectDiffs(at, group.Objects)].map(field);
    for (const task of group.Tasks ?? []) {
      if (task.Type === 'None') continue;
      const taskAt = `${at}.Tasks[${task.Name}]`;
      const wholeTask = wholePart(taskAt, task.Type, sides);
      if (wholeTask) {
        inner.push(wholeTask);
        continue;
      }
      const note = (task.Annotations ?? []).join('; ') || undefined;
      const own = [...fieldDiffs(taskAt, task.Fields, note), ...objectDiffs(taskAt, task.Objects, note)];
      // A task the service marks edited for its group's change (a group's RestartPolicy reaches its
      // tasks) but whose own diff shows nothing: a bare line read `Tasks["worker"] = null -> null`,
      // as if the task were emptied. The group's line and its allocation counts say the change.
      if (own.length === 0 && task.Type === 'Edited') continue;
      inner.push(...nodeDiffs(taskAt, task, note).map(field));
    }
    out.push(...(inner.length > 0 ? inner : [field({ path: at, op: OP[group.Type] })]));
  }
  return out;
}

/** The scheduler's words for each kind of allocation change, in the order a reader wants them. */
const UPDATE_WORDS: [keyof DesiredUpdates, string][] = [
  ['Place', 'to place'],
  ['DestructiveUpdate', 'to replace (create/destroy update)'],
  ['InPlaceUpdate', 'to update in place'],
  ['Stop', 'to stop'],
  ['Migrate', 'to migrate'],
  ['Canary', 'canaries to place'],
  ['Preemptions', 'to preempt'],
];

/**
 * The blast radius of a job that is a template, which runs nothing itself: a periodic job runs as
 * the jobs launched from it, a parameterized one as those dispatched from it. The scheduler's dry run
 * counts its groups' placements all the same (as the real product does: hashicorp/nomad#2012), and
 * `group run: 1 to place` read as an allocation this change starts. Undefined for any other job.
 */
export function templateImpact(
  job: Pick<Job, 'Periodic' | 'ParameterizedJob' | 'Dispatched'>,
): string[] | undefined {
  if (job.Dispatched === true) return undefined;
  if (job.ParameterizedJob)
    return ['no allocations of its own: a parameterized job runs only as the jobs dispatched from it'];
  if (job.Periodic)
    return ['no allocations of its own: a periodic job runs only as the jobs launched from it'];
  return undefined;
}

/** `group web: 2 to place, 1 to stop` per group with something to do (unchanged allocations left out). */
export function allocationNotes(plan: PlanResponse): string[] {
  const groups = plan.Annotations?.DesiredTGUpdates ?? {};
  return Object.keys(groups)
    .sort()
    .flatMap((name) => {
      const u = groups[name]!;
      const parts = UPDATE_WORDS.filter(([k]) => (u[k] ?? 0) > 0).map(([k, words]) => `${u[k]} ${words}`);
      // Left alone for now, but not for good: a rolling update replaces them `max_parallel` at a
      // time, and canaries' promotion replaces the rest. `1 to replace` alone read as the whole blast
      // radius of a change that restarts every allocation.
      const later = u.Ignore ?? 0;
      if (later > 0 && (u.DestructiveUpdate ?? 0) > 0)
        parts.push(`${later} more to replace as the rolling update goes on`);
      else if (later > 0 && (u.Canary ?? 0) > 0)
        parts.push(`${later} to replace once the canaries are promoted`);
      return parts.length ? [`group ${name}: ${parts.join(', ')}`] : [];
    });
}

/** The scheduler's reasons it could not place a group's allocations (capacity, datacenters). */
export function placementFailureNotes(plan: PlanResponse): string[] {
  const failed = plan.FailedTGAllocs ?? {};
  return Object.keys(failed)
    .sort()
    .map(
      (name) =>
        `group ${name}: cannot place every allocation (${failureReason(failed[name]!)}); the evaluation will wait for capacity`,
    );
}

function failureReason(metric: AllocMetric): string {
  const reasons: string[] = [];
  const counted = (label: string, counts: Record<string, number> | null | undefined) => {
    for (const [what, n] of Object.entries(counts ?? {}))
      reasons.push(`${label} ${what} on ${n} node${n === 1 ? '' : 's'}`);
  };
  counted('exhausted', metric.DimensionExhausted);
  counted('filtered by', metric.ConstraintFiltered);
  if (reasons.length === 0) {
    const evaluated = metric.NodesEvaluated ?? 0;
    reasons.push(
      evaluated === 0
        ? "no node in the job's datacenters"
        : `${evaluated} node${evaluated === 1 ? '' : 's'} evaluated`,
    );
  }
  const more = metric.CoalescedFailures ? `; ${metric.CoalescedFailures} more like it` : '';
  return `${reasons.join(', ')}${more}`;
}

/** When a periodic job would launch next, if it is one. */
export function periodicNote(plan: PlanResponse): string[] {
  const next = plan.NextPeriodicLaunch;
  if (!next || next.startsWith('0001-01-01')) return [];
  return [`next periodic launch ${next}`];
}
