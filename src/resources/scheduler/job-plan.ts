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
import { jsonEqual } from '../../common/json-equal.js';
import { isPlainObject } from '../compare.js';
import type { AttributeDiff } from '../contract.js';
import { childPath, pathParts } from '../diff-path.js';
import { diffWithDurations, withDurations } from './job-durations.js';
import { addedPartView, removedPartView } from './job-view.js';

const OP: Record<Exclude<DiffType, 'None'>, AttributeDiff['op']> = {
  Added: 'add',
  Deleted: 'remove',
  Edited: 'change',
};

/**
 * `Meta[owner]` is a map entry: written `Meta.owner` in a manifest (list items keep `args[0]`), and a
 * key that holds a dot stays one key (`Env["spring.datasource.url"]`, see diff-path.ts). The maps are
 * the string maps the service's diff enters (an artifact's `GetterOptions[checksum]` too).
 */
function fieldPath(prefix: string, name: string): string {
  const entry = /^(Meta|Env|GetterOptions|GetterHeaders|TaggedAddresses|CanaryMeta)\[(.+)\]$/.exec(name);
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
      at = /^\d+$/.test(inner) ? at[Number(inner)] : itemOf(at, inner);
    } else {
      if (Array.isArray(at)) return undefined;
      const key = part.type === 'name' ? part.name : part.key;
      at = Object.hasOwn(at, key) ? (at as Record<string, unknown>)[key] : undefined;
    }
  }
  return at;
}

/**
 * The fields a job's list items are told apart by, in order: a group's or service's `Name`, a port's
 * `Label`, a template's `DestPath`, an artifact's `RelativeDest` or `GetterSource`.
 */
const ITEM_KEYS = ['Name', 'Label', 'DestPath', 'RelativeDest', 'GetterSource'] as const;

/** The item of a list that `selector` names, by the first key field that names one. */
function itemOf(items: readonly unknown[], selector: string): unknown {
  for (const key of ITEM_KEYS) {
    const found = items.find((item) => (item as Record<string, unknown> | null)?.[key] === selector);
    if (found !== undefined) return found;
  }
  return undefined;
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
  /**
   * `before` is the list's item of the live job (header fields, Meta, group names), not the whole
   * job: nothing is compared beyond what the service's diff says.
   */
  partialBefore?: boolean;
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
 * The service's diff names an item of a job's list by its type alone (`Template`, `Constraint`,
 * `Dynamic Port`): two templates' changes read as one block with a key twice, and `--json` gave both
 * one path. Such an item is written at the list the manifest writes (`Templates`, `Constraints`,
 * `DynamicPorts`), picked by the field that tells the items apart when the diff carries it (a
 * template's `DestPath`, a service's `Name`, a port's `Label`), else by its place in the job; `map`:
 * the manifest writes the items as a map by that key (a group's `Volumes`).
 */
const LIST_ITEMS: Readonly<Record<string, { list: string; keys: readonly string[]; map?: true }>> = {
  Template: { list: 'Templates', keys: ['DestPath'] },
  Service: { list: 'Services', keys: ['Name'] },
  Artifact: { list: 'Artifacts', keys: ['RelativeDest', 'GetterSource'] },
  // The real service names a service's check `Check`; the sandbox, by the service's field, `Checks`.
  Check: { list: 'Checks', keys: ['Name'] },
  Checks: { list: 'Checks', keys: ['Name'] },
  Constraint: { list: 'Constraints', keys: [] },
  Affinity: { list: 'Affinities', keys: [] },
  Spread: { list: 'Spreads', keys: [] },
  Network: { list: 'Networks', keys: [] },
  'Dynamic Port': { list: 'DynamicPorts', keys: ['Label'] },
  'Static Port': { list: 'ReservedPorts', keys: ['Label'] },
  VolumeMount: { list: 'VolumeMounts', keys: [] },
  Volume: { list: 'Volumes', keys: ['Name'], map: true },
  Device: { list: 'Devices', keys: ['Name'] },
  Secret: { list: 'Secrets', keys: ['Name'] },
};

/** What the kind's diff functions need besides the service's diff: the jobs, a note for every line. */
interface Context {
  sides: DiffSides;
  note?: string | undefined;
}

/** The value of one of an object diff's own fields: its new one, else its old one. */
function fieldValue(o: ObjectDiff, name: string): string | undefined {
  const field = (o.Fields ?? []).find((f) => f.Name === name);
  const value = field ? (field.New !== '' && field.New !== undefined ? field.New : field.Old) : undefined;
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * Where in a list of the job an item of a set stands: the one item whose fields hold the diff's
 * values (new ones for a kept or added item, old ones for a removed one). Undefined unless exactly one.
 */
function indexIn(items: unknown, o: ObjectDiff): number | undefined {
  if (!Array.isArray(items)) return undefined;
  const own = (o.Fields ?? [])
    .filter((f) => !f.Name.includes('['))
    .map((f) => [f.Name, o.Type === 'Deleted' ? f.Old : f.New] as const)
    .filter(([, v]) => v !== '' && v !== undefined);
  if (own.length === 0) return undefined;
  const found = items.flatMap((item: unknown, i) =>
    item !== null &&
    typeof item === 'object' &&
    own.every(([k, v]) => String((item as Record<string, unknown>)[k]) === v)
      ? [i]
      : [],
  );
  return found.length === 1 ? found[0] : undefined;
}

function objectPath(prefix: string, o: ObjectDiff, ctx: Context): string {
  const item = LIST_ITEMS[o.Name];
  if (!item) return fieldPath(prefix, o.Name);
  const list = prefix ? `${prefix}.${item.list}` : item.list;
  for (const key of item.keys) {
    const value = fieldValue(o, key);
    if (value !== undefined && !/[\]"]/.test(value))
      return item.map ? childPath(list, value) : `${list}[${value}]`;
  }
  const index = indexIn(valueAt(o.Type === 'Deleted' ? ctx.sides.before : ctx.sides.after, list), o);
  return index === undefined ? list : `${list}[${index}]`;
}

/** Whether two items of a set diff are the same item: one of the fields that tell items apart agrees. */
function sameItem(a: ObjectDiff, b: ObjectDiff): boolean {
  return (LIST_ITEMS[a.Name]?.keys ?? ['Name']).some((k) => {
    const value = fieldValue(a, k);
    return value !== undefined && value === fieldValue(b, k);
  });
}

/**
 * The service diffs a set of objects (constraints, networks, artifacts) by content: an item edited
 * is a Deleted one and an Added one, every field shown removed and added again. The two are one
 * item when a field that tells items apart agrees (a port's `Label`, an artifact's `RelativeDest`),
 * or when they are the only item of that name to go and to come: paired here into one Edited item
 * whose unchanged fields are no change, so only what changed is shown.
 */
function pairSetItems(objects: readonly ObjectDiff[]): ObjectDiff[] {
  const gone = objects.filter((o) => o.Type === 'Deleted');
  const come = objects.filter((o) => o.Type === 'Added');
  const only = (list: ObjectDiff[], name: string) => list.filter((o) => o.Name === name).length === 1;
  const partner = new Map<ObjectDiff, ObjectDiff>();
  const taken = new Set<ObjectDiff>();
  for (const g of gone) {
    const candidates = come.filter((c) => c.Name === g.Name && !taken.has(c));
    const match =
      candidates.find((c) => sameItem(g, c)) ??
      (only(gone, g.Name) && only(come, g.Name) ? candidates[0] : undefined);
    if (!match) continue;
    partner.set(g, match);
    taken.add(match);
  }
  return objects
    .filter((o) => !taken.has(o))
    .map((o) => {
      const c = partner.get(o);
      return c ? mergedItem(o, c) : o;
    });
}

function mergedItem(gone: ObjectDiff, come: ObjectDiff): ObjectDiff {
  const find = (o: ObjectDiff, name: string) => (o.Fields ?? []).find((f) => f.Name === name);
  const names = [...new Set([...(gone.Fields ?? []), ...(come.Fields ?? [])].map((f) => f.Name))];
  const fields = names.map((name): FieldDiff => {
    const old = find(gone, name)?.Old ?? '';
    const next = find(come, name)?.New ?? '';
    const type: DiffType = old === next ? 'None' : old === '' ? 'Added' : next === '' ? 'Deleted' : 'Edited';
    const annotations = find(come, name)?.Annotations ?? find(gone, name)?.Annotations ?? null;
    return { Type: type, Name: name, Old: old, New: next, Annotations: annotations };
  });
  const objects = pairSetItems([...(gone.Objects ?? []), ...(come.Objects ?? [])]);
  const changed = fields.some((f) => f.Type !== 'None') || objects.some((o) => o.Type !== 'None');
  return { Type: changed ? 'Edited' : 'None', Name: come.Name, Fields: fields, Objects: objects };
}

/**
 * A set of strings (a service's `Tags`, `Datacenters`), which the service's diff writes as an object
 * whose every field has the set's own name: `~ Tags = { + Tags = "c" }`. As the items that come and
 * go instead (`~ Tags = [ + "c" ]`). Undefined for any other object.
 */
function stringSetDiffs(at: string, o: ObjectDiff, note?: string): AttributeDiff[] | undefined {
  const fields = o.Fields ?? [];
  if ((o.Objects ?? []).length > 0 || fields.length === 0 || fields.some((f) => f.Name !== o.Name))
    return undefined;
  const remark = note ? { note } : {};
  return fields.flatMap((f): AttributeDiff[] => {
    if (f.Type === 'Added') return [{ path: at, op: 'add', after: f.New, item: true, ...remark }];
    if (f.Type === 'Deleted') return [{ path: at, op: 'remove', before: f.Old, item: true, ...remark }];
    return [];
  });
}

/** A nested object's diffs; one that appeared or went away with nothing inside is one diff of its own. */
function objectDiffs(
  prefix: string,
  objects: readonly ObjectDiff[] | null | undefined,
  ctx: Context,
): AttributeDiff[] {
  return pairSetItems(objects ?? []).flatMap((o) => {
    const at = objectPath(prefix, o, ctx);
    if (o.Type === 'None') return [];
    return stringSetDiffs(at, o, ctx.note) ?? nodeDiffs(at, o, ctx);
  });
}

function nodeDiffs(
  at: string,
  node: { Type: DiffType; Fields?: FieldDiff[] | null; Objects?: ObjectDiff[] | null },
  ctx: Context,
): AttributeDiff[] {
  if (node.Type === 'None') return [];
  const inner = [...fieldDiffs(at, node.Fields, ctx.note), ...objectDiffs(at, node.Objects, ctx)];
  if (inner.length > 0) return inner;
  if (node.Type === 'Edited') return unitemised(at, ctx);
  const op = OP[node.Type];
  return [{ path: at, op, ...(ctx.note ? { note: ctx.note } : {}) }];
}

/** The note of a change the service's diff marks without naming a field, nor Converge can tell. */
export const UNITEMISED_NOTE = "changed in a way the scheduler's diff does not itemise";

/**
 * A part the service's diff marks edited but itemises nothing of (a job's `Update.Stagger`, a
 * service's tags reordered, a task's `Lifecycle`: fields its diff filters or skips). Where the
 * manifest's job and the live one tell what differs, those attributes; else the part alone, with a
 * note, never `= null -> null`, which reads as the part emptied.
 */
function unitemised(at: string, ctx: Context): AttributeDiff[] {
  const found = ctx.sides.partialBefore
    ? []
    : desiredChanges(at, valueAt(ctx.sides.after, at), valueAt(ctx.sides.before, at), ctx.sides);
  if (found.length > 0) return found.map((d) => ({ ...d, ...(ctx.note ? { note: ctx.note } : {}) }));
  const note = ctx.note ? `${UNITEMISED_NOTE}; ${ctx.note}` : UNITEMISED_NOTE;
  return [{ path: at, op: 'change', note }];
}

/** A whole value the manifest sets, as it wrote it where it did (`"20s"`), else in Go durations. */
function wantedValue(at: string, want: unknown, sides: DiffSides): unknown {
  return valueAt(sides.written, at) ?? withDurations(want);
}

/** A whole part (an object, a list) that comes or changes, shown whole. */
function wholeChange(at: string, want: unknown, have: unknown, sides: DiffSides): AttributeDiff {
  const after = wantedValue(at, want, sides);
  return have === undefined || have === null
    ? { path: at, op: 'add', after }
    : { path: at, op: 'change', before: withDurations(have), after };
}

/** The field that tells a list's items apart, when every item has its own (`Name`, `Label`…). */
function itemKeyOf(items: readonly Record<string, unknown>[]): string | undefined {
  return ITEM_KEYS.find((key) => {
    const values = items.map((item) => item[key]);
    return (
      values.every((v) => typeof v === 'string' && v !== '' && !/[\]"]/.test(v)) &&
      new Set(values).size === values.length
    );
  });
}

/**
 * What the manifest's job sets at `at` that the live job holds otherwise, attribute by attribute.
 * Only what the manifest writes counts (a field it leaves out gets the service's default, which is
 * no change); lists of objects are matched item by item by the field that tells them apart, else by
 * position, and a live item the manifest no longer has is removed; a list of strings is compared in
 * order. Scalars are left as the service holds them (nanoseconds), for planDiffs to type and show in
 * the manifest's units; whole parts are shown as written.
 */
function desiredChanges(at: string, want: unknown, have: unknown, sides: DiffSides): AttributeDiff[] {
  if (want === undefined || want === null) return [];
  if (isPlainObject(want)) {
    if (!isPlainObject(have)) return [wholeChange(at, want, have, sides)];
    return Object.keys(want).flatMap((k) => desiredChanges(childPath(at, k), want[k], have[k], sides));
  }
  if (Array.isArray(want)) {
    const live: unknown[] = Array.isArray(have) ? have : [];
    if (!want.every(isPlainObject) || !live.every(isPlainObject))
      return jsonEqual(want, live) ? [] : [wholeChange(at, want, live.length ? live : undefined, sides)];
    const key = itemKeyOf(want);
    const pathOf = (item: Record<string, unknown>, i: number) =>
      key ? `${at}[${String(item[key])}]` : `${at}[${i}]`;
    const partner = (item: Record<string, unknown>, i: number) =>
      key ? live.find((l) => l[key] === item[key]) : live[i];
    const wanted = want.flatMap((item, i) => desiredChanges(pathOf(item, i), item, partner(item, i), sides));
    const gone = live.flatMap((item, i): AttributeDiff[] =>
      (key ? want.some((w) => w[key] === item[key]) : i < want.length)
        ? []
        : [{ path: pathOf(item, i), op: 'remove', before: withDurations(item) }],
    );
    // Items told apart by a field, each unchanged but in another order: the service holds the
    // order (a task's templates are rendered in it), so the reorder is the change.
    const order = (items: unknown[]) => items.map((item) => String((item as Record<string, unknown>)[key!]));
    const reordered =
      key !== undefined &&
      wanted.length === 0 &&
      gone.length === 0 &&
      want.length === live.length &&
      !jsonEqual(order(want), order(live));
    if (reordered)
      return [
        { path: at, op: 'change', note: `reordered: ${order(live).join(', ')} -> ${order(want).join(', ')}` },
      ];
    return [...wanted, ...gone];
  }
  if (have === want) return [];
  return have === undefined || have === null
    ? [{ path: at, op: 'add', after: want }]
    : [{ path: at, op: 'change', before: have, after: want }];
}

/**
 * Job-level fields the service keeps and schedules by but leaves out of its diff: the real
 * `Job.Diff` filters `Update` and has no `Spreads` diff (a group's copy of `Update` filters
 * `Stagger`), so such a change planned "No changes" and was never applied.
 *
 * Why compare these fields rather than trust the plan's allocation counts (`DesiredTGUpdates`
 * showing in-place updates under a `None` diff): the counts only speak for a job with running
 * allocations (not a periodic, parameterized or scaled-to-zero one, nor one waiting for capacity),
 * and name no attribute. The fields are compared as the service stores them (Converge sends
 * durations in nanoseconds, as stored); only what the manifest writes counts, except that a job's
 * spreads have no default, so none written means the live ones go. The counts remain the last
 * resort, for a change to anything else the diff skips (see annotatedUpdates).
 */
const UNDIFFED_JOB_FIELDS = ['Update', 'Spreads'] as const;

/**
 * Whether a `None` diff of a job observed from the list must be checked against the whole job (one
 * more read): only for job-level `Spreads`, which reach no group. A job's `Update` is copied into
 * each group, whose diff then shows it edited (all but `Stagger`, deprecated), and the whole job is
 * read for any diff: most service jobs set `Update`, and a read of each on every plan of an
 * unchanged manifest would double the job requests of a warm plan.
 */
export function setsUndiffedFields(job: unknown): boolean {
  return isPlainObject(job) && job.Spreads !== undefined && job.Spreads !== null;
}

type GroupUpdates = NonNullable<NonNullable<PlanResponse['Annotations']>['DesiredTGUpdates']>[string];

/** Whether a group's allocations would be updated (in place, destructively, by canaries). */
function updatesAllocations(u: GroupUpdates): boolean {
  return (u.InPlaceUpdate ?? 0) + (u.DestructiveUpdate ?? 0) + (u.Canary ?? 0) > 0;
}

/** Whether the plan would update allocations of some group. */
export function plansUpdates(plan: PlanResponse): boolean {
  return Object.values(plan.Annotations?.DesiredTGUpdates ?? {}).some(updatesAllocations);
}

/**
 * `{ Stagger }` of a job's own update block as the real service keeps it: only with a MaxParallel
 * above 0 (the block's default is 1), else not at all; undefined when it sets no Stagger.
 */
function staggerOf(update: unknown): Record<string, unknown> | undefined {
  if (!isPlainObject(update) || update.Stagger === undefined || update.Stagger === null) return undefined;
  const parallel = update.MaxParallel ?? 1;
  return typeof parallel === 'number' && parallel > 0 ? { Stagger: update.Stagger } : undefined;
}

function undiffedJobChanges(sides: DiffSides): AttributeDiff[] {
  const { after, before } = sides;
  if (sides.partialBefore || !isPlainObject(after) || !isPlainObject(before)) return [];
  return UNDIFFED_JOB_FIELDS.flatMap((k) => {
    // Of a job's own Update the real service keeps only Stagger and MaxParallel (the rest goes to
    // its groups, whose diff shows it; `ApiJobToStructJob` discards it): compared whole, a real
    // scheduler's job showed MinHealthyTime and the others changing on every plan. Only Stagger,
    // which no group's diff shows, is compared here.
    const want = k === 'Update' ? staggerOf(after[k]) : after[k];
    // The service keeps no Stagger where the manifest's block keeps none (MaxParallel 0): not compared.
    const have = k === 'Update' ? (want === undefined ? undefined : staggerOf(before[k])) : before[k];
    const none = (v: unknown) => v === undefined || v === null || (Array.isArray(v) && v.length === 0);
    if (k === 'Spreads' && none(want) && !none(have))
      return [{ path: k, op: 'remove' as const, before: withDurations(have) }];
    return desiredChanges(k, want, have, sides);
  });
}

/**
 * Groups whose allocations the service's plan would update although its diff shows nothing: a
 * change the diff skips that Converge does not compare itself. Shown as what differs in the group,
 * or the group alone with a note; applying it registers the job, after which the plan is empty.
 */
function annotatedUpdates(plan: PlanResponse, ctx: Context): AttributeDiff[] {
  const groups = plan.Annotations?.DesiredTGUpdates ?? {};
  return Object.keys(groups)
    .sort()
    .filter((name) => updatesAllocations(groups[name]!))
    .flatMap((name) => unitemised(`TaskGroups[${name}]`, ctx));
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
  const field = (d: AttributeDiff): RawDiff => ({ whole: false, diff: d });
  const served = servedDiffs(plan, sides);
  const undiffed = undiffedJobChanges(sides);
  // A job's `Update` reaches every group, whose diff then shows an edit with nothing in it: the
  // job-level attribute says what changed.
  const out = undiffed.length ? served.filter((d) => d.whole || d.diff.note !== UNITEMISED_NOTE) : served;
  out.push(...undiffed.map(field));
  if (out.length === 0) out.push(...annotatedUpdates(plan, { sides }).map(field));
  return out;
}

/** The changes the service's own diff names. */
function servedDiffs(plan: PlanResponse, sides: DiffSides): RawDiff[] {
  const diff = plan.Diff;
  if (!diff || diff.Type === 'None') return [];
  const ctx: Context = { sides };
  const field = (d: AttributeDiff): RawDiff => ({ whole: false, diff: d });
  const out: RawDiff[] = [...fieldDiffs('', diff.Fields), ...objectDiffs('', diff.Objects, ctx)].map(field);
  for (const group of diff.TaskGroups ?? []) {
    if (group.Type === 'None') continue;
    const at = `TaskGroups[${group.Name}]`;
    const whole = wholePart(at, group.Type, sides);
    if (whole) {
      out.push(whole);
      continue;
    }
    const inner: RawDiff[] = [...fieldDiffs(at, group.Fields), ...objectDiffs(at, group.Objects, ctx)].map(
      field,
    );
    for (const task of group.Tasks ?? []) {
      if (task.Type === 'None') continue;
      const taskAt = `${at}.Tasks[${task.Name}]`;
      const wholeTask = wholePart(taskAt, task.Type, sides);
      if (wholeTask) {
        inner.push(wholeTask);
        continue;
      }
      const note = (task.Annotations ?? []).join('; ') || undefined;
      const taskCtx: Context = { sides, note };
      const own = [...fieldDiffs(taskAt, task.Fields, note), ...objectDiffs(taskAt, task.Objects, taskCtx)];
      // A task the service marks edited for its group's change (a group's RestartPolicy reaches its
      // tasks) or for a change its diff skips, with nothing of its own to show: a bare line read
      // `Tasks["worker"] = null -> null`, as if the task were emptied. The group's lines say it (what
      // its diff skips is found on the whole group below).
      if (own.length === 0 && task.Type === 'Edited') continue;
      inner.push(...nodeDiffs(taskAt, task, taskCtx).map(field));
    }
    if (inner.length > 0) out.push(...inner);
    else if (group.Type === 'Edited') out.push(...unitemised(at, ctx).map(field));
    else out.push(field({ path: at, op: OP[group.Type] }));
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
