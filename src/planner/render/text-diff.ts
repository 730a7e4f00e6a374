/**
 * A multi-line string in a plan, as a heredoc (`<<-EOT` … `EOT`) after terraform's: shown whole when
 * it is added or removed, and as a unified line diff (changed lines with `-`/`+` and two lines of
 * context) when it changes, so a certificate or a policy document that changes one line shows one line.
 */
import { structuredPatch } from 'diff';
import { printable } from '../../common/printable.js';
import type { DiffLine } from './lines.js';

/** Lines of context around each changed line. */
const CONTEXT = 2;

export function isMultiline(value: unknown): value is string {
  return typeof value === 'string' && /\r?\n|\r/.test(value.replace(/\r?\n$/, ''));
}

function splitLines(text: string): string[] {
  const lines = text.split(/\r?\n|\r/);
  // A final newline ends the last line; it does not start an empty one.
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * One line of the value as it may be shown: every control or bidi character escaped, and a line that
 * would read as a CI workflow command (`::error …`, even indented) made inert.
 */
function shown(line: string): string {
  const safe = printable(line);
  return safe.trimStart().startsWith('::') ? safe.replace(':', '\\u003a') : safe;
}

function hidden(count: number, depth: number): DiffLine[] {
  if (count <= 0) return [];
  return [{ sign: ' ', depth, text: `# (${count} unchanged line${count === 1 ? '' : 's'} hidden)` }];
}

/** The body of a heredoc holding `text` whole: its lines, unmarked, one level deeper than the attribute. */
export function heredocBody(text: string, depth: number): DiffLine[] {
  return [
    ...splitLines(text).map((line): DiffLine => ({ sign: ' ', depth: depth + 1, text: shown(line) })),
    { sign: ' ', depth, text: 'EOT' },
  ];
}

/** The body of a heredoc that changed from `before` to `after`: its hunks, unchanged runs hidden. */
export function heredocDiff(before: string, after: string, depth: number): DiffLine[] {
  const oldLines = splitLines(before);
  // Both sides end with a newline for the patch, so a value gaining its final newline is no change.
  const patch = structuredPatch(
    'before',
    'after',
    `${oldLines.join('\n')}\n`,
    `${splitLines(after).join('\n')}\n`,
    '',
    '',
    {
      context: CONTEXT,
    },
  );
  const out: DiffLine[] = [];
  let next = 1;
  for (const hunk of patch.hunks) {
    const start = hunk.oldLines === 0 ? hunk.oldStart + 1 : hunk.oldStart;
    out.push(...hidden(start - next, depth + 1));
    for (const line of hunk.lines) {
      const sign = line[0];
      if (sign !== '+' && sign !== '-' && sign !== ' ') continue;
      const text = line.slice(1);
      const trailing = sign === ' ' ? undefined : trailingWhitespace(text);
      out.push({ sign, depth: depth + 1, text: shown(text), ...(trailing ? { note: trailing } : {}) });
    }
    next = start + hunk.oldLines;
  }
  out.push(...hidden(oldLines.length - next + 1, depth + 1));
  // What differs that no line shows (with changed lines or without): said.
  for (const ending of lineEndingChanges(before, after))
    out.push({ sign: '~', depth: depth + 1, text: `# ${ending}` });
  out.push({ sign: ' ', depth, text: 'EOT' });
  return out;
}

/**
 * What a changed line ends with that a reader cannot see: `- Owned by team.` and `+ Owned by team. `
 * look alike.
 */
function trailingWhitespace(line: string): string | undefined {
  const tail = /[ \t]+$/.exec(line)?.[0];
  if (!tail) return undefined;
  const spaces = tail.replace(/\t/g, '').length;
  const tabs = tail.length - spaces;
  const parts = [
    spaces ? `${spaces} space${spaces === 1 ? '' : 's'}` : '',
    tabs ? `${tabs} tab${tabs === 1 ? '' : 's'}` : '',
  ].filter(Boolean);
  return `ends with ${parts.join(' and ')}`;
}

/** How two texts differ where no line shows it: their final line break, their line endings. */
function lineEndingChanges(before: string, after: string): string[] {
  const changes: string[] = [];
  const endsWithBreak = (t: string) => /(\r\n|\n|\r)$/.test(t);
  if (endsWithBreak(before) !== endsWithBreak(after))
    changes.push(endsWithBreak(after) ? 'a final line break is added' : 'the final line break is removed');
  const breaks = (t: string) => t.match(/\r\n|\n|\r/g) ?? [];
  const style = (t: string) => {
    const kinds = new Set(breaks(t).map((b) => (b === '\r\n' ? 'CRLF' : b === '\r' ? 'CR' : 'LF')));
    return kinds.size > 1 ? 'mixed' : ([...kinds][0] ?? 'none');
  };
  const [was, now] = [style(before), style(after)];
  if (was !== now && was !== 'none' && now !== 'none')
    changes.push(`line endings change from ${was} to ${now}`);
  return changes;
}
