/**
 * The real scheduler's structured job diff (`nomad/structs/diff.go`), over the JSON jobs the sandbox
 * stores. Plan (`?Diff: true`) and versions (`?diffs=true`) answer with it, and clients render it as
 * `nomad job plan` does, so the shape and the naming rules follow the real code:
 *
 * - primitive fields of the job, a group or a task are flattened (`helper/flatmap`, primitive only):
 *   `Count`, `Meta[key]`, `Env[key]`; nested structs become `Objects` (`RestartPolicy`, `Resources`...),
 *   sets of structs are matched by content (`Constraint`, `Affinity`, `Network`, `Artifact`) or by name
 *   (`Service`, groups, tasks) or destination (`Template`); a task's free-form `Config` is flattened whole (`args[0]`,
 *   `port_map[0][http]`);
 * - the server's fields (ID, Version, Status, indexes, SubmitTime, Stable...) and the job-level blocks the
 *   real diff skips (Update, Spreads, Reschedule, Migrate) are ignored;
 * - `contextual` keeps unchanged fields inside a changed object (the real plan and versions pass true);
 *   a job's, group's or task's own primitive fields are always listed only when changed, as in the real
 *   code;
 * - empty lists are `null`, as Go's nil slices encode.
 *
 * Differences from the real code, since JSON carries no Go types: a field absent from a job counts as
 * unset (`""`) rather than its Go zero value; nested blocks the real code diffs with bespoke functions
 * (service checks, templates, volumes, scaling...) are diffed generically: primitive fields, plus their
 * nested objects and string lists as objects named by their key.
 */
import { jsonEqual } from '../../../common/json-equal.js';
import type { Json } from './model.js';

export type DiffType = 'None' | 'Added' | 'Deleted' | 'Edited';

export interface FieldDiff {
  Type: DiffType;
  Name: string;
  Old: string;
  New: string;
  Annotations: string[] | null;
}

/** What every level of a job diff has: its change, its own fields and its nested objects. */
interface DiffLevel {
  Type: DiffType;
  Fields: FieldDiff[] | null;
  Objects: ObjectDiff[] | null;
}

export interface ObjectDiff extends DiffLevel {
  Name: string;
}

export interface TaskDiff extends ObjectDiff {
  Annotations: string[] | null;
}

export interface TaskGroupDiff extends ObjectDiff {
  Tasks: TaskDiff[] | null;
  Updates: Record<string, number> | null;
}

export interface JobDiff extends DiffLevel {
  ID: string;
  TaskGroups: TaskGroupDiff[] | null;
}

type Flat = Record<string, string>;

/**
 * Job fields the real `Job.Diff` filters out, plus `Payload` (a byte slice, never primitive in Go),
 * and the spec's names for the real token fields: a submit token is never stored (submit-tokens.ts),
 * and no diff shall ever carry one even so.
 */
const JOB_FILTER = [
  'ID',
  'Status',
  'StatusDescription',
  'Version',
  'Stable',
  'CreateIndex',
  'ModifyIndex',
  'JobModifyIndex',
  'Update',
  'SubmitTime',
  'NomadTokenID',
  'VaultToken',
  'SchedulerTokenID',
  'SecretsToken',
  'RegistryToken',
  'ConsulToken',
  'Payload',
];
/**
 * A group duration that is a pointer in the real struct, so the primitive flattening skips it. The
 * real `TaskGroup.Diff` adds `StopAfterClientDisconnect` and `MaxClientDisconnect` back by hand (as
 * `%d` of the nanoseconds, like `ShutdownDelay`), so those two are diffed as primitive fields here.
 */
const GROUP_FILTER = ['Name', 'MaxRunDuration'];
const TASK_FILTER = ['Name', 'Config'];
/** String maps, which the real flattening enters (`Meta[key]`); other objects are structs. */
const STRING_MAPS = new Set([
  'Meta',
  'Env',
  'CanaryMeta',
  'TaggedAddresses',
  'GetterOptions',
  'GetterHeaders',
]);

/**
 * The diff of two versions of a job (`old` undefined: the job is new). Both are JSON jobs as stored
 * (canonical), with the same ID.
 */
export function jobDiff(old: Json | undefined, next: Json | undefined, contextual: boolean): JobDiff {
  const diff: JobDiff = { Type: 'None', ID: '', Fields: null, Objects: null, TaskGroups: null };
  if (!old && !next) return diff;
  if (!old) diff.Type = 'Added';
  else if (!next) diff.Type = 'Deleted';
  const a = old ?? {};
  const b = next ?? {};
  diff.ID = String((next ?? old)!.ID ?? '');
  diff.Fields = nullIfEmpty(
    fieldDiffs(old && flattenPrimitive(a, JOB_FILTER), next && flattenPrimitive(b, JOB_FILTER), false),
  );

  const objects: ObjectDiff[] = [];
  const dcs = stringSetDiff(strings(a.Datacenters), strings(b.Datacenters), 'Datacenters', contextual);
  if (dcs && dcs.Type !== 'None') objects.push(dcs);
  objects.push(...setDiff(list(a.Constraints), list(b.Constraints), 'Constraint', contextual));
  objects.push(...setDiff(list(a.Affinities), list(b.Affinities), 'Affinity', contextual));
  push(objects, periodicDiff(obj(a.Periodic), obj(b.Periodic), contextual));
  push(objects, parameterizedDiff(obj(a.ParameterizedJob), obj(b.ParameterizedJob), contextual));
  push(objects, structDiff(obj(a.Multiregion), obj(b.Multiregion), 'Multiregion', contextual));
  push(objects, structDiff(obj(a.UI), obj(b.UI), 'UI', contextual));
  diff.Objects = nullIfEmpty(objects);
  diff.TaskGroups = nullIfEmpty(
    pairByName(list(a.TaskGroups), list(b.TaskGroups)).map(([x, y]) => groupDiff(x, y, contextual)),
  );

  // As the real code: only the diffs found count, so a change to an ignored field is no change.
  if (
    diff.Type === 'None' &&
    [...(diff.Fields ?? []), ...(diff.Objects ?? []), ...(diff.TaskGroups ?? [])].some(
      (d) => d.Type !== 'None',
    )
  )
    diff.Type = 'Edited';
  return diff;
}

function groupDiff(old: Json | undefined, next: Json | undefined, contextual: boolean): TaskGroupDiff {
  const diff: TaskGroupDiff = {
    Type: typeOf(old, next),
    Name: String((next ?? old)!.Name),
    Fields: null,
    Objects: null,
    Tasks: null,
    Updates: null,
  };
  const a = old ?? {};
  const b = next ?? {};
  diff.Fields = nullIfEmpty(
    fieldDiffs(old && flattenPrimitive(a, GROUP_FILTER), next && flattenPrimitive(b, GROUP_FILTER), false),
  );
  const objects: ObjectDiff[] = [];
  objects.push(...setDiff(list(a.Constraints), list(b.Constraints), 'Constraint', contextual));
  objects.push(...setDiff(list(a.Affinities), list(b.Affinities), 'Affinity', contextual));
  push(
    objects,
    primitiveObjectDiff(obj(a.RestartPolicy), obj(b.RestartPolicy), [], 'RestartPolicy', contextual),
  );
  push(objects, primitiveObjectDiff(obj(a.Migrate), obj(b.Migrate), [], 'Migrate', contextual));
  push(
    objects,
    primitiveObjectDiff(obj(a.ReschedulePolicy), obj(b.ReschedulePolicy), [], 'ReschedulePolicy', contextual),
  );
  push(
    objects,
    primitiveObjectDiff(obj(a.EphemeralDisk), obj(b.EphemeralDisk), [], 'EphemeralDisk', contextual),
  );
  push(objects, primitiveObjectDiff(obj(a.Consul), obj(b.Consul), [], 'Consul', contextual));
  push(objects, primitiveObjectDiff(obj(a.Update), obj(b.Update), ['Stagger'], 'Update', contextual));
  push(objects, structDiff(obj(a.Disconnect), obj(b.Disconnect), 'Disconnect', contextual));
  objects.push(...networkDiffs(list(a.Networks), list(b.Networks), contextual));
  push(objects, structDiff(obj(a.Scaling), obj(b.Scaling), 'Scaling', contextual));
  objects.push(...namedDiffs(list(a.Services), list(b.Services), 'Service', contextual));
  objects.push(...keyedDiffs(obj(a.Volumes), obj(b.Volumes), 'Volume', contextual));
  diff.Objects = nullIfEmpty(objects);
  diff.Tasks = nullIfEmpty(
    pairByName(list(a.Tasks), list(b.Tasks)).map(([x, y]) => taskDiff(x, y, contextual)),
  );
  return diff;
}

function taskDiff(old: Json | undefined, next: Json | undefined, contextual: boolean): TaskDiff {
  const a = old ?? {};
  const b = next ?? {};
  const objects: ObjectDiff[] = [];
  objects.push(...setDiff(list(a.Constraints), list(b.Constraints), 'Constraint', contextual));
  objects.push(...setDiff(list(a.Affinities), list(b.Affinities), 'Affinity', contextual));
  push(objects, configDiff(obj(a.Config), obj(b.Config), contextual));
  push(objects, resourcesDiff(obj(a.Resources), obj(b.Resources), contextual));
  push(objects, primitiveObjectDiff(obj(a.LogConfig), obj(b.LogConfig), [], 'LogConfig', contextual));
  push(
    objects,
    primitiveObjectDiff(obj(a.DispatchPayload), obj(b.DispatchPayload), [], 'DispatchPayload', contextual),
  );
  objects.push(...setDiff(list(a.Artifacts), list(b.Artifacts), 'Artifact', contextual));
  objects.push(...namedDiffs(list(a.Services), list(b.Services), 'Service', contextual));
  push(objects, structDiff(obj(a.Vault), obj(b.Vault), 'Vault', contextual));
  objects.push(...namedDiffs(list(a.Secrets), list(b.Secrets), 'Secret', contextual));
  push(objects, primitiveObjectDiff(obj(a.Consul), obj(b.Consul), [], 'Consul', contextual));
  objects.push(...templateDiffs(list(a.Templates), list(b.Templates), contextual));
  push(objects, structDiff(obj(a.Identity), obj(b.Identity), 'Identity', contextual));
  objects.push(...namedDiffs(list(a.Identities), list(b.Identities), 'Identity', contextual));
  objects.push(...indexedDiffs(list(a.Actions), list(b.Actions), 'Action', contextual));
  objects.push(...indexedDiffs(list(a.VolumeMounts), list(b.VolumeMounts), 'VolumeMount', contextual));
  push(objects, structDiff(obj(a.Schedule), obj(b.Schedule), 'Schedule', contextual));
  return {
    Type: typeOf(old, next),
    Name: String((next ?? old)!.Name),
    Fields: nullIfEmpty(
      fieldDiffs(old && flattenPrimitive(a, TASK_FILTER), next && flattenPrimitive(b, TASK_FILTER), false),
    ),
    Objects: nullIfEmpty(objects),
    Annotations: null,
  };
}

// ---- the real building blocks ----

/** Added/Deleted for a missing side, else Edited unless deeply equal (the real `reflect.DeepEqual`). */
function typeOf(old: Json | undefined, next: Json | undefined): DiffType {
  if (!old) return 'Added';
  if (!next) return 'Deleted';
  return sameCanonical(old, next) ? 'None' : 'Edited';
}

/** `flatmap.Flatten(obj, filter, true)`: primitive fields and string maps, not nested structs or lists. */
function flattenPrimitive(o: Json, filter: readonly string[]): Flat {
  const flat: Flat = {};
  for (const [k, v] of Object.entries(o)) {
    if (filter.includes(k)) continue;
    if (isPrimitive(v)) flat[k] = format(v);
    else if (STRING_MAPS.has(k) && isObject(v))
      for (const [mk, mv] of Object.entries(v)) if (isPrimitive(mv)) flat[`${k}[${mk}]`] = format(mv);
  }
  return flat;
}

/** `flatmap.Flatten(obj, nil, false)`: everything, `a.b` for structs, `a[k]` for maps, `a[0]` for lists. */
function flattenAll(value: unknown, prefix: string, out: Flat): Flat {
  const sub = (k: string) => (prefix === '' ? k : `${prefix}[${k}]`);
  if (value === null || value === undefined) out[prefix] = 'nil';
  else if (isPrimitive(value)) out[prefix] = format(value);
  else if (Array.isArray(value)) value.forEach((v, i) => flattenAll(v, `${prefix}[${i}]`, out));
  else for (const [k, v] of Object.entries(value as Json)) flattenAll(v, sub(k), out);
  return out;
}

function fieldDiff(old: string, next: string, name: string, contextual: boolean): FieldDiff | undefined {
  if (old === next)
    return contextual ? { Type: 'None', Name: name, Old: old, New: next, Annotations: null } : undefined;
  const type: DiffType = old === '' ? 'Added' : next === '' ? 'Deleted' : 'Edited';
  return { Type: type, Name: name, Old: old, New: next, Annotations: null };
}

function fieldDiffs(old: Flat | undefined, next: Flat | undefined, contextual: boolean): FieldDiff[] {
  const a = old ?? {};
  const b = next ?? {};
  const out: FieldDiff[] = [];
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const d = fieldDiff(a[k] ?? '', b[k] ?? '', k, contextual);
    if (d) out.push(d);
  }
  return out.sort(compareFields);
}

/** The real `primitiveObjectDiff`: undefined when nothing changed, whatever `contextual` says. */
function primitiveObjectDiff(
  old: Json | undefined,
  next: Json | undefined,
  filter: readonly string[],
  name: string,
  contextual: boolean,
): ObjectDiff | undefined {
  const fields = fieldDiffs(
    old && flattenPrimitive(old, filter),
    next && flattenPrimitive(next, filter),
    contextual,
  );
  const type = typeFromFields(fields);
  return type === undefined
    ? undefined
    : { Type: type, Name: name, Fields: nullIfEmpty(fields), Objects: null };
}

function typeFromFields(fields: FieldDiff[]): DiffType | undefined {
  const types = new Set(fields.map((f) => f.Type));
  if (types.has('Edited') || (types.has('Added') && types.has('Deleted'))) return 'Edited';
  if (types.has('Added')) return 'Added';
  if (types.has('Deleted')) return 'Deleted';
  return undefined;
}

/**
 * A struct with nested parts, for the blocks the real code diffs with bespoke functions: its primitive
 * fields, then nested structs, string lists and lists of structs (by index) as objects named by key.
 */
function structDiff(
  old: Json | undefined,
  next: Json | undefined,
  name: string,
  contextual: boolean,
): ObjectDiff | undefined {
  if (sameCanonical(old, next)) return undefined;
  const type: DiffType = !old ? 'Added' : !next ? 'Deleted' : 'Edited';
  const a = old ?? {};
  const b = next ?? {};
  const fields = fieldDiffs(old && flattenPrimitive(a, []), next && flattenPrimitive(b, []), contextual);
  const objects: ObjectDiff[] = [];
  for (const k of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
    const x = a[k];
    const y = b[k];
    if (STRING_MAPS.has(k) || isPrimitive(x) || isPrimitive(y)) continue;
    if (Array.isArray(x) || Array.isArray(y)) {
      const xs = list(x);
      const ys = list(y);
      if ([...xs, ...ys].every((v) => isPrimitive(v)))
        push(objects, stringSetDiff(xs.map(format), ys.map(format), k, contextual));
      else objects.push(...indexedDiffs(xs.filter(isObject), ys.filter(isObject), k, contextual));
    } else push(objects, structDiff(obj(x), obj(y), k, contextual));
  }
  return {
    Type: type,
    Name: name,
    Fields: nullIfEmpty(fields),
    Objects: nullIfEmpty(objects.sort(compareObjects)),
  };
}

/** The real `stringSetDiff`: a set of strings as one object whose fields all carry `name`. */
function stringSetDiff(
  old: string[],
  next: string[],
  name: string,
  contextual: boolean,
): ObjectDiff | undefined {
  const a = new Set(old);
  const b = new Set(next);
  const same = a.size === b.size && [...a].every((v) => b.has(v));
  if (same && !contextual) return undefined;
  const fields: FieldDiff[] = [];
  for (const v of a) {
    if (!b.has(v)) fields.push(fieldDiff(v, '', name, contextual)!);
    else if (contextual) fields.push(fieldDiff(v, v, name, contextual)!);
  }
  for (const v of b) if (!a.has(v)) fields.push(fieldDiff('', v, name, contextual)!);
  if (fields.length === 0) return undefined;
  return {
    Type: typeFromFields(fields) ?? 'None',
    Name: name,
    Fields: fields.sort(compareFields),
    Objects: null,
  };
}

/** The real `primitiveObjectSetDiff`: items matched by content, so an edit shows as Deleted plus Added. */
function setDiff(old: Json[], next: Json[], name: string, contextual: boolean): ObjectDiff[] {
  const a = new Map(old.map((o) => [canonical(o), o]));
  const b = new Map(next.map((o) => [canonical(o), o]));
  const out: ObjectDiff[] = [];
  for (const [k, o] of a) if (!b.has(k)) push(out, primitiveObjectDiff(o, undefined, [], name, contextual));
  for (const [k, o] of b) if (!a.has(k)) push(out, primitiveObjectDiff(undefined, o, [], name, contextual));
  return out.sort(compareObjects);
}

/** Items matched by `Name` (services, secrets, identities), as the real code matches most of them. */
function namedDiffs(old: Json[], next: Json[], name: string, contextual: boolean): ObjectDiff[] {
  const out: ObjectDiff[] = [];
  for (const [x, y] of pairByName(old, next)) push(out, structDiff(x, y, name, contextual));
  return out.sort(compareObjects);
}

/**
 * The real `templateDiffs`: templates matched by `DestPath` (a task writes each file once), so
 * reordering them is no change and an edit is diffed against the template of the same destination.
 */
function templateDiffs(old: Json[], next: Json[], contextual: boolean): ObjectDiff[] {
  const a = new Map(old.map((t) => [String(t.DestPath ?? ''), t]));
  const b = new Map(next.map((t) => [String(t.DestPath ?? ''), t]));
  const out: ObjectDiff[] = [];
  for (const path of new Set([...a.keys(), ...b.keys()]))
    push(out, structDiff(a.get(path), b.get(path), 'Template', contextual));
  return out.sort(compareObjects);
}

/** Items matched by position (actions, volume mounts). */
function indexedDiffs(old: Json[], next: Json[], name: string, contextual: boolean): ObjectDiff[] {
  const out: ObjectDiff[] = [];
  for (let i = 0; i < Math.max(old.length, next.length); i++)
    push(out, structDiff(old[i], next[i], name, contextual));
  return out.sort(compareObjects);
}

/** Items of a map matched by key (a group's volume requests). */
function keyedDiffs(
  old: Json | undefined,
  next: Json | undefined,
  name: string,
  contextual: boolean,
): ObjectDiff[] {
  const out: ObjectDiff[] = [];
  for (const k of new Set([...Object.keys(old ?? {}), ...Object.keys(next ?? {})]))
    push(out, structDiff(obj(old?.[k]), obj(next?.[k]), name, contextual));
  return out.sort(compareObjects);
}

/**
 * The diff of a block with primitive fields and nested objects (periodic, parameterized, resources):
 * nothing when both sides are the same; else Added, Deleted or Edited, its fields, and what `nested`
 * finds below it (undefined entries left out).
 */
function blockDiff(
  name: string,
  old: Json | undefined,
  next: Json | undefined,
  contextual: boolean,
  nested: () => (ObjectDiff | undefined)[],
): ObjectDiff | undefined {
  if (sameCanonical(old, next)) return undefined;
  const fields = fieldDiffs(old && flattenPrimitive(old, []), next && flattenPrimitive(next, []), contextual);
  const objects = nested().filter((o) => o !== undefined);
  return {
    Type: !old ? 'Added' : !next ? 'Deleted' : 'Edited',
    Name: name,
    Fields: nullIfEmpty(fields),
    Objects: nullIfEmpty(objects),
  };
}

function periodicDiff(
  old: Json | undefined,
  next: Json | undefined,
  contextual: boolean,
): ObjectDiff | undefined {
  return blockDiff('Periodic', old, next, contextual, () => {
    const specs = stringSetDiff(strings(old?.Specs), strings(next?.Specs), 'Specs', contextual);
    // The real code leaves out an unchanged Specs set even in a contextual diff.
    return specs && specs.Type !== 'None' ? [specs] : [];
  });
}

function parameterizedDiff(
  old: Json | undefined,
  next: Json | undefined,
  contextual: boolean,
): ObjectDiff | undefined {
  return blockDiff('ParameterizedJob', old, next, contextual, () => [
    stringSetDiff(strings(old?.MetaOptional), strings(next?.MetaOptional), 'MetaOptional', contextual),
    stringSetDiff(strings(old?.MetaRequired), strings(next?.MetaRequired), 'MetaRequired', contextual),
  ]);
}

/** The real `configDiff`: the driver's free-form map flattened whole. */
function configDiff(
  old: Json | undefined,
  next: Json | undefined,
  contextual: boolean,
): ObjectDiff | undefined {
  if (sameCanonical(old, next)) return undefined;
  const empty = (o: Json | undefined) => !o || Object.keys(o).length === 0;
  const type: DiffType = empty(old) ? 'Added' : empty(next) ? 'Deleted' : 'Edited';
  const fields = fieldDiffs(old && flattenAll(old, '', {}), next && flattenAll(next, '', {}), contextual);
  return { Type: type, Name: 'Config', Fields: nullIfEmpty(fields), Objects: null };
}

function resourcesDiff(
  old: Json | undefined,
  next: Json | undefined,
  contextual: boolean,
): ObjectDiff | undefined {
  return blockDiff('Resources', old, next, contextual, () => [
    ...networkDiffs(list(old?.Networks), list(next?.Networks), contextual),
    ...indexedDiffs(list(old?.Devices), list(next?.Devices), 'Device', contextual),
    structDiff(obj(old?.NUMA), obj(next?.NUMA), 'NUMA', contextual),
  ]);
}

/** The real `networkResourceDiffs`: networks matched by content, their ports by label. */
function networkDiffs(old: Json[], next: Json[], contextual: boolean): ObjectDiff[] {
  const a = new Map(old.map((o) => [canonical(o), o]));
  const b = new Map(next.map((o) => [canonical(o), o]));
  const out: ObjectDiff[] = [];
  for (const [k, o] of a) if (!b.has(k)) out.push(networkDiff(o, undefined, contextual));
  for (const [k, o] of b) if (!a.has(k)) out.push(networkDiff(undefined, o, contextual));
  return out.sort(compareObjects);
}

function networkDiff(old: Json | undefined, next: Json | undefined, contextual: boolean): ObjectDiff {
  const filter = ['Device', 'CIDR', 'IP', 'MBits'];
  const fields = fieldDiffs(
    old && flattenPrimitive(old, filter),
    next && flattenPrimitive(next, filter),
    contextual,
  );
  const objects = [
    ...portDiffs(list(old?.ReservedPorts), list(next?.ReservedPorts), false, contextual),
    ...portDiffs(list(old?.DynamicPorts), list(next?.DynamicPorts), true, contextual),
  ];
  push(objects, structDiff(obj(old?.DNS), obj(next?.DNS), 'DNS', contextual));
  return {
    Type: old ? 'Deleted' : 'Added',
    Name: 'Network',
    Fields: nullIfEmpty(fields),
    Objects: nullIfEmpty(objects.sort(compareObjects)),
  };
}

function portDiffs(old: Json[], next: Json[], dynamic: boolean, contextual: boolean): ObjectDiff[] {
  const filter = dynamic ? ['Value', 'IgnoreCollision'] : [];
  const name = dynamic ? 'Dynamic Port' : 'Static Port';
  const a = new Map(old.map((p) => [String(p.Label), p]));
  const b = new Map(next.map((p) => [String(p.Label), p]));
  const out: ObjectDiff[] = [];
  for (const label of new Set([...a.keys(), ...b.keys()]))
    push(out, primitiveObjectDiff(a.get(label), b.get(label), filter, name, contextual));
  return out.sort(compareObjects);
}

// ---- ordering, as the real sort functions ----

const TYPE_ORDER: Record<DiffType, number> = { Edited: 0, Added: 1, Deleted: 2, None: 3 };

function compareFields(x: FieldDiff, y: FieldDiff): number {
  return compare(x.Name, y.Name) || compare(x.Old, y.Old) || compare(x.New, y.New);
}

function compareObjects(x: ObjectDiff, y: ObjectDiff): number {
  return (
    compare(x.Name, y.Name) ||
    TYPE_ORDER[x.Type] - TYPE_ORDER[y.Type] ||
    (x.Fields?.length ?? 0) - (y.Fields?.length ?? 0) ||
    (x.Objects?.length ?? 0) - (y.Objects?.length ?? 0)
  );
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

// ---- JSON helpers ----

/** Groups or tasks paired by `Name`, sorted by name (the real diff sorts them so). */
function pairByName(old: Json[], next: Json[]): [Json | undefined, Json | undefined][] {
  const a = new Map(old.map((o) => [String(o.Name), o]));
  const b = new Map(next.map((o) => [String(o.Name), o]));
  return [...new Set([...a.keys(), ...b.keys()])].sort(compare).map((n) => [a.get(n), b.get(n)]);
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isPrimitive(v: unknown): v is string | number | boolean {
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}

/** Go's `%v` of a primitive. */
function format(v: unknown): string {
  return typeof v === 'string' ? v : String(v);
}

function obj(v: unknown): Json | undefined {
  return isObject(v) ? v : undefined;
}

function list(v: unknown): Json[] {
  return Array.isArray(v) ? (v as Json[]) : [];
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.map(format) : [];
}

function push<T>(out: T[], item: T | undefined): void {
  if (item !== undefined) out.push(item);
}

function nullIfEmpty<T>(items: T[]): T[] | null {
  return items.length > 0 ? items : null;
}

/**
 * JSON with sorted keys, for deep equality. A null member counts as absent: the service decodes
 * both into the same Go value (a nil pointer, slice or map), so a job sent without `Vault` equals
 * one stored with `"Vault": null`.
 */
export function canonical(value: unknown): string {
  // sameCanonical must agree with this: change both together.
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isObject(value))
    return `{${Object.keys(value)
      .filter((k) => value[k] !== undefined && value[k] !== null)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`)
      .join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

/** `canonical(a) === canonical(b)`, without building the strings (they were most of a plan's diff). */
export function sameCanonical(a: unknown, b: unknown): boolean {
  // `canonical` drops null keys as well as undefined ones, and writes either alone as null.
  return jsonEqual(a ?? null, b ?? null, { absent: (v) => v === null });
}

/**
 * `GET /v1/job/:id/versions?diffs=true`: each version against the one before it (versions are newest
 * first, so `versions[i+1]` → `versions[i]`), contextual as in the real `GetJobVersions`; null when
 * there is nothing to compare (Go's nil slice).
 */
export function versionDiffs(versions: readonly Json[]): JobDiff[] | null {
  const out: JobDiff[] = [];
  for (let i = 0; i + 1 < versions.length; i++) out.push(jobDiff(versions[i + 1], versions[i], true));
  return out.length > 0 ? out : null;
}
