/**
 * What every registry endpoint reads from a request: the token (spec names for the real registry's
 * headers), the namespace by the spec's precedence, and the query options of reads (blocking index,
 * wait, consistency). Also the query-meta headers of read responses and the text/JSON renderers.
 */
import { waitAndIndexOf } from '../shared/wait-and-index.js';
import { jsonResponse, type SandboxRequest, type SandboxResponse, textResponse } from '../../core/http.js';
import type { SandboxToken, TokenStore } from '../../core/tokens.js';
import type { RegistryTokenRights } from './config.js';
import { DEFAULT_NAMESPACE, RegistryError } from './model.js';

export const TOKEN_HEADER = 'X-Registry-Token';
/** The real registry's own name of the token header, so clients of the real product work unchanged. */
export const NATIVE_TOKEN_HEADER = 'X-Consul-Token';
export const NAMESPACE_HEADER = 'X-Registry-Namespace';

/** Sent on every registry response, as the real one reports its default ACL policy. */
const COMMON_HEADERS = { 'X-Registry-Default-ACL-Policy': 'deny' };

export function registryText(
  status: number,
  text: string,
  headers: Record<string, string> = {},
): SandboxResponse {
  return textResponse(status, text, { ...COMMON_HEADERS, ...headers });
}

export function registryJson(
  req: SandboxRequest,
  value: unknown,
  headers: Record<string, string> = {},
): SandboxResponse {
  return jsonResponse(200, value, { ...COMMON_HEADERS, ...headers }, { pretty: req.query.has('pretty') });
}

/**
 * Where the token comes from, first found wins (the real registry's order, `agent/http.go`):
 * 1. `?token=`;
 * 2. the token header: the spec's `X-Registry-Token`, then the real product's `X-Consul-Token` (the
 *    spec renames the header; both are read so that existing clients and the spec's own name work);
 * 3. `Authorization: Bearer <t>`, the scheme case-insensitive, only the first word of the value.
 * Empty when the request carries none, which acts as the anonymous token.
 */
export function tokenSecretOf(req: SandboxRequest): string {
  return (
    req.query.get('token') ||
    req.header(TOKEN_HEADER) ||
    req.header(NATIVE_TOKEN_HEADER) ||
    bearerTokenOf(req.header('Authorization'))
  );
}

/** `Bearer <t>` → t; any other scheme, or a value without a space, carries no token. */
function bearerTokenOf(auth: string | undefined): string {
  const parts = (auth ?? '').split(' ');
  if (parts.length < 2 || parts[0]!.toLowerCase() !== 'bearer') return '';
  return parts.slice(1).join(' ').trim().split(' ')[0]!.trim();
}

export type AclLevel = 'read' | 'write';

/**
 * The token's identity if it holds `acl:<level>`; else 403 with the real registry's texts. A request
 * without a token acts as the anonymous token, which has no rights in the sandbox (default policy deny).
 */
export function authorize(
  req: SandboxRequest,
  tokens: TokenStore,
  level: AclLevel,
): SandboxToken | undefined {
  const secret = tokenSecretOf(req);
  if (secret === '') {
    throw new RegistryError(
      403,
      `Permission denied: anonymous token lacks permission 'acl:${level}'. The anonymous token is used implicitly when a request does not specify a token.`,
    );
  }
  const token = tokens.lookup(secret);
  if (!token) throw new RegistryError(403, 'ACL not found');
  if (token.root) return token;
  const granted = (token.rights.registry as RegistryTokenRights | undefined)?.acl ?? 'none';
  if (granted === 'write' || (granted === 'read' && level === 'read')) return token;
  throw new RegistryError(
    403,
    `Permission denied: token with AccessorID '${token.name}' lacks permission 'acl:${level}'`,
  );
}

/** Namespace precedence: body `Namespace` > `?ns=` > `X-Registry-Namespace` > the token's > `default`. */
export function namespaceOf(
  req: SandboxRequest,
  token: SandboxToken | undefined,
  bodyNamespace?: string,
): string {
  return (
    bodyNamespace ||
    req.query.get('ns') ||
    req.header(NAMESPACE_HEADER) ||
    token?.namespace ||
    DEFAULT_NAMESPACE
  );
}

/** The token a request would act as, for namespace precedence before authorization has run. */
export function tokenOf(req: SandboxRequest, tokens: TokenStore): SandboxToken | undefined {
  const secret = tokenSecretOf(req);
  return secret === '' ? undefined : tokens.lookup(secret);
}

export type Consistency = 'leader' | 'stale' | 'consistent';

export interface ReadOptions {
  minIndex: number;
  waitMs: number;
  consistency: Consistency;
}

const WAIT_LIMITS = { defaultWaitMs: 5 * 60_000, maxWaitMs: 10 * 60_000 };

/** Parses `?wait`, `?index`, `?stale`, `?consistent` as the real registry does; 400 on bad values. */
export function readOptionsOf(req: SandboxRequest, random: () => number = Math.random): ReadOptions {
  const { minIndex, waitMs } = waitAndIndexOf(req, WAIT_LIMITS, (m) => new RegistryError(400, m), random);
  const stale = req.query.has('stale');
  const consistent = req.query.has('consistent');
  if (stale && consistent) {
    throw new RegistryError(400, 'Cannot specify ?stale with ?consistent, conflicting semantics.');
  }
  return {
    minIndex,
    waitMs,
    consistency: stale ? 'stale' : consistent ? 'consistent' : 'leader',
  };
}

/** Query-meta headers of a read. Index 0 is sent as 1 so a blocking client never spins on `?index=0`. */
export function queryMetaHeaders(index: number, consistency: Consistency): Record<string, string> {
  return {
    'X-Registry-Index': String(Math.max(1, index)),
    'X-Registry-KnownLeader': 'true',
    'X-Registry-LastContact': '0',
    'X-Registry-Effective-Consistency': consistency,
  };
}
