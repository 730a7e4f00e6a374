/**
 * Offsets of a text to 1-based line and column, counted exactly as yaml's LineCounter counts them
 * (a line starts after each `\n`, so CRLF files count the same), so that the fast path's positions
 * equal those the position-keeping parse gives.
 */
import type { SourcePosition } from './types.js';

export class LineIndex {
  private readonly lineStarts: number[] = [0];

  constructor(
    private readonly file: string,
    text: string,
  ) {
    for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) this.lineStarts.push(i + 1);
  }

  at(offset: number): SourcePosition {
    // The last line start at or before `offset` (binary search, as LineCounter.linePos does).
    const starts = this.lineStarts;
    let low = 0;
    let high = starts.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (starts[mid]! <= offset) low = mid + 1;
      else high = mid;
    }
    return { file: this.file, line: low, col: offset - starts[low - 1]! + 1 };
  }
}
