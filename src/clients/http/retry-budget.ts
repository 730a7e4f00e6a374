/**
 * How many retries (of 5xx and broken connections) one host gets in a run: a share of the requests
 * sent plus a small floor, as gRPC's retry throttling and Finagle's RetryBudget do. Per-request
 * limits alone let a failing service receive up to nine times the load exactly when it is least able
 * to take it; with a budget, a run against a service failing everything costs at most 25% extra
 * requests (plus the floor), and then each request fails at once with an error that says so.
 *
 * 429s are not counted: the service did no work for them, and the shared rate limiter already holds
 * every worker back until the window the service named has passed.
 */

/** Retries allowed whatever the number of requests: enough for a short run to ride out a blip. */
export const RETRY_BUDGET_FLOOR = 10;
/**
 * Retries allowed per request sent (first attempts). A service failing 15% of attempts (10% 5xx plus
 * 5% dropped connections, issue 20's fault run) needs 0.15 / 0.85 ≈ 18% in retries, and a create sent
 * again after a lost answer is one of them (it used to count as a new request, which raised the
 * allowance instead). At 10% such a run spent its budget after about a hundred requests; at Finagle's
 * 20%, about 2.5 points above the need, a 500-request host spent it in one fault run in ten (the
 * retries drawn vary by ±10 around 88); at 25%, the allowance is over four standard deviations above the need there, and a
 * service failing outright still gets at most a quarter more requests.
 */
export const RETRY_BUDGET_RATIO = 0.25;

export class RetryBudget {
  private requests = 0;
  private retries = 0;
  /** The services that sent requests through this host: the error names them when several share it. */
  private readonly services = new Set<string>();

  constructor(
    private readonly ratio: number = RETRY_BUDGET_RATIO,
    private readonly floor: number = RETRY_BUDGET_FLOOR,
  ) {}

  /** A first attempt was sent by `service`: the allowance grows by `ratio`. */
  noteRequest(service: string): void {
    this.requests++;
    this.services.add(service);
  }

  /** Takes one retry when the budget has one left; false when it is spent. */
  tryTake(): boolean {
    if (this.retries >= this.allowance) return false;
    this.retries++;
    return true;
  }

  /** A retry taken but not sent after all (a lost create's read back found it): returned. */
  giveBack(): void {
    if (this.retries > 0) this.retries--;
  }

  /** Retries the budget allows so far. */
  get allowance(): number {
    return Math.floor(this.floor + this.ratio * this.requests);
  }

  /** Retries taken, and first attempts counted, for the error that says the budget is spent. */
  get usage(): { retries: number; requests: number; services: string[] } {
    return { retries: this.retries, requests: this.requests, services: [...this.services].sort() };
  }
}
