/**
 * Equality of two values as their sorted-key JSON would compare, without building the JSON: a plan
 * of 10,000 unchanged objects compared each as two sorted JSON strings (a tenth of its CPU), and the
 * sandbox's job plans compared whole jobs that way (most of a plan's cost). Shared by the kinds'
 * comparisons (resources/compare.ts) and the sandbox's scheduler (spec and diff equality).
 *
 * JSON's rules are kept: a key whose value is `undefined`, a function or a symbol counts as absent
 * (`absent` may add others: the scheduler's diff treats `null` so), such a value in a list is `null`,
 * and anything that is not plain data (a Date, a non-finite number) is compared as its JSON.
 */

type Plain = Record<string, unknown>;

export interface JsonEqualOptions {
  /** Key values that count as missing besides JSON's own (undefined, functions, symbols). */
  absent?: (value: unknown) => boolean;
  /** Keys left out at the top level only (fields a server sets, say). */
  ignored?: ReadonlySet<string>;
}

function isPlainObject(v: unknown): v is Plain {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** JSON with sorted keys (and without the keys `absent` picks): equal values give equal strings. */
export function canonicalJson(value: unknown, absent?: (value: unknown) => boolean): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    isPlainObject(v)
      ? Object.fromEntries(
          Object.keys(v)
            .filter((k) => !absent?.(v[k]))
            .sort()
            .map((k) => [k, v[k]]),
        )
      : v,
  );
}

export function jsonEqual(a: unknown, b: unknown, options: JsonEqualOptions = {}): boolean {
  const same = plainEqual(a, b, options.absent, options.ignored);
  if (same !== undefined) return same;
  return (
    canonicalJson(without(a, options.ignored), options.absent) ===
    canonicalJson(without(b, options.ignored), options.absent)
  );
}

/** Values JSON writes as they are: strings, booleans, null and finite numbers. */
function isJsonScalar(v: unknown): boolean {
  return (
    typeof v === 'string' ||
    typeof v === 'boolean' ||
    v === null ||
    (typeof v === 'number' && Number.isFinite(v))
  );
}

/** Whether JSON.stringify writes a key with this value. */
function isWritten(v: unknown): boolean {
  const t = typeof v;
  return t !== 'undefined' && t !== 'function' && t !== 'symbol';
}

/** Whether a key with this value takes part in the comparison (a plain function: called per key). */
function counted(
  v: unknown,
  k: string,
  absent: JsonEqualOptions['absent'],
  ignored: ReadonlySet<string> | undefined,
): boolean {
  if (!isWritten(v)) return false;
  if (absent !== undefined && absent(v)) return false;
  return ignored === undefined || !ignored.has(k);
}

/** A list item as JSON writes it: what it cannot write becomes `null`. */
function asListItem(v: unknown): unknown {
  return isWritten(v) ? v : null;
}

function isSimpleObject(v: unknown): v is Plain {
  if (!isPlainObject(v) || typeof (v as { toJSON?: unknown }).toJSON === 'function') return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/** true or false when told on plain data alone; undefined when only the JSON can tell. */
function plainEqual(
  a: unknown,
  b: unknown,
  absent: JsonEqualOptions['absent'],
  ignored?: ReadonlySet<string>,
): boolean | undefined {
  if (isJsonScalar(a) && isJsonScalar(b)) return a === b;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) {
      const same = plainEqual(asListItem(a[i]), asListItem(b[i]), absent);
      if (same !== true) return same;
    }
    return true;
  }
  if (isSimpleObject(a) && isSimpleObject(b)) {
    let keys = 0;
    for (const k of Object.keys(a)) {
      if (!counted(a[k], k, absent, ignored)) continue;
      keys += 1;
      if (!Object.hasOwn(b, k) || !counted(b[k], k, absent, ignored)) return false;
      const same = plainEqual(a[k], b[k], absent);
      if (same !== true) return same;
    }
    for (const k of Object.keys(b)) if (counted(b[k], k, absent, ignored)) keys -= 1;
    return keys === 0;
  }
  // A scalar never equals a collection, nor a list an object.
  const shape = (v: unknown) =>
    isJsonScalar(v) ? 'scalar' : Array.isArray(v) ? 'list' : isSimpleObject(v) ? 'object' : undefined;
  const [shapeA, shapeB] = [shape(a), shape(b)];
  if (shapeA !== undefined && shapeB !== undefined) return false;
  // Anything else (undefined, a Date, NaN): only the JSON can tell.
  return undefined;
}

/** `value` without the `ignored` top-level keys, for the comparison of its JSON. */
function without(value: unknown, ignored: ReadonlySet<string> | undefined): unknown {
  if (!ignored || !isPlainObject(value)) return value;
  return Object.fromEntries(Object.entries(value).filter(([k]) => !ignored.has(k)));
}
