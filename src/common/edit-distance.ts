/**
 * How far apart two names are, for "did you mean" hints (a manifest field, a target address, a kind):
 * one measure everywhere, so every layer suggests the same way.
 */

/**
 * Edits (insert, delete, substitute, or swap two neighbouring letters) from `a` to `b`. A swap
 * counts as one edit because it is the commonest typo ("Nmae"), which would otherwise be two.
 * With `atMost`, strings whose lengths alone differ by more are not compared: the answer is then
 * `atMost + 1` (enough for a caller that only wants near names, and cheap on long text).
 */
export function editDistance(a: string, b: string, atMost?: number): number {
  if (atMost !== undefined && Math.abs(a.length - b.length) > atMost) return atMost + 1;
  let beforePrevious: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        previous[j]! + 1,
        current[j - 1]! + 1,
        previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        current[j] = Math.min(current[j]!, beforePrevious[j - 2]! + 1);
      }
    }
    beforePrevious = previous;
    previous = current;
  }
  return previous[b.length]!;
}
