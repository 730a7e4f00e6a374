/**
 * Bounds on the texts a service sends to be shown on success (a secrets write's or login's
 * `warnings`). They are the service's to choose: a hostile or broken one could send 100,000 warnings
 * of a megabyte each, and every one would be scrubbed and printed. A person reads a few short lines,
 * so the first MAX_WARNINGS are kept, each cut at MAX_WARNING_CHARS, and what was cut is said.
 */
import { printable } from '../../common/printable.js';

/** Warnings kept from one answer; the rest are counted in one closing line. */
export const MAX_WARNINGS = 20;
/** Characters kept of one warning (before its control characters are escaped). */
export const MAX_WARNING_CHARS = 500;

/**
 * The first MAX_WARNINGS of `warnings`, each scrubbed by `scrub` (which must see the whole text: a
 * secret cut in half would survive it), cut at MAX_WARNING_CHARS and made one printable line; then a
 * line counting the warnings left out.
 */
export function boundedWarnings(warnings: readonly unknown[], scrub: (text: string) => string): string[] {
  const kept = warnings.slice(0, MAX_WARNINGS).map((w) => printable(cut(scrub(String(w)))));
  const left = warnings.length - kept.length;
  if (left > 0) kept.push(`… and ${left} more warning${left === 1 ? '' : 's'}`);
  return kept;
}

/** `text` up to MAX_WARNING_CHARS characters, saying how many were cut. */
function cut(text: string): string {
  if (text.length <= MAX_WARNING_CHARS) return text;
  let end = MAX_WARNING_CHARS;
  // Never keep half of a surrogate pair.
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}… (${text.length - end} more characters)`;
}
