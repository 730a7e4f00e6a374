/**
 * What every client of one run shares per host (`scheme://host:port`): the adaptive rate limiter and
 * the retry budget. A run may hold several clients for one host (a service reached through two
 * manifest connections, a download client beside the API client); their requests count against the
 * same limits the service applies, so they must slow down and retry from the same account.
 *
 * One registry per run (the engine makes it with the run's HTTP options), not per process: two runs
 * in one process (the library API, tests) never throttle each other.
 */
import { AdaptiveRateLimiter } from './rate-limiter.js';
import { RetryBudget } from './retry-budget.js';

export class HostRegistry {
  private readonly limiters = new Map<string, AdaptiveRateLimiter>();
  private readonly budgets = new Map<string, RetryBudget>();

  limiter(origin: string): AdaptiveRateLimiter {
    let limiter = this.limiters.get(origin);
    if (!limiter) this.limiters.set(origin, (limiter = new AdaptiveRateLimiter()));
    return limiter;
  }

  budget(origin: string): RetryBudget {
    let budget = this.budgets.get(origin);
    if (!budget) this.budgets.set(origin, (budget = new RetryBudget()));
    return budget;
  }
}
