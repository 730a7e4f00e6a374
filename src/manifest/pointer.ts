/** JSON pointers (RFC 6901), as ajv reports them, and their human-readable form for messages. */

export function escapePointerSegment(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

export function splitPointer(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** The value a JSON pointer names inside `root` (list items by index), or undefined. */
export function valueAtPointer(root: unknown, pointer: string): unknown {
  let at = root;
  for (const segment of splitPointer(pointer))
    at = at !== null && typeof at === 'object' ? (at as Record<string, unknown>)[segment] : undefined;
  return at;
}

export function joinPointer(parent: string, segment: string | number): string {
  return `${parent}/${escapePointerSegment(String(segment))}`;
}

/** `/spec/Policies/1/Name` → `spec.Policies[1].Name`; keys that are not identifiers are quoted. */
export function pointerToPath(pointer: string): string {
  let path = '';
  for (const segment of splitPointer(pointer)) {
    if (/^(0|[1-9][0-9]*)$/.test(segment)) path += `[${segment}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(segment)) path += path === '' ? segment : `.${segment}`;
    else path += `[${JSON.stringify(segment)}]`;
  }
  return path;
}
