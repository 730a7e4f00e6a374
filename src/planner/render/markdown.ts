/**
 * `plan --markdown`: for a pull-request comment. A summary table up front, attribute diffs folded in
 * a `diff` block, and the whole kept under the 65,535 characters a comment may hold.
 */
import { addressOf } from '../../resources/contract.js';
import type { Plan } from '../types.js';
import { prunedHeadline, SYMBOLS, summaryLine, targetingLines } from './format.js';
import { changeLines } from './lines.js';
import { isUnplanned, unplannedHeadline, unplannedObjects } from './unplanned.js';

/** GitHub refuses comments longer than this. */
export const COMMENT_LIMIT = 65_535;

/**
 * Text from the manifest or a service inside the comment's markdown: a pull request's author writes
 * the manifest, so nothing in it may open HTML, close the table cell or forge a line of the plan.
 */
function cell(s: string): string {
  return s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/\|/g, '\\|')
    .replace(/\r?\n|\r/g, ' ');
}

/**
 * A code span that its text cannot end: delimited by more backticks than the longest run inside it
 * (a job ID may hold a backtick), padded with spaces where the text touches a backtick.
 */
function inlineCode(text: string): string {
  const flat = text.replace(/\r?\n|\r/g, ' ');
  const longest = Math.max(0, ...(flat.match(/`+/g) ?? []).map((run) => run.length));
  const ticks = '`'.repeat(longest + 1);
  const pad = flat.startsWith('`') || flat.endsWith('`') ? ' ' : '';
  return `${ticks}${pad}${flat}${pad}${ticks}`;
}

/**
 * A code fence longer than any run of backticks in the block, so a value holding three backticks
 * cannot close the diff block and write its own markdown after it (CommonMark closes a fence only
 * with at least as many backticks as opened it).
 */
function fenceFor(lines: readonly string[]): string {
  let longest = 0;
  for (const line of lines)
    for (const run of line.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  return '`'.repeat(Math.max(3, longest + 1));
}

/** The kinds' notes, unchanged objects' included, as a callout: a reviewer should see them. */
function noteLines(plan: Plan): string[] {
  const noted = plan.changes.filter((c) => c.notes?.length);
  if (noted.length === 0) return [];
  const items = noted.flatMap((c) => (c.notes ?? []).map((n) => `> - ${inlineCode(c.address)}: ${cell(n)}`));
  return ['> [!NOTE]', ...items, ''];
}

/** The prune section: its own heading, so a reviewer sees at once what the manifest dropped. */
function prunedLines(plan: Plan): string[] {
  const pruned = plan.changes.filter((c) => c.prune);
  if (pruned.length === 0) return [];
  const shown = pruned.slice(0, PRUNED_LISTED);
  return [
    `#### ${prunedHeadline(pruned.length)}`,
    '',
    ...shown.map((c) => `- ${inlineCode(c.address)}`),
    ...(pruned.length > shown.length ? [`- … and ${pruned.length - shown.length} more`] : []),
    '',
  ];
}

/** Past this many, the prune section says how many more (the table and diff list them all). */
const PRUNED_LISTED = 50;

export function renderMarkdown(plan: Plan, options: { limit?: number } = {}): string {
  const limit = options.limit ?? COMMENT_LIMIT;
  const unplanned = unplannedObjects(plan);
  const notCompared = plan.changes.filter((c) => c.action === 'noop' && isUnplanned(c, unplanned));
  const changes = plan.changes.filter((c) => c.action !== 'noop');
  const head: string[] = [];
  head.push(
    `### Converge plan`,
    '',
    `**${summaryLine(plan.summary, unplanned.length, notCompared.length)}**`,
    '',
  );
  if (plan.targeting) {
    const [headline, ...notes] = targetingLines(plan.targeting);
    head.push('> [!WARNING]', `> **${cell(headline!)}**`, ...notes.map((n) => `> - ${cell(n)}`), '');
  }
  // What could not be planned comes first: the rest of the plan is not the whole difference.
  if (unplanned.length > 0) {
    head.push(`> [!CAUTION]`, `> **${unplannedHeadline(unplanned.length)}:**`);
    for (const p of plan.problems) {
      const where = p.position ? `${inlineCode(`${p.position.file}:${p.position.line}`)} ` : '';
      head.push(`> - ${inlineCode(addressOf(p.key))}: ${where}${cell(p.message)}`);
    }
    const withProblem = new Set(plan.problems.map((p) => addressOf(p.key)));
    // An object with a problem is not compared because of it: the problem says why.
    for (const c of plan.changes.filter((x) => x.notCompared && !withProblem.has(x.address)))
      head.push(`> - ${inlineCode(c.address)}: not compared: ${cell(c.notCompared ?? '')}`);
    head.push('');
  }
  head.push(...noteLines(plan));
  // Objects not compared are listed with the changes: a reviewer should not look for them in vain.
  const rows = plan.changes.filter((c) => c.action !== 'noop' || notCompared.includes(c));
  if (rows.length === 0) {
    if (unplanned.length === 0) head.push('No changes. Live state matches the manifest.');
    return `${head.join('\n')}\n`;
  }
  // Each kind's own word for where it lives: `namespace default`, `organization acme`, `mount ldap`.
  head.push('| Action | Kind | Name | In |', '|---|---|---|---|');
  // The table may take at most half of the comment; the diff block gets what is left.
  let used = head.join('\n').length;
  for (const [i, c] of rows.entries()) {
    const action = notCompared.includes(c) ? '`?` not planned' : `\`${SYMBOLS[c.action]}\` ${c.action}`;
    const row = `| ${action} | ${c.key.kind} | ${cell(c.key.name)} | ${cell(c.key.namespace === undefined ? '' : `${c.namespaceLabel ?? 'namespace'} ${c.key.namespace}`)} |`;
    if (used + row.length + 200 > limit / 2) {
      head.push(`| … | ${rows.length - i} more | | |`);
      break;
    }
    head.push(row);
    used += row.length + 1;
  }
  head.push('');
  head.push(...prunedLines(plan));
  if (changes.length === 0) return `${head.join('\n')}\n`;

  const diffLines: string[] = [];
  for (const c of changes) {
    diffLines.push(`${SYMBOLS[c.action] === '-/+' ? '!' : SYMBOLS[c.action]} ${c.address}`);
    for (const line of changeLines(c)) {
      // One line of the plan stays one line: a value's line breaks cannot start a line of their own.
      const text = `${line.text}${line.note ? `  # ${line.note}` : ''}`.replace(/\r?\n|\r/g, '\\n');
      diffLines.push(`${line.sign === '~' ? '!' : line.sign}     ${'    '.repeat(line.depth)}${text}`);
    }
    diffLines.push('');
  }
  const fence = fenceFor(diffLines);
  const body = ['<details><summary>Attribute changes</summary>', '', `${fence}diff`, ...diffLines];
  const tail = [fence, '</details>', ''];

  const headText = head.join('\n');
  let bodyText = body.join('\n');
  const tailText = tail.join('\n');
  const note =
    '\n… (truncated: the full plan is longer than a comment may be; run `converge plan` to see it)\n';
  if (headText.length + bodyText.length + tailText.length + 1 > limit) {
    bodyText =
      bodyText.slice(0, Math.max(0, limit - headText.length - tailText.length - note.length - 2)) + note;
  }
  return `${headText}\n${bodyText}\n${tailText}`;
}
