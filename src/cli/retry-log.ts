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
 * back are not each said again (a burst of ten workers printed ten more lines). The HTTP client
 * knows which 429s a pause held (`heldByPause`, per host: each has a rate limiter of its own). Other
 * retries, and a 429 with no pause (nothing asked to wait), are each said.
 */
export function retryReporter(write: (line: string) => void): {
  onRetry: (event: RetryEvent) => void;
  onRateLimitPause: (event: RateLimitPauseEvent) => void;
} {
  return {
    onRetry(event) {
      // Named by the object the request was made for, when the change's scope said (`event.label`).
      if (!event.heldByPause) write(formatRetryEvent(event, event.label));
    },
    onRateLimitPause(event) {
      write(formatRateLimitPause(event));
    },
  };
}
