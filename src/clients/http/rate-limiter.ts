/**
 * Client-side throttling from the service's own `X-RateLimit-Limit` (requests per second): keep to
 * 90% of the limit with a burst of 33%, so that parallel applies slow down before the service starts
 * answering 429, yet use most of what the service allows (go-tfe keeps to 66%, which left a third of
 * the limit unused; the pauses below make the narrower margin safe). Adaptive: a 429 that comes
 * despite the throttle (the service counts requests this run does not see, such as other clients of
 * the same token) lowers the share by a fifth, down to 50%; each answer that is not a 429 wins a
 * little of it back. Until a response carries the header, nothing is throttled.
 *
 * A token bucket that lets the balance go negative: each caller reserves its token at once and sleeps
 * for its place in the queue, so concurrent callers are spaced out fairly without a timer per queue.
 *
 * The header comes from the service, so it is not trusted as it is: an announced limit is clamped to
 * [MIN_ANNOUNCED_LIMIT, MAX_ANNOUNCED_LIMIT] requests per second (a `0.000001` would otherwise space
 * requests days apart), and a caller says how long it may wait at most (what is left of its deadline).
 *
 * Besides the steady rate, the limiter pauses every caller together when the service says the window
 * is used up: a 429 with `Retry-After` (`pause`), or `X-RateLimit-Remaining: 0` with
 * `X-RateLimit-Reset`. One limiter is shared by every client of a run that talks to the same host
 * (`HostRegistry`), so the first 429 holds back all workers instead of each finding its own.
 * A pause is capped at MAX_PAUSE_MS: a hostile reset of a day must not freeze the run.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { parseRateLimitResetMs } from './retry-policy.js';

export const RATE_SHARE = 0.9;
/** The lowest share a run of 429s can push the throttle to. */
export const MIN_RATE_SHARE = 0.5;
/** A 429 despite the throttle multiplies the share by this... */
const BACK_OFF = 0.8;
/** ...and each other answer adds this back, up to RATE_SHARE (a hundred answers undo one 429). */
const RECOVERY = 0.002;
/** A pause that ends less than this after the current one is the same window: not reported again. */
const NOTICEABLE_MS = 50;
export const BURST_SHARE = 0.33;
/**
 * The lowest limit believed: 1 request/s. No service the clients talk to throttles below it (the
 * workspace service announces 30), and below it a plan of a few dozen objects would take minutes.
 */
export const MIN_ANNOUNCED_LIMIT = 1;
/** The highest limit believed: beyond 10,000 requests/s throttling means nothing for one process. */
export const MAX_ANNOUNCED_LIMIT = 10_000;
/** The longest pause one answer can impose on every caller (the retry policy's Retry-After cap). */
export const MAX_PAUSE_MS = 60_000;

/** A pause every caller of the host now waits out: what the progress output shows once. */
export interface RateLimitPause {
  /** How long from now. */
  waitMs: number;
  /** `429`, or `X-RateLimit-Remaining 0`, or `X-RateLimit-Limit 5` for a throttle. */
  reason: string;
  /**
   * Set when this is no pause but a throttle that began: requests to the host are from now on sent
   * at this many a second (the announced limit's share), each waiting its turn.
   */
  throttlePerSecond?: number;
}

/** The caller's place in the queue is further away than it may wait: nothing was reserved. */
export class RateLimitWaitTooLong extends Error {
  constructor(
    readonly waitMs: number,
    /** The header's value, as the service sent it. */
    readonly announced: number,
    /** The rate actually kept to (the share of the clamped limit), rounded for a message. */
    readonly appliedPerSecond: number,
  ) {
    super(`the rate limit asks for a wait of ${waitMs} ms`);
  }
}

export class AdaptiveRateLimiter {
  private limit?: number;
  private announced?: number;
  /** A limit that came into force and was not yet reported (`takeNewThrottle`). */
  private unreported?: RateLimitPause;
  private ratePerMs = 0;
  private share = RATE_SHARE;
  private burst = 1;
  private tokens = 0;
  private updatedAt = 0;
  private pausedUntil = 0;

  constructor(private readonly now: () => number = () => performance.now()) {}

  /**
   * Holds every caller back for `waitMs` (clamped to [0, MAX_PAUSE_MS]). Returns the pause when it
   * pushed the end of the current one later by a noticeable amount (so it is reported once, not by
   * every worker that hit the same window), undefined otherwise.
   */
  pause(waitMs: number, reason: string): RateLimitPause | undefined {
    if (!Number.isFinite(waitMs) || waitMs <= 0) return undefined;
    const clamped = Math.min(MAX_PAUSE_MS, waitMs);
    const until = this.now() + clamped;
    if (until <= this.pausedUntil + NOTICEABLE_MS) return undefined;
    this.pausedUntil = until;
    // The service's window is empty: a burst saved up on this side is not there to spend.
    this.refill();
    this.tokens = Math.min(this.tokens, 0);
    return { waitMs: Math.round(clamped), reason };
  }

  /** The limit the service announced, if any (as it sent it, before clamping). */
  get announcedLimit(): number | undefined {
    return this.announced;
  }

  /**
   * Reads `X-RateLimit-Limit` from a response (a new value reconfigures the bucket), and pauses
   * everyone until the reset when `X-RateLimit-Remaining` says the window is used up. Returns the
   * pause when one began.
   */
  observe(headers: Record<string, string>): RateLimitPause | undefined {
    this.observeLimit(headers);
    if (headers['x-ratelimit-remaining']?.trim() !== '0') return undefined;
    const resetMs = parseRateLimitResetMs(headers['x-ratelimit-reset']);
    return resetMs === undefined ? undefined : this.pause(resetMs, 'X-RateLimit-Remaining 0');
  }

  /**
   * The throttle that came into force since the last call, once: the limiter is shared by every
   * client of the host, so the first to ask reports it for all.
   */
  takeNewThrottle(): RateLimitPause | undefined {
    const throttle = this.unreported;
    this.unreported = undefined;
    return throttle;
  }

  /** Whether a pause is holding every caller back now (a 429's Retry-After, a used-up window). */
  get paused(): boolean {
    return this.pausedUntil > this.now();
  }

  /** Whether an announced limit is being kept to. */
  get throttling(): boolean {
    return this.limit !== undefined;
  }

  /**
   * A 429 arrived although the limit was already being kept to: keep to less. A 429 before the limit
   * was known says nothing about the share, and callers report only the 429 that began a pause, so
   * the answers to requests already in flight in the same window lower the share once.
   */
  backOff(): void {
    if (this.limit === undefined) return;
    this.setShare(Math.max(MIN_RATE_SHARE, this.share * BACK_OFF));
  }

  /** An answer that is not a 429: the share creeps back up. */
  recover(): void {
    if (this.limit === undefined || this.share >= RATE_SHARE) return;
    this.setShare(Math.min(RATE_SHARE, this.share + RECOVERY));
  }

  private setShare(share: number): void {
    this.refill();
    this.share = share;
    this.ratePerMs = ((this.limit ?? 0) * share) / 1000;
  }

  private observeLimit(headers: Record<string, string>): void {
    const announced = Number(headers['x-ratelimit-limit']);
    if (!Number.isFinite(announced) || announced <= 0 || announced === this.announced) return;
    this.announced = announced;
    const value = Math.min(MAX_ANNOUNCED_LIMIT, Math.max(MIN_ANNOUNCED_LIMIT, announced));
    if (value === this.limit) return;
    const first = this.limit === undefined;
    this.refill();
    this.limit = value;
    this.ratePerMs = (value * this.share) / 1000;
    this.unreported = {
      waitMs: 0,
      // An announced limit outside what is believed is said to be, or "keeping to the limit, 0.9
      // requests/s (X-RateLimit-Limit 0.5)" read as a promise broken in the same line.
      reason:
        value === announced
          ? `X-RateLimit-Limit ${announced}`
          : `X-RateLimit-Limit ${announced}, taken as ${value}: Converge believes limits from ${MIN_ANNOUNCED_LIMIT} to ${MAX_ANNOUNCED_LIMIT} requests/s, and 429s slow it further`,
      throttlePerSecond: Math.round(value * this.share * 100) / 100,
    };
    this.burst = Math.max(1, Math.floor(value * BURST_SHARE));
    this.tokens = first ? this.burst : Math.min(this.tokens, this.burst);
  }

  /** Takes a token and returns how long the caller must wait before sending (0 when unthrottled). */
  reserve(): number {
    const now = this.now();
    const paused = Math.max(0, Math.ceil(this.pausedUntil - now));
    if (this.limit === undefined) return paused;
    this.refill();
    this.tokens -= 1;
    return Math.max(paused, this.tokens >= 0 ? 0 : Math.ceil(-this.tokens / this.ratePerMs));
  }

  /**
   * Waits for the caller's place; an abort rejects with the signal's own reason, as `fetch` does. A
   * place further than `maxWaitMs` away is not taken: `RateLimitWaitTooLong` at once.
   */
  async acquire(signal?: AbortSignal, maxWaitMs = Infinity): Promise<void> {
    if (signal?.aborted) throw signal.reason;
    const wait = this.reserve();
    if (wait <= 0) return;
    if (wait > maxWaitMs) {
      if (this.limit !== undefined) this.tokens += 1; // give the place back: this caller will not use it
      const applied = Math.round(this.ratePerMs * 1000 * 100) / 100;
      throw new RateLimitWaitTooLong(wait, this.announced ?? this.limit ?? 0, applied);
    }
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
