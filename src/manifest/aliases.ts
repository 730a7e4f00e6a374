/**
 * What each alias of a document stands for, found in one pass. yaml's `Alias.resolve(doc)` walks the
 * whole document on every call, so resolving each of a few hundred aliases (or merge keys) of a large
 * document took seconds; the documents' structure does not change after parsing, so once is enough.
 */
import { type Alias, type Document, isAlias, type Node, visit } from 'yaml';

const targetsByDocument = new WeakMap<Document.Parsed, Map<Alias, Node>>();

/** Each alias's anchored node: the last node anchored with its name before it, as yaml resolves it. */
export function aliasTargets(doc: Document.Parsed): Map<Alias, Node> {
  let targets = targetsByDocument.get(doc);
  if (targets) return targets;
  targets = new Map();
  const anchors = new Map<string, Node>();
  visit(doc, {
    Node(_key, node) {
      if (isAlias(node)) {
        const target = anchors.get(node.source);
        if (target) targets!.set(node, target);
      } else if (node.anchor) anchors.set(node.anchor, node);
    },
  });
  targetsByDocument.set(doc, targets);
  return targets;
}

/** The node an alias stands for (undefined when its anchor is missing); any other node as it is. */
export function dealias(doc: Document.Parsed, node: unknown): unknown {
  return isAlias(node) ? aliasTargets(doc).get(node) : node;
}
