/**
 * Where a JSON.parse error points, as a line and a column: its message names a character position
 * (`at position 39`), and a reader looks for a line, as in every other error.
 */
export function jsonErrorLineColumn(
  text: string,
  error: Error,
): { line: number; column: number; named: string } | undefined {
  const match = /at position (\d+)/.exec(error.message);
  if (!match) return undefined;
  const offset = Number(match[1]);
  const before = text.slice(0, offset);
  return {
    line: before.split('\n').length,
    column: offset - before.lastIndexOf('\n'),
    // The words of the message that name the position, for a caller that replaces them.
    named: match[0],
  };
}
