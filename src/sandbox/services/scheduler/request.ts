/**
 * What every scheduler endpoint reads from a request: the token, the namespace, the capabilities the
 * token holds there, and the blocking-query options of reads; plus the real product's response forms
 * (plain-text errors, JSON bodies, query-meta headers under the spec's and the real names).
 */
import { blockingQuery, type ChangeFeed, type QueryResult } from '../../core/blocking.js';
import { waitAndIndexOf } from '../shared/wait-and-index.js';
import { jsonResponse, type SandboxRequest, type SandboxResponse, textResponse } from '../../core/http.js';
import type { SandboxToken, TokenStore } from '../../core/tokens.js';
import { type Capability, capabilitiesIn, DEFAULT_NAMESPACE, type SchedulerTokenRights } from './config.js';
import { type Json, SchedulerError } from './model.js';

export const TOKEN_HEADER = 'X-Scheduler-Token';
/** The real product's token header, read too so its clients work unchanged. */
export const NATIVE_TOKEN_HEADER = 'X-Nomad-Token';
export const ALL_NAMESPACES = '*';

export function schedulerText(
  status: number,
  text: string,
  headers: Record<string, string> = {},
): SandboxResponse {
  return textResponse(status, text, headers);
}

export function schedulerJson(
  req: SandboxRequest,
  value: unknown,
  headers: Record<string, string> = {},
): SandboxResponse {
  return jsonResponse(200, value, headers, { pretty: req.query.has('pretty') });
}

/** The answer of every endpoint this slice does not emulate: clear, not a bare 404. */
export function notEmulated(what: string): never {
  throw new SchedulerError(
    501,
    `not emulated yet: ${what} (the sandbox scheduler emulates the job endpoints of the spec, not this one)`,
  );
}

/**
 * The real order (`command/agent/http.go parseToken`) with the spec's header first: `X-Scheduler-Token`,
 * `X-Nomad-Token`, then `Authorization: Bearer <t>` (scheme in any case). Empty: the anonymous token.
 */
export function tokenSecretOf(req: SandboxRequest): string {
  const bearer = /^bearer\s+(\S+)/i.exec(req.header('Authorization') ?? '')?.[1] ?? '';
  return req.header(TOKEN_HEADER) || req.header(NATIVE_TOKEN_HEADER) || bearer;
}

/**
 * The caller: the root token (every capability), a config token, or undefined for the anonymous
 * token, which holds nothing (the real default when ACLs are on). An unknown secret is 403
 * `ACL token not found`, as in the real product.
 */
export class Caller {
  constructor(readonly token: SandboxToken | undefined) {}

  static of(req: SandboxRequest, tokens: TokenStore): Caller {
    const secret = tokenSecretOf(req);
    if (secret === '') return new Caller(undefined);
    const token = tokens.lookup(secret);
    if (!token) throw new SchedulerError(403, 'ACL token not found');
    return new Caller(token);
  }

  allows(namespace: string, cap: Capability): boolean {
    if (!this.token) return false;
    if (this.token.root) return true;
    return capabilitiesIn(this.token.rights.scheduler as SchedulerTokenRights | undefined, namespace).has(
      cap,
    );
  }

  /** Any of `caps` in the namespace, else 403 `Permission denied` (the real text). */
  require(namespace: string, ...caps: Capability[]): void {
    if (!caps.some((c) => this.allows(namespace, c))) throw new SchedulerError(403, 'Permission denied');
  }

  /**
   * The request's namespace: `?namespace=`, else `default` (the spec's default for the job list;
   * the real agent's `parseNamespace` for every endpoint). A token's configured namespace is the
   * registry's fallback (its spec lists it), never the scheduler's: a job list answered from the
   * token's namespace gave a client another namespace's jobs than it asked for.
   */
  namespace(req: SandboxRequest): string {
    return req.query.get('namespace') || DEFAULT_NAMESPACE;
  }
}

export interface ReadOptions {
  minIndex: number;
  waitMs: number;
}

/** The real maximum and default of `?wait` (`nomad/structs` MaxBlockingRPCQueryTime). */
const WAIT_LIMITS = { defaultWaitMs: 300_000, maxWaitMs: 300_000 };

/** `?index` and `?wait` as the real agent parses them; 400 on bad values. UNCONFIRMED: the texts. */
export function readOptionsOf(req: SandboxRequest, random: () => number = Math.random): ReadOptions {
  const options = waitAndIndexOf(req, WAIT_LIMITS, (m) => new SchedulerError(400, m), random);
  const stale = req.query.get('stale');
  if (stale !== null && stale !== '' && parseGoBool(stale) === undefined)
    throw new SchedulerError(400, `Failed to parse value of "stale" (${stale}) as a bool`);
  return options;
}

/** Go's `strconv.ParseBool`. */
export function parseGoBool(value: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(value)) return false;
  return undefined;
}

/**
 * Query-meta headers of a read, under the spec's `X-Scheduler-*` names and the real `X-Nomad-*` ones
 * (the real Go client refuses a response without `X-Nomad-Index`). Index 0 is sent as 1 so a
 * blocking client never spins on `?index=0`.
 */
export function queryMetaHeaders(index: number): Record<string, string> {
  const i = String(Math.max(1, index));
  return {
    'X-Scheduler-Index': i,
    'X-Scheduler-KnownLeader': 'true',
    'X-Scheduler-LastContact': '0',
    'X-Nomad-Index': i,
    'X-Nomad-KnownLeader': 'true',
    'X-Nomad-LastContact': '0',
  };
}

/** The index header of a write (the real agent's `setIndex`). */
export function writeIndexHeaders(index: number): Record<string, string> {
  return { 'X-Scheduler-Index': String(index), 'X-Nomad-Index': String(index) };
}

/** A JSON object body; 400 otherwise. UNCONFIRMED: the texts (Go's decoder errors). */
export function parseObject(raw: string): Json {
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch (err) {
    throw new SchedulerError(400, (err as Error).message);
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new SchedulerError(400, 'json: cannot unmarshal the request: expected an object');
  return body as Json;
}

/** The request body as a JSON object (`parseObject`). */
export async function decodeObject(req: SandboxRequest): Promise<Json> {
  return parseObject(await req.text());
}

/** The request's namespace, once the caller is known to hold `cap` there (403 otherwise). */
export function authorizedNamespace(req: SandboxRequest, tokens: TokenStore, cap: Capability): string {
  const caller = Caller.of(req, tokens);
  const ns = caller.namespace(req);
  caller.require(ns, cap);
  return ns;
}

/** A read held until the store's index passes `opts.minIndex` (or the wait ends, or the client leaves). */
export function blockOn<T>(
  req: SandboxRequest,
  opts: ReadOptions,
  feed: ChangeFeed,
  run: () => QueryResult<T>,
): Promise<QueryResult<T>> {
  return blockingQuery(run, { ...opts, feed, signal: () => req.signal });
}

/**
 * The common read of a job's own records: the blocking options (400 first), then the `read-job` right
 * in the caller's namespace (403), then `run` in that namespace, held until the index passes `?index`.
 */
export function readForJob<T>(
  req: SandboxRequest,
  tokens: TokenStore,
  feed: ChangeFeed,
  run: (namespace: string) => QueryResult<T>,
): Promise<QueryResult<T>> {
  const opts = readOptionsOf(req);
  const ns = authorizedNamespace(req, tokens, 'read-job');
  return blockOn(req, opts, feed, () => run(ns));
}

/** A read's answer with its query-meta headers: the value as JSON, or `notFound` as a 404 text. */
export function foundOr404(
  req: SandboxRequest,
  result: QueryResult<unknown>,
  notFound: string,
): SandboxResponse {
  const meta = queryMetaHeaders(result.index);
  if (!result.value) return schedulerText(404, notFound, meta);
  return schedulerJson(req, result.value, meta);
}

/** A boolean of a decoded body: absent or null is false, any other non-boolean the real decoder's 400. */
export function boolField(args: Json, name: string): boolean {
  const v = args[name];
  if (v !== undefined && v !== null && typeof v !== 'boolean')
    throw new SchedulerError(400, `json: cannot unmarshal ${name}: expected boolean`);
  return v === true;
}

/**
 * `?name` read as the real agent's `strconv.ParseBool`: absent or empty is false; a value it cannot
 * parse is `status` (each endpoint has its own: 400 for list's `meta`, 500 for `diffs` and `purge`).
 */
export function queryBool(req: SandboxRequest, name: string, status: number): boolean {
  const raw = req.query.get(name) ?? '';
  const value = raw === '' ? false : parseGoBool(raw);
  if (value === undefined)
    throw new SchedulerError(
      status,
      `Failed to parse value of "${name}" (${raw}) as a bool: strconv.ParseBool: parsing "${raw}": invalid syntax`,
    );
  return value;
}
