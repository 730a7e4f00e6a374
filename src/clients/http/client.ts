/**
 * The HTTP layer every service client sends through: one `HttpClient` per service connection, with
 * auth headers, JSON in and out, timeouts, retries, client-side rate limiting, request counting and
 * typed errors that never carry the token.
 *
 * Why a small loop around `dispatcher.request` rather than undici's retry interceptor: the policy
 * needs things the interceptor does not offer together. It retries 429 for every method but 5xx only
 * for idempotent ones (the interceptor has one `methods` list for both), reads the workspace service's
 * `X-RateLimit-Reset`, retries a POST after "connection refused" but not after "connection reset",
 * gives up with a clear message instead of silently capping a long Retry-After, counts every attempt
 * for the benchmarks, and turns the final failure into our typed errors rather than
 * `RequestRetryError`. The loop is below; the decisions are pure functions in `retry-policy.ts`.
 */
import { STATUS_CODES } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import type { Dispatcher } from 'undici';
import type { ServiceName } from '../../manifest/types.js';
import { createAgent } from './agent.js';
import { decodeBody, defaultParseError, encodeBody, type QueryValue, withQuery } from './body.js';
import { envVarPrefix } from './endpoint.js';
import {
  ConnectionError,
  formatDuration,
  HttpStatusError,
  type ServiceErrorInit,
  TimeoutError,
  UnexpectedResponseError,
} from './errors.js';
import { AdaptiveRateLimiter } from './rate-limiter.js';
import { redactPath } from './redact.js';
import {
  backoffDelayMs,
  classifyNetworkError,
  DEFAULT_RETRY,
  isIdempotentMethod,
  type NetworkFailure,
  type RetryOptions,
  serverRequestedWaitMs,
} from './retry-policy.js';
import { defaultUserAgent } from './user-agent.js';

export interface HttpClientOptions {
  service: ServiceName;
  /** `scheme://host:port`, optionally with a path prefix of a proxy; the service client adds `/v1`. */
  baseUrl: string;
  token?: string;
  /** The service's token header(s). Default: `Authorization: Bearer <token>`. */
  authHeaders?: (token: string) => Record<string, string>;
  /** PEM text of a CA to trust for https. */
  caCertificate?: string;
  /** Skip certificate verification. Off unless switched on explicitly. */
  insecureSkipTlsVerify?: boolean;
  /** Default 10 s. Applies to the built-in agent only (an injected dispatcher has its own). */
  connectTimeoutMs?: number;
  /** Headers and body of one attempt. Default 60 s. */
  requestTimeoutMs?: number;
  retry?: Partial<RetryOptions>;
  /** The service's own message from an error body. Default: `defaultParseError`. */
  parseError?: (status: number, bodyText: string, contentType: string | undefined) => string | undefined;
  /** Injected for tests (an undici `MockAgent`). The client does not close an injected dispatcher. */
  dispatcher?: Dispatcher;
  /** Sockets per origin for the built-in agent. Default 10 (terraform's default parallelism). */
  maxConnections?: number;
  /** Idle keep-alive for the built-in agent. Default 4 s, under common server idle timeouts (5 s). */
  keepAliveTimeoutMs?: number;
  /** Default `converge/<version>`. */
  userAgent?: string;
  /** Throttle to 66% of a service-announced `X-RateLimit-Limit`. Default true. */
  adaptiveRateLimit?: boolean;
  /** Named in "cannot reach" hints. Default `CONVERGE_<SERVICE>_ADDR`. */
  addressSource?: string;
  /** Called before every attempt, retries included. */
  onRequest?: (event: RequestEvent) => void;
  /** Called before sleeping for a retry (the CLI's verbose mode shows these). */
  onRetry?: (event: RetryEvent) => void;
  /** Random source for jitter; tests make it deterministic. */
  random?: () => number;
}

export interface HttpRequest {
  method: string;
  /** Relative to `baseUrl` (`/v1/acl/role`), or absolute (a pagination link). */
  path: string;
  query?: Record<string, QueryValue>;
  headers?: Record<string, string>;
  /** A string or bytes are sent as they are; anything else is JSON-encoded. */
  body?: unknown;
  contentType?: string;
  /** Default `application/json`. */
  accept?: string;
  /** Default: true for GET, HEAD, PUT, DELETE, OPTIONS. Say false for a PUT that creates. */
  idempotent?: boolean;
  /** Non-2xx statuses handed back to the caller instead of thrown (`[404]`). */
  okStatuses?: readonly number[];
  signal?: AbortSignal;
  /** Overrides `requestTimeoutMs` for this request (blocking queries wait longer on purpose). */
  timeoutMs?: number;
  /** Send the token. Default true; never sent to an origin other than `baseUrl`'s. */
  authenticate?: boolean;
}

export interface HttpResponse<T = unknown> {
  status: number;
  /** Lower-case names; repeated headers joined with `, `. */
  headers: Record<string, string>;
  /** Parsed JSON for JSON content types, text otherwise, undefined when empty. */
  body: T | string | undefined;
}

export interface JsonResponse<T> {
  status: number;
  headers: Record<string, string>;
  body: T | undefined;
}

export interface RequestEvent {
  service: ServiceName;
  method: string;
  /** Redacted path with query. */
  path: string;
  /** 1 for the first try. */
  attempt: number;
}

export interface RetryEvent extends RequestEvent {
  /** `503 Service Unavailable`, `429 Too Many Requests`, `ECONNRESET`... */
  reason: string;
  delayMs: number;
}

interface Target {
  origin: string;
  path: string;
  sameOrigin: boolean;
}

interface AttemptResult {
  status: number;
  headers: Record<string, string>;
  text: string;
}

/** Marks the abort this client caused itself when an attempt ran out of time. */
class AttemptTimeout extends Error {}

const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

export class HttpClient {
  readonly service: ServiceName;
  readonly baseUrl: string;
  private readonly origin: string;
  private readonly basePath: string;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly retry: RetryOptions;
  private readonly limiter?: AdaptiveRateLimiter;
  private readonly requestTimeoutMs: number;
  private readonly connectTimeoutMs: number;
  private readonly userAgent: string;
  private readonly addressSource: string;
  private readonly random: () => number;
  private readonly byMethod: Record<string, number> = {};
  private attempts = 0;
  private retries = 0;
  // A #private field: util.inspect, JSON.stringify and object spread never see it.
  readonly #token: string | undefined;
  readonly #authHeaders: (token: string) => Record<string, string>;
  private readonly parseError: NonNullable<HttpClientOptions['parseError']>;
  private readonly onRequest?: HttpClientOptions['onRequest'];
  private readonly onRetry?: HttpClientOptions['onRetry'];

  constructor(options: HttpClientOptions) {
    const base = new URL(options.baseUrl);
    this.service = options.service;
    this.origin = base.origin;
    this.basePath = base.pathname.replace(/\/+$/, '');
    this.baseUrl = `${this.origin}${this.basePath}`;
    this.#token = options.token || undefined;
    this.#authHeaders = options.authHeaders ?? bearerAuth;
    this.requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.parseError = options.parseError ?? defaultParseError;
    this.userAgent = options.userAgent ?? defaultUserAgent();
    this.addressSource = options.addressSource ?? `${envVarPrefix(options.service)}_ADDR`;
    this.random = options.random ?? Math.random;
    if (options.adaptiveRateLimit !== false) this.limiter = new AdaptiveRateLimiter();
    if (options.onRequest) this.onRequest = options.onRequest;
    if (options.onRetry) this.onRetry = options.onRetry;
    if (options.dispatcher) {
      this.dispatcher = options.dispatcher;
      this.ownsDispatcher = false;
    } else {
      this.dispatcher = createAgent({
        caCertificate: options.caCertificate,
        insecureSkipTlsVerify: options.insecureSkipTlsVerify,
        connectTimeoutMs: this.connectTimeoutMs,
        maxConnections: options.maxConnections ?? 10,
        keepAliveTimeoutMs: options.keepAliveTimeoutMs ?? 4_000,
      });
      this.ownsDispatcher = true;
    }
  }

  /** Attempts sent, retries included. */
  get requestCount(): number {
    return this.attempts;
  }

  /** Attempts sent per method (`{ GET: 3, PUT: 1 }`). */
  get requestCountByMethod(): Readonly<Record<string, number>> {
    return { ...this.byMethod };
  }

  /** Attempts that were retries. */
  get retryCount(): number {
    return this.retries;
  }

  /** The `X-RateLimit-Limit` the service announced, if it did. */
  get announcedRateLimit(): number | undefined {
    return this.limiter?.announcedLimit;
  }

  /** Sends a request, retrying as `retry-policy.ts` says; throws a `ServiceError` on failure. */
  async request<T = unknown>(req: HttpRequest): Promise<HttpResponse<T>> {
    const method = req.method.toUpperCase();
    const target = this.resolve(req.path, req.query);
    const displayPath = redactPath(target.path);
    const idempotent = req.idempotent ?? isIdempotentMethod(method);
    const { payload, contentType } = encodeBody(req.body, req.contentType);
    const headers = this.headersFor(req, target, contentType);
    const timeoutMs = req.timeoutMs ?? this.requestTimeoutMs;
    const errorBase = (attempts: number): ServiceErrorInit => ({
      service: this.service,
      method,
      path: target.path,
      attempts,
      secrets: [this.#token],
    });

    let failures = 0;
    let rateLimited = 0;
    for (let attempt = 1; ; attempt++) {
      if (req.signal?.aborted) throw req.signal.reason;
      await this.limiter?.acquire(req.signal);
      this.count(method, displayPath, attempt);

      let result: AttemptResult;
      try {
        result = await this.send(target, method, headers, payload, timeoutMs, req.signal);
      } catch (err) {
        if (req.signal?.aborted) throw req.signal.reason;
        const failure: NetworkFailure | undefined =
          err instanceof AttemptTimeout
            ? {
                code: 'TIMEOUT',
                reason: 'timeout',
                nothingSent: false,
                transient: true,
                timeoutPhase: 'response',
              }
            : classifyNetworkError(err);
        if (failure === undefined) {
          if ((err as { code?: unknown })?.code === undefined) throw err;
          throw new ConnectionError({
            ...errorBase(attempt),
            address: target.origin,
            code: String((err as { code: unknown }).code),
            reason: (err as Error).message,
            cause: err,
          });
        }
        const retryable = failure.transient && (failure.nothingSent || idempotent);
        if (retryable && failures < this.retry.maxRetries) {
          const delayMs = backoffDelayMs(failures, this.retry, this.random);
          failures++;
          await this.pause(method, displayPath, attempt, failure.code, delayMs, req.signal);
          continue;
        }
        throw this.networkError(failure, errorBase(attempt), target.origin, timeoutMs, err);
      }

      this.limiter?.observe(result.headers);
      const contentTypeOut = result.headers['content-type'];
      if ((result.status >= 200 && result.status < 300) || req.okStatuses?.includes(result.status)) {
        const decoded = decodeBody(result.text, contentTypeOut);
        if (!decoded.ok) {
          throw new UnexpectedResponseError({
            ...errorBase(attempt),
            status: result.status,
            problem: decoded.problem,
          });
        }
        return {
          status: result.status,
          headers: result.headers,
          body: decoded.value as T | string | undefined,
        };
      }

      const serviceMessage = this.parseError(result.status, result.text, contentTypeOut) ?? undefined;
      const rateLimit = result.status === 429;
      const retryableStatus = rateLimit || (idempotent && this.retry.statuses.includes(result.status));
      const budgetLeft = rateLimit
        ? rateLimited < this.retry.maxRateLimitRetries
        : failures < this.retry.maxRetries;
      if (retryableStatus && budgetLeft) {
        const askedMs = serverRequestedWaitMs(result.headers, result.status);
        if (askedMs !== undefined && askedMs > this.retry.maxRetryAfterMs) {
          throw new HttpStatusError({
            ...errorBase(attempt),
            status: result.status,
            serviceMessage,
            retryAfterMs: askedMs,
            note: `the service asked to retry after ${formatDuration(askedMs)}, longer than the ${formatDuration(this.retry.maxRetryAfterMs)} Converge waits`,
          });
        }
        const retryIndex = rateLimit ? rateLimited++ : failures++;
        const delayMs =
          askedMs !== undefined
            ? askedMs + Math.floor(this.random() * this.retry.minDelayMs)
            : backoffDelayMs(retryIndex, this.retry, this.random);
        const reason = `${result.status} ${STATUS_CODES[result.status] ?? ''}`.trim();
        await this.pause(method, displayPath, attempt, reason, delayMs, req.signal);
        continue;
      }
      throw new HttpStatusError({ ...errorBase(attempt), status: result.status, serviceMessage });
    }
  }

  /**
   * Like `request`, for endpoints that answer JSON: a 2xx answer with a non-JSON body (an HTML page
   * from a proxy) is an `UnexpectedResponseError`. Non-JSON bodies of `okStatuses` come back undefined.
   */
  async requestJson<T>(req: HttpRequest): Promise<JsonResponse<T>> {
    const res = await this.request<T>(req);
    if (typeof res.body === 'string') {
      if (res.status >= 200 && res.status < 300) {
        throw new UnexpectedResponseError({
          service: this.service,
          method: req.method.toUpperCase(),
          path: this.resolve(req.path, req.query).path,
          secrets: [this.#token],
          status: res.status,
          problem: `expected a JSON body, got ${res.headers['content-type'] ?? 'no content type'}`,
        });
      }
      return { status: res.status, headers: res.headers, body: undefined };
    }
    return { status: res.status, headers: res.headers, body: res.body };
  }

  /** Releases the pool (only a pool this client built; an injected dispatcher belongs to the caller). */
  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }

  /** What `util.inspect` and `console.log` show: no token, no headers. */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `HttpClient { service: '${this.service}', baseUrl: '${this.baseUrl}', requestCount: ${this.attempts} }`;
  }

  toJSON(): Record<string, unknown> {
    return { service: this.service, baseUrl: this.baseUrl, requestCount: this.attempts };
  }

  private resolve(path: string, query: HttpRequest['query']): Target {
    if (/^https?:\/\//i.test(path)) {
      const url = new URL(path);
      return {
        origin: url.origin,
        path: withQuery(`${url.pathname}${url.search}`, query),
        sameOrigin: url.origin === this.origin,
      };
    }
    const relative = path.startsWith('/') ? path : `/${path}`;
    return { origin: this.origin, path: withQuery(`${this.basePath}${relative}`, query), sameOrigin: true };
  }

  private headersFor(
    req: HttpRequest,
    target: Target,
    contentType: string | undefined,
  ): Record<string, string> {
    const headers: Record<string, string> = {
      'user-agent': this.userAgent,
      accept: req.accept ?? 'application/json',
    };
    if (contentType) headers['content-type'] = contentType;
    for (const [name, value] of Object.entries(req.headers ?? {})) headers[name.toLowerCase()] = value;
    // The token goes only to the configured origin: a pagination or upload link elsewhere gets none.
    if (this.#token && req.authenticate !== false && target.sameOrigin) {
      for (const [name, value] of Object.entries(this.#authHeaders(this.#token)))
        headers[name.toLowerCase()] = value;
    }
    return headers;
  }

  /** One attempt: send, read the whole body, all within `timeoutMs`. */
  private async send(
    target: Target,
    method: string,
    headers: Record<string, string>,
    payload: string | Uint8Array | undefined,
    timeoutMs: number,
    callerSignal: AbortSignal | undefined,
  ): Promise<AttemptResult> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new AttemptTimeout()), timeoutMs);
    // Forwarded by hand rather than AbortSignal.any, which leaked listeners on long-lived signals in Node 20.
    const forwardAbort = () => controller.abort(callerSignal?.reason);
    callerSignal?.addEventListener('abort', forwardAbort, { once: true });
    try {
      const res = await this.dispatcher.request({
        origin: target.origin,
        path: target.path,
        method: method as Dispatcher.HttpMethod,
        headers,
        body: payload ?? null,
        signal: controller.signal,
        // Backstops only: the timer above bounds the whole attempt.
        headersTimeout: timeoutMs + 1_000,
        bodyTimeout: timeoutMs + 1_000,
      });
      const text = await res.body.text();
      return { status: res.statusCode, headers: normaliseHeaders(res.headers), text };
    } catch (err) {
      if (controller.signal.reason instanceof AttemptTimeout && !callerSignal?.aborted)
        throw new AttemptTimeout();
      throw err;
    } finally {
      clearTimeout(timer);
      callerSignal?.removeEventListener('abort', forwardAbort);
    }
  }

  private networkError(
    failure: NetworkFailure,
    base: ServiceErrorInit,
    address: string,
    timeoutMs: number,
    cause: unknown,
  ): Error {
    if (failure.timeoutPhase) {
      const phase = failure.timeoutPhase;
      const limit = phase === 'connect' ? this.connectTimeoutMs : timeoutMs;
      return new TimeoutError({ ...base, address, phase, timeoutMs: limit, cause });
    }
    return new ConnectionError({
      ...base,
      address,
      code: failure.code,
      reason: `${failure.reason}${failure.tls ? '' : ` (${failure.code})`}`,
      hint: failure.tls ? this.tlsHint() : `is the service running? check ${this.addressSource}`,
      cause,
    });
  }

  private tlsHint(): string {
    if (!this.addressSource.startsWith('CONVERGE_'))
      return `check the CA certificate of ${this.addressSource}`;
    const prefix = this.addressSource.replace(/_ADDR$/, '');
    return `set ${prefix}_CACERT to the CA's PEM file, or ${prefix}_INSECURE=1 to skip verification (not for production)`;
  }

  private count(method: string, path: string, attempt: number): void {
    this.attempts++;
    this.byMethod[method] = (this.byMethod[method] ?? 0) + 1;
    if (attempt > 1) this.retries++;
    this.onRequest?.({ service: this.service, method, path, attempt });
  }

  private async pause(
    method: string,
    path: string,
    attempt: number,
    reason: string,
    delayMs: number,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    this.onRetry?.({ service: this.service, method, path, attempt, reason, delayMs });
    if (delayMs <= 0) return;
    // timers/promises rejects with its own AbortError; callers expect the reason they aborted with.
    await delay(delayMs, undefined, { signal }).catch((err: unknown) => {
      throw signal?.aborted ? signal.reason : err;
    });
  }
}

export function bearerAuth(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

function normaliseHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}
