/**
 * One line per retry, for a person watching a slow command: which attempt failed, why, and how long
 * until the next. Pure, so the caller decides where lines go (standard error, a progress area) and
 * tests need no terminal.
 *
 * No secrets: the HTTP layer redacts secret query parameters from the path and passes path and reason
 * through the same scrubber as its errors (every secret the request carries) before any event is
 * made; the other fields are a service name, a method and numbers, never from a body or a header.
 */
import { formatDuration } from '../clients/http/errors.js';
import { printable } from '../common/printable.js';
import { formatWait as formatWaitAs } from '../common/wait.js';
import type { RateLimitPauseEvent, RetryEvent } from '../clients/http/index.js';

/**
 * `registry: GET /v1/acl/roles: attempt 1 failed (503 Service Unavailable); retrying in 0.4s (attempt 2 of 9)`,
 * after the object's address when the request is made for one (`AclRole/default/web: registry: …`).
 */
export function formatRetryEvent(event: RetryEvent, address?: string): string {
  const request = `${address ? `${printable(address)}: ` : ''}${event.service}: ${event.method} ${printable(event.path)}`;
  const next = `attempt ${event.attempt + 1} of ${event.maxAttempts}`;
  // The reason may quote the service (an error's text): one printable line, like the path.
  return `${request}: attempt ${event.attempt} failed (${printable(event.reason)}); retrying ${formatWait(event.delayMs)} (${next})`;
}

/**
 * `registry: rate limited, waiting 1.2 s (429)`: every request to the host waits, so it is said once
 * per pause rather than once per request held back. A throttle that began is said once too:
 * `registry: keeping to the service's rate limit, 4.5 requests/s (X-RateLimit-Limit 5); requests
 * wait their turn`, so that objects taking longer than their round trip are explained.
 */
export function formatRateLimitPause(event: RateLimitPauseEvent): string {
  if (event.throttlePerSecond !== undefined)
    return `${event.service}: keeping to the service's rate limit, ${event.throttlePerSecond} requests/s (${printable(event.reason)}); requests wait their turn`;
  return `${event.service}: rate limited, waiting ${formatWait(event.waitMs).replace(/^in /, '')} (${printable(event.reason)})`;
}

/** `in 40ms`, `in 0.4s`, `in 12s`, `now` (common/wait.ts). */
function formatWait(ms: number): string {
  return formatWaitAs(ms, formatDuration);
}

/**
 * The lines of a run's retries and rate-limit pauses, for `write`. A 429 held every request to the
 * host and was said once, as the pause (`registry: rate limited, waiting 79ms`): the requests it held
 * back are not each said again while that pause runs (a burst of ten workers printed ten more lines).
 * Other retries, and a 429 with no pause announced (no throttle), are each said.
 */
export function retryReporter(
  write: (line: string) => void,
  label: () => string | undefined,
  now: () => number = () => performance.now(),
): { onRetry: (event: RetryEvent) => void; onRateLimitPause: (event: RateLimitPauseEvent) => void } {
  /**
   * Per host (each has a rate limiter of its own: two connections of one service may be two
   * clusters), until when its announced pause, and the retries it sends off, are news already said.
   */
  const pausedUntil = new Map<string, number>();
  return {
    onRetry(event) {
      const saidAsPause = event.reason.startsWith('429') && now() <= (pausedUntil.get(event.origin) ?? -1);
      if (!saidAsPause) write(formatRetryEvent(event, label()));
    },
    onRateLimitPause(event) {
      // The requests held back by the pause retry at its end, spread over a short jitter. A throttle
      // that began holds nobody back at once: its 429s, if any, are news.
      if (event.throttlePerSecond === undefined)
        pausedUntil.set(event.origin, now() + event.waitMs + PAUSE_RETRY_SPREAD_MS);
      write(formatRateLimitPause(event));
    },
  };
}

/** How long after a pause the 429s of the requests it held back still count as that pause's. */
const PAUSE_RETRY_SPREAD_MS = 1000;
