/**
 * How long a reconcile loop waits after failed cycles: exponential from `baseMs`, capped at `maxMs`,
 * with "equal jitter" (half the delay fixed, half random) so loops that failed together (a service
 * restart) do not all come back in the same second, yet each wait still grows with the failures.
 */
export interface BackoffOptions {
  /** The wait after the first failure, before jitter. */
  baseMs: number;
  /** The longest wait, jitter included. */
  maxMs: number;
  /** [0, 1); tests make it fixed. */
  random?: () => number;
}

/** The wait before the next cycle after `failures` failed cycles in a row (1 or more). */
export function backoffDelayMs(failures: number, options: BackoffOptions): number {
  const { baseMs, maxMs, random = Math.random } = options;
  // 2^30 already passes any sane cap; bounding the exponent keeps the number finite.
  const exponential = baseMs * 2 ** Math.min(Math.max(failures - 1, 0), 30);
  const capped = Math.min(exponential, maxMs);
  return Math.round(capped / 2 + (capped / 2) * random());
}
