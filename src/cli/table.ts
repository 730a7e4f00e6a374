/** A plain, aligned text table for list commands (no borders: easy to grep and to read). */
import { printable } from '../common/printable.js';

/**
 * One cell as one line: a value with several lines (a role's description, a deployment's status
 * text) would start a line under the first column and break every row after it, so only its first
 * non-empty line is shown, with an ellipsis saying there is more (`--json` keeps the full text).
 * What is left is made printable, so a service's text cannot rewrite the table either.
 */
export function cell(value: string): string {
  const lines = value.split(/\r\n|\r|\n/);
  const first = lines.findIndex((l) => l.trim() !== '');
  if (first === -1) return printable(value.trim());
  const shown = lines[first]!.trimEnd();
  const more = lines.slice(first + 1).some((l) => l.trim() !== '');
  return printable(more ? `${shown} …` : shown);
}

export function table(headers: string[], rows: string[][]): string {
  const cells = rows.map((r) => r.map(cell));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => (r[i] ?? '').length)));
  const line = (row: string[]) =>
    row
      .map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...cells.map(line)].join('\n');
}

/**
 * `Key  value` rows with the keys aligned (`show` and `status` commands). A value with several lines
 * (a lock reason, a role's policies) keeps them under its column rather than at the left edge, where
 * they would read as rows of their own; each line is made printable.
 */
export function keyValues(rows: readonly (readonly [string, string])[]): string {
  const width = Math.max(0, ...rows.map(([k]) => k.length));
  const indent = `\n${' '.repeat(width + 2)}`;
  return rows
    .map(
      ([k, v]) =>
        `${k.padEnd(width)}  ${v
          .split(/\r\n|\r|\n/)
          .map(printable)
          .join(indent)}`,
    )
    .join('\n')
    .replace(/ +$/gm, '');
}
