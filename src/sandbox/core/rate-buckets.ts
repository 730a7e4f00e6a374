/**
 * Token buckets, one per key (a service and a caller's credential), for the sandbox's rate limit.
 * The keys come from requests, which anyone may send, so the number of buckets is bounded: the
 * least recently used bucket is dropped first (a dropped bucket comes back full, which only errs
 * on the side of letting a request through).
 */

export interface RateLimit {
  perSecond: number;
  /** Requests that may go at once after a quiet spell; at least 1. */
  burst: number;
}

export type RateVerdict =
  | { allowed: true }
  | {
      allowed: false;
      /** Milliseconds until the next request of this key would be let through. */
      waitMs: number;
    };

interface Bucket {
  tokens: number;
  refilledAt: number;
}

/** Enough for every token of a large test or benchmark; small enough that a flood costs little memory. */
export const DEFAULT_MAX_BUCKETS = 10_000;

export class RateBuckets {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly now: () => number,
    private readonly maxBuckets = DEFAULT_MAX_BUCKETS,
  ) {}

  get size(): number {
    return this.buckets.size;
  }

  take(key: string, limit: RateLimit): RateVerdict {
    const now = this.now();
    const perMs = limit.perSecond / 1000;
    const bucket = this.buckets.get(key) ?? { tokens: limit.burst, refilledAt: now };
    // Re-inserted on every use, so the Map's order is least recently used first.
    this.buckets.delete(key);
    this.buckets.set(key, bucket);
    if (this.buckets.size > this.maxBuckets) this.buckets.delete(this.buckets.keys().next().value!);

    bucket.tokens = Math.min(limit.burst, bucket.tokens + (now - bucket.refilledAt) * perMs);
    bucket.refilledAt = now;
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true };
    }
    return { allowed: false, waitMs: (1 - bucket.tokens) / perMs };
  }
}
