/**
 * What every client of one run shares: per service and host, the adaptive rate limiter; per host
 * (`scheme://host:port`), the retry budget. A run may hold several clients of one service on one
 * host (a service reached through two manifest connections, a download client beside the API
 * client); their requests count against the same limit the service applies, so they slow down from
 * the same account. Each service announces and enforces its own limit (`X-RateLimit-Limit`), also
 * when several are served from one host (the sandbox serves all four on one port, each with its
 * own bucket): one limiter for the host held them all to one service's share.
 *
 * One registry per run (the engine makes it with the run's HTTP options), not per process: two runs
 * in one process (the library API, tests) never throttle each other.
 */
import { AdaptiveRateLimiter } from './rate-limiter.js';
import { RetryBudget } from './retry-budget.js';

export class HostRegistry {
  private readonly limiters = new Map<string, AdaptiveRateLimiter>();
  private readonly budgets = new Map<string, RetryBudget>();

  /** `retryRatio`: retries each request sent adds to its host's budget (default `RETRY_BUDGET_RATIO`). */
  constructor(private readonly retryRatio?: number) {}

  limiter(origin: string, service: string): AdaptiveRateLimiter {
    const key = `${service} ${origin}`;
    let limiter = this.limiters.get(key);
    if (!limiter) this.limiters.set(key, (limiter = new AdaptiveRateLimiter()));
    return limiter;
  }

  budget(origin: string): RetryBudget {
    let budget = this.budgets.get(origin);
    if (!budget) this.budgets.set(origin, (budget = new RetryBudget(this.retryRatio)));
    return budget;
  }
}
