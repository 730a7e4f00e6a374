/**
 * Fault injection for client retry tests and benchmarks (DESIGN: "add latency, errors and rate limits
 * on demand"). One injector serves the whole sandbox: counts and the rate-limit bucket are shared by
 * all services and all tokens, which keeps tests predictable (the real workspace service limits per
 * user; that finer grain is not emulated).
 */

export interface FaultsConfig {
  /** Added before every response, in milliseconds. */
  latencyMs?: number;
  /** The first N requests answer 503, then the sandbox behaves normally. */
  failFirst?: number;
  /** Probability (0..1) that any later request answers 503. */
  errorRate?: number;
  /** Token bucket: over the limit a request answers 429 with Retry-After. 0 = unlimited. */
  rateLimit?: { perSecond: number; burst?: number };
}

export type FaultDecision =
  | { kind: 'pass' }
  | { kind: 'unavailable'; message: string }
  | { kind: 'rate-limited'; message: string; headers: Record<string, string> };

export class FaultInjector {
  private requests = 0;
  private bucket: number;
  private lastRefill: number;

  constructor(
    private readonly config: FaultsConfig,
    private readonly now: () => number = () => performance.now(),
    private readonly random: () => number = Math.random,
  ) {
    this.bucket = this.burst();
    this.lastRefill = now();
  }

  get latencyMs(): number {
    return this.config.latencyMs ?? 0;
  }

  /** Decides the fate of the next request; call once per request. */
  decide(): FaultDecision {
    this.requests += 1;
    const failFirst = this.config.failFirst ?? 0;
    if (this.requests <= failFirst) {
      return {
        kind: 'unavailable',
        message: `Service Unavailable (sandbox fault: request ${this.requests} of the first ${failFirst} fails)`,
      };
    }
    const errorRate = this.config.errorRate ?? 0;
    if (errorRate > 0 && this.random() < errorRate) {
      return { kind: 'unavailable', message: 'Service Unavailable (sandbox fault: random error)' };
    }
    return this.takeRateToken();
  }

  private burst(): number {
    const limit = this.config.rateLimit;
    if (!limit || limit.perSecond <= 0) return Number.POSITIVE_INFINITY;
    // At least one request must fit in the bucket, or a limit below 1/s would block forever.
    return Math.max(1, limit.burst ?? limit.perSecond);
  }

  private takeRateToken(): FaultDecision {
    const limit = this.config.rateLimit;
    if (!limit || limit.perSecond <= 0) return { kind: 'pass' };
    const now = this.now();
    const perMs = limit.perSecond / 1000;
    this.bucket = Math.min(this.burst(), this.bucket + (now - this.lastRefill) * perMs);
    this.lastRefill = now;
    if (this.bucket >= 1) {
      this.bucket -= 1;
      return { kind: 'pass' };
    }
    const waitMs = (1 - this.bucket) / perMs;
    return {
      kind: 'rate-limited',
      message: `Too Many Requests (sandbox fault: over ${limit.perSecond} requests per second)`,
      headers: {
        // Retry-After only takes whole seconds; X-RateLimit-Reset (read by go-tfe) carries the fraction.
        'Retry-After': String(Math.max(1, Math.ceil(waitMs / 1000))),
        'X-RateLimit-Limit': String(limit.perSecond),
        'X-RateLimit-Reset': (waitMs / 1000).toFixed(3),
      },
    };
  }
}
