/**
 * Structural comparison shared by the kinds. Each kind first brings both sides into one canonical
 * shape (server-filled fields dropped, defaults filled, order-insensitive lists sorted); this module
 * then lists what differs, attribute by attribute.
 *
 * Hand-written rather than microdiff (which was tried and dropped): microdiff recurses into lists by
 * position and has no option to stop at them, so a moved item shows as several changes. Keeping the
 * list semantics below would mean cutting each of its paths back to the nearest list and comparing
 * that list again here, and skipping its `undefined`-valued keys and re-sorting its key order: more
 * code than the recursion it would replace.
 */
import { childPath } from './diff-path.js';
import { canonicalJson, jsonEqual } from '../common/json-equal.js';
import type { AttributeDiff } from './contract.js';

type Plain = Record<string, unknown>;

export function isPlainObject(v: unknown): v is Plain {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export { canonicalJson } from '../common/json-equal.js';

/**
 * Whether two values give the same canonical JSON, without building it (common/json-equal.ts): a
 * key whose value is `undefined` (or a function) counts as absent, and anything that is not a plain
 * value (a Date, a non-finite number) is compared as its JSON.
 */
export function deepEqual(a: unknown, b: unknown): boolean {
  return jsonEqual(a, b);
}

/**
 * Differences between a desired and a live value, both already canonical. Objects are compared key
 * by key; lists item by item as multisets (an added item is `add`, a dropped one `remove`), and a
 * list whose items only moved is one `change` of the whole list, which matters only for lists whose
 * order means something (kinds sort the others before comparing).
 */
export function diffValues(desired: unknown, live: unknown, path = ''): AttributeDiff[] {
  if (deepEqual(desired, live)) return [];
  if (isPlainObject(desired) && isPlainObject(live)) {
    const keys = [...new Set([...Object.keys(live), ...Object.keys(desired)])].sort();
    return keys.flatMap((k) => {
      const p = childPath(path, k);
      // A list on one side only is compared with an empty one, so its items show one by one.
      if (!(k in live)) {
        if (Array.isArray(desired[k])) return diffValues(desired[k], [], p);
        return desired[k] === undefined ? [] : [{ path: p, op: 'add' as const, after: desired[k] }];
      }
      if (!(k in desired)) {
        if (Array.isArray(live[k])) return diffValues([], live[k], p);
        return live[k] === undefined ? [] : [{ path: p, op: 'remove' as const, before: live[k] }];
      }
      return diffValues(desired[k], live[k], p);
    });
  }
  if (Array.isArray(desired) && Array.isArray(live)) {
    const remaining = live.map((item) => canonicalJson(item));
    const added: unknown[] = [];
    for (const item of desired) {
      const i = remaining.indexOf(canonicalJson(item));
      if (i >= 0) remaining.splice(i, 1);
      else added.push(item);
    }
    const removed = live.filter((item) => {
      const i = remaining.indexOf(canonicalJson(item));
      if (i < 0) return false;
      remaining.splice(i, 1);
      return true;
    });
    if (added.length === 0 && removed.length === 0)
      return [{ path, op: 'change', before: live, after: desired }];
    return [
      ...removed.map((before) => ({ path, op: 'remove' as const, before })),
      ...added.map((after) => ({ path, op: 'add' as const, after })),
    ];
  }
  return [{ path, op: 'change', before: live, after: desired }];
}

/** Drops `undefined`, empty lists and empty objects: services omit them, manifests may too. */
export function compact<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v) => compact(v)) as T;
  if (!isPlainObject(value)) return value;
  // Plain loops, no entry arrays: every object of a plan passes here a few times.
  const out: Plain = {};
  for (const k of Object.keys(value)) {
    const c = compact(value[k]);
    if (c === undefined || c === null) continue;
    if (Array.isArray(c) ? c.length === 0 : isPlainObject(c) && isEmptyObject(c)) continue;
    out[k] = c;
  }
  return out as T;
}

function isEmptyObject(o: Plain): boolean {
  for (const k in o) if (Object.prototype.hasOwnProperty.call(o, k)) return false;
  return true;
}

/** Sorts a list by a key function, without touching the input. */
export function sortBy<T>(items: readonly T[] | undefined, key: (item: T) => string): T[] {
  return [...(items ?? [])].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}
