/**
 * Entries that are secrets by their own names: in the maps a kind lets the user name entries of
 * (`secretsByName`: a job's `Env` and `Meta`), an entry whose name says secret by the rule for
 * sensitive variables (`CONVERGE_SENSITIVE_ENV`: `DB_PASSWORD`, `api_token`) is masked in the plan,
 * on both sides. Masking values read from sensitive variables is not enough: a pull request that
 * writes `DB_PASSWORD: changeme` where the manifest read it from a variable would otherwise print
 * the live password as the old value, on the pull request, in the saved plan.
 */
import type { AttributeDiff } from '../resources/contract.js';
import { pathParts } from '../resources/diff-path.js';
import { SENSITIVE } from './render/format.js';
import type { Change } from './types.js';

export type SecretName = (name: string) => boolean;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * `value` with the entries of the map at `segments` (lists passed through) whose names say secret
 * masked. Copied only where something is masked: every job's before and after passes here, and most
 * hold no such entry.
 */
function maskEntries(value: unknown, segments: readonly string[], secretName: SecretName, at = 0): unknown {
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    value.forEach((item, i) => {
      const masked = maskEntries(item, segments, secretName, at);
      if (masked !== item) (out ??= [...value])[i] = masked;
    });
    return out ?? value;
  }
  if (!isObject(value)) return value;
  if (at === segments.length) {
    let out: Record<string, unknown> | undefined;
    for (const k of Object.keys(value))
      if (value[k] !== undefined && value[k] !== SENSITIVE && secretName(k))
        (out ??= { ...value })[k] = SENSITIVE;
    return out ?? value;
  }
  const head = segments[at]!;
  if (!Object.hasOwn(value, head)) return value;
  const inner = maskEntries(value[head], segments, secretName, at + 1);
  return inner === value[head] ? value : { ...value, [head]: inner };
}

/**
 * A diff path's field names and map keys, its item selectors dropped: `TaskGroups[web].Tasks[srv].Env.X`
 * → `TaskGroups.Tasks.Env.X`, and `…Env["spring.datasource.password"]` ends in that one key.
 */
function fieldsOf(path: string): string[] {
  const fields: string[] = [];
  for (const part of pathParts(path)) {
    if (part.type === 'name') fields.push(part.name);
    else if (part.type === 'key') fields.push(part.key);
  }
  return fields;
}

function startsWith(longer: readonly string[], prefix: readonly string[]): boolean {
  return prefix.every((segment, i) => longer[i] === segment);
}

function maskDiff(diff: AttributeDiff, maps: readonly string[][], secretName: SecretName): AttributeDiff {
  const fields = fieldsOf(diff.path);
  let out = diff;
  for (const map of maps) {
    if (fields.length > map.length && startsWith(fields, map)) {
      // The diff is an entry of the map (or inside one): masked whole when its name says secret.
      // A name may hold dots (`spring.datasource.password`), which the path does not tell from
      // nesting: the whole rest of the path is tried as the name too, and each part of it.
      const name = fields.slice(map.length);
      if (!secretName(name.join('.')) && !name.some((part) => secretName(part))) continue;
      const { before, after, ...rest } = out;
      return {
        ...rest,
        sensitive: true,
        ...(before !== undefined ? { before: SENSITIVE } : {}),
        ...(after !== undefined ? { after: SENSITIVE } : {}),
      };
    }
    if (startsWith(map, fields)) {
      // The diff holds the map (a task added whole): its secret entries are masked inside.
      const below = map.slice(fields.length);
      const { before, after, ...rest } = out;
      out = {
        ...rest,
        ...(before !== undefined ? { before: maskEntries(before, below, secretName) } : {}),
        ...(after !== undefined ? { after: maskEntries(after, below, secretName) } : {}),
      };
    }
  }
  return out;
}

/** The string values of the entries at `segments` whose names say secret (see `maskEntries`). */
function collectEntries(
  value: unknown,
  segments: readonly string[],
  secretName: SecretName,
  out: string[],
  at = 0,
): void {
  if (Array.isArray(value)) {
    for (const item of value) collectEntries(item, segments, secretName, out, at);
    return;
  }
  if (!isObject(value)) return;
  if (at === segments.length) {
    for (const [k, v] of Object.entries(value))
      if (typeof v === 'string' && v !== SENSITIVE && secretName(k)) out.push(v);
    return;
  }
  const head = segments[at]!;
  if (Object.hasOwn(value, head)) collectEntries(value[head], segments, secretName, out, at + 1);
}

/**
 * The values of a change's entries whose names say secret, live and desired: secrets wherever they
 * are copied. A pull request that renames `DB_PASSWORD` to `DATABASE_PW` keeps the value, and the
 * new name says nothing: without this, the plan printed the live password under it.
 */
export function secretValuesByName(
  change: Change,
  maps: readonly string[],
  secretName: SecretName,
): string[] {
  if (maps.length === 0) return [];
  const out: string[] = [];
  const paths = splitPaths(maps);
  for (const p of paths) {
    collectEntries(change.before, p, secretName, out);
    collectEntries(change.after, p, secretName, out);
  }
  // A job's `before` is a summary without its Env: the live values are in the diffs, as maskDiff finds them.
  for (const diff of change.diffs) {
    const fields = fieldsOf(diff.path);
    for (const map of paths) {
      if (fields.length > map.length && startsWith(fields, map)) {
        const name = fields.slice(map.length);
        if (!secretName(name.join('.')) && !name.some((part) => secretName(part))) continue;
        for (const v of [diff.before, diff.after]) if (typeof v === 'string' && v !== SENSITIVE) out.push(v);
      } else if (startsWith(map, fields)) {
        const below = map.slice(fields.length);
        collectEntries(diff.before, below, secretName, out);
        collectEntries(diff.after, below, secretName, out);
      }
    }
  }
  return out;
}

/** The change with every entry of `maps` whose name says secret masked: before, after and diffs. */
export function maskSecretsByName(change: Change, maps: readonly string[], secretName: SecretName): Change {
  if (maps.length === 0) return change;
  const paths = splitPaths(maps);
  const masked = (value: Record<string, unknown> | null | undefined) => {
    if (!value) return value;
    let out: unknown = value;
    for (const p of paths) out = maskEntries(out, p, secretName);
    return out as Record<string, unknown>;
  };
  const before = masked(change.before);
  const after = masked(change.after);
  const diffs = change.diffs.map((d) => maskDiff(d, paths, secretName));
  // The change itself where nothing was masked (most): one per job of the plan.
  if (before === change.before && after === change.after && diffs.every((d, i) => d === change.diffs[i]))
    return change;
  return {
    ...change,
    ...(change.before !== undefined ? { before } : {}),
    ...(change.after !== undefined ? { after } : {}),
    diffs,
  } as Change;
}

/**
 * The values of `value`'s entries of `maps` whose names say secret (a whole object: a job as the
 * service returns it): what `maskSecretsInValue` masks, to mask its copies under other names too.
 */
export function secretValuesInValue(
  value: unknown,
  maps: readonly string[],
  secretName: SecretName,
): string[] {
  const out: string[] = [];
  for (const p of splitPaths(maps)) collectEntries(value, p, secretName, out);
  return out;
}

/** `value` (a whole object: a job as the service returns it) with its secret entries masked. */
export function maskSecretsInValue<T>(value: T, maps: readonly string[], secretName: SecretName): T {
  let out: unknown = value;
  for (const p of splitPaths(maps)) out = maskEntries(out, p, secretName);
  return out as T;
}

const splitByMaps = new WeakMap<readonly string[], string[][]>();

/** A kind's maps as path segments, split once per kind. */
function splitPaths(maps: readonly string[]): string[][] {
  let paths = splitByMaps.get(maps);
  if (!paths) {
    paths = maps.map((m) => m.split('.'));
    splitByMaps.set(maps, paths);
  }
  return paths;
}
