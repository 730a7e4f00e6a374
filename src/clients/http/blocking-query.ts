/**
 * Blocking-query parameters shared by the services that hold a read until an index moves (the
 * registry and the scheduler): `?index=N&wait=30s`, and a request timeout long enough for the service
 * to hold the request for the whole wait.
 */

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
