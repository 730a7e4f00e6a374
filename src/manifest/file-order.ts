/**
 * Declarations in the order the manifest gives them: the files in the order they were read, then
 * line and column. Documents with problems are collected apart from the loaded ones, so a list
 * holding both is put back in this order before "the first declaration" means anything.
 */
import type { SourcePosition } from '../common/types.js';

export function inFileOrder<T extends { source: SourcePosition }>(items: T[], files: readonly string[]): T[] {
  // An index per file, not `indexOf` per comparison: one object per file in 10,000 files made that
  // quadratic.
  const rank = new Map(files.map((f, i) => [f, i]));
  return items.sort(
    (a, b) =>
      (rank.get(a.source.file) ?? 0) - (rank.get(b.source.file) ?? 0) ||
      a.source.line - b.source.line ||
      a.source.col - b.source.col,
  );
}
