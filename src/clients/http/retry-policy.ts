/**
 * When to try a request again, and how long to wait first. Pure functions, so the policy can be read
 * and tested apart from the sending loop in `client.ts`.
 *
 * - 429: the service did not process the request, so any method is retried. The wait is what the
 *   service asked for (`Retry-After`, else `X-RateLimit-Reset`), plus a little jitter so that clients
 *   woken by the same reset do not all hit the service in the same millisecond.
 * - 5xx in `statuses` (default 500/502/503/504): retried for idempotent requests only, with
 *   exponential backoff and full jitter, or the service's `Retry-After` when it sends one.
 * - Network errors: retried for any method when nothing can have reached the service (connection
 *   refused, connect timeout, unreachable host); for idempotent requests only when the connection
 *   broke after the request may have been sent (reset, socket closed, response timeout).
 * - A wait longer than `maxRetryAfterMs` is not slept: the request fails at once and the error says
 *   how long the service asked for (a one-hour Retry-After means maintenance, not a blip).
 */
import { isServiceError } from './errors.js';

export interface RetryOptions {
  /**
   * Retries after the first attempt for 5xx and network errors; for a create's request
   * (`create-sends.ts`), for every failure together, 429s included, its sends after a lost answer too.
   */
  maxRetries: number;
  /**
   * Of those, the most a refused connection gets: nothing listens at the address. A service that is
   * restarting listens again within a second or two; one that was never started (a wrong port, a
   * sandbox not yet running) should say so in about a second, not after 9 attempts and ~16 s.
   */
  maxRefusedRetries: number;
  /** Retries after the first attempt for 429, counted separately: a rate-limited request costs nothing. */
  maxRateLimitRetries: number;
  /** Backoff: the first retry waits up to this long, doubling each time... */
  minDelayMs: number;
  /** ...up to this cap. */
  maxDelayMs: number;
  /** The longest wait the service may ask for (Retry-After, X-RateLimit-Reset) before Converge gives up. */
  maxRetryAfterMs: number;
  /** 5xx statuses retried for idempotent requests. */
  statuses: readonly number[];
}

/**
 * 9 attempts whatever the failure (5xx, dropped connection, timeout, 429). At 5 for errors, a service
 * failing 15% of attempts (10% 5xx and 5% dropped connections, issue 20's fault run) failed one
 * request in about 13,000 and one create in about 25,000: over the run's thousand-odd requests a
 * fault run failed a plan read or a create every few runs. At 9, under one in 10^7. What keeps a
 * failing service from a retry storm is the run's retry budget per host (`retry-budget.ts`), which
 * ends retries long before a request's limit when most attempts fail.
 */
export const DEFAULT_RETRY: RetryOptions = {
  maxRetries: 8,
  maxRefusedRetries: 3,
  maxRateLimitRetries: 8,
  minDelayMs: 200,
  maxDelayMs: 10_000,
  maxRetryAfterMs: 60_000,
  statuses: [500, 502, 503, 504],
};

// LIST is the secrets service's read of a folder's keys (spec: secrets-ldap-and-rekey.md): a read like
// GET, so a 503 or a reset on it is retried; left out, one 5xx on an LDAP list failed a whole plan.
const READ_METHODS = new Set(['GET', 'HEAD', 'LIST', 'OPTIONS']);
const IDEMPOTENT_METHODS = new Set([...READ_METHODS, 'PUT', 'DELETE']);

export function isIdempotentMethod(method: string): boolean {
  return IDEMPOTENT_METHODS.has(method.toUpperCase());
}

/** Methods that change nothing on the service: a lost answer to one of them leaves nothing done. */
export function isReadMethod(method: string): boolean {
  return READ_METHODS.has(method.toUpperCase());
}

/** Full jitter ("Exponential Backoff And Jitter", AWS architecture blog): uniform in [0, min(cap, base·2^n)). */
export function backoffDelayMs(
  retryIndex: number,
  options: Pick<RetryOptions, 'minDelayMs' | 'maxDelayMs'>,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(options.maxDelayMs, options.minDelayMs * 2 ** retryIndex);
  return Math.floor(random() * ceiling);
}

/** `Retry-After`: delay-seconds or an HTTP date (RFC 9110 §10.2.3). Undefined when absent or unreadable. */
export function parseRetryAfterMs(value: string | undefined, now: number = Date.now()): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * `X-RateLimit-Reset`: the workspace service sends float seconds until the window resets ("0.35").
 * Some APIs send a Unix timestamp instead; a value that large is read as one.
 */
export function parseRateLimitResetMs(
  value: string | undefined,
  now: number = Date.now(),
): number | undefined {
  if (value === undefined || !/^\s*\d+(\.\d+)?\s*$/.test(value)) return undefined;
  const seconds = Number(value);
  if (seconds > 1_000_000_000) return Math.max(0, Math.round(seconds * 1000 - now));
  return Math.round(seconds * 1000);
}

/**
 * What the service asked us to wait, from the headers that can say so. For a 429 with both, the
 * shorter: `Retry-After` takes whole seconds only, so a service that also sends the fractional
 * `X-RateLimit-Reset` (the workspace service, the sandbox) means 0.2 s where Retry-After says 1 s, and
 * waiting the full second would leave most of the limit unused.
 */
export function serverRequestedWaitMs(
  headers: Record<string, string>,
  status: number,
  now: number = Date.now(),
): number | undefined {
  const retryAfter = parseRetryAfterMs(headers['retry-after'], now);
  const reset = status === 429 ? parseRateLimitResetMs(headers['x-ratelimit-reset'], now) : undefined;
  if (retryAfter === undefined) return reset;
  return reset === undefined ? retryAfter : Math.min(retryAfter, reset);
}

/** How a network-level failure may be retried. */
export interface NetworkFailure {
  code: string;
  /** Words for the error message. */
  reason: string;
  /** The request cannot have reached the service, so even a POST may be sent again. */
  nothingSent: boolean;
  /**
   * A connection was made and then lost (reset, closed): the service is there. Not so for a timeout
   * the system reports (ETIMEDOUT also ends a connect to an address that drops packets).
   */
  connected: boolean;
  /** Worth retrying at all (a bad certificate or an unknown host will not fix itself). */
  transient: boolean;
  /** Set for timeouts, which become `TimeoutError` rather than `ConnectionError`. */
  timeoutPhase?: 'connect' | 'response';
  /**
   * A TLS failure: `certificate` when the server's certificate was not trusted (a CA to give), or
   * `protocol` when no TLS conversation happened at all (a plain-HTTP server at an https:// address).
   */
  tls?: 'certificate' | 'protocol';
}

const NOTHING_SENT: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  UND_ERR_CONNECT_TIMEOUT: 'connect timeout',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EADDRNOTAVAIL: 'address not available',
  EAI_AGAIN: 'temporary DNS failure',
};

const MAYBE_SENT: Record<string, string> = {
  ECONNRESET: 'connection reset by the service',
  EPIPE: 'connection closed while sending',
  ECONNABORTED: 'connection aborted',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_SOCKET: 'connection closed by the service',
  UND_ERR_HEADERS_TIMEOUT: 'response headers timeout',
  UND_ERR_BODY_TIMEOUT: 'response body timeout',
};

const PERMANENT: Record<string, string> = {
  ENOTFOUND: 'host not found',
  // A request sent to a pool Converge had closed, as a run ends after another request's failure:
  // nothing was sent and no service was at fault, and the pool takes no more requests, so nothing is
  // retried or said as a retry (those lines read as a healthy service dropping connections).
  UND_ERR_CLOSED: 'cancelled: Converge closed its connections as the run ended',
};

/** Classifies an error thrown by `dispatcher.request`; undefined when it is not a network failure. */
export function classifyNetworkError(err: unknown): NetworkFailure | undefined {
  // undici's parser errors carry no code when llhttp gave none (an answer that is not HTTP at all).
  const code = errorCode(err) ?? (isParserError(err) ? 'HPE_INVALID' : undefined);
  if (code === undefined) return undefined;
  if (code in NOTHING_SENT) {
    const failure: NetworkFailure = {
      code,
      reason: NOTHING_SENT[code]!,
      nothingSent: true,
      connected: false,
      transient: true,
    };
    if (code === 'UND_ERR_CONNECT_TIMEOUT') failure.timeoutPhase = 'connect';
    return failure;
  }
  if (code in MAYBE_SENT) {
    const failure: NetworkFailure = {
      code,
      reason: MAYBE_SENT[code]!,
      nothingSent: false,
      connected: code !== 'ETIMEDOUT',
      transient: true,
    };
    if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT')
      failure.timeoutPhase = 'response';
    return failure;
  }
  if (code in PERMANENT)
    return { code, reason: PERMANENT[code]!, nothingSent: true, connected: false, transient: false };
  // undici's HTTP parser (llhttp) refusing the very start of the answer: something that is not an
  // HTTP server (an SSH port, a database) listens at the address, and will not speak HTTP on a retry.
  if (code === 'HPE_INVALID' || code === 'HPE_INVALID_CONSTANT')
    return { code, reason: 'the answer is not HTTP', nothingSent: false, connected: false, transient: false };
  // A broken answer of an HTTP server or proxy (a bad header, a bad chunk): the request reached it
  // and may have been carried out, like a connection lost before the answer.
  if (code.startsWith('HPE_'))
    return { code, reason: 'malformed HTTP answer', nothingSent: false, connected: true, transient: true };
  if (isTlsCode(code)) {
    const message = openSslReason((err as { message?: string }).message ?? code);
    const protocol = NOT_TLS_AT_ALL.has(code);
    return {
      code,
      reason: protocol ? `TLS: the server did not answer in TLS (${message})` : `TLS: ${message}`,
      nothingSent: true,
      connected: false,
      transient: false,
      tls: protocol ? 'protocol' : 'certificate',
    };
  }
  return undefined;
}

/**
 * OpenSSL's answer to bytes that are not a TLS record: what a plain-HTTP server at an https://
 * address sends back (an HTTP 400 page read as a record header).
 */
const NOT_TLS_AT_ALL = new Set([
  'ERR_SSL_WRONG_VERSION_NUMBER',
  'ERR_SSL_PACKET_LENGTH_TOO_LONG',
  'ERR_SSL_UNKNOWN_PROTOCOL',
  'ERR_SSL_RECORD_LAYER_FAILURE',
]);

/**
 * The reason of an OpenSSL error line (`8C..:error:0A00010B:SSL routines:ssl3_get_record:wrong version
 * number:../deps/openssl/…/ssl3_record.c:350:`): `wrong version number`. The rest is the library's
 * internals, of no use to whoever reads the error. Other messages (certificate ones) pass as they are.
 */
export function openSslReason(message: string): string {
  const match = /:error:[0-9A-Fa-f]+:[^:\n]*:[^:\n]*:([^:\n]+)/.exec(message);
  return match ? match[1]!.trim() : message.trim();
}

function isTlsCode(code: string): boolean {
  return (
    code.startsWith('CERT_') ||
    code.startsWith('ERR_TLS_') ||
    code.startsWith('ERR_SSL_') ||
    code.startsWith('UNABLE_TO_') ||
    code === 'DEPTH_ZERO_SELF_SIGNED_CERT' ||
    code === 'SELF_SIGNED_CERT_IN_CHAIN' ||
    code === 'EPROTO'
  );
}

/** undici's HTTPParserError, itself or as the cause of another error. */
function isParserError(err: unknown): boolean {
  const e = err as { name?: unknown; cause?: unknown };
  if (e?.name === 'HTTPParserError') return true;
  return e?.cause !== undefined && e.cause !== err ? isParserError(e.cause) : false;
}

/** The code of an error, looking inside the AggregateError Node throws when it tried several addresses. */
function errorCode(err: unknown): string | undefined {
  const e = err as { code?: unknown; errors?: unknown; cause?: unknown };
  if (typeof e?.code === 'string') return e.code;
  if (Array.isArray(e?.errors)) {
    for (const inner of e.errors) {
      const code = errorCode(inner);
      if (code) return code;
    }
  }
  return e?.cause && e.cause !== err ? errorCode(e.cause) : undefined;
}

/**
 * Whether the service may have acted on a request that failed this way: a 5xx, a response timeout,
 * or a connection broken after sending. Refused connections and 4xx are not: nothing was done.
 */
export function answerLost(error: unknown): boolean {
  if (!isServiceError(error)) return false;
  if (error.kind === 'status') return (error.status ?? 0) >= 500;
  if (error.kind === 'timeout') return (error as { phase?: string }).phase === 'response';
  if (error.kind === 'connection') {
    const code = (error as { code?: string }).code;
    const failure = code === undefined ? undefined : classifyNetworkError({ code });
    return failure !== undefined && failure.transient && !failure.nothingSent;
  }
  return false;
}
