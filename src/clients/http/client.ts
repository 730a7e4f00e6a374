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
 *
 * Two limits bound a request: each attempt has `requestTimeoutMs`, and the whole request (attempts,
 * retry waits, rate-limit waits) has `deadlineMs`, so a service that accepts connections but never
 * answers fails the command in minutes rather than after every attempt's full timeout. A wait that
 * would run past the deadline is not slept: the request fails at once. The run's `signal` (Ctrl-C)
 * ends every wait and every attempt of every request, besides each request's own signal.
 *
 * A hostile service cannot exhaust the process either: an answer is read as a stream against
 * `maxResponseBytes`, and refused as soon as it (or its Content-Length) passes it. Every text it
 * writes into an error is scrubbed of the request's secrets (`scrub.ts`).
 */
import { STATUS_CODES } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import type { SchemaSource } from './shape.js';
import type { Dispatcher } from 'undici';
import { printable } from '../../common/printable.js';
import { envVarPrefix, type ServiceName } from '../../common/types.js';
import { followAbort } from './abort-fanout.js';
import { createAgent } from './agent.js';
import { AttemptTimeout, exchange, ResponseTooLarge } from './exchange.js';
import { boundedWarnings } from './service-warnings.js';
import { claimCreateRequest, type CreateSends, type RequestScope, type ResendGrant } from './create-sends.js';
import { decodeBody, defaultParseError, encodeBody, type QueryValue, withQuery } from './body.js';
import {
  ConnectionError,
  formatDuration,
  HttpStatusError,
  type ServiceErrorDetail,
  type ServiceErrorInit,
  TimeoutError,
  UnexpectedResponseError,
  WaitTimeoutError,
  type HttpSettingNames,
} from './errors.js';
import { HostRegistry } from './host-registry.js';
import { type AdaptiveRateLimiter, type RateLimitPause, RateLimitWaitTooLong } from './rate-limiter.js';
import type { RetryBudget } from './retry-budget.js';
import { redactPath, secretQueryValues } from './redact.js';
import {
  credentialForms,
  tokenWorthLookingFor,
  type Secrets,
  SecretSet,
  scrubSecrets,
} from '../../common/scrub.js';
import { checkShape } from './shape.js';
import {
  backoffDelayMs,
  classifyNetworkError,
  DEFAULT_RETRY,
  isIdempotentMethod,
  isReadMethod,
  type NetworkFailure,
  type RetryOptions,
  serverRequestedWaitMs,
} from './retry-policy.js';
import { tokenHint as hintForToken } from './token-hint.js';
import { defaultUserAgent } from './user-agent.js';
import { bearerAuth } from './bearer-auth.js';

export { bearerAuth };

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
  /** Connecting, sending and reading the whole answer, for one attempt. Default 30 s. */
  requestTimeoutMs?: number;
  /**
   * The whole request, retries and waits included. Default 2 min. Each attempt gets at most what is
   * left, and a retry whose wait would run past it is not slept. A request with its own longer
   * `timeoutMs` (a blocking query) gets that much more. `Infinity` switches it off.
   */
  deadlineMs?: number;
  /**
   * How the caller names the settings an error may ask to change (`{ timeout: '--timeout' }` from the
   * CLI). Default: this client's own options (`deadlineMs`).
   */
  settingNames?: HttpSettingNames;
  retry?: Partial<RetryOptions>;
  /** The service's own message from an error body. Default: `defaultParseError`. */
  parseError?: (status: number, bodyText: string, contentType: string | undefined) => string | undefined;
  /**
   * The entries of a structured error body (`{"errors":[…]}`), kept as the `details` of a 4xx
   * `HttpStatusError` (not of 429 or 5xx: details point at what the caller sent, which those are not
   * about). Default: none.
   */
  errorDetails?: (bodyText: string) => ServiceErrorDetail[];
  /**
   * For a 404: whether the service has no route for the path at all (an auth method not mounted
   * there) rather than no such object, and what to check then. Such a 404 is an error even for a
   * request that takes 404 back as "absent" (`okStatuses`), with the `note` in its message.
   */
  routeMissing?: (
    path: string,
    details: readonly ServiceErrorDetail[],
    /** The 404's body as text: a service answers in its own form, a proxy or another server not. */
    bodyText: string,
  ) => { note?: string } | undefined;
  /** Injected for tests (an undici `MockAgent`). The client does not close an injected dispatcher. */
  dispatcher?: Dispatcher;
  /** Sockets per origin for the built-in agent. Default 10 (terraform's default parallelism). */
  maxConnections?: number;
  /** Idle keep-alive for the built-in agent. Default 4 s, under common server idle timeouts (5 s). */
  keepAliveTimeoutMs?: number;
  /** Default `converge/<version>`. */
  userAgent?: string;
  /** Throttle to 90% of a service-announced `X-RateLimit-Limit` (less after 429s). Default true. */
  adaptiveRateLimit?: boolean;
  /**
   * The run's rate limiters and retry budgets, one per host, shared by every client of the run. A
   * client without one keeps its own (the budget then covers that client's requests alone).
   */
  hosts?: HostRegistry;
  /** Named in "cannot reach" hints. Default `CONVERGE_<SERVICE>_ADDR`. */
  addressSource?: string;
  /**
   * Named in the hint added to 401/403 errors (`set CONVERGE_REGISTRY_TOKEN`, `check the token in
   * connection "eu" (infra/c.yaml:3:1)`). Default `CONVERGE_<SERVICE>_TOKEN`. Never the token itself.
   */
  tokenSource?: string;
  /** Called before every attempt, retries included. */
  onRequest?: (event: RequestEvent) => void;
  /** Called before sleeping for a retry (the CLI's verbose mode shows these). */
  onRetry?: (event: RetryEvent) => void;
  /**
   * Called when the host's rate limit holds every request back (a 429's Retry-After, or
   * `X-RateLimit-Remaining: 0` until the reset): once per pause, not once per waiting request.
   */
  onRateLimitPause?: (event: RateLimitPauseEvent) => void;
  /** Random source for jitter; tests make it deterministic. */
  random?: () => number;
  /**
   * The most bytes of one answer read into memory. Default 64 MiB (`DEFAULT_MAX_RESPONSE_BYTES`); a
   * larger answer fails the request (not retried) instead of growing the process without bound.
   */
  maxResponseBytes?: number;
  /**
   * Aborts every request of the client, in flight or waiting (the run's Ctrl-C), on top of each
   * request's own `signal`. Requests marked `interruptible: false` are left to finish.
   */
  signal?: AbortSignal;
  /**
   * Secrets of the run beyond the token and a request's own (the manifest's values from sensitive
   * variables), scrubbed from every error of every request as the token is: here, before a service's
   * message is cut to length, since a later pass cannot find a secret the cut split.
   */
  secrets?: readonly string[];
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
  /**
   * Secret values the request carries (a password, a secret body field, a token in the body): any
   * error or log line about the request is scrubbed of them in every encoding, like the token.
   */
  secrets?: readonly string[];
  /**
   * Default true: the client's run `signal` aborts the request. False for a request that must run to
   * its answer once started, such as the unlock that releases a lock after an interrupt.
   */
  interruptible?: boolean;
  /** What the request is made for (the change's object, the create it counts for): see `withScope`. */
  scope?: RequestScope;
}

export interface HttpResponse<T = unknown> {
  status: number;
  /** Lower-case names; repeated headers joined with `, `. */
  headers: Record<string, string>;
  /** Parsed JSON for JSON content types, text otherwise, undefined when empty. */
  body: T | string | undefined;
}

/** Which request an error or a shape check is about: what its message names and what it scrubs. */
export type RequestContext = Pick<HttpRequest, 'method' | 'path' | 'query' | 'secrets'>;

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

/** Every request to the service's host waits `waitMs` before sending, because of `reason`. */
export interface RateLimitPauseEvent extends RateLimitPause {
  service: ServiceName;
  /** The host whose requests wait (`scheme://host:port`): each host has a rate limiter of its own. */
  origin: string;
}

/** One failed attempt that will be tried again: which attempt failed, why, and when the next comes. */
export interface RetryEvent extends RequestEvent {
  /** The host the request went to, whose rate limiter a 429 pauses (`scheme://host:port`). */
  origin: string;
  /**
   * Why `attempt` failed, in words: `503 Service Unavailable`, `429 Too Many Requests`, `no complete
   * response within 30s`, `connection reset by the service (ECONNRESET)`.
   */
  reason: string;
  /** The wait before attempt `attempt + 1` (the service's Retry-After when it sent one). */
  delayMs: number;
  /** The most attempts the request gets if it keeps failing this way (the deadline may end it sooner). */
  maxAttempts: number;
  /** The object the request is made for, when made for one (its scope's label): a retry line names it. */
  label?: string;
  /**
   * A 429 answered while a pause holds every request to the host back (the one it began, reported
   * through `onRateLimitPause`, or one already running): the pause says it once for all of them.
   */
  heldByPause?: boolean;
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

/** One request's progress through its attempts, shared by the loop and the error builders. */
interface Run {
  req: HttpRequest;
  method: string;
  target: Target;
  /** `target.path` with secret query parameters redacted: the only form events and logs see. */
  displayPath: string;
  idempotent: boolean;
  headers: Record<string, string>;
  payload: string | Uint8Array | undefined;
  /** One attempt's limit: the request's `timeoutMs`, else the client's. */
  timeoutMs: number;
  deadlineMs: number;
  startedAt: number;
  /** 1 for the first try. */
  attempt: number;
  /** Retries spent on 5xx and network failures so far... */
  failures: number;
  /** ...and on 429, which has its own budget. */
  rateLimited: number;
  /** Of `failures`, the refused connections: they have a lower limit of their own. */
  refusals: number;
  /**
   * Set when the request is a create's (`create-sends.ts`): its counts continue from the create's
   * earlier sends, one limit holds for every failure, and a lost answer is granted a resend.
   */
  create?: CreateSends;
  /** Whether the limiter was already keeping to an announced limit when this attempt was sent. */
  sentThrottled?: boolean;
  /** The request would carry the token (if there is one), so a 401/403 may be about it. */
  tokenExpected: boolean;
  /** Everything to scrub from the request's errors and events: token, `req.secrets`, query secrets. */
  secrets: Secrets;
  /** The request's own signal joined with the client's run signal (when it applies). */
  signal: AbortSignal | undefined;
}

/** How a timed-out attempt is retried: like a broken connection, since the request may have arrived. */
const ATTEMPT_TIMEOUT: NetworkFailure = {
  code: 'TIMEOUT',
  reason: 'timeout',
  nothingSent: false,
  connected: true,
  transient: true,
  timeoutPhase: 'response',
};

const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
/**
 * 30 s per attempt: the services answer ordinary calls in well under a second, so an attempt still
 * silent after 30 s is stuck, and a shorter attempt leaves the deadline room for retries. Requests
 * that wait on purpose (blocking queries) pass their own `timeoutMs`.
 */
const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/**
 * 2 min per request: enough for four attempts against a service that accepts connections but never
 * answers (each up to 30 s, the last cut to what is left), or for one Retry-After at its 60 s cap with
 * attempts around it; short enough that such a service fails a plan in CI in two minutes, where five
 * 60 s attempts plus backoff kept it silent for five. The CLI can pass another value (`--timeout`).
 */
const DEFAULT_DEADLINE_MS = 120_000;
/** A retry with less time than this (or than one attempt's limit, if shorter) before the deadline is not sent. */
const MIN_USEFUL_ATTEMPT_MS = 1_000;
/**
 * 64 MiB: far above any answer the four services give (a large state version list is a few MiB),
 * and low enough that a service streaming without end cannot push the process into swap.
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

/** The methods that send a request given as their first argument: a scoped view adds its scope. */
const SCOPED_METHODS = new Set(['request', 'requestJson', 'requestObject', 'requestOptional']);

export class HttpClient {
  readonly service: ServiceName;
  readonly baseUrl: string;
  private readonly origin: string;
  private readonly basePath: string;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly retry: RetryOptions;
  private readonly limiter?: AdaptiveRateLimiter;
  private readonly budget: RetryBudget;
  private readonly requestTimeoutMs: number;
  private readonly deadlineMs: number;
  private readonly connectTimeoutMs: number;
  private readonly userAgent: string;
  private readonly addressSource: string;
  private readonly tokenSource: string;
  private readonly random: () => number;
  private readonly maxResponseBytes: number;
  private readonly runSignal?: AbortSignal;
  private readonly byMethod: Record<string, number> = {};
  private attempts = 0;
  private retries = 0;
  // A #private field: util.inspect, JSON.stringify and object spread never see it.
  readonly #token: string | undefined;
  readonly #runSecrets: SecretSet | undefined;
  readonly #authHeaders: (token: string) => Record<string, string>;
  private readonly parseError: NonNullable<HttpClientOptions['parseError']>;
  private readonly errorDetails?: HttpClientOptions['errorDetails'];
  private readonly routeMissing?: HttpClientOptions['routeMissing'];
  private readonly onRequest?: HttpClientOptions['onRequest'];
  private readonly onRetry?: HttpClientOptions['onRetry'];
  private readonly onRateLimitPause?: HttpClientOptions['onRateLimitPause'];
  private readonly settingNames?: HttpSettingNames;

  constructor(options: HttpClientOptions) {
    const base = new URL(options.baseUrl);
    this.service = options.service;
    this.origin = base.origin;
    this.basePath = base.pathname.replace(/\/+$/, '');
    this.baseUrl = `${this.origin}${this.basePath}`;
    this.#token = options.token || undefined;
    this.#runSecrets = options.secrets?.length ? new SecretSet(options.secrets) : undefined;
    this.#authHeaders = options.authHeaders ?? bearerAuth;
    this.requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.deadlineMs = options.deadlineMs ?? DEFAULT_DEADLINE_MS;
    if (!(this.deadlineMs > 0)) throw new RangeError(`deadlineMs must be positive, not ${this.deadlineMs}`);
    this.connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    if (options.settingNames) this.settingNames = options.settingNames;
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.parseError = options.parseError ?? defaultParseError;
    if (options.errorDetails) this.errorDetails = options.errorDetails;
    if (options.routeMissing) this.routeMissing = options.routeMissing;
    this.userAgent = options.userAgent ?? defaultUserAgent();
    this.addressSource = options.addressSource ?? `${envVarPrefix(options.service)}_ADDR`;
    this.tokenSource = options.tokenSource ?? `${envVarPrefix(options.service)}_TOKEN`;
    this.random = options.random ?? Math.random;
    this.maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    if (!(this.maxResponseBytes > 0))
      throw new RangeError(`maxResponseBytes must be positive, not ${this.maxResponseBytes}`);
    if (options.signal) this.runSignal = options.signal;
    const hosts = options.hosts ?? new HostRegistry();
    if (options.adaptiveRateLimit !== false) this.limiter = hosts.limiter(this.origin, this.service);
    this.budget = hosts.budget(this.origin);
    if (options.onRequest) this.onRequest = options.onRequest;
    if (options.onRetry) this.onRetry = options.onRetry;
    if (options.onRateLimitPause) this.onRateLimitPause = options.onRateLimitPause;
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

  /**
   * Sends a request, retrying as `retry-policy.ts` says within the request's deadline; throws a
   * `ServiceError` on failure.
   */
  /**
   * This client with every request made through it carrying `scope` (the change it is made for),
   * the same client otherwise: its pool, token, budget and counts. A view, not a copy: cheap enough
   * for one per change.
   */
  withScope(scope: RequestScope): HttpClient {
    return new Proxy(this, {
      get(target, prop) {
        if (typeof prop === 'string' && SCOPED_METHODS.has(prop)) {
          const method = Reflect.get(target, prop, target) as (
            req: HttpRequest,
            ...rest: unknown[]
          ) => unknown;
          return (req: HttpRequest, ...rest: unknown[]) => method.call(target, { ...req, scope }, ...rest);
        }
        // Methods run on the client itself: its #private fields are not the proxy's.
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  }

  async request<T = unknown>(req: HttpRequest): Promise<HttpResponse<T>> {
    const joined = this.joinSignals(req);
    const run = this.begin(req, joined.signal);
    try {
      // A create sent again after a lost answer goes on counting from its earlier sends.
      for (run.attempt = (run.create?.attempts ?? 0) + 1; ; run.attempt++) {
        if (run.signal?.aborted) throw run.signal.reason;
        await this.waitForRateLimit(run);
        // A 429 to a request sent before the limit was known says nothing about the throttle's share.
        run.sentThrottled = this.limiter?.throttling === true;
        // Only a first attempt grows the retry allowance: a create's resend is a retry, already taken.
        if (run.attempt === 1) this.budget.noteRequest(this.service);
        this.count(run.method, run.displayPath, run.attempt);
        if (run.create) run.create.attempts = run.attempt;
        // Never past the deadline; never 0 either, should a rate-limit wait have used up the rest.
        const attemptTimeoutMs = Math.max(1, Math.min(run.timeoutMs, this.timeLeft(run)));
        let result: AttemptResult;
        try {
          result = await this.send(run, attemptTimeoutMs);
        } catch (err) {
          if (err instanceof ResponseTooLarge) throw this.tooLargeError(run, err);
          await this.afterNetworkFailure(run, err, attemptTimeoutMs);
          continue;
        }
        const pause = this.limiter?.observe(result.headers);
        // The throttle first: "keeping to 4.5 requests/s" explains the pause that follows it.
        this.reportPause(this.limiter?.takeNewThrottle());
        this.reportPause(pause);
        if (result.status !== 429) this.limiter?.recover();
        if (this.isAnswer(run, result)) {
          // The create landed in this send: what fails after it is a later step (`createOnce`).
          if (run.create && result.status < 300) run.create.answered = true;
          return this.accepted<T>(run, result);
        }
        await this.afterStatusFailure(run, result);
      }
    } finally {
      joined.dispose();
      if (run.create) {
        run.create.failures = run.failures;
        run.create.rateLimited = run.rateLimited;
      }
    }
  }

  /**
   * Like `request`, for endpoints that answer JSON: a 2xx answer with a non-JSON body (an HTML page
   * from a proxy) is an `UnexpectedResponseError`. Non-JSON bodies of `okStatuses` come back undefined.
   * With a `schema`, a 2xx JSON body must match it (see `shape.ts`): a mismatch is an
   * `UnexpectedResponseError` naming what is wrong, never a TypeError later in a kind. With `required`
   * (what the service sends: `an object`), a 2xx without a body is one too.
   */
  async requestJson<T>(req: HttpRequest, schema?: SchemaSource, required?: string): Promise<JsonResponse<T>> {
    const res = await this.request<T>(req);
    const success = res.status >= 200 && res.status < 300;
    if (typeof res.body === 'string') {
      if (success) {
        const got = res.headers['content-type'] ?? 'no content type';
        throw this.unexpected(req, res.status, `expected a JSON body, got ${got}`);
      }
      return { status: res.status, headers: res.headers, body: undefined };
    }
    if (success && res.body === undefined && required !== undefined)
      throw this.unexpected(
        req,
        res.status,
        `empty response body where the ${this.service} sends ${required}`,
      );
    if (schema && res.body !== undefined && success) this.checkBody(req, res.status, schema, res.body);
    return { status: res.status, headers: res.headers, body: res.body };
  }

  /**
   * `requestJson` for endpoints whose success always carries the object: an empty body is an
   * `UnexpectedResponseError` naming what was expected (`the role`), not an undefined to check for.
   */
  async requestObject<T>(req: HttpRequest, what: string, schema?: SchemaSource): Promise<T> {
    return (await this.requestJson<T>(req, schema, what)).body as T;
  }

  /**
   * `requestJson` for reads of what may not exist: a 404 answers with an undefined body (and its
   * status and headers, for an index) instead of an error.
   */
  async requestOptional<T>(
    req: HttpRequest,
    schema?: SchemaSource,
    required?: string,
  ): Promise<JsonResponse<T>> {
    const res = await this.requestJson<T>({ ...req, okStatuses: [404] }, schema, required);
    return res.status === 404 ? { ...res, body: undefined } : res;
  }

  /**
   * `body` as `T` when it has the shape `schema` describes, for a part of an answer that the service
   * client reads itself (a document inside an envelope); an `UnexpectedResponseError` otherwise.
   */
  checkBody<T>(req: RequestContext, status: number, schema: SchemaSource, body: unknown): T {
    return checkShape<T>(schema, body, {
      service: this.service,
      method: req.method,
      path: this.resolve(req.path, req.query).path,
      status,
      secrets: this.secretsOf(req),
    });
  }

  /** An `UnexpectedResponseError` about an answer to `req`, scrubbed of the request's secrets. */
  unexpected(req: RequestContext, status: number, problem: string): UnexpectedResponseError {
    return new UnexpectedResponseError({
      service: this.service,
      method: req.method.toUpperCase(),
      path: this.resolve(req.path, req.query).path,
      secrets: this.secretsOf(req),
      status,
      problem,
    });
  }

  /**
   * A text the service sent to be shown on success (a warning): scrubbed of the request's secrets
   * like an error, and one printable line, so it cannot forge output lines.
   */
  serviceText(req: Pick<HttpRequest, 'secrets'>, text: string): string {
    return printable(scrubSecrets(text, this.secretsOf(req)));
  }

  /**
   * The warnings of an answer to `req` as lines to show: each like `serviceText`, and bounded in
   * number and length (service-warnings.ts), since the service chooses how many and how long.
   */
  serviceWarnings(
    req: Pick<HttpRequest, 'secrets'>,
    warnings: readonly unknown[] | null | undefined,
  ): string[] {
    const secrets = this.secretsOf(req);
    return boundedWarnings(warnings ?? [], (text) => scrubSecrets(text, secrets));
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

  /** One attempt: send, read the whole body (up to `maxResponseBytes`), all within `timeoutMs`. */
  private async send(run: Run, timeoutMs: number): Promise<AttemptResult> {
    const { target, method, headers, payload } = run;
    const res = await exchange(
      this.dispatcher,
      { origin: target.origin, path: target.path, method, headers, body: payload },
      { timeoutMs, maxResponseBytes: this.maxResponseBytes, signal: run.signal },
    );
    return { status: res.status, headers: normaliseHeaders(res.headers), text: res.text };
  }

  private tooLargeError(run: Run, err: ResponseTooLarge): Error {
    const limit = formatBytes(this.maxResponseBytes);
    const size =
      err.announcedBytes !== undefined
        ? `its Content-Length is ${formatBytes(err.announcedBytes)}`
        : 'reading stopped there';
    return new UnexpectedResponseError({
      ...this.errorBase(run),
      status: err.status,
      problem: `response body larger than the ${limit} limit (${size}); if the service really sends that much, raise the limit with CONVERGE_MAX_RESPONSE_BYTES (bytes)`,
    });
  }

  /**
   * The rate limiter's wait, unless it would run past the deadline (leaving the attempt no useful
   * time): then the request fails at once, since sleeping only to time out hides the cause longer.
   */
  private async waitForRateLimit(run: Run): Promise<void> {
    if (!this.limiter) return;
    const usefulAttemptMs = Math.min(run.timeoutMs, MIN_USEFUL_ATTEMPT_MS);
    try {
      await this.limiter.acquire(run.signal, this.timeLeft(run) - usefulAttemptMs);
    } catch (err) {
      if (!(err instanceof RateLimitWaitTooLong)) throw err;
      throw new WaitTimeoutError({
        ...this.errorBase(run, true),
        attempts: run.attempt - 1,
        waitMs: err.waitMs,
        attemptMs: usefulAttemptMs,
        settings: this.settingNames,
        reason:
          err.announced > 0
            ? `the service's rate limit (X-RateLimit-Limit ${err.announced}, throttled to ${err.appliedPerSecond} requests/s)`
            : `the service's rate limit (a pause it asked for)`,
      });
    }
  }

  /**
   * The request's own abort signal: aborted by the request's `signal` or the run's. The attempts and
   * waits of the request listen on it alone; the shared signals each keep one listener for all the
   * requests following them (`followAbort`), so many requests in flight never pile listeners onto a
   * long-lived signal. Joined by hand rather than with AbortSignal.any, which leaked listeners on
   * long-lived signals in Node 20; `dispose` lets go of the shared signals.
   */
  private joinSignals(req: HttpRequest): { signal: AbortSignal | undefined; dispose: () => void } {
    const run = req.interruptible === false ? undefined : this.runSignal;
    const sources = [...new Set([req.signal, run])].filter((s): s is AbortSignal => s !== undefined);
    if (sources.length === 0) return { signal: undefined, dispose: () => undefined };
    const controller = new AbortController();
    // The request's own signal first: when both have aborted, its reason is the one reported.
    const releases = sources.map((source) => followAbort(source, controller));
    return { signal: controller.signal, dispose: () => releases.forEach((release) => release()) };
  }

  private reportPause(pause: RateLimitPause | undefined): void {
    if (pause) this.onRateLimitPause?.({ service: this.service, origin: this.origin, ...pause });
  }

  /**
   * Takes a retry from the host's budget for the run, or throws `giveUp` with the budget's usage:
   * once a service fails this often, retrying only adds load to it (a retry storm).
   */
  private takeRetry(run: Run, giveUp: (budgetSpent: ServiceErrorInit['budgetSpent']) => Error): void {
    if (this.budget.tryTake()) return;
    throw giveUp({ ...this.budget.usage, service: this.service, host: new URL(this.origin).host });
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
      reason: failure.reason,
      ...(failure.tls ? {} : { reasonDetail: failure.code }),
      // Where to look depends on whether the service was reached: a wrong address or a stopped
      // service refuses; a running one that drops connections (or a proxy before it) was reached.
      ...(failure.tls
        ? { hint: this.tlsHint(failure.tls) }
        : failure.reason === 'the answer is not HTTP'
          ? // Something answered, but not in HTTP: the address most likely names another server.
            { hint: `check that ${this.addressSource} is the service's address` }
          : !failure.connected
            ? { hint: `is the service running? check ${this.addressSource}` }
            : {
                reached: true,
                // A write whose answer was lost may have been carried out: say so, so that a
                // "failed" object is looked at again (a plan shows whether it was) rather than redone.
                ...(isReadMethod(base.method)
                  ? {}
                  : { hint: 'the service may have carried the request out' }),
              }),
      cause,
    });
  }

  private tlsHint(kind: 'certificate' | 'protocol'): string {
    if (kind === 'protocol') {
      const where = this.addressSource.startsWith('CONVERGE_')
        ? `the address in ${this.addressSource}`
        : this.addressSource;
      return `the server at ${where} speaks no TLS on that port: if it serves plain HTTP, write the address with http://`;
    }
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

  /** Everything one request's attempts share, computed once. */
  private begin(req: HttpRequest, signal: AbortSignal | undefined): Run {
    const method = req.method.toUpperCase();
    const target = this.resolve(req.path, req.query);
    const { payload, contentType } = encodeBody(req.body, req.contentType);
    const timeoutMs = req.timeoutMs ?? this.requestTimeoutMs;
    const displayPath = redactPath(target.path);
    const create = claimCreateRequest(req.scope, method, displayPath);
    return {
      req,
      method,
      target,
      displayPath,
      idempotent: req.idempotent ?? isIdempotentMethod(method),
      headers: this.headersFor(req, target, contentType),
      payload,
      timeoutMs,
      // A request allowed a longer attempt (a blocking query) gets the usual deadline on top of it,
      // so a long poll runs its full course and still has the ordinary budget for retries.
      deadlineMs: timeoutMs > this.requestTimeoutMs ? timeoutMs + this.deadlineMs : this.deadlineMs,
      startedAt: performance.now(),
      attempt: 0,
      failures: create?.failures ?? 0,
      rateLimited: create?.rateLimited ?? 0,
      refusals: 0,
      ...(create ? { create } : {}),
      // Only a request that would carry the token can be refused for it: not a download elsewhere.
      tokenExpected: req.authenticate !== false && target.sameOrigin,
      secrets: [...this.secretsOf(req), ...secretQueryValues(target.path)],
      signal,
    };
  }

  /** What to scrub from a request's errors: the token and the secrets the request carries. */
  private secretsOf(req: Pick<HttpRequest, 'secrets'>): Secrets {
    return [this.#token, ...(this.#runSecrets ? [this.#runSecrets] : []), ...(req.secrets ?? [])];
  }

  /** 2xx, or a status the request takes back (`okStatuses`), unless it is a 404 for a missing route. */
  private isAnswer(run: Run, result: AttemptResult): boolean {
    const { status } = result;
    if (status >= 200 && status < 300) return true;
    if (!run.req.okStatuses?.includes(status)) return false;
    return status !== 404 || this.missingRoute(run, result) === undefined;
  }

  /** The `routeMissing` verdict on a 404, or undefined when the 404 is about an object. */
  private missingRoute(run: Run, result: AttemptResult): { note?: string } | undefined {
    if (result.status !== 404 || !this.routeMissing) return undefined;
    return this.routeMissing(run.req.path, this.errorDetails?.(result.text) ?? [], result.text);
  }

  /** The hint naming the token's setting for a 401/403 answer to an authenticated request. */
  private tokenHint(status: number, serviceMessage: string | undefined): string | undefined {
    return hintForToken(status, serviceMessage, {
      sent: this.#token !== undefined,
      source: this.tokenSource,
    });
  }

  #echoForms: string[] | undefined;
  #echoed = false;

  /**
   * Whether an answer showed this client's token, as sent, in hex or in base64 (in any letter case):
   * the plan then masks it in what it shows. Looked for in each answer's text, which costs a search
   * per answer; masking every plan value of a token nobody echoed cost a tenth of a large plan.
   */
  get echoedToken(): boolean {
    return this.#echoed;
  }

  private noteEcho(text: string): void {
    // A short token (`root`) is an ordinary word too: looked for, it masked every "root" shown.
    if (this.#echoed || this.#token === undefined || !tokenWorthLookingFor(this.#token)) return;
    this.#echoForms ??= credentialForms(this.#token).map((f) => f.toLowerCase());
    const lower = text.toLowerCase();
    if (this.#echoForms.some((f) => lower.includes(f))) this.#echoed = true;
  }

  private accepted<T>(run: Run, result: AttemptResult): HttpResponse<T> {
    this.noteEcho(result.text);
    const decoded = decodeBody(result.text, result.headers['content-type']);
    if (!decoded.ok) {
      throw new UnexpectedResponseError({
        ...this.errorBase(run),
        status: result.status,
        problem: decoded.problem,
      });
    }
    return { status: result.status, headers: result.headers, body: decoded.value as T | string | undefined };
  }

  /** Waits for the next attempt after a network failure, or throws the error that ends the request. */
  private async afterNetworkFailure(run: Run, err: unknown, attemptTimeoutMs: number): Promise<void> {
    const signal = run.signal;
    if (signal?.aborted) throw signal.reason;
    const failure = err instanceof AttemptTimeout ? ATTEMPT_TIMEOUT : classifyNetworkError(err);
    if (failure === undefined) throw this.unclassifiedError(run, err);
    // The longest any attempt of this request could wait: what the person can change.
    const limitMs = Math.min(run.timeoutMs, run.deadlineMs);
    const giveUp = (deadline: boolean, budgetSpent?: ServiceErrorInit['budgetSpent'], resend?: ResendGrant) =>
      this.networkError(
        failure,
        {
          ...this.errorBase(run, deadline),
          ...(budgetSpent ? { budgetSpent } : {}),
          ...(resend ? { resend } : {}),
        },
        run.target.origin,
        limitMs,
        err,
      );
    const retryable = failure.transient && (failure.nothingSent || run.idempotent);
    // A create's request that may have acted: the applier reads back before sending it again.
    const lostCreate = run.create !== undefined && !retryable && failure.transient;
    const refused = failure.code === 'ECONNREFUSED';
    const retriesLeft = refused
      ? Math.min(this.retriesLeft(run, false), this.retry.maxRefusedRetries - run.refusals)
      : this.retriesLeft(run, false);
    if (!(retryable || lostCreate) || retriesLeft <= 0) throw giveUp(false);
    this.takeRetry(run, (spent) => giveUp(false, spent));
    const delayMs = backoffDelayMs(run.failures, this.retry, this.random);
    run.failures++;
    if (refused) run.refusals++;
    const reason =
      failure === ATTEMPT_TIMEOUT
        ? `no complete response within ${formatDuration(attemptTimeoutMs)}`
        : `${failure.reason} (${failure.code})`;
    if (lostCreate) throw giveUp(false, undefined, this.grant(run, delayMs, reason));
    await this.retryOrGiveUp(run, { reason, delayMs, retriesLeft }, giveUp);
  }

  /**
   * Retries the request may still get for the failure at hand: for a create's request, what is left
   * of its one limit whatever the failure; otherwise what is left of the limit of that kind.
   */
  private retriesLeft(run: Run, rateLimit: boolean): number {
    if (run.create) return 1 + this.retry.maxRetries - run.attempt;
    return rateLimit
      ? this.retry.maxRateLimitRetries - run.rateLimited
      : this.retry.maxRetries - run.failures;
  }

  /** The applier's permission to send a create again (the retry is already taken from the budget). */
  private grant(run: Run, delayMs: number, reason: string): ResendGrant {
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.budget.giveBack();
    };
    const attempt = run.attempt + 1;
    const maxAttempts = 1 + this.retry.maxRetries;
    // The resend itself counts as a retry when it is sent (its attempt number continues the count).
    const announce = (note: string) =>
      this.reportRetry(run, { reason: `${reason}; ${note}`, delayMs, maxAttempts });
    return { attempt, maxAttempts, delayMs, release, announce };
  }

  /** Waits for the next attempt after an error status, or throws the error that ends the request. */
  private async afterStatusFailure(run: Run, result: AttemptResult): Promise<void> {
    const { status } = result;
    const serviceMessage = this.parseError(status, result.text, result.headers['content-type']) ?? undefined;
    const details = status < 500 && status !== 429 ? (this.errorDetails?.(result.text) ?? []) : [];
    const statusError = (
      extra: { note?: string; retryAfterMs?: number },
      deadline = false,
      budgetSpent?: ServiceErrorInit['budgetSpent'],
      resend?: ResendGrant,
    ) =>
      new HttpStatusError({
        ...this.errorBase(run, deadline),
        ...(budgetSpent ? { budgetSpent } : {}),
        ...(resend ? { resend } : {}),
        status,
        serviceMessage,
        details,
        ...extra,
      });
    // 429 has its own budget: a rate-limited request cost the service nothing.
    const rateLimit = status === 429;
    const used = rateLimit ? run.rateLimited : run.failures;
    const retriesLeft = this.retriesLeft(run, rateLimit);
    const transient = this.retry.statuses.includes(status);
    const retryable = rateLimit || (run.idempotent && transient);
    // A create's request answered 5xx may have acted: the applier reads back before sending it again.
    const lostCreate = run.create !== undefined && !retryable && transient;
    if (!(retryable || lostCreate) || retriesLeft <= 0) {
      const tokenNote = run.tokenExpected ? this.tokenHint(status, serviceMessage) : undefined;
      throw statusError({ note: this.missingRoute(run, result)?.note ?? tokenNote });
    }
    const askedMs = serverRequestedWaitMs(result.headers, status);
    // Every worker on this host waits out the window the service named, not just this request.
    if (rateLimit) {
      const pause = this.limiter?.pause(askedMs ?? 0, '429');
      // Once per window, and only when the 429 came despite the throttle: keep to less from now on.
      if (pause && run.sentThrottled) this.limiter?.backOff();
      this.reportPause(pause);
    }
    const asked =
      askedMs === undefined
        ? {}
        : { retryAfterMs: askedMs, note: `the service asked to retry after ${formatDuration(askedMs)}` };
    if (askedMs !== undefined && askedMs > this.retry.maxRetryAfterMs) {
      const cap = formatDuration(this.retry.maxRetryAfterMs);
      throw statusError({ ...asked, note: `${asked.note}, longer than the ${cap} Converge waits` });
    }
    if (!rateLimit) this.takeRetry(run, (spent) => statusError({}, false, spent));
    const delayMs =
      askedMs !== undefined
        ? askedMs + Math.floor(this.random() * this.retry.minDelayMs)
        : backoffDelayMs(used, this.retry, this.random);
    const reason = `${status} ${STATUS_CODES[status] ?? ''}`.trim();
    if (lostCreate) {
      run.failures++;
      throw statusError(asked, false, undefined, this.grant(run, delayMs, reason));
    }
    const heldByPause = rateLimit && this.limiter?.paused === true;
    await this.retryOrGiveUp(run, { reason, delayMs, retriesLeft, heldByPause }, () =>
      statusError(asked, true),
    );
    if (rateLimit) run.rateLimited++;
    else run.failures++;
  }

  /**
   * Reports the retry and sleeps before it, or throws `giveUp(true)` when the wait would leave the
   * next attempt no useful time before the deadline: sleeping only to fail at the deadline would keep
   * the real error from the person for longer.
   */
  /**
   * The retry line of `run`'s next attempt. Built from status codes and network codes, but scrubbed
   * all the same: a log line is as public as an error, and the path may hold a secret the service's
   * own routes put there.
   */
  private reportRetry(
    run: Run,
    next: { reason: string; delayMs: number; maxAttempts: number; heldByPause?: boolean },
  ): void {
    this.onRetry?.({
      service: this.service,
      origin: this.origin,
      method: run.method,
      path: scrubSecrets(run.displayPath, run.secrets),
      attempt: run.attempt,
      reason: scrubSecrets(next.reason, run.secrets),
      delayMs: next.delayMs,
      maxAttempts: next.maxAttempts,
      ...(run.req.scope?.label !== undefined ? { label: run.req.scope.label } : {}),
      ...(next.heldByPause ? { heldByPause: true } : {}),
    });
  }

  private async retryOrGiveUp(
    run: Run,
    next: { reason: string; delayMs: number; retriesLeft: number; heldByPause?: boolean },
    giveUp: (deadline: boolean) => Error,
  ): Promise<void> {
    const usefulAttemptMs = Math.min(run.timeoutMs, MIN_USEFUL_ATTEMPT_MS);
    if (next.delayMs + usefulAttemptMs > this.timeLeft(run)) throw giveUp(true);
    this.reportRetry(run, {
      reason: next.reason,
      delayMs: next.delayMs,
      maxAttempts: run.attempt + next.retriesLeft,
      ...(next.heldByPause ? { heldByPause: true } : {}),
    });
    if (next.delayMs <= 0) return;
    const signal = run.signal;
    // timers/promises rejects with its own AbortError; callers expect the reason they aborted with.
    await delay(next.delayMs, undefined, { signal }).catch((err: unknown) => {
      throw signal?.aborted ? signal.reason : err;
    });
  }

  /** A thrown error without a code is a bug and goes up as it is; one with a code names the address. */
  private unclassifiedError(run: Run, err: unknown): unknown {
    const code = (err as { code?: unknown } | null)?.code;
    if (code === undefined) return err;
    return new ConnectionError({
      ...this.errorBase(run),
      address: run.target.origin,
      code: String(code),
      reason: (err as Error).message,
      cause: err,
    });
  }

  private errorBase(run: Run, deadline = false): ServiceErrorInit {
    const base: ServiceErrorInit = {
      service: this.service,
      method: run.method,
      path: run.target.path,
      attempts: run.attempt,
      secrets: run.secrets,
    };
    if (deadline) base.deadline = { elapsedMs: performance.now() - run.startedAt, limitMs: run.deadlineMs };
    return base;
  }

  private timeLeft(run: Run): number {
    return run.startedAt + run.deadlineMs - performance.now();
  }
}

/** `64 MiB`, `1.5 KiB`, `512 bytes`: limits are set in bytes, read in binary units. */
function formatBytes(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0
    ? `${bytes} bytes`
    : `${Number.isInteger(value) ? value : value.toFixed(1)} ${units[unit]}`;
}

function normaliseHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}
