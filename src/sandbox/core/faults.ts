/**
 * Fault injection for client retry tests and benchmarks (DESIGN: "add latency, errors and rate limits
 * on demand"). One injector serves the whole sandbox and decides the fate of each request when it
 * arrives: added latency, a 503, a dropped connection (before or after the service acted), or a 429
 * over a per-token rate limit. Every setting may be overridden per service (`services.<name>`).
 *
 * Random choices come from a seeded generator and every request draws the same number of values
 * whatever happens to it, so the same seed gives the same faults for the same request sequence,
 * even when the rate limit (which depends on time) answers some of them 429.
 */
import { seededRandom } from './prng.js';
import { type RateLimit, RateBuckets } from './rate-buckets.js';

/** The settings that may be given for all services and per service. */
export interface ServiceFaultsConfig {
  /** Added before every response, in milliseconds. */
  latencyMs?: number;
  /** Up to this much more latency, drawn per request (uniform), in milliseconds. */
  jitterMs?: number;
  /** The first N requests answer 503, then the sandbox behaves normally. */
  failFirst?: number;
  /** Probability (0..1) that a request answers 503 (before the service acts). */
  failRate?: number;
  /** Older name of `failRate`, still read. */
  errorRate?: number;
  /**
   * Probability (0..1) that the connection is dropped without an answer; half of these after the
   * service has acted (the change is stored, the answer lost).
   */
  resetRate?: number;
  /** Requests per second per token (a number), or a token bucket. Over it: 429. 0 = unlimited. */
  rateLimit?: number | { perSecond: number; burst?: number };
}

export interface FaultsConfig extends ServiceFaultsConfig {
  /** Seed of the fault decisions (0 to 2^32-1); random when absent (and shown at start). */
  seed?: number;
  /** Overrides per service, by service name; a key given here replaces the one above for that service. */
  services?: Record<string, ServiceFaultsConfig>;
}

/** One scope's settings with every default filled in. */
export interface EffectiveFaults {
  latencyMs: number;
  jitterMs: number;
  failFirst: number;
  failRate: number;
  resetRate: number;
  rateLimit: RateLimit | undefined;
  /** Where the fail-first count is kept: shared by every service unless a service sets its own. */
  failFirstScope: string;
}

export type FaultDecision =
  | { kind: 'pass'; delayMs: number }
  | { kind: 'unavailable'; delayMs: number; message: string }
  | { kind: 'reset'; delayMs: number; afterActing: boolean }
  | { kind: 'rate-limited'; delayMs: number; message: string; headers: Record<string, string> };

const SHARED_SCOPE = '*';

export class FaultInjector {
  readonly seed: number;
  private readonly random: () => number;
  private readonly buckets: RateBuckets;
  private readonly failFirstCounts = new Map<string, number>();
  private readonly effective = new Map<string, EffectiveFaults>();
  private readonly shared: EffectiveFaults;

  constructor(
    private readonly config: FaultsConfig,
    now: () => number = () => performance.now(),
    random?: () => number,
    maxBuckets?: number,
  ) {
    assertFaultSharesFit(config);
    this.seed = config.seed ?? Math.floor(Math.random() * 0x1_0000_0000);
    this.random = random ?? seededRandom(this.seed);
    this.buckets = new RateBuckets(now, maxBuckets);
    this.shared = effectiveFaults(config, undefined);
  }

  /** The settings in force for a service (or for requests no service owns). */
  settingsFor(service: string | undefined): EffectiveFaults {
    if (service === undefined || !this.config.services?.[service]) return this.shared;
    let settings = this.effective.get(service);
    if (!settings) {
      settings = effectiveFaults(this.config, service);
      this.effective.set(service, settings);
    }
    return settings;
  }

  /**
   * Decides the fate of one request; call once per request, as it arrives. `service` is the name of
   * the service that owns the path, `credential` who sent it (see `credentialKey`), or a function
   * giving it, called only when a rate limit is in force.
   */
  decide(service?: string, credential: string | (() => string) = ''): FaultDecision {
    // Always three draws, in this order, so later requests see the same values whatever this one met.
    const outcomeDraw = this.random();
    const phaseDraw = this.random();
    const jitterDraw = this.random();

    const s = this.settingsFor(service);
    const delayMs = s.latencyMs + Math.floor(jitterDraw * (s.jitterMs + 1));
    const count = (this.failFirstCounts.get(s.failFirstScope) ?? 0) + 1;
    if (count <= s.failFirst) {
      this.failFirstCounts.set(s.failFirstScope, count);
      return {
        kind: 'unavailable',
        delayMs,
        message: `Service Unavailable (sandbox fault: request ${count} of the first ${s.failFirst} fails)`,
      };
    }
    // One draw split into [0, failRate) and [failRate, failRate + resetRate), so each share is what
    // was asked for (10% 503s and 5% resets are 10% and 5% of all requests).
    if (outcomeDraw < s.failRate)
      return { kind: 'unavailable', delayMs, message: 'Service Unavailable (sandbox fault: random error)' };
    if (outcomeDraw < s.failRate + s.resetRate)
      return { kind: 'reset', delayMs, afterActing: phaseDraw < 0.5 };
    return this.takeRateToken(service, credential, s, delayMs);
  }

  private takeRateToken(
    service: string | undefined,
    credential: string | (() => string),
    s: EffectiveFaults,
    delayMs: number,
  ): FaultDecision {
    const limit = s.rateLimit;
    if (!limit) return { kind: 'pass', delayMs };
    // Each service limits on its own, as separate products do, and each token has its own bucket.
    // Worked out only here: a hash per request cost the sandbox more than the rest of the decision.
    const who = typeof credential === 'function' ? credential() : credential;
    const verdict = this.buckets.take(`${service ?? ''}\n${who}`, limit);
    if (verdict.allowed) return { kind: 'pass', delayMs };
    const resetSeconds = verdict.waitMs / 1000;
    return {
      kind: 'rate-limited',
      delayMs,
      message: `Too Many Requests (sandbox fault: over ${limit.perSecond} requests per second)`,
      headers: {
        // Retry-After only takes whole seconds; X-RateLimit-Reset (read by go-tfe as float seconds
        // to wait) carries the fraction. Both say when the next request of this token fits.
        'Retry-After': String(Math.max(1, Math.ceil(resetSeconds))),
        'X-RateLimit-Limit': String(limit.perSecond),
        'X-RateLimit-Remaining': '0',
        'X-RateLimit-Reset': resetSeconds.toFixed(3),
      },
    };
  }
}

/**
 * Scopes (all services, or one by name) whose 503 and reset shares add up to more than all requests.
 * One draw decides each request's fault (see `decide`), so the shares are exact only while they fit
 * in 1: at `failRate: 0.9, resetRate: 0.5` only 10% could be dropped. Such settings are refused
 * rather than served with rates other than those stated.
 */
export function overfullFaultShares(
  config: FaultsConfig,
): { service?: string; failRate: number; resetRate: number }[] {
  const scopes = [undefined, ...Object.keys(config.services ?? {})];
  return scopes
    .map((service) => {
      const { failRate, resetRate } = effectiveFaults(config, service);
      return { ...(service === undefined ? {} : { service }), failRate, resetRate };
    })
    .filter(({ failRate, resetRate }) => failRate + resetRate > 1);
}

/**
 * Refuses faults whose shares do not fit in all requests, named for both ways of setting them: the
 * options may have been laid over the file. `startSandbox` calls it before any service starts (so
 * nothing is written to a data folder for a refused sandbox); the injector again, for direct use.
 */
export function assertFaultSharesFit(config: FaultsConfig): void {
  const overfull = overfullFaultShares(config)[0];
  if (overfull)
    throw new RangeError(
      `sandbox faults: ${overfullSharesMessage(overfull, { failRate: 'fail rate', resetRate: 'reset rate' })} (--fail-rate and --reset-rate, or failRate and resetRate in the config file)`,
    );
}

/** The refusal of an overfull scope, worded for whoever set it (`--fail-rate` or `failRate`). */
export function overfullSharesMessage(
  share: { service?: string; failRate: number; resetRate: number },
  names: { failRate: string; resetRate: string },
): string {
  return `${share.service === undefined ? '' : `${share.service}: `}${names.failRate} ${share.failRate} and ${names.resetRate} ${share.resetRate} add up to more than 1; a request meets at most one of these faults, so together they can be at most 1`;
}

/** A scope's settings: the service's own keys over the shared ones, defaults for the rest. */
export function effectiveFaults(config: FaultsConfig, service: string | undefined): EffectiveFaults {
  const own = service !== undefined ? config.services?.[service] : undefined;
  const pick = <K extends keyof ServiceFaultsConfig>(key: K): ServiceFaultsConfig[K] =>
    own?.[key] !== undefined ? own[key] : config[key];
  const failRate = own?.failRate ?? own?.errorRate ?? config.failRate ?? config.errorRate ?? 0;
  return {
    latencyMs: pick('latencyMs') ?? 0,
    jitterMs: pick('jitterMs') ?? 0,
    failFirst: pick('failFirst') ?? 0,
    failRate,
    resetRate: pick('resetRate') ?? 0,
    rateLimit: rateLimitOf(pick('rateLimit')),
    failFirstScope: own?.failFirst !== undefined ? service! : SHARED_SCOPE,
  };
}

function rateLimitOf(value: ServiceFaultsConfig['rateLimit']): RateLimit | undefined {
  const limit = typeof value === 'number' ? { perSecond: value } : value;
  if (!limit || limit.perSecond <= 0) return undefined;
  // At least one request must fit in the bucket, or a limit below 1/s would block forever.
  return { perSecond: limit.perSecond, burst: Math.max(1, limit.burst ?? limit.perSecond) };
}
