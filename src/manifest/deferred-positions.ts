/**
 * Positions for problems found after loading (a plan's "policy does not exist" at `spec.Policies[0]`)
 * without keeping every document's syntax tree until then: the trees of a 10,000-document file were
 * most of a plan's memory. The file's text is kept instead, and parsed again, once per file, the
 * first time a position is asked for. Parsing is deterministic, so document `index` is the same
 * document; positions depend on its structure only, which nothing changes after parsing.
 */
import { parseManifestText } from './parse.js';
import type { DocumentPositions } from './positions.js';
import type { SourcePosition } from './types.js';

export class DeferredPositions {
  private byIndex: Map<number, DocumentPositions> | undefined;

  constructor(
    private readonly file: string,
    private readonly text: string,
  ) {}

  /** `locate` for document `index`; `fallback` (its start) if the document cannot be found again. */
  locator(index: number, fallback: SourcePosition): (pointer: string) => SourcePosition {
    return (pointer) => this.positionsOf(index)?.locate(pointer) ?? fallback;
  }

  private positionsOf(index: number): DocumentPositions | undefined {
    if (!this.byIndex) {
      this.byIndex = new Map();
      for (const document of parseManifestText(this.file, this.text).documents) {
        this.byIndex.set(document.index, document.positions);
      }
    }
    return this.byIndex.get(index);
  }
}
