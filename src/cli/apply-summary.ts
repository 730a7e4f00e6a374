/**
 * What an apply did, said once it is over: the counts, then every object that was not applied and
 * why (after an interrupt, every object of the plan, so the person knows exactly what changed before
 * running again). Addresses are the manifest's and messages may quote a service: each is one
 * printable line, so neither can end the line, rewrite the terminal or issue a CI workflow command.
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
  write(
    io.stdout,
    `\nApply ${failed + skipped + stale === 0 ? 'complete' : 'finished with errors'}: ${applied} applied, ${failed} failed, ${skipped} skipped, ${stale} stale.`,
  );
  for (const r of result.results.filter((x) => x.status !== 'applied')) {
    write(io.stderr, `  ${r.status}: ${resultLine(r)}`);
  }
}

export function writeInterruptSummary(io: Io, results: readonly ChangeResult[]): void {
  const applied = results.filter((r) => r.status === 'applied');
  const rest = results.filter((r) => r.status !== 'applied');
  write(
    io.stdout,
    `\nApply interrupted: ${applied.length} applied, ${rest.length} not applied. Run \`converge plan\` to see what is left.`,
  );
  for (const r of applied) write(io.stdout, `  applied: ${printable(r.address)} (${r.action})`);
  for (const r of rest) write(io.stdout, `  not applied (${r.status}): ${resultLine(r)}`);
}
