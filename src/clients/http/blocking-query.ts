/**
 * Blocking-query parameters shared by the services that hold a read until an index moves (the
 * registry and the scheduler): `?index=N&wait=30s`, and a request timeout long enough for the service
 * to hold the request for the whole wait, and the index the answer carries for the next read.
 */

/**
 * Blocking-query parameters for reads: the call returns when the object's index moves past `index` or
 * after `wait` (a duration such as `'30s'`, `'5m'`, or milliseconds).
 */
export interface BlockingParameters {
  index?: number;
  wait?: string | number;
}

/** A read's value and the service's index at the time (for the next blocking read). */
export interface Indexed<T> {
  value: T;
  index?: number;
}

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `'30s'` stays `'30s'`; a number of milliseconds becomes whole seconds. */
export function waitParameter(service: string, wait: string | number): { text: string; ms: number } {
  if (typeof wait === 'number') {
    if (!Number.isFinite(wait) || wait < 0) throw new TypeError(`${service}: invalid wait ${wait}`);
    const seconds = Math.ceil(wait / 1000);
    return { text: `${seconds}s`, ms: seconds * 1000 };
  }
  const match = DURATION.exec(wait.trim());
  if (!match) throw new TypeError(`${service}: invalid wait "${wait}" (expected e.g. "30s" or "5m")`);
  return { text: wait.trim(), ms: Number(match[1]) * UNIT_MS[match[2]!]! };
}

/**
 * The request timeout for a blocking read: the held time (the service's default when no `wait` was
 * given), the up to wait/16 of jitter the services add, and a minute for the transfer itself.
 */
export function blockingTimeoutMs(heldMs: number): number {
  return heldMs + Math.ceil(heldMs / 16) + 60_000;
}

/** The first of `names` present as a safe integer in `headers` (lower-case names). */
export function indexFromHeaders(
  headers: Record<string, string>,
  names: readonly string[],
): number | undefined {
  for (const name of names) {
    const raw = headers[name];
    if (raw === undefined) continue;
    const index = Number(raw);
    if (Number.isSafeInteger(index)) return index;
  }
  return undefined;
}

/**
 * The query (`index`, `wait`) of a blocking read, and, when it blocks (an index past 0), a request
 * timeout long enough for the service to hold it for the whole wait (`defaultWaitMs` without one).
 */
export function blockingQuery(
  service: string,
  options: BlockingParameters,
  defaultWaitMs: number,
): { query: { index: number | undefined; wait: string | undefined }; timeout: { timeoutMs?: number } } {
  const wait = options.wait === undefined ? undefined : waitParameter(service, options.wait);
  const query = { index: options.index, wait: wait?.text };
  if (options.index === undefined || options.index <= 0) return { query, timeout: {} };
  return { query, timeout: { timeoutMs: blockingTimeoutMs(wait?.ms ?? defaultWaitMs) } };
}

/** `value` with the index of the first of `names` in `headers`, when there is one. */
export function withIndex<T>(
  value: T,
  headers: Record<string, string>,
  names: readonly string[],
): Indexed<T> {
  const index = indexFromHeaders(headers, names);
  return index === undefined ? { value } : { value, index };
}
