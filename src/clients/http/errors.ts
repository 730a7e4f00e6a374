/**
 * Typed errors of the HTTP layer. Every service client throws only these (or the caller's own abort
 * reason), so the CLI can tell "the service said no" from "the service is unreachable" from "the
 * service is slow" without parsing messages.
 *
 * Secrets: an error never holds request headers, the path is stored with secret query parameters
 * redacted, and texts that came from elsewhere (the service's message, its details, a socket error)
 * go through the one scrubber (`scrub.ts`) with every secret of the request (the token, a password,
 * a secret body field) before they are stored, and are cut short only after that. `cause` is a
 * sanitised copy, never the raw error, so no stack or message printed later can hold more.
 *
 * Terminal and log safety: those texts are also made one printable line (`printable`) after
 * scrubbing (escaping first would hide a secret holding a newline from the scrubber) and before
 * cutting: a hostile service's `\n::error::…` or ESC sequence must not become a CI workflow command
 * or rewrite the lines of a plan on a terminal.
 */
import { createRequire } from 'node:module';
import { printable } from '../../common/printable.js';
import { redactPath } from './redact.js';
import { type Secrets, scrubSecrets, truncate } from '../../common/scrub.js';
import type { SettingNames } from '../../common/setting-names.js';
import type { ResendGrant } from './create-sends.js';

// node:http is loaded only when an error needs a status text: the kinds import this module, and
// `converge validate` (which reaches no service) would otherwise pay for node:http at start (issue 20).
const requireBuiltin = createRequire(import.meta.url);

/** `Not Found` for 404: Node's own reason phrases. */
function statusText(status: number): string | undefined {
  return (requireBuiltin('node:http') as typeof import('node:http')).STATUS_CODES[status];
}

/** The settings an HTTP error may name, as the caller spells them (see `SettingNames`). */
export type HttpSettingNames = Partial<Pick<SettingNames, 'timeout' | 'parallelism'>>;

export type ServiceErrorKind = 'status' | 'connection' | 'timeout' | 'response';

export interface ServiceErrorInit {
  service: string;
  method: string;
  /** Path with query; secret query parameters are redacted on the way in. */
  path: string;
  /** How many attempts were made, retries included. */
  attempts?: number;
  /**
   * Strings to scrub from every text the error stores: the connection's token and every secret the
   * request carried (`HttpRequest.secrets`). Not kept.
   */
  secrets?: Secrets;
  cause?: unknown;
  /** Set when the request's deadline, not its retry budget, ended the retries. */
  deadline?: { elapsedMs: number; limitMs: number };
  /** Set when the run's retry budget for the host was spent, so the request was not retried. */
  budgetSpent?: {
    service: string;
    retries: number;
    requests: number;
    /** The host the budget is for (`127.0.0.1:8500`), and the services whose requests drew on it. */
    host?: string;
    services?: readonly string[];
  };
  /**
   * Set on the lost answer of a create's request (see `create-sends.ts`): the HTTP layer took the
   * retry from the budget, and the applier may send the create again once it has read it back.
   */
  resend?: ResendGrant;
}

export class ServiceError extends Error {
  readonly kind: ServiceErrorKind;
  readonly service: string;
  readonly method: string;
  readonly path: string;
  readonly status?: number;
  /** The service's own explanation, from its error body. */
  readonly serviceMessage?: string;
  readonly attempts: number;
  /** The request's deadline, when reaching it ended the retries (`deadlineMs` of the client). */
  readonly deadlineMs?: number;
  /** The run's retry budget for the service was spent, so this failure was not retried: nor should a caller. */
  readonly retryBudgetSpent?: boolean;
  /** The create's answer was lost and the retry is granted: the applier reads back, then sends again. */
  readonly resend?: ResendGrant;

  protected constructor(
    kind: ServiceErrorKind,
    init: ServiceErrorInit,
    outcome: string,
    extra: { status?: number; serviceMessage?: string } = {},
  ) {
    const path = redactPath(init.path);
    const attempts = init.attempts ?? 1;
    const message = untrusted(
      `${init.service}: ${init.method} ${path} → ${describeOutcome(outcome, attempts, init.deadline, init.budgetSpent, kind === 'connection' && (init as { reached?: boolean }).reached !== true)}`,
      init.secrets ?? [],
      Infinity,
    );
    super(
      message,
      init.cause === undefined ? undefined : { cause: sanitiseCause(init.cause, init.secrets ?? []) },
    );
    this.name = new.target.name;
    this.kind = kind;
    this.service = init.service;
    this.method = init.method;
    this.path = path;
    this.attempts = attempts;
    if (init.deadline) this.deadlineMs = init.deadline.limitMs;
    if (init.budgetSpent) this.retryBudgetSpent = true;
    if (init.resend) this.resend = init.resend;
    if (extra.status !== undefined) this.status = extra.status;
    if (extra.serviceMessage !== undefined) {
      this.serviceMessage = untrusted(extra.serviceMessage, init.secrets ?? []);
    }
  }

  /** `JSON.stringify(err)` gives the fields `--json` output needs (Error's own fields are not enumerable). */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      kind: this.kind,
      message: this.message,
      service: this.service,
      method: this.method,
      path: this.path,
      status: this.status,
      serviceMessage: this.serviceMessage,
      attempts: this.attempts,
      deadlineMs: this.deadlineMs,
    };
  }
}

function count(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * `503 busy (gave up after 3 attempts)`, or, when the deadline ended the retries, the time spent
 * first (`gave up after 2m0s and 4 attempts (deadline 2m0s): no complete response …`): a person
 * waiting on a silent service wants to know how long it was tried before what went wrong last. When
 * the run's retry budget for the service ended them, that is the one reason given: "gave up after 3
 * attempts; not retried: the budget is spent" read as two reasons that contradict each other.
 */
function describeOutcome(
  outcome: string,
  attempts: number,
  deadline: ServiceErrorInit['deadline'],
  spent: ServiceErrorInit['budgetSpent'],
  unreachable = false,
): string {
  if (deadline) {
    const tries = attempts === 1 ? '1 attempt' : `${attempts} attempts`;
    return `gave up after ${formatDuration(deadline.elapsedMs)} and ${tries} (deadline ${formatDuration(deadline.limitMs)}): ${outcome}`;
  }
  if (spent) {
    const why = budgetSpentText(spent, unreachable);
    return attempts > 1
      ? `${outcome} (stopped after ${attempts} attempts: ${why})`
      : `${outcome} (not retried: ${why})`;
  }
  return attempts > 1 ? `${outcome} (gave up after ${attempts} attempts)` : outcome;
}

/**
 * Why a request was not retried: the budget is the host's, so where several services share a host
 * (the sandbox serves all four on one port) it is named with them, or each service's error told of
 * "the scheduler retry budget" and "the workspaces retry budget" with the same numbers.
 */
function budgetSpentText(spent: NonNullable<ServiceErrorInit['budgetSpent']>, unreachable: boolean): string {
  const usage = `${count(spent.retries, 'retry', 'retries')} for ${count(spent.requests, 'request', 'requests')}`;
  const others = (spent.services ?? []).filter((s) => s !== spent.service);
  // Nothing answering at the address (refused, no such host) is not helped by more retries: the
  // setting that allows them would only send the operator the wrong way.
  const more = unreachable ? '' : '; CONVERGE_RETRY_BUDGET allows more';
  if (spent.host === undefined || others.length === 0)
    return `the ${spent.service} retry budget of this run is spent (${usage}; the service is failing too often to keep retrying${more})`;
  const sharers = [...new Set([spent.service, ...others])].sort().join(', ');
  return `the retry budget of this run for ${spent.host} (shared by ${sharers}) is spent (${usage}; its services are failing too often to keep retrying${more})`;
}

/**
 * One entry of a structured error body (a JSON:API error object, say), for callers that branch on
 * more than the status: which attribute was refused (`pointer`), which of several errors applies.
 */
export interface ServiceErrorDetail {
  status?: number;
  title?: string;
  detail?: string;
  /** JSON pointer into the request document (`/data/attributes/name`). */
  pointer?: string;
}

/** The service answered with a status the caller did not accept. */
export class HttpStatusError extends ServiceError {
  declare readonly status: number;
  /** Set when the service asked for a wait longer than Converge is willing to sleep. */
  readonly retryAfterMs?: number;
  /** The error body's entries, when the service client could read them (empty otherwise). */
  readonly details: readonly ServiceErrorDetail[];

  constructor(
    init: ServiceErrorInit & {
      status: number;
      serviceMessage?: string;
      retryAfterMs?: number;
      note?: string;
      details?: readonly ServiceErrorDetail[];
    },
  ) {
    // Scrubbed before it is cut: cutting first could leave half a secret that no longer matches.
    const own = init.serviceMessage?.trim();
    const text = (own && untrusted(own, init.secrets ?? [])) || statusText(init.status) || 'unknown status';
    super('status', init, `${init.status} ${text}${init.note ? ` (${init.note})` : ''}`, {
      status: init.status,
      serviceMessage: init.serviceMessage,
    });
    if (init.retryAfterMs !== undefined) this.retryAfterMs = init.retryAfterMs;
    // The service wrote these texts, so they may echo the token back like any other message.
    this.details = (init.details ?? []).map((d) => scrubDetail(d, init.secrets ?? []));
  }

  override toJSON(): Record<string, unknown> {
    const out = super.toJSON();
    if (this.details.length > 0) out.details = this.details;
    return out;
  }
}

function scrubDetail(detail: ServiceErrorDetail, secrets: Secrets): ServiceErrorDetail {
  const out: ServiceErrorDetail = {};
  if (detail.status !== undefined) out.status = detail.status;
  if (detail.title !== undefined) out.title = untrusted(detail.title, secrets, Infinity);
  if (detail.detail !== undefined) out.detail = untrusted(detail.detail, secrets, Infinity);
  if (detail.pointer !== undefined) out.pointer = untrusted(detail.pointer, secrets, Infinity);
  return out;
}

/** The address could not be reached, or the connection broke before a response arrived. */
export class ConnectionError extends ServiceError {
  /** `scheme://host:port` that was tried. */
  readonly address: string;
  /** The system or undici code (ECONNREFUSED, UND_ERR_SOCKET, CERT_HAS_EXPIRED, ...). */
  readonly code?: string;
  /** What went wrong, in words (`connection closed by the service`), without the code. */
  readonly reason: string;
  /**
   * The connection was made, then lost before the answer (a reset, a close): the service is there
   * and may have acted on the request. Otherwise nothing reached it (refused, unknown host, TLS).
   */
  readonly reached: boolean;

  constructor(
    init: ServiceErrorInit & {
      address: string;
      code?: string;
      reason: string;
      /** Appended in parentheses after the reason (the code, where it tells more than the words). */
      reasonDetail?: string;
      hint?: string;
      reached?: boolean;
    },
  ) {
    const hint = init.hint ? `; ${init.hint}` : '';
    const detail = init.reasonDetail ? ` (${init.reasonDetail})` : '';
    // A service that dropped the connection was reached: "cannot reach" would send the operator to
    // check an address that is right.
    const what = init.reached
      ? `connection to ${init.address} lost before the answer`
      : `cannot reach ${init.address}`;
    super('connection', init, `${what}: ${init.reason}${detail}${hint}`);
    this.address = init.address;
    this.reason = init.reason;
    this.reached = init.reached ?? false;
    if (init.code !== undefined) this.code = init.code;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), address: this.address, code: this.code };
  }
}

/** Connecting, or waiting for the response, took longer than the configured limit. */
export class TimeoutError extends ServiceError {
  readonly address: string;
  readonly phase: 'connect' | 'response';
  readonly timeoutMs: number;

  constructor(
    init: ServiceErrorInit & { address: string; phase: 'connect' | 'response'; timeoutMs: number },
  ) {
    const what = init.phase === 'connect' ? 'could not connect to' : 'no complete response from';
    super('timeout', init, `${what} ${init.address} within ${formatDuration(init.timeoutMs)}`);
    this.address = init.address;
    this.phase = init.phase;
    this.timeoutMs = init.timeoutMs;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), address: this.address, phase: this.phase, timeoutMs: this.timeoutMs };
  }
}

/**
 * A wait before sending (the service's announced rate limit) would have run past the request's
 * deadline, so it was not slept: failing at once says why, where sleeping would only time out later.
 */
export class WaitTimeoutError extends ServiceError {
  /** How long the request would have had to wait. */
  readonly waitMs: number;

  constructor(
    init: ServiceErrorInit & {
      waitMs: number;
      reason: string;
      /** The time an attempt is kept after the wait: a wait leaving less than this is not slept. */
      attemptMs?: number;
      settings?: HttpSettingNames | undefined;
    },
  ) {
    // The settings by the caller's names (the CLI's flags, the engine's options), else HttpClient's.
    const timeout = init.settings?.timeout ?? 'deadlineMs';
    const parallelism = init.settings?.parallelism ? ` (${init.settings.parallelism})` : '';
    super(
      'timeout',
      init,
      // "past its deadline" read as a contradiction when the wait was shorter than the deadline: what
      // is past it is the wait plus the time an attempt is kept for being answered.
      `${init.reason} would hold the request ${formatDuration(init.waitMs)} before sending, ${
        init.attemptMs
          ? `leaving less than the ${formatDuration(init.attemptMs)} an attempt is given before its deadline`
          : 'past its deadline'
      }; allow more time (${timeout}) or send fewer requests at once${parallelism}`,
    );
    this.waitMs = init.waitMs;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), waitMs: this.waitMs };
  }
}

/** The service answered with a success status but a body the client cannot use (HTML from a proxy, say). */
export class UnexpectedResponseError extends ServiceError {
  declare readonly status: number;

  constructor(init: ServiceErrorInit & { status: number; problem: string }) {
    super('response', init, `${init.status} ${init.problem}`, { status: init.status });
  }
}

export function isServiceError(err: unknown): err is ServiceError {
  return err instanceof ServiceError;
}

/**
 * `450ms`, `1.5s`, `30s`, and from a minute on Go's style (`2m0s`, `1h0m0s`), which the services'
 * own tools print too; whole seconds are precise enough at that scale.
 */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return ms % 1000 === 0 ? `${ms / 1000}s` : `${(ms / 1000).toFixed(1)}s`;
  const seconds = Math.round(ms / 1000);
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  return `${h > 0 ? `${h}h` : ''}${m}m${seconds % 60}s`;
}

/** A plain Error with the original's name, code and scrubbed message: enough to debug, nothing more. */
function sanitiseCause(cause: unknown, secrets: Secrets): Error {
  const original = cause as { name?: unknown; code?: unknown; message?: unknown };
  const copy = new Error(untrusted(String(original?.message ?? cause), secrets, Infinity));
  if (typeof original?.name === 'string') copy.name = original.name;
  if (typeof original?.code === 'string') (copy as Error & { code?: string }).code = original.code;
  copy.stack = `${copy.name}: ${copy.message}`;
  return copy;
}

/**
 * A text from elsewhere as an error may hold it: every secret scrubbed, then one printable line, then
 * cut to `max` characters, in that order (see the top of this file).
 */
function untrusted(text: string, secrets: Secrets, max?: number): string {
  return truncate(printable(scrubSecrets(oneLineMultiError(text), secrets)), max);
}

/**
 * Go services (the scheduler, the secrets service) wrap their errors in hashicorp/go-multierror's
 * text, `1 error occurred:\n\t* Invalid job type\n\n`, which one printable line would show with its
 * escapes (`…occurred:\n\t* Invalid…`): said as the errors themselves, `; ` between them.
 */
export function oneLineMultiError(text: string): string {
  const match = /^\s*(\d+) errors? occurred:\s*\n((?:\s*\* [^\n]*\n?)+)\s*$/.exec(text);
  if (!match) return text;
  const errors = match[2]!
    .split('\n')
    .map((line) => line.replace(/^\s*\* /, '').trim())
    .filter((line) => line !== '');
  return errors.join('; ');
}
