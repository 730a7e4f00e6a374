/**
 * The secrets service's wire shapes for the directory (LDAP) auth method, under the spec's own field
 * names (`spec/secrets-ldap-and-rekey.md`).
 */
import { type LdapConfigFields, LDAP_SPEC_DEFAULTS } from './ldap-config.js';

/** Where the directory auth method is mounted unless a command or object names another. */
export const DEFAULT_LDAP_MOUNT = 'ldap';

/** The envelope every response body comes in. */
export interface SecretsEnvelope<Data = unknown> {
  request_id?: string;
  lease_id: string;
  renewable: boolean;
  lease_duration: number;
  data: Data | null;
  wrap_info: unknown;
  warnings: string[] | null;
  auth: LoginAuth | null;
}

export type { TlsVersion } from './ldap-config.js';
export type TokenType = 'service' | 'batch' | 'default' | 'default-service' | 'default-batch';

/** The directory configuration as read: durations in seconds, lists as arrays. */
export type LdapConfig = LdapConfigFields<TokenType>;

/** A configuration write: every field optional; durations as seconds or `"30s"`, lists as arrays or comma strings. */
export type LdapConfigInput = Partial<
  Omit<
    LdapConfig,
    | 'connection_timeout'
    | 'request_timeout'
    | 'token_ttl'
    | 'token_max_ttl'
    | 'token_explicit_max_ttl'
    | 'token_period'
    | 'token_policies'
    | 'token_bound_cidrs'
  > &
    Record<
      | 'connection_timeout'
      | 'request_timeout'
      | 'token_ttl'
      | 'token_max_ttl'
      | 'token_explicit_max_ttl'
      | 'token_period',
      number | string
    > &
    Record<'token_policies' | 'token_bound_cidrs', string[] | string>
>;

/**
 * The defaults compared against: what a mount reads before anything was configured, and what a field
 * left out of a manifest means. The spec table's (`LDAP_SPEC_DEFAULTS`), but `groupattr`, which is
 * empty in the table and effectively `cn`; an empty
 * `token_type` means the mount default, which the service shows as `default`: those are the
 * defaults compared against.
 */
export const LDAP_CONFIG_DEFAULTS: Readonly<LdapConfig> = Object.freeze({
  ...LDAP_SPEC_DEFAULTS,
  groupattr: 'cn',
});

export const LDAP_CONFIG_FIELDS = Object.keys(LDAP_CONFIG_DEFAULTS) as (keyof LdapConfig)[];

/** `GET auth/<mount>/groups/:name`. */
export interface LdapGroup {
  policies: string[];
}

/** `GET auth/<mount>/users/:username`: `groups` is a comma-separated string, as the spec says. */
export interface LdapUser {
  policies: string[];
  groups: string;
}

/** The `auth` object of a login. */
export interface LoginAuth {
  client_token: string;
  accessor?: string;
  policies: string[];
  token_policies?: string[];
  metadata: Record<string, string> & { username?: string };
  lease_duration: number;
  renewable: boolean;
  token_type?: string;
  entity_id?: string;
  orphan?: boolean;
  num_uses?: number;
}

/** A login's result: the auth object and the service's warnings (no directory groups found, say). */
export interface LoginResult {
  auth: LoginAuth;
  warnings: string[];
}
