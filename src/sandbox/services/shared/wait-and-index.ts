/**
 * `?wait` and `?index` of a blocking read, as both the registry and the scheduler parse them (the two
 * real products share this query convention): a Go duration capped at the service's maximum, and a
 * 64-bit unsigned index. Each service adds its own flags (`?stale`, `?consistent`) after these.
 */
import { parseGoDuration } from '../../core/duration.js';
import type { SandboxRequest } from '../../core/http.js';

export interface WaitAndIndex {
  minIndex: number;
  /** The wait with its jitter added. */
  waitMs: number;
}

export interface WaitLimits {
  /** The wait of a request without `?wait` (or with `?wait=0`). */
  defaultWaitMs: number;
  maxWaitMs: number;
}

/** The real products add up to wait/16 of random jitter so many watchers do not wake at once. */
const JITTER_FRACTION = 16;

/** Parses `?wait` then `?index`; a bad value throws `fail`'s error (the service's 400). */
export function waitAndIndexOf(
  req: SandboxRequest,
  limits: WaitLimits,
  fail: (message: string) => Error,
  random: () => number,
): WaitAndIndex {
  let waitMs = limits.defaultWaitMs;
  const wait = req.query.get('wait');
  if (wait) {
    const parsed = parseGoDuration(wait);
    if (parsed === undefined) throw fail('Invalid wait time');
    if (parsed > 0) waitMs = Math.min(parsed, limits.maxWaitMs);
  }
  let minIndex = 0;
  const index = req.query.get('index');
  if (index) {
    // Go's ParseUint: decimal digits only, no sign, within 64 bits.
    if (!/^\d+$/.test(index) || BigInt(index) > 0xffffffffffffffffn) throw fail('Invalid index');
    minIndex = Number(index);
  }
  return { minIndex, waitMs: waitMs + random() * (waitMs / JITTER_FRACTION) };
}
