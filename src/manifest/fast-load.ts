/**
 * Loads one manifest file through the fast path (fast-parse.ts), all or nothing: it returns what
 * the file adds to the manifest when every document is valid, and undefined as soon as anything is
 * wrong, so that the position-keeping path loads the file again and reports every problem with its
 * exact position and words. Nothing of a file that fails here reaches the manifest.
 */
import { collectDocument, type FileContext, type KindsContext } from './collect-document.js';
import type { DeferredPositions } from './deferred-positions.js';
import { fastParse } from './fast-parse.js';
import { expandReferences, type InterpolationSources } from './interpolate.js';
import { LineIndex } from './line-index.js';
import type { DocumentLocator } from './positions.js';
import type { Manifest, SourcePosition } from './types.js';

export type FileContribution = Pick<Manifest, 'resources' | 'connections' | 'pruneScopes'>;

const NONE: ReadonlySet<string> = new Set();

export async function loadFileFast(
  file: string,
  text: string,
  sources: InterpolationSources,
  context: FileContext,
  kinds: KindsContext,
): Promise<FileContribution | undefined> {
  const documents = fastParse(text);
  if (!documents) return undefined;
  const lines = new LineIndex(file, text);
  const contribution: Manifest = { files: [], resources: [], connections: [], pruneScopes: [] };
  for (const document of documents) {
    const sensitivePointers = new Set<string>();
    for (const pending of document.interpolations) {
      const expansion = await expandReferences(pending.raw, sources);
      if (expansion.errors.length > 0) return undefined;
      (pending.holder as Record<string | number, unknown>)[pending.key] = expansion.value;
      if (expansion.interpolated) sensitivePointers.add(pending.pointer);
    }
    const positions = new LazyPositions(lines.at(document.kindOffset), context.deferredPositions);
    const problems = await collectDocument(
      { value: document.value, positions, sensitivePointers, failedPointers: NONE },
      context,
      kinds,
      contribution,
    );
    if (problems.length > 0) return undefined;
  }
  return contribution;
}

/**
 * A fast-path document's positions: where it starts is known from the fast parse; any other
 * position (only a Connection's address, on success) comes from the file parsed again with positions.
 */
class LazyPositions implements DocumentLocator {
  constructor(
    private readonly start: SourcePosition,
    private readonly deferred: DeferredPositions,
  ) {}

  documentStart(): SourcePosition {
    return this.start;
  }

  locate(pointer: string): SourcePosition {
    return this.deferred.documentAt(this.start)?.locate(pointer) ?? this.start;
  }

  locateKey(pointer: string): SourcePosition {
    return this.deferred.documentAt(this.start)?.locateKey(pointer) ?? this.start;
  }
}
