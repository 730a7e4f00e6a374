/**
 * The directory (LDAP) auth method's configuration as the secrets service's wire format has it
 * (`spec/secrets-ldap-and-rekey.md`, the configuration table): every field, its type as read
 * (durations in whole seconds, lists as arrays) and the table's default. The client reads and writes
 * it and the sandbox stores it, so both import this one description (the sandbox may import the
 * clients' wire definitions, never the reverse): a field the spec adds is added here once.
 */

export type TlsVersion = 'tls10' | 'tls11' | 'tls12' | 'tls13';

export const TLS_VERSIONS: readonly TlsVersion[] = ['tls10', 'tls11', 'tls12', 'tls13'];

/** How the method reaches and searches the directory. */
export interface LdapDirectoryFields {
  /** Comma-separated server URLs, tried in order. */
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
  max_page_size: number;
}

/**
 * The token settings of the tokens a login issues. `TokenType` is the names a side accepts: the
 * client reads every name the real service may show, the sandbox stores the three it emulates.
 */
export interface LdapTokenFields<TokenType extends string = string> {
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

/** The whole configuration as read. */
export interface LdapConfigFields<TokenType extends string = string>
  extends LdapDirectoryFields, LdapTokenFields<TokenType> {
  username_as_alias: boolean;
}

/**
 * The spec table's defaults, in the order the table lists the fields: what a mount holds before
 * anything was configured. `token_type` `default` is the real service's name for the mount's default.
 * Shared, so its lists are never to be changed: a side that keeps a configuration to change copies them.
 */
export const LDAP_SPEC_DEFAULTS: Readonly<LdapConfigFields<'default'>> = Object.freeze({
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
  groupattr: '',
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
});
