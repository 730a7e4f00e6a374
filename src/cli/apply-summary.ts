/**
 * What an apply did, said once it is over: every object that was not applied and why (after an
 * interrupt, every object of the plan, so the person knows exactly what changed before running
 * again), then the counts, last, where a terminal leaves them in view. Addresses are the manifest's
 * and messages may quote a service: each is one printable line, so neither can end the line, rewrite
 * the terminal or issue a CI workflow command.
 */
import type { ApplyResult, ChangeResult } from '../applier/applier.js';
import { printable } from '../common/printable.js';
import { type Io, write } from './io.js';

/** `ADDRESS: message` for a change that was not applied. */
function resultLine(r: ChangeResult): string {
  return `${printable(r.address)}: ${printable(r.message ?? '')}`;
}

export function writeApplySummary(io: Io, result: Pick<ApplyResult, 'counts' | 'results'>): void {
  const { applied, failed, skipped, stale } = result.counts;
  const missed = result.results.filter((x) => x.status !== 'applied');
  if (missed.length > 0) write(io.stderr, '');
  for (const r of missed) write(io.stderr, `  ${r.status}: ${resultLine(r)}`);
  // The counts come last, so they are what a terminal shows at the bottom however long the lists.
  write(
    io.stdout,
    `\nApply ${failed + skipped + stale === 0 ? 'complete' : 'finished with errors'}: ${applied} applied, ${failed} failed, ${skipped} skipped, ${stale} stale.`,
  );
}

export function writeInterruptSummary(io: Io, results: readonly ChangeResult[]): void {
  const applied = results.filter((r) => r.status === 'applied');
  const rest = results.filter((r) => r.status !== 'applied');
  write(io.stdout, '');
  for (const r of applied) write(io.stdout, `  applied: ${printable(r.address)} (${r.action})`);
  for (const r of rest) write(io.stdout, `  not applied (${r.status}): ${resultLine(r)}`);
  write(
    io.stdout,
    `\nApply interrupted: ${applied.length} applied, ${rest.length} not applied. Run \`converge plan\` to see what is left.`,
  );
}
