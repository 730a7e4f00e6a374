/**
 * The secrets service's wire shapes for the directory (LDAP) auth method, under the spec's own field
 * names (`spec/secrets-ldap-and-rekey.md`).
 */

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

export type TlsVersion = 'tls10' | 'tls11' | 'tls12' | 'tls13';
export type TokenType = 'service' | 'batch' | 'default' | 'default-service' | 'default-batch';

/** The directory configuration as read: durations in seconds, lists as arrays. */
export interface LdapConfig {
  url: string;
  case_sensitive_names: boolean;
  connection_timeout: number;
  request_timeout: number;
  starttls: boolean;
  tls_min_version: TlsVersion;
  tls_max_version: TlsVersion;
  insecure_tls: boolean;
  certificate: string;
  client_tls_cert: string;
  /** Never returned by the service (write-only). */
  client_tls_key: string;
  binddn: string;
  /** Returned as an empty string: the service never shows it. */
  bindpass: string;
  userdn: string;
  userattr: string;
  discoverdn: boolean;
  deny_null_bind: boolean;
  upndomain: string;
  userfilter: string;
  anonymous_group_search: boolean;
  groupfilter: string;
  groupdn: string;
  groupattr: string;
  username_as_alias: boolean;
  max_page_size: number;
  token_ttl: number;
  token_max_ttl: number;
  token_policies: string[];
  token_bound_cidrs: string[];
  token_explicit_max_ttl: number;
  token_no_default_policy: boolean;
  token_num_uses: number;
  token_period: number;
  token_type: TokenType;
}

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
 * The spec table's defaults: what a mount reads before anything was configured, and what a field
 * left out of a manifest means. `groupattr` is empty in the table but effectively `cn`, and an empty
 * `token_type` means the mount default, which the service shows as `default`: those are the
 * defaults compared against.
 */
export const LDAP_CONFIG_DEFAULTS: Readonly<LdapConfig> = Object.freeze({
  url: 'ldap://127.0.0.1',
  case_sensitive_names: false,
  connection_timeout: 30,
  request_timeout: 90,
  starttls: false,
  tls_min_version: 'tls12',
  tls_max_version: 'tls12',
  insecure_tls: false,
  certificate: '',
  client_tls_cert: '',
  client_tls_key: '',
  binddn: '',
  bindpass: '',
  userdn: '',
  userattr: 'cn',
  discoverdn: false,
  deny_null_bind: true,
  upndomain: '',
  userfilter: '',
  anonymous_group_search: false,
  groupfilter: '',
  groupdn: '',
  groupattr: 'cn',
  username_as_alias: false,
  max_page_size: 0,
  token_ttl: 0,
  token_max_ttl: 0,
  token_policies: [],
  token_bound_cidrs: [],
  token_explicit_max_ttl: 0,
  token_no_default_policy: false,
  token_num_uses: 0,
  token_period: 0,
  token_type: 'default',
}) as Readonly<LdapConfig>;

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
