/**
 * One pass over a parsed document's AST, before it becomes plain data:
 * - rejects what a manifest must not contain: custom tags (`!!js/function`), keys that could reach
 *   object prototypes (`__proto__`, `constructor`, `prototype`), duplicate keys, non-string keys,
 *   and aliases that point into themselves (they would make a cyclic object);
 * - expands `${env:...}` / `${file:...}` in string values in place, so that positions stay exact
 *   and aliases of an interpolated value get the expanded text too;
 * - checks merge keys (`<<`): each merges a map, an alias of one, or a list of them. The anchored
 *   maps are checked where they are written, so their keys meet the same rules.
 * The walk uses an explicit stack, not recursion, so depth alone cannot overflow the call stack.
 */
import { type Document, isAlias, isMap, isScalar, isSeq, type Node, type Scalar } from 'yaml';
import { aliasTargets, dealias } from './aliases.js';
import {
  expandReferences,
  type InterpolationSources,
  mayNeedExpansion,
  referenceTexts,
} from './interpolate.js';
import { effectivePairs, isMergePair, mergeSources } from './merge-keys.js';
import { joinPointer } from './pointer.js';
import { type DocumentPositions, keyName } from './positions.js';
import type { ManifestProblem } from './types.js';

export interface PreparedDocument {
  problems: ManifestProblem[];
  /** Set when the document's structure is unusable: do not convert or validate it. */
  rejected: boolean;
  /** Scalars whose value came from interpolation. */
  interpolatedScalars: Set<Scalar>;
  /** Pointers of values whose interpolation failed; schema errors there would only repeat it. */
  failedPointers: Set<string>;
  /** Scalars whose interpolation failed: with `interpolatedPointersThroughAliases`, every place they show up. */
  failedScalars: Set<Scalar>;
  /** Pointers of interpolated values, found without following aliases. */
  interpolatedPointers: Set<string>;
  hasAliases: boolean;
  /** Whether a map merges others (`<<`): its expansion is bounded before conversion. */
  hasMergeKeys: boolean;
  /** The first alias, where an alias-bomb error points. */
  firstAlias?: Node;
}

const YAML_TAG_PREFIX = 'tag:yaml.org,2002:';
const ALLOWED_TAGS = new Set(
  ['str', 'int', 'float', 'bool', 'null', 'map', 'seq'].map((t) => YAML_TAG_PREFIX + t),
);

/** Keys that, once in a plain object, can change or reach its prototype. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Where a node sits, as a chain of segments: turned into a JSON pointer only for the few nodes that
 * need one (interpolated values). Building every node's pointer string cost more than the walk.
 */
interface Place {
  parent: Place | undefined;
  segment: string | number;
}

function pointerOf(place: Place | undefined): string {
  const segments: (string | number)[] = [];
  for (let p = place; p; p = p.parent) segments.push(p.segment);
  let pointer = '';
  for (let i = segments.length - 1; i >= 0; i--) pointer = joinPointer(pointer, segments[i]!);
  return pointer;
}

interface Frame {
  node: Node;
  /** undefined for the document's root. */
  place: Place | undefined;
  /** Second visit, after the children: the node stops being an ancestor. */
  leaving?: boolean;
}

export async function prepareDocument(
  doc: Document.Parsed,
  positions: DocumentPositions,
  sources: InterpolationSources,
): Promise<PreparedDocument> {
  const result: PreparedDocument = {
    problems: [],
    rejected: false,
    interpolatedScalars: new Set(),
    failedPointers: new Set(),
    failedScalars: new Set(),
    interpolatedPointers: new Set(),
    hasAliases: false,
    hasMergeKeys: false,
  };
  const reject = (node: Node | null | undefined, message: string) => {
    result.problems.push({ position: positions.ofNode(node), message });
    result.rejected = true;
  };

  const root = doc.contents;
  if (!root) return result;
  const ancestors = new Set<Node>();
  const stack: Frame[] = [{ node: root, place: undefined }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const { node, place } = frame;
    if (frame.leaving) {
      ancestors.delete(node);
      continue;
    }

    if (isAlias(node)) {
      result.hasAliases = true;
      result.firstAlias ??= node;
      const target = aliasTargets(doc).get(node);
      if (!target) {
        reject(
          node,
          `alias *${node.source} has no anchor &${node.source} before it in this document (an anchor does not reach into other documents)`,
        );
      } else if (ancestors.has(target)) {
        reject(node, `alias *${node.source} refers to a value that contains it, which would make a cycle`);
      }
      continue;
    }

    const tag = (node as { tag?: string }).tag;
    if (tag !== undefined && !ALLOWED_TAGS.has(tag)) {
      reject(node, `tag ${showTag(tag)} is not allowed: manifests hold plain YAML values only`);
      continue;
    }

    if (isScalar(node)) {
      if (typeof node.value === 'string' && mayNeedExpansion(node.value)) {
        const expansion = await expandReferences(node.value, sources);
        const references = expansion.errors.length > 0 ? referenceTexts(node.value) : [];
        for (const error of expansion.errors) {
          result.problems.push({
            position: positions.ofReference(node, error.ordinal, references),
            message: error.message,
          });
        }
        const pointer = pointerOf(place);
        if (expansion.errors.length > 0) {
          result.failedPointers.add(pointer);
          result.failedScalars.add(node);
        }
        node.value = expansion.value;
        if (expansion.interpolated) {
          result.interpolatedScalars.add(node);
          result.interpolatedPointers.add(pointer);
        }
      }
      continue;
    }

    ancestors.add(node);
    stack.push({ node, place, leaving: true });
    const children: Frame[] = [];
    if (isMap(node)) {
      const seen = new Map<string, Node>();
      for (const pair of node.items) {
        const key = pair.key as Node | null;
        if (isMergePair(pair)) {
          result.hasMergeKeys = true;
          if (seen.has('<<')) {
            reject(
              key,
              `duplicate merge key "<<" (first on line ${positions.ofNode(seen.get('<<')).line}): merge several maps with <<: [*a, *b]`,
            );
            continue;
          }
          seen.set('<<', key!);
          if (!mergeSources(doc, pair.value)) {
            const value = pair.value as Node | null;
            const named = isSeq(value) ? (value.items as Node[]) : [value];
            const dangling = named.find((n) => isAlias(n) && !aliasTargets(doc).get(n));
            reject(
              dangling ?? value ?? key,
              dangling && isAlias(dangling)
                ? `alias *${dangling.source} has no anchor &${dangling.source} before it in this document (an anchor does not reach into other documents)`
                : 'a merge key "<<" takes a mapping, an alias of one (<<: *defaults), or a list of them (<<: [*a, *b])',
            );
            continue;
          }
          // Merged keys land in this map: interpolation in an inline merged map is recorded here.
          const value = pair.value as Node;
          for (const item of isSeq(value) ? value.items : [value]) {
            if (item) children.push({ node: item as Node, place });
          }
          continue;
        }
        const name = keyName(pair);
        if (!isScalar(key) || name === undefined) {
          reject(key ?? node, 'keys must be plain strings (not empty, not collections or aliases)');
          continue;
        }
        const keyTag = key.tag;
        if (keyTag !== undefined && !ALLOWED_TAGS.has(keyTag)) {
          reject(key, `tag ${showTag(keyTag)} is not allowed: manifests hold plain YAML values only`);
          continue;
        }
        if (FORBIDDEN_KEYS.has(name)) {
          reject(key, `key "${name}" is not allowed: it could change object prototypes`);
          continue;
        }
        const first = seen.get(name);
        if (first) {
          const firstLine = positions.ofNode(first).line;
          reject(key, `duplicate key "${name}" (first defined on line ${firstLine})`);
          continue;
        }
        seen.set(name, key);
        if (pair.value) children.push({ node: pair.value as Node, place: { parent: place, segment: name } });
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, index) => {
        if (item) children.push({ node: item as Node, place: { parent: place, segment: index } });
      });
    }
    // Reversed so that children are visited, and problems found, in document order.
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return result;
}

/**
 * Pointers of every place an interpolated value shows up once aliases and merge keys are followed:
 * `token: *tok` is as secret as the anchored value. Only needed for documents that use aliases, and only called
 * after yaml's toJS has accepted the document (so the alias expansion is known to be bounded).
 */
export function interpolatedPointersThroughAliases(
  doc: Document.Parsed,
  scalars: ReadonlySet<Scalar>,
): Set<string> {
  const pointers = new Set<string>();
  const root = doc.contents;
  if (!root || scalars.size === 0) return pointers;
  const stack: { node: Node; pointer: string }[] = [{ node: root, pointer: '' }];
  while (stack.length > 0) {
    const { node: maybeAlias, pointer } = stack.pop()!;
    const node = dealias(doc, maybeAlias) as Node | undefined;
    if (!node) continue;
    if (isScalar(node)) {
      if (scalars.has(node)) pointers.add(pointer);
    } else if (isMap(node)) {
      // Merged keys too: `<<: *with-secret` carries the anchored map's secrets into this one.
      for (const [name, pair] of effectivePairs(doc, node)) {
        if (pair.value) stack.push({ node: pair.value as Node, pointer: joinPointer(pointer, name) });
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, index) => {
        if (item) stack.push({ node: item as Node, pointer: joinPointer(pointer, index) });
      });
    }
  }
  return pointers;
}

function showTag(tag: string): string {
  return tag.startsWith(YAML_TAG_PREFIX) ? `!!${tag.slice(YAML_TAG_PREFIX.length)}` : tag;
}
