import type { PlanProblem } from '../resources/contract/core.js';

/**
 * The plan's problems in the order a reader fixes them: file by file in the order the manifest's
 * files were loaded (`fileOrder`, first seen first; other files after, by name), then by line and
 * column. They are found in the order the services answer (every role's check, then every group's),
 * which put a file's second problem before its first. Problems that point at no line (a service's
 * failure) keep their order, after the others.
 */
export function inFileOrder(problems: readonly PlanProblem[], fileOrder: Iterable<string>): PlanProblem[] {
  const rank = new Map<string, number>();
  for (const file of fileOrder) if (!rank.has(file)) rank.set(file, rank.size);
  const rankOf = (file: string) => rank.get(file) ?? Number.MAX_SAFE_INTEGER;
  const placed = problems.filter((p) => p.position !== undefined);
  const unplaced = problems.filter((p) => p.position === undefined);
  // Array.prototype.sort is stable: problems at one position keep the order they were found in.
  placed.sort((a, b) => {
    const p = a.position!;
    const q = b.position!;
    if (p.file !== q.file) {
      return rankOf(p.file) - rankOf(q.file) || (p.file < q.file ? -1 : 1);
    }
    return p.line - q.line || p.col - q.col;
  });
  return [...placed, ...unplaced];
}
