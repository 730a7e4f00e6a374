/**
 * Attribute diff paths (`AttributeDiff.path`): names joined by dots, `[web]` or `[0]` for an item of a
 * list, and `["spring.datasource.url"]` for a map key that holds a dot, a bracket or a quote. A job's
 * `Env` and `Meta` keys are the user's own (`spring.datasource.url`, `app.kubernetes.io/name`):
 * joined with a dot like the names around them, they read as nested maps in every plan form, and the
 * masking of secret entries by name could no longer tell where the name starts.
 */

/** A key that can stand in a path as it is (`Env.LOG_LEVEL`); any other is quoted (`Env["a.b"]`). */
export function isPlainPathKey(key: string): boolean {
  return key !== '' && !/[.[\]"]/.test(key);
}

/** The path of `key` inside the value at `path`. */
export function childPath(path: string, key: string): string {
  if (!isPlainPathKey(key)) return `${path}[${JSON.stringify(key)}]`;
  return path === '' ? key : `${path}.${key}`;
}

/** One step of a path: a name, a list item's selector (`[web]`, `[0]`) or a quoted map key. */
export type PathPart =
  { type: 'name'; name: string } | { type: 'item'; selector: string } | { type: 'key'; key: string };

const PART = /"(?:[^"\\]|\\.)*"|[^.[\]]+|\[("(?:[^"\\]|\\.)*"|[^\]]*)\]/g;

/** The steps of a path, in order: `TaskGroups[web].Env["a.b"]` → name, item, name, key. */
export function pathParts(path: string): PathPart[] {
  const parts: PathPart[] = [];
  for (const m of path.matchAll(PART)) {
    const inner = m[1];
    if (inner === undefined) parts.push({ type: 'name', name: m[0] });
    else if (inner.startsWith('"')) parts.push({ type: 'key', key: unquote(inner) });
    else parts.push({ type: 'item', selector: inner });
  }
  return parts;
}

function unquote(quoted: string): string {
  try {
    return String(JSON.parse(quoted));
  } catch {
    return quoted.slice(1, -1);
  }
}
