/**
 * Blocking queries in the style of Consul and Nomad: a read with `?index=N` waits while the index of
 * what it returns is still <= N, until a write changes it or the wait time passes, then answers with
 * whatever is current. Services call `ChangeFeed.notify()` after every write; waiters re-run their
 * query and decide for themselves whether their part of the state moved.
 */

export class ChangeFeed {
  private readonly waiters = new Set<() => void>();

  notify(): void {
    const waiting = [...this.waiters];
    this.waiters.clear();
    for (const wake of waiting) wake();
  }

  /** Resolves on the next notify(), after `timeoutMs`, or when a signal aborts, whichever is first. */
  next(timeoutMs: number, signal: AbortSignal): Promise<'changed' | 'timeout' | 'aborted'> {
    if (signal.aborted) return Promise.resolve('aborted');
    return new Promise((resolve) => {
      const finish = (outcome: 'changed' | 'timeout' | 'aborted') => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.waiters.delete(onChange);
        resolve(outcome);
      };
      const onChange = () => finish('changed');
      const onAbort = () => finish('aborted');
      const timer = setTimeout(() => finish('timeout'), Math.max(0, timeoutMs));
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.add(onChange);
    });
  }

  /** Number of queries currently waiting (for tests and shutdown checks). */
  get pending(): number {
    return this.waiters.size;
  }
}

export interface QueryResult<T> {
  index: number;
  value: T;
}

export interface BlockingOptions {
  /** `?index`; 0 means "do not block". */
  minIndex: number;
  /** How long to wait at most, in milliseconds (already defaulted, capped and jittered). */
  waitMs: number;
  feed: ChangeFeed;
  /**
   * Client gone or sandbox closing: answer at once with the current state. Asked for only when the
   * read does block: the request's signal is built on demand, and building one for every plain read
   * cost the scheduler's list about a tenth of its time.
   */
  signal: () => AbortSignal;
}

export async function blockingQuery<T>(
  run: () => QueryResult<T>,
  opts: BlockingOptions,
): Promise<QueryResult<T>> {
  let result = run();
  if (opts.minIndex <= 0 || result.index > opts.minIndex) return result;
  const deadline = performance.now() + opts.waitMs;
  let signal: AbortSignal | undefined;
  for (;;) {
    const remaining = deadline - performance.now();
    if (remaining <= 0) return result;
    const outcome = await opts.feed.next(remaining, (signal ??= opts.signal()));
    result = run();
    if (outcome !== 'changed' || result.index > opts.minIndex) return result;
  }
}
