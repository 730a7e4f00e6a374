/**
 * YAML merge keys (`<<: *defaults`, `<<: [*a, *b]`), as Kubernetes-style manifests use them. yaml
 * applies them when converting to plain data; the rest of the manifest layer needs to see through
 * them too: prepare.ts checks what is merged, positions.ts finds a merged value's line, and secrets
 * interpolated into an anchored map stay masked where it is merged.
 *
 * Semantics (https://yaml.org/type/merge.html, and yaml's own `merge` option): keys written in the
 * map win over merged ones, and of several merged maps the earlier wins.
 */
import {
  type Document,
  isAlias,
  isMap,
  isNode,
  isScalar,
  isSeq,
  type Node,
  type Pair,
  visit,
  type YAMLMap,
} from 'yaml';
import { aliasTargets, dealias } from './aliases.js';
import { keyName } from './positions.js';

/** With `merge` on, yaml gives a plain `<<` key a symbol for a value (a quoted "<<" stays a string). */
export function isMergePair(pair: Pair<unknown, unknown>): boolean {
  const key = pair.key;
  return isScalar(key) && typeof key.value === 'symbol' && key.value.description === '<<';
}

/**
 * The maps a merge key's value names, in the order they take effect (earlier wins); undefined when
 * the value is not a map, an alias of one, or a list of those.
 */
export function mergeSources(doc: Document.Parsed, value: unknown): YAMLMap[] | undefined {
  const resolved = dealias(doc, value);
  const items = isSeq(resolved) ? resolved.items.map((item) => dealias(doc, item)) : [resolved];
  return items.every((item) => isMap(item)) ? (items as YAMLMap[]) : undefined;
}

/**
 * A map's entries as its plain value will hold them: its own keys first, then each merged map's
 * (merges inside merged maps included) for keys not yet there. Recursion follows the anchors, whose
 * depth yaml's conversion has already survived when this runs.
 */
export function effectivePairs(doc: Document.Parsed, map: YAMLMap): Map<string, Pair<unknown, unknown>> {
  const entries = new Map<string, Pair<unknown, unknown>>();
  for (const pair of map.items) {
    const name = isMergePair(pair) ? undefined : keyName(pair);
    if (name !== undefined && !entries.has(name)) entries.set(name, pair);
  }
  for (const pair of map.items) {
    if (!isMergePair(pair)) continue;
    for (const source of mergeSources(doc, pair.value) ?? []) {
      for (const [name, merged] of effectivePairs(doc, source))
        if (!entries.has(name)) entries.set(name, merged);
    }
  }
  return entries;
}

/**
 * Whether aliases and merge keys would expand the document past `limit` nodes beyond its own. A
 * plain alias shares the anchored value, but a merge copies the anchored map each time, so a large
 * anchor merged many times would fill memory while yaml converts it, before yaml's alias count
 * stops it. Counted on the AST, iteratively and once per node, before any conversion.
 */
export function expansionExceeds(doc: Document.Parsed, limit: number): boolean {
  const root = doc.contents as Node | null;
  if (!root) return false;
  const targets = aliasTargets(doc);
  let ownNodes = 0;
  visit(doc, {
    Node() {
      ownNodes++;
    },
  });
  const cap = ownNodes + limit;
  const sizes = new Map<Node, number>();
  const children = (node: Node): Node[] => {
    if (isAlias(node)) {
      const target = targets.get(node);
      return target ? [target] : [];
    }
    if (isMap(node)) return node.items.flatMap((pair) => [pair.key, pair.value].filter(isNode));
    if (isSeq(node)) return node.items.filter(isNode);
    return [];
  };
  // Post-order without recursion: aliases can chain anchors deeper than the call stack allows.
  // prepare.ts has refused cycles, so this ends.
  const stack: { node: Node; ready: boolean }[] = [{ node: root, ready: false }];
  while (stack.length > 0) {
    const { node, ready } = stack.pop()!;
    if (sizes.has(node)) continue;
    const inner = children(node);
    if (!ready) {
      stack.push({ node, ready: true });
      for (const child of inner) if (!sizes.has(child)) stack.push({ node: child, ready: false });
      continue;
    }
    let size = isAlias(node) ? 0 : 1;
    for (const child of inner) size = Math.min(cap + 1, size + (sizes.get(child) ?? 0));
    sizes.set(node, size);
  }
  return (sizes.get(root) ?? 0) > cap;
}
