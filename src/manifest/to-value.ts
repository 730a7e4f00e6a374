/**
 * Turns a checked YAML document into plain data. yaml's `toJS` enforces `maxAliasCount` (alias
 * bombs throw there, not at parse time) and can still overflow the stack if aliases stack deep
 * structures on each other; both become problems, and the result's depth is checked again because
 * aliases can nest a value deeper than the text shows.
 */
import type { Document, Node } from 'yaml';
import { MAX_ALIAS_COUNT, MAX_MERGE_EXPANSION_NODES, MAX_NESTING_DEPTH } from './limits.js';
import { expansionExceeds } from './merge-keys.js';
import type { DocumentPositions } from './positions.js';
import type { ManifestProblem } from './types.js';

export type ToValueResult = { ok: true; value: unknown } | { ok: false; problem: ManifestProblem };

export function documentToValue(
  doc: Document.Parsed,
  positions: DocumentPositions,
  firstAlias: Node | undefined,
  { hasMergeKeys = false }: { hasMergeKeys?: boolean } = {},
): ToValueResult {
  const aliasPosition = positions.ofNode(firstAlias ?? doc.contents);
  const bomb: ManifestProblem = {
    position: aliasPosition,
    message: `aliases expand to too much data (more than ${MAX_ALIAS_COUNT} times the anchored values); is this a YAML "billion laughs" bomb?`,
  };
  // A merge copies the anchored map where a plain alias shares it: bound the copies before yaml
  // makes them, or a large anchor merged a hundred times fills memory before yaml's count stops it.
  if (hasMergeKeys && expansionExceeds(doc, MAX_MERGE_EXPANSION_NODES)) return { ok: false, problem: bomb };
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    if (error instanceof RangeError) {
      return { ok: false, problem: { position: aliasPosition, message: tooDeep() } };
    }
    if (error instanceof ReferenceError && /alias/i.test(error.message)) return { ok: false, problem: bomb };
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, problem: { position: positions.ofNode(doc.contents), message: `YAML: ${message}` } };
  }
  if (depthExceeds(value, MAX_NESTING_DEPTH)) {
    return { ok: false, problem: { position: aliasPosition, message: tooDeep() } };
  }
  return { ok: true, value };
}

function tooDeep(): string {
  return `values are nested more than ${MAX_NESTING_DEPTH} levels deep once aliases are expanded`;
}

/** Iterative, so that the check itself cannot overflow the stack. Cycles were rejected earlier. */
function depthExceeds(root: unknown, maxDepth: number): boolean {
  const stack: { value: unknown; depth: number }[] = [{ value: root, depth: 0 }];
  while (stack.length > 0) {
    const { value, depth } = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    if (depth >= maxDepth) return true;
    for (const child of Object.values(value)) stack.push({ value: child, depth: depth + 1 });
  }
  return false;
}
