/**
 * A light shape check for what the sandbox reads back from its own state file: each service checks
 * its snapshot with it before trusting it, so a hand-edited or truncated file is refused at start
 * instead of failing later inside a handler.
 */

/** What one field must hold; `object?` also takes `null` (a record that may be absent). */
export type FieldKind = 'integer' | 'string' | 'array' | 'object' | 'object?';

function fieldMatches(v: unknown, kind: FieldKind): boolean {
  switch (kind) {
    case 'integer':
      return Number.isInteger(v);
    case 'string':
      return typeof v === 'string';
    case 'array':
      return Array.isArray(v);
    case 'object':
      return typeof v === 'object' && v !== null;
    case 'object?':
      return typeof v === 'object';
  }
}

/** True when `value` is a non-null object whose named fields each hold what `fields` says. */
export function hasFields(
  value: unknown,
  fields: Readonly<Record<string, FieldKind>>,
): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  return Object.entries(fields).every(([name, kind]) => fieldMatches(record[name], kind));
}
