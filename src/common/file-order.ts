/**
 * Things that point into the manifest, in the order a reader meets them: file by file in the order
 * the manifest's files were read (`fileOrder`, first seen first; other files after, by name), then by
 * line and column. Used for the plan's problems (found in the order the services answer, which put a
 * file's second problem before its first) and for declarations (documents with problems are
 * collected apart from the loaded ones, and "the first declaration" must mean the earlier one).
 * Items that point at no line (a service's failure) keep their order, after the others.
 */
import type { SourcePosition } from './types.js';

export function inFileOrder<T>(
  items: readonly T[],
  positionOf: (item: T) => SourcePosition | undefined,
  fileOrder: Iterable<string>,
): T[] {
  // A rank per file, not `indexOf` per comparison: one object per file in 10,000 files made that
  // quadratic.
  const rank = new Map<string, number>();
  for (const file of fileOrder) if (!rank.has(file)) rank.set(file, rank.size);
  const rankOf = (file: string) => rank.get(file) ?? Number.MAX_SAFE_INTEGER;
  const placed = items.filter((item) => positionOf(item) !== undefined);
  const unplaced = items.filter((item) => positionOf(item) === undefined);
  // Array.prototype.sort is stable: items at one position keep the order they were found in.
  placed.sort((a, b) => {
    const p = positionOf(a)!;
    const q = positionOf(b)!;
    if (p.file !== q.file) return rankOf(p.file) - rankOf(q.file) || (p.file < q.file ? -1 : 1);
    return p.line - q.line || p.col - q.col;
  });
  return [...placed, ...unplaced];
}
