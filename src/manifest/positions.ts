/**
 * Maps places in a parsed YAML document (AST nodes, JSON pointers as ajv reports them) back to
 * `file:line:col`. Positions come from yaml's LineCounter, which counts over the whole stream, so
 * they are right for every document of a multi-document file.
 */
import { type Document, isAlias, isMap, isScalar, isSeq, type LineCounter, type Node, type Pair } from 'yaml';
import { aliasTargets } from './aliases.js';
import { referenceStarts, referenceTexts } from './interpolate.js';
import { effectivePairs } from './merge-keys.js';
import { splitPointer } from './pointer.js';
import type { SourcePosition } from './types.js';

/** Where a pointer led: the deepest node reached, and the key it hangs from when in a mapping. */
interface PointerTarget {
  node: Node | null;
  key?: Node;
  /** Whether every segment of the pointer was found. */
  complete: boolean;
}

/**
 * What validation and the built-in kinds need of a document's positions: both the AST-backed
 * DocumentPositions and the fast path's LazyPositions (fast-load.ts) provide it.
 */
export interface DocumentLocator {
  /** Where the document starts: its `kind:` key, else its first node. */
  documentStart(): SourcePosition;
  locate(pointer: string): SourcePosition;
  locateKey(pointer: string): SourcePosition;
}

export class DocumentPositions implements DocumentLocator {
  constructor(
    readonly file: string,
    private readonly doc: Document.Parsed,
    private readonly lineCounter: LineCounter,
    /** The file's text: lets a problem point inside a scalar (ofReference). */
    private readonly text?: string,
  ) {}

  at(offset: number): SourcePosition {
    const { line, col } = this.lineCounter.linePos(offset);
    return { file: this.file, line, col };
  }

  ofNode(node: Node | null | undefined): SourcePosition {
    return this.at(node?.range?.[0] ?? this.doc.range[0]);
  }

  /**
   * Where the `ordinal`-th `${…}` reference of a scalar is written, given the references of its
   * value (`referenceTexts`); the scalar's start when its source does not write the same references
   * in the same order (an escape such as `\u0024{` that made one), so a position is never a guess.
   */
  ofReference(node: Node, ordinal: number, inValue: readonly string[]): SourcePosition {
    const range = node.range;
    if (this.text === undefined || !range) return this.ofNode(node);
    const source = this.text.slice(range[0], range[1]);
    const written = referenceTexts(source);
    const same = written.length === inValue.length && written.every((text, i) => text === inValue[i]);
    const start = same ? referenceStarts(source)[ordinal] : undefined;
    return start === undefined ? this.ofNode(node) : this.at(range[0] + start);
  }

  /** Where the document starts: its `kind:` key, else its first node. */
  documentStart(): SourcePosition {
    const root = this.doc.contents;
    if (isMap(root)) {
      const kindPair = root.items.find((pair) => keyName(pair) === 'kind');
      if (kindPair?.key) return this.ofNode(kindPair.key as Node);
    }
    return this.ofNode(root);
  }

  /**
   * The position of the value at `pointer`. An empty value (`spec:` with nothing after it) points at
   * its key, since yaml places empty nodes at the end of the line. A pointer that goes past the
   * document falls back to the nearest node that exists.
   */
  locate(pointer: string): SourcePosition {
    const target = this.resolve(pointer);
    if (target.key && isEmptyScalar(target.node)) return this.ofNode(target.key);
    return this.ofNode(target.node);
  }

  /** The position of the key the value at `pointer` hangs from (or of the value, in a sequence). */
  locateKey(pointer: string): SourcePosition {
    const target = this.resolve(pointer);
    if (target.complete && target.key) return this.ofNode(target.key);
    return this.locate(pointer);
  }

  private resolve(pointer: string): PointerTarget {
    const root = this.doc.contents;
    if (!root) return { node: null, complete: false };
    let target: PointerTarget = { node: root, complete: true };
    for (const segment of splitPointer(pointer)) {
      const node = this.dealias(target.node);
      if (isMap(node)) {
        // A merged value (`<<: *defaults`) is where the anchored map writes it.
        const pair = effectivePairs(this.doc, node).get(segment);
        if (!pair?.value) return { ...target, complete: false };
        target = { node: pair.value as Node, key: pair.key as Node, complete: true };
      } else if (isSeq(node) && /^\d+$/.test(segment) && Number(segment) < node.items.length) {
        target = { node: node.items[Number(segment)] as Node, complete: true };
      } else {
        return { ...target, complete: false };
      }
    }
    return target;
  }

  private dealias(node: Node | null): Node | null {
    // Pointers into an aliased collection continue inside the anchored node. One step is enough:
    // an alias never points at another alias.
    return isAlias(node) ? ((aliasTargets(this.doc).get(node) as Node | undefined) ?? node) : node;
  }
}

/** The string a mapping key stands for, as yaml's toJS would make it; undefined for non-scalar keys. */
export function keyName(pair: Pair<unknown, unknown>): string | undefined {
  const key = pair.key;
  if (!isScalar(key) || key.value === null || key.value === undefined) return undefined;
  return typeof key.value === 'string' ? key.value : String(key.value);
}

function isEmptyScalar(node: Node | null): boolean {
  return isScalar(node) && node.value === null && !!node.range && node.range[0] === node.range[1];
}
