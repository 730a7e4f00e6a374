/**
 * Positions for problems found after loading (a plan's "policy does not exist" at `spec.Policies[0]`)
 * without keeping every document's syntax tree until then: the trees of a 10,000-document file were
 * most of a plan's memory, and the fast path (fast-parse.ts) builds none. The file's text is kept
 * instead, and parsed with positions, once per file, the first time a position is asked for.
 * A document is found again by where it starts (its `kind:` key), which both parses agree on,
 * rather than by its count, which could differ where they count empty documents differently.
 */
import { positionParser } from './position-parser.js';
import type { DocumentPositions } from './positions.js';
import type { SourcePosition } from './types.js';

export class DeferredPositions {
  private byStart: Map<string, DocumentPositions> | undefined;

  constructor(
    private readonly file: string,
    private readonly text: string,
  ) {}

  /** `locate` for the document starting at `start`; `start` itself if it cannot be found again. */
  locator(start: SourcePosition): (pointer: string) => SourcePosition {
    return (pointer) => this.documentAt(start)?.locate(pointer) ?? start;
  }

  /**
   * The positions of the document whose `documentStart()` is `start`. Undefined, too, when the
   * position-keeping parser was never loaded (`loadManifest` loads it unless told positions are
   * wanted only for problems, as `converge validate` does): the document's start then stands in.
   */
  documentAt(start: SourcePosition): DocumentPositions | undefined {
    if (!this.byStart) {
      const parse = positionParser();
      if (!parse) return undefined;
      this.byStart = new Map();
      for (const document of parse(this.file, this.text).documents) {
        const { line, col } = document.positions.documentStart();
        this.byStart.set(`${line}:${col}`, document.positions);
      }
    }
    return this.byStart.get(`${start.line}:${start.col}`);
  }
}
