/**
 * Who may do what. A request's token is read from the spec's `X-Secrets-Token`, then the real
 * product's `X-Vault-Token`, then `Authorization: Bearer <t>` (which the real service also reads), first
 * found wins. The root token may do everything; a config token holds the rights of its `secrets:`
 * entry (`{ ldap: read|write|none }`); a token issued by a login is known but holds no right on the
 * administrative API. A missing, unknown or insufficient token is 403 `permission denied`, checked
 * before the path is routed (the real service checks the token and its policy first, so an unknown
 * path is not revealed to a caller without rights).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { BlockList } from 'node:net';
import type { SandboxRequest } from '../../core/http.js';
import type { TokenStore } from '../../core/tokens.js';
import type { SecretsTokenRights } from './config.js';
import { parseCidr } from './normalize.js';
import { permissionDenied } from './vault.js';

export const TOKEN_HEADER = 'X-Secrets-Token';
export const NATIVE_TOKEN_HEADER = 'X-Vault-Token';

export function tokenSecretOf(req: SandboxRequest): string {
  return (
    req.header(TOKEN_HEADER) || req.header(NATIVE_TOKEN_HEADER) || bearerTokenOf(req.header('Authorization'))
  );
}

function bearerTokenOf(auth: string | undefined): string {
  const m = /^bearer\s+(\S+)/i.exec((auth ?? '').trim());
  return m ? m[1]! : '';
}

export type Level = 'read' | 'write';

/** A token a login issued: remembered for the sandbox's lifetime, with no administrative rights. */
export interface IssuedToken {
  accessor: string;
  mount: string;
  username: string;
  policies: string[];
  expiresAt: number | undefined;
}

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function randomAlphanumeric(length: number): string {
  const bytes = randomBytes(length);
  let out = '';
  for (const byte of bytes) out += ALPHANUMERIC[byte % ALPHANUMERIC.length];
  return out;
}

export class SecretsAccess {
  private readonly issued = new Map<string, IssuedToken>();

  constructor(private readonly tokens: TokenStore) {}

  /** Throws 403 unless the request's token holds `ldap:<level>`. */
  require(req: SandboxRequest, level: Level): void {
    const secret = tokenSecretOf(req);
    if (secret === '') throw permissionDenied();
    const token = this.tokens.lookup(secret);
    if (!token) throw permissionDenied(); // unknown, or issued by a login: no administrative right
    if (token.root) return;
    const granted = (token.rights.secrets as SecretsTokenRights | undefined)?.ldap ?? 'none';
    if (granted === 'write' || (granted === 'read' && level === 'read')) return;
    throw permissionDenied();
  }

  /** Throws 403 unless the request carries the root token (paths no config right covers yet). */
  requireRoot(req: SandboxRequest): void {
    const secret = tokenSecretOf(req);
    if (secret === '' || !this.tokens.lookup(secret)?.root) throw permissionDenied();
  }

  /** A new token in the real formats: `hvs.`/`hvb.` prefixes by type; batch tokens have no accessor. */
  issue(
    entry: Omit<IssuedToken, 'accessor'>,
    type: 'service' | 'batch',
  ): { clientToken: string; accessor: string; entityId: string } {
    const clientToken = `${type === 'batch' ? 'hvb' : 'hvs'}.${randomAlphanumeric(24)}`;
    const accessor = type === 'batch' ? '' : randomAlphanumeric(24);
    this.issued.set(clientToken, { ...entry, accessor });
    return { clientToken, accessor, entityId: randomUUID() };
  }

  /** A token a login issued, for tests and future endpoints. */
  lookupIssued(secret: string): IssuedToken | undefined {
    return this.issued.get(secret);
  }
}

/**
 * `cidrutil.RemoteAddrIsOk`: whether the client's address lies in one of the blocks. IPv4 clients seen
 * through an IPv6 socket (`::ffff:a.b.c.d`) count as their IPv4 address.
 */
export function remoteAddressAllowed(remoteAddress: string, cidrs: readonly string[]): boolean {
  const address = remoteAddress.replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i, '$1');
  const family = address.includes(':') ? 'ipv6' : 'ipv4';
  const list = new BlockList();
  for (const text of cidrs) {
    const cidr = parseCidr(text);
    if (cidr) list.addSubnet(cidr.address, cidr.prefix, cidr.family);
  }
  try {
    return list.check(address, family);
  } catch {
    return false;
  }
}
