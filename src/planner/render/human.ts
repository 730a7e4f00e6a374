/** The terminal rendering of a plan, after terraform's: `+ ~ - -/+`, aligned attributes, colours. */
import { createColors } from 'picocolors';
import type { Action, Plan } from '../types.js';
import { SYMBOLS, summaryLine, VERBS } from './format.js';
import { changeLines, heading } from './lines.js';

export interface HumanRenderOptions {
  color: boolean;
  /** Also list unchanged objects (one line each). */
  showNoop?: boolean;
}

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

  if (plan.problems.length > 0) {
    out.push(c.red(c.bold(`Planning found ${plan.problems.length} problem(s):`)));
    for (const p of plan.problems) {
      const where = p.position ? `${p.position.file}:${p.position.line}:${p.position.col}: ` : '';
      out.push(`  ${where}${p.message}`);
    }
    out.push('');
  }

  const changes = plan.changes.filter((ch) => ch.action !== 'noop');
  // Unchanged objects stay hidden unless the kind left a note on them: a note is meant to be read.
  const shown = plan.changes.filter((ch) => ch.action !== 'noop' || ch.notes?.length);
  out.push(
    changes.length === 0
      ? c.green('No changes.') + ' Live state matches the manifest.'
      : 'Converge will perform the following actions:',
  );
  if (shown.length > 0) out.push('');
  for (const ch of shown) {
    const why = ch.reason ? ` (${ch.reason})` : '';
    out.push(c.bold(`  # ${heading(ch)} ${VERBS[ch.action]}${why}`));
    out.push(
      `  ${paint[ch.action](SYMBOLS[ch.action])} ${ch.address}${ch.id ? c.dim(`  (id ${ch.id})`) : ''}`,
    );
    for (const note of ch.notes ?? []) out.push(c.dim(`      # ${note}`));
    for (const line of changeLines(ch)) {
      const forces = line.forcesReplacement ? c.red(' # forces replacement') : '';
      const note = line.note ? c.dim(` # ${line.note}`) : '';
      out.push(`      ${signPaint[line.sign](line.sign)} ${line.text}${forces}${note}`);
    }
    out.push('');
  }
  if (options.showNoop) {
    for (const ch of plan.changes.filter((x) => x.action === 'noop' && !shown.includes(x)))
      out.push(c.dim(`  = ${ch.address} (unchanged)`));
  }
  out.push(c.bold(summaryLine(plan.summary)));
  return `${out.join('\n')}\n`;
}
