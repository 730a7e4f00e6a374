/**
 * What an apply did, said once it is over: every object that was not applied and why (after an
 * interrupt, every object applied, failed or stale, so the person knows exactly what changed before
 * running again, and the first of those it left alone), then the counts, last, where a terminal leaves them in view. Addresses are the manifest's
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

/** What the run's requests met on the way: said after the counts, when there was any. */
export interface RunWaits {
  retries: number;
  rateLimitPauses: number;
}

/**
 * `Along the way: 45 requests sent again, 3 rate-limit waits.`: a run that went through faults read
 * like a quiet one once its retry lines had scrolled away.
 */
function waitsLine(waits: RunWaits | undefined): string | undefined {
  if (!waits || waits.retries + waits.rateLimitPauses === 0) return undefined;
  const parts = [
    ...(waits.retries > 0 ? [`${waits.retries} request${waits.retries === 1 ? '' : 's'} sent again`] : []),
    ...(waits.rateLimitPauses > 0
      ? [`${waits.rateLimitPauses} rate-limit wait${waits.rateLimitPauses === 1 ? '' : 's'}`]
      : []),
  ];
  return `Along the way: ${parts.join(', ')} (the lines above say which).`;
}

export function writeApplySummary(
  io: Io,
  result: Pick<ApplyResult, 'counts' | 'results'>,
  waits?: RunWaits,
): void {
  const { applied, failed, skipped, stale } = result.counts;
  const missed = result.results.filter((x) => x.status !== 'applied' && !x.planStale);
  // Left alone because other objects of the saved plan moved: one line, not one each alike.
  const heldBack = result.results.filter((x) => x.planStale);
  if (missed.length + heldBack.length > 0) write(io.stderr, '');
  for (const r of missed) write(io.stderr, `  ${r.status}: ${resultLine(r)}`);
  if (heldBack.length > 0)
    write(
      io.stderr,
      `  skipped: ${heldBack.length} other change${heldBack.length === 1 ? '' : 's'}, not attempted: a saved plan is applied whole or not at all`,
    );
  // The counts come last, so they are what a terminal shows at the bottom however long the lists.
  // A saved plan refused whole before anything was sent is said as a refusal: "finished with
  // errors" read as an apply that had tried and failed.
  const refusedWhole =
    applied === 0 &&
    failed === 0 &&
    heldBack.length + stale > 0 &&
    result.results.every((x) => x.planStale || x.status === 'stale');
  const headline = refusedWhole
    ? 'refused, nothing applied (live state changed since the plan)'
    : failed + skipped + stale === 0
      ? 'complete'
      : 'finished with errors';
  write(
    io.stdout,
    `\nApply ${headline}: ${applied} applied, ${failed} failed, ${skipped} skipped, ${stale} stale.`,
  );
  const along = waitsLine(waits);
  if (along) write(io.stdout, along);
}

/**
 * Changes the interrupt left alone listed one by one after an interrupt; beyond these, a count. What
 * was applied, failed or went stale is always listed whole: that is what changed or needs a look. A
 * Ctrl-C early in a long apply left thousands of lines alike, and `converge plan` shows them anyway.
 */
const UNTOUCHED_LISTED = 20;

/**
 * `planFile`: the saved plan being applied, whose own re-run applies what is left (`converge plan`
 * without the manifest would not even start). `command`: that command, or the plan of what is left,
 * as it runs (its manifest, `--allow-env` and `--allow-address`); without it, the bare command.
 */
export function writeInterruptSummary(
  io: Io,
  results: readonly ChangeResult[],
  planFile?: string,
  command?: string,
): void {
  const whatIsLeft = planFile
    ? `\`${command ?? `converge apply ${planFile}`}\` applies what is left`
    : `\`${command ?? 'converge plan'}\` lists what is left`;
  const applied = results.filter((r) => r.status === 'applied');
  const rest = results.filter((r) => r.status !== 'applied');
  const untouched = rest.filter((r) => r.interrupted);
  const hidden = untouched.slice(UNTOUCHED_LISTED);
  const unlisted = new Set(hidden);
  write(io.stdout, '');
  for (const r of applied) write(io.stdout, `  applied: ${printable(r.address)} (${r.action})`);
  for (const r of rest) {
    if (!unlisted.has(r)) write(io.stdout, `  not applied (${r.status}): ${resultLine(r)}`);
  }
  if (hidden.length > 0) {
    write(io.stdout, `  … and ${hidden.length} more not attempted: interrupted (${whatIsLeft})`);
  }
  // What went wrong apart from what the interrupt left alone: "32 not applied" hid 8 failures.
  const failed = rest.filter((r) => r.status === 'failed').length;
  const stale = rest.filter((r) => r.status === 'stale').length;
  const others = rest.length - failed - stale;
  const counts = [
    `${applied.length} applied`,
    ...(failed > 0 ? [`${failed} failed`] : []),
    ...(stale > 0 ? [`${stale} stale`] : []),
    `${others} not attempted`,
  ];
  write(io.stdout, `\nApply interrupted: ${counts.join(', ')}: ${whatIsLeft}.`);
}
