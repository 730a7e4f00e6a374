/** The terminal rendering of a plan, after terraform's: `+ ~ - -/+`, aligned attributes, colours. */
import { createColors } from 'picocolors';
import { printable } from '../../common/printable.js';
import type { Action, Plan } from '../types.js';
import {
  HELD_BACK_VERB,
  noChangesClause,
  nothingSelectedLine,
  inventoryAbsentLine,
  pruneLeftovers,
  prunedHeadline,
  SYMBOLS,
  summaryLine,
  targetingLines,
  VERBS,
} from './format.js';
import { changeLines, heading } from './lines.js';
import {
  planCounts,
  planRefusals,
  reasonText,
  REFUSED_HEADLINE,
  unplannedChanges,
  unplannedHeadline,
  unplannedObjects,
} from './unplanned.js';

export interface HumanRenderOptions {
  color: boolean;
  /** Also list unchanged objects (one line each). */
  showNoop?: boolean;
}

/** Nested blocks indent by four, as terraform's. */
const INDENT = '    ';

export function renderHuman(plan: Plan, options: HumanRenderOptions): string {
  const c = createColors(options.color);
  const paint: Record<Action, (s: string) => string> = {
    create: c.green,
    update: c.yellow,
    replace: c.magenta,
    delete: c.red,
    noop: c.dim,
  };
  const signPaint = { '+': c.green, '-': c.red, '~': c.yellow, ' ': (s: string) => s };
  const out: string[] = [];
  if (plan.targeting) {
    const [headline, ...notes] = targetingLines(plan.targeting);
    out.push(c.yellow(c.bold(headline!)), ...notes.map((n) => c.yellow(`  ${n}`)), '');
  }
  // Names a workspace a variable gave: inert text.
  if (plan.inventoryAbsent) out.push(c.yellow(printable(inventoryAbsentLine(plan.inventoryAbsent))), '');

  // A refusal of the whole plan first: nothing of it will be applied.
  const refusals = planRefusals(plan);
  if (refusals.length > 0) {
    out.push(c.red(c.bold(`${REFUSED_HEADLINE}:`)));
    // A refusal may name live objects (`--max-deletes` lists what it would delete): inert text.
    for (const r of refusals) out.push(`  ${printable(r)}`);
    out.push('');
  }

  // What could not be planned comes next: the rest of the plan is not the whole difference.
  const unplanned = unplannedObjects(plan);
  if (unplanned.length > 0) {
    out.push(c.red(c.bold(`${unplannedHeadline(unplanned.length)}:`)));
    for (const u of unplanned)
      for (const reason of u.reasons) out.push(`  ${printable(u.address)}: ${printable(reasonText(reason))}`);
    out.push('');
  }

  // An object that could not be planned is shown as such, whatever action it would have had.
  const notPlanned = unplannedChanges(plan, unplanned);
  const changes = plan.changes.filter((ch) => ch.action !== 'noop' && !notPlanned.has(ch));
  // Unchanged objects stay hidden unless the kind left a note on them or could not compare them.
  // Prune deletions come last, under their own heading: they are what the manifest no longer says.
  const listed = plan.changes.filter((ch) => ch.action !== 'noop' || ch.notes?.length || notPlanned.has(ch));
  const pruned = listed.filter((ch) => ch.prune);
  const shown = [...listed.filter((ch) => !ch.prune), ...pruned];
  if (changes.length > 0)
    out.push(
      refusals.length > 0
        ? 'The plan would make the following changes, but it is refused (above): nothing will be applied.'
        : unplanned.length > 0
          ? 'For the objects it could plan, Converge would perform the following actions:'
          : 'Converge will perform the following actions:',
    );
  else if (plan.targeting?.selected === 0) out.push(nothingSelectedLine(plan, 'below'));
  else if (unplanned.length === 0 && refusals.length === 0)
    out.push(`${c.green('No changes.')} ${noChangesClause(plan)}`);
  if (shown.length > 0 && out[out.length - 1] !== '') out.push('');
  for (const ch of shown) {
    if (ch === pruned[0]) out.push(c.bold(c.red(`${prunedHeadline(pruned.length)}:`)), '');
    const unknown = notPlanned.has(ch);
    const why = ch.reason ? ` (${ch.reason})` : '';
    const verb = unknown
      ? 'could not be planned'
      : ch.action === 'noop' && ch.differs?.length
        ? HELD_BACK_VERB
        : VERBS[ch.action];
    const symbol = unknown ? c.red('?') : paint[ch.action](SYMBOLS[ch.action]);
    out.push(c.bold(`  # ${printable(`${heading(ch)} ${verb}${why}`)}`));
    out.push(`  ${symbol} ${printable(ch.address)}${ch.id ? c.dim(`  (id ${printable(ch.id)})`) : ''}`);
    if (ch.notCompared) out.push(c.dim(`      # not compared: ${printable(ch.notCompared)}`));
    for (const note of ch.notes ?? []) out.push(c.dim(`      # ${printable(note)}`));
    // The blast radius stands out from the notes: it is what a reviewer weighs the change by.
    for (const line of ch.impact ?? []) out.push(`      # ${c.bold(printable(line))}`);
    for (const line of changeLines(ch)) {
      const forces = line.forcesReplacement ? c.red(' # forces replacement') : '';
      const note = line.note ? c.dim(` # ${printable(line.note)}`) : '';
      out.push(
        `      ${INDENT.repeat(line.depth)}${signPaint[line.sign](line.sign)} ${printable(line.text)}${forces}${note}`,
      );
    }
    out.push('');
  }
  if (options.showNoop) {
    const listedSet = new Set(shown);
    for (const ch of plan.changes.filter((x) => x.action === 'noop' && !listedSet.has(x)))
      out.push(c.dim(`  = ${ch.address} (unchanged)`));
  }
  for (const { addresses, lines } of pruneLeftovers(plan)) {
    out.push(c.yellow(lines[0]));
    // Addresses read from the inventory, which anyone with the workspace's access may have written.
    for (const address of addresses) out.push(c.yellow(`  ${printable(address)}`));
    out.push(c.dim(lines[1]), '');
  }
  out.push(c.bold(summaryLine(planCounts(plan.changes, unplanned))));
  return `${out.join('\n')}\n`;
}
