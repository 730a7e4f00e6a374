/**
 * Client-side throttling from the service's own `X-RateLimit-Limit` (requests per second), after
 * go-tfe: stay at 66% of the limit with a burst of 33%, so that parallel applies slow down before the
 * service starts answering 429. Until a response carries the header, nothing is throttled.
 *
 * A token bucket that lets the balance go negative: each caller reserves its token at once and sleeps
 * for its place in the queue, so concurrent callers are spaced out fairly without a timer per queue.
 */
import { setTimeout as delay } from 'node:timers/promises';

export const RATE_SHARE = 0.66;
export const BURST_SHARE = 0.33;

export class AdaptiveRateLimiter {
  private limit?: number;
  private ratePerMs = 0;
  private burst = 1;
  private tokens = 0;
  private updatedAt = 0;

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** The limit the service announced, if any. */
  get announcedLimit(): number | undefined {
    return this.limit;
  }

  /** Reads `X-RateLimit-Limit` from a response; a new value reconfigures the bucket. */
  observe(headers: Record<string, string>): void {
    const value = Number(headers['x-ratelimit-limit']);
    if (!Number.isFinite(value) || value <= 0 || value === this.limit) return;
    const first = this.limit === undefined;
    this.refill();
    this.limit = value;
    this.ratePerMs = (value * RATE_SHARE) / 1000;
    this.burst = Math.max(1, Math.floor(value * BURST_SHARE));
    this.tokens = first ? this.burst : Math.min(this.tokens, this.burst);
  }

  /** Takes a token and returns how long the caller must wait before sending (0 when unthrottled). */
  reserve(): number {
    if (this.limit === undefined) return 0;
    this.refill();
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : Math.ceil(-this.tokens / this.ratePerMs);
  }

  /** Waits for the caller's place; an abort rejects with the signal's own reason, as `fetch` does. */
  async acquire(signal?: AbortSignal): Promise<void> {
    const wait = this.reserve();
    if (wait <= 0) return;
    // timers/promises rejects with its own AbortError; callers compare against the reason they gave.
    await delay(wait, undefined, { signal }).catch((err: unknown) => {
      throw signal?.aborted ? signal.reason : err;
    });
  }

  private refill(): void {
    const now = this.now();
    if (this.limit !== undefined) {
      this.tokens = Math.min(this.burst, this.tokens + (now - this.updatedAt) * this.ratePerMs);
    }
    this.updatedAt = now;
  }
}
