/** Arguments of `converge job …` checked while the command line is parsed, before any handler loads. */
import { CliError } from '../exit-codes.js';
import { wholeNumber } from '../whole-number.js';

/** A whole number ≥ 0 from the command line, or a usage error naming the argument. */
export function parseCount(value: string, what: string): number {
  const n = wholeNumber(value.trim());
  if (n === undefined) throw new CliError(`${what} must be a whole number ≥ 0, not "${value}"`);
  return n;
}
