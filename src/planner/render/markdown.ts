/**
 * `plan --markdown`: for a pull-request comment. A summary table up front, attribute diffs folded in
 * a `diff` block, and the whole kept under the 65,535 characters a comment may hold.
 */
import { printable } from '../../common/printable.js';
import { formatPosition } from '../../common/types.js';
import type { Change, Plan } from '../types.js';
import {
  noChangesClause,
  nothingSelectedLine,
  inventoryAbsentLine,
  pruneLeftovers,
  prunedHeadline,
  SYMBOLS,
  summaryLine,
  targetingLines,
} from './format.js';
import { changeLines } from './lines.js';
import {
  planCounts,
  planRefusals,
  REFUSED_HEADLINE,
  type Unplanned,
  unplannedChanges,
  unplannedHeadline,
  unplannedObjects,
} from './unplanned.js';

/** GitHub refuses comments longer than this. */
export const COMMENT_LIMIT = 65_535;

/**
 * Text from the manifest or a service inside the comment's markdown: a pull request's author writes
 * the manifest (and may point a Connection at a service that answers what they like), so nothing in
 * it may open HTML, close the table cell, forge a line of the plan, or render as markup: bold text,
 * a link, a code span, a list of its own (`**Reviewed by security** [approve](…)` read as the bot's
 * words). Markdown's punctuation is escaped; the mentions and bare links GitHub makes of `@team` and
 * `https://…` are broken by an HTML comment, which does not render (the rendered text reads, and
 * copies, as written). Line breaks read as spaces; every other control, C1 or bidi character as its
 * escape (`\u202e`), so none can reorder or hide what a reviewer reads.
 */
function cell(s: string): string {
  // Where GitHub would link or decorate the rendered text, a mark first (printable() leaves no NUL),
  // then an HTML comment in its place once the text is escaped: the comment's own `!` and `-` must
  // not be escaped, and a shortcode must be matched before its `_` is.
  const BREAK = '\u0000';
  return (
    printable(s.replace(/\r?\n|\r/g, ' '))
      // Leading blanks would make an indented block or move a marker: a cell is one line anyway.
      .replace(/^\s+/, '')
      // GitHub links and decorates the rendered text, escapes gone: mentions, bare links, issue
      // references (`#12`, `GH-12`, `org/repo#12`) and emoji shortcodes (`:white_check_mark:`).
      .replace(/@/g, `@${BREAK}`)
      .replace(/:\/\//g, `:${BREAK}//`)
      .replace(/www\./gi, (w) => `${w.slice(0, 3)}${BREAK}.`)
      .replace(/#(?=\d)/g, `#${BREAK}`)
      .replace(/\b(GH-)(?=\d)/gi, `$1${BREAK}`)
      .replace(/:(?=[\w+-]+:)/g, `:${BREAK}`)
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/[\\`*_[\]()~#!|{}]/g, (c) => `\\${c}`)
      // A leading `-`, `+`, `=` or `1.` would start a list, a rule or a heading of its own.
      .replace(/^([-+=])/, '\\$1')
      .replace(/^(\d+)([.)])/, '$1\\$2')
      .replaceAll(BREAK, '<!-- -->')
  );
}

/**
 * A code span that its text cannot end: delimited by more backticks than the longest run inside it
 * (a job ID may hold a backtick), padded with spaces where the text touches a backtick.
 */
function inlineCode(text: string): string {
  const flat = printable(text.replace(/\r?\n|\r/g, ' '));
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

/**
 * The prune section: its own heading, so a reviewer sees at once what the manifest dropped, and each
 * deletion's reason beside it (whose it is, and where the prune looked): folded away in the diff, a
 * deletion of someone else's object read like any other.
 */
function prunedLines(plan: Plan): string[] {
  const pruned = plan.changes.filter((c) => c.prune);
  if (pruned.length === 0) return [];
  const shown = pruned.slice(0, PRUNED_LISTED);
  return [
    `#### ${prunedHeadline(pruned.length)}`,
    '',
    ...shown.map((c) => `- ${inlineCode(c.address)}${c.reason ? `: ${cell(c.reason)}` : ''}`),
    ...(pruned.length > shown.length ? [`- … and ${pruned.length - shown.length} more`] : []),
    '',
  ];
}

/** The inventory's own objects the prune left (not found, not pruned): notes, shown with or without changes. */
function leftoverLines(plan: Plan): string[] {
  return pruneLeftovers(plan).flatMap(({ addresses, lines }) => addressNote(addresses, lines));
}

function addressNote(addresses: readonly string[], [headline, hint]: readonly [string, string]): string[] {
  const shown = addresses.slice(0, PRUNED_LISTED);
  return [
    `> ${cell(headline)}`,
    ...shown.map((a) => `> - ${inlineCode(a)}`),
    ...(addresses.length > shown.length ? [`> - … and ${addresses.length - shown.length} more`] : []),
    // A line of its own: right after the list it would read as part of the last item.
    '>',
    `> ${hint}`,
    '',
  ];
}

/**
 * `| AclRole | 1 | 2 | 0 | 0 | 5 |`: how many objects of each kind each action touches. Every kind of
 * the plan has its row, unchanged-only kinds too, so each column adds up to the headline's count.
 */
function kindTableLines(plan: Plan, unplanned: readonly Unplanned[]): string[] {
  const kinds = [...new Set([...plan.changes.map((c) => c.key.kind), ...unplanned.map((u) => u.kind)])];
  const rows = kinds
    .sort((a, b) => a.localeCompare(b))
    .map((kind) => ({
      kind,
      counts: planCounts(
        plan.changes.filter((c) => c.key.kind === kind),
        unplanned.filter((u) => u.kind === kind),
      ),
    }));
  if (!rows.some(({ counts: r }) => r.create + r.update + r.replace + r.delete + r.unplanned > 0)) return [];
  const withUnplanned = unplanned.length > 0;
  return [
    `| Kind | Add | Change | Replace | Destroy | Unchanged |${withUnplanned ? ' Not planned |' : ''}`,
    `|---|--:|--:|--:|--:|--:|${withUnplanned ? '--:|' : ''}`,
    ...rows.map(
      ({ kind, counts: r }) =>
        `| ${cell(kind)} | ${r.create} | ${r.update} | ${r.replace} | ${r.delete} | ${r.noop} |${withUnplanned ? ` ${r.unplanned} |` : ''}`,
    ),
    '',
  ];
}

/** Past this many, the prune section says how many more (the table and diff list them all). */
const PRUNED_LISTED = 50;

/** What each change reaches beyond itself, as the kinds tell it: a reviewer weighs the change by it. */
function impactLines(plan: Plan): string[] {
  const reaching = plan.changes.filter((c) => c.action !== 'noop' && c.impact?.length);
  if (reaching.length === 0) return [];
  const items = reaching.flatMap((c) =>
    (c.impact ?? []).map((i) => `- ${inlineCode(c.address)}: ${cell(i)}`),
  );
  return ['**Blast radius**', '', ...items, ''];
}

export function renderMarkdown(plan: Plan, options: { limit?: number } = {}): string {
  const limit = options.limit ?? COMMENT_LIMIT;
  const unplanned = unplannedObjects(plan);
  const refusals = planRefusals(plan);
  // An object that could not be planned is listed as such, whatever action it would have had.
  const notPlanned = unplannedChanges(plan, unplanned);
  const changes = plan.changes.filter((c) => c.action !== 'noop' && !notPlanned.has(c));
  const head: string[] = [];
  head.push(`### Converge plan`, '');
  // A refused plan says so first, as the text plan does: its counts are of a plan that will not apply.
  if (refusals.length > 0) {
    head.push(`> [!CAUTION]`, `> **${REFUSED_HEADLINE}:**`, ...refusals.map((r) => `> - ${cell(r)}`), '');
  }
  head.push(`**${summaryLine(planCounts(plan.changes, unplanned))}**`, '');
  if (plan.targeting) {
    const [headline, ...notes] = targetingLines(plan.targeting);
    head.push('> [!WARNING]', `> **${cell(headline!)}**`, ...notes.map((n) => `> - ${cell(n)}`), '');
  }
  if (plan.inventoryAbsent)
    head.push('> [!WARNING]', `> ${cell(inventoryAbsentLine(plan.inventoryAbsent))}`, '');
  // What could not be planned comes first: the rest of the plan is not the whole difference.
  if (unplanned.length > 0) {
    head.push(`> [!CAUTION]`, `> **${unplannedHeadline(unplanned.length)}:**`);
    for (const u of unplanned)
      for (const r of u.reasons) {
        const where = r.where === undefined ? '' : `${inlineCode(r.where)} `;
        head.push(`> - ${inlineCode(u.address)}: ${where}${cell(r.message)}`);
      }
    head.push('');
  }
  head.push(...noteLines(plan));
  head.push(...leftoverLines(plan));
  head.push(...kindTableLines(plan, unplanned));
  head.push(...impactLines(plan));
  // Objects not compared are listed with the changes: a reviewer should not look for them in vain.
  // What destroys comes first: a long plan's table (and diff) is cut at the end, and a deletion is
  // the row a reviewer must never miss (1,500 creates once hid the one delete).
  const rows = destructiveFirst(plan.changes.filter((c) => c.action !== 'noop' || notPlanned.has(c)));
  if (rows.length === 0) {
    if (plan.targeting?.selected === 0) head.push(nothingSelectedLine(plan, 'above'));
    else if (unplanned.length === 0 && refusals.length === 0)
      head.push(`No changes. ${noChangesClause(plan)}`);
    return `${head.join('\n')}\n`;
  }
  head.push('| Action | Kind | Name | In |', '|---|---|---|---|');
  // The table may take at most half of the comment; the diff block gets what is left.
  let used = head.join('\n').length;
  for (const [i, c] of rows.entries()) {
    const action = notPlanned.has(c) ? '`?` not planned' : `\`${SYMBOLS[c.action]}\` ${c.action}`;
    const row = `| ${action} | ${cell(c.key.kind)} | ${cell(c.key.name)} | ${cell(whereText(c))} |`;
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

  // Each object's attribute changes whole, so a cut falls between objects, never inside one.
  const chunks = destructiveFirst(changes).map((c) => {
    const lines = [`${SYMBOLS[c.action] === '-/+' ? '!' : SYMBOLS[c.action]} ${printable(c.address)}`];
    // Why it is deleted or replaced (declared absent, pruned, a field that forces it), as the text
    // plan says it: a reviewer weighs a deletion by its reason.
    if (c.reason) lines.push(`      # ${printable(c.reason)}`);
    for (const line of changeLines(c)) {
      // One line of the plan stays one line: a value's line breaks cannot start a line of their own,
      // and no control or bidi character in it reaches the comment.
      const text = printable(`${line.text}${line.note ? `  # ${line.note}` : ''}`);
      // In a create or a deletion every line is added or removed: a heredoc's body and a closing
      // brace too, or GitHub shows them as unchanged context inside an added object.
      const whole = c.action === 'create' ? '+' : c.action === 'delete' ? '-' : undefined;
      const sign = line.sign === '~' ? '!' : line.sign === ' ' && whole ? whole : line.sign;
      lines.push(`${sign}     ${'    '.repeat(line.depth)}${text}`);
    }
    lines.push('');
    return { address: c.address, lines, size: lines.join('\n').length + 1 };
  });
  const fence = fenceFor(chunks.flatMap((c) => c.lines));
  const open = ['<details><summary>Attribute changes</summary>', '', `${fence}diff`].join('\n');
  const close = `${fence}\n</details>\n`;
  const headText = head.join('\n');
  // What is left for the objects' details once the headline, the tables and the cut's note are in.
  let budget =
    limit - headText.length - open.length - close.length - CUT_NOTE_RESERVE - CUT_HEADLINE_RESERVE - 4;
  // An object whose changes do not fit is left out alone, and the next ones still get their turn:
  // stopping at the first that did not fit let one large object (a long description) hide every
  // change after it, a policy grant among them.
  const kept: string[] = [];
  const cut: string[] = [];
  for (const chunk of chunks) {
    if (chunk.size > budget) {
      cut.push(chunk.address);
      continue;
    }
    kept.push(...chunk.lines);
    budget -= chunk.size;
  }
  // Not even the first object's changes fit: the note alone, no empty diff block.
  if (kept.length === 0) return fitted(`${headText}\n${cutNote(cut, limit)}\n`, limit);
  const note = cut.length > 0 ? `\n${cutNote(cut, limit)}\n` : '';
  // Said outside the collapsed section too: a reviewer who never opens it must know it is not whole.
  const outside = cut.length > 0 ? `${cutHeadline(cut.length)}\n\n` : '';
  return fitted(
    `${headText}\n${outside}${open}\n${kept.join('\n')}\n${close.replace('</details>', `${note}</details>`)}`,
    limit,
  );
}

/**
 * The table's "In": each kind's own word for where it lives (`namespace default`, `organization acme`,
 * `mount ldap`), and the connection when it is a named one, as the text plan's heading says it. Without
 * the connection, the same role changed on two clusters read as two identical rows.
 */
function whereText(c: Change): string {
  const where: string[] = [];
  if (c.key.namespace !== undefined) where.push(`${c.namespaceLabel ?? 'namespace'} ${c.key.namespace}`);
  if (c.key.connection !== undefined) where.push(`connection ${c.key.connection}`);
  return where.join(', ');
}

/** Room kept for the note that says which objects' details were cut. */
const CUT_NOTE_RESERVE = 600;
/** Room kept for the line above the collapsed section that says some details were cut. */
const CUT_HEADLINE_RESERVE = 200;

function cutHeadline(count: number): string {
  return `> [!WARNING]\n> The attribute changes of ${count} object${count === 1 ? '' : 's'} are left out below (the comment's length limit): \`converge plan\` shows them all.`;
}

/** Says how many objects' attribute changes were left out, naming the first few. */
function cutNote(addresses: readonly string[], limit: number): string {
  // Backticks left out of the names: a run of them made each code span (and the note) far longer
  // than the room kept for it, and the comment's end was cut mid-span.
  const named = addresses
    .slice(0, 3)
    .map((a) => a.replace(/`/g, "'"))
    .map((a) => inlineCode(a.length > 120 ? `${a.slice(0, 120)}…` : a));
  const more = addresses.length > named.length ? `, and ${addresses.length - named.length} more` : '';
  const objects = `${addresses.length} object${addresses.length === 1 ? '' : 's'}`;
  return `_… truncated: the attribute changes of ${objects} (${named.join(', ')}${more}) are left out to keep this under ${limit.toLocaleString('en-US')} characters; \`converge plan\` shows them all._`;
}

/** The last guard: a head longer than the limit on its own (thousands of problems) is cut hard. */
function fitted(markdown: string, limit: number): string {
  if (markdown.length <= limit) return markdown;
  const note = '\n\n… (truncated: run `converge plan` to see the whole plan)\n';
  return markdown.slice(0, limit - note.length) + note;
}

/** A manifest problem as the renderers take it: where, and what is wrong. */
export interface InvalidManifestProblem {
  position: { file: string; line: number; col: number };
  message: string;
}

/**
 * `plan --markdown` when the manifest does not load: a short section listing the problems, so a
 * pull-request comment says why there is no plan instead of being empty. Escaped like the plan: the
 * pull request's author wrote the manifest, and its problems quote it.
 */
export function renderInvalidManifestMarkdown(
  problems: readonly InvalidManifestProblem[],
  options: { limit?: number } = {},
): string {
  const n = problems.length;
  const lines = [
    '### Converge plan',
    '',
    '> [!CAUTION]',
    `> **Manifest invalid: ${n} problem${n === 1 ? '' : 's'}; nothing was planned.**`,
    ...problems.map((p) => `> - ${inlineCode(formatPosition(p.position))} ${cell(p.message)}`),
    '',
  ];
  return fitted(`${lines.join('\n')}\n`, options.limit ?? COMMENT_LIMIT);
}

/** A plan that stopped before it was made: why, where the plan would be. */
export function renderFailedPlanMarkdown(message: string, options: { limit?: number } = {}): string {
  const lines = [
    '### Converge plan',
    '',
    '> [!CAUTION]',
    '> **The plan could not be made; nothing was planned.**',
    ...message.split('\n').map((line) => `> ${cell(line)}`),
    '',
  ];
  return fitted(`${lines.join('\n')}\n`, options.limit ?? COMMENT_LIMIT);
}

/** The order a reviewer reads a long plan in: deletions, replacements, then the rest as planned. */
const REVIEW_RANK: Record<string, number> = { delete: 0, replace: 1 };

function destructiveFirst<T extends { action: string }>(changes: readonly T[]): T[] {
  // Stable: within each rank, the plan's own (apply) order.
  return [...changes].sort((a, b) => (REVIEW_RANK[a.action] ?? 2) - (REVIEW_RANK[b.action] ?? 2));
}
