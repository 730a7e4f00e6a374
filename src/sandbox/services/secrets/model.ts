/**
 * What one directory (LDAP) auth mount holds: its configuration (spec field names; durations in whole
 * seconds; lists as arrays), its local groups and its local users. Names are stored as the write
 * produced them (lower-cased unless `case_sensitive_names`), as the real service keys its storage.
 */
import type { DirectorySettings, TlsVersion } from './directory-login.js';

export const TLS_VERSIONS: readonly TlsVersion[] = ['tls10', 'tls11', 'tls12', 'tls13'];

/** `token_type` as stored and read back; `default` is the real service's name for "the mount's default". */
export type TokenType = 'default' | 'service' | 'batch';

export interface TokenSettings {
  token_ttl: number;
  token_max_ttl: number;
  token_explicit_max_ttl: number;
  token_period: number;
  token_policies: string[];
  token_bound_cidrs: string[];
  token_no_default_policy: boolean;
  token_num_uses: number;
  token_type: TokenType;
}

export interface LdapConfigRecord extends DirectorySettings, TokenSettings {
  username_as_alias: boolean;
}

/** Every field of the spec's table with its default. */
export function defaultLdapConfig(): LdapConfigRecord {
  return {
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
    token_explicit_max_ttl: 0,
    token_period: 0,
    token_policies: [],
    token_bound_cidrs: [],
    token_no_default_policy: false,
    token_num_uses: 0,
    token_type: 'default',
  };
}

export interface GroupRecord {
  policies: string[];
}

export interface UserRecord {
  policies: string[];
  groups: string[];
}

export interface MountState {
  /** Relative to `auth/`, without slashes at either end: `ldap`, `corp-ldap`, `team/ldap`. */
  path: string;
  /** Undefined until the first config write (or a seeded config): login answers "not configured". */
  config: LdapConfigRecord | undefined;
  groups: Map<string, GroupRecord>;
  users: Map<string, UserRecord>;
}

/** The mount every sandbox has, as the spec describes the method. */
export const DEFAULT_MOUNT = 'ldap';

/** The fields of a configuration the directory half of a login reads (not the token ones). */
const DIRECTORY_FIELDS = [
  'url',
  'connection_timeout',
  'request_timeout',
  'starttls',
  'tls_min_version',
  'tls_max_version',
  'insecure_tls',
  'certificate',
  'client_tls_cert',
  'client_tls_key',
  'binddn',
  'bindpass',
  'userdn',
  'userattr',
  'discoverdn',
  'deny_null_bind',
  'upndomain',
  'userfilter',
  'anonymous_group_search',
  'groupfilter',
  'groupdn',
  'groupattr',
  'case_sensitive_names',
  'max_page_size',
] as const satisfies readonly (keyof DirectorySettings)[];

// Fails to compile when DirectorySettings gains a field the list above lacks.
const everyDirectoryField: [Exclude<keyof DirectorySettings, (typeof DIRECTORY_FIELDS)[number]>] extends [
  never,
]
  ? true
  : never = true;
void everyDirectoryField;

/** The directory half of a login needs only the directory settings, not the token ones. */
export function directorySettingsOf(config: LdapConfigRecord): DirectorySettings {
  return Object.fromEntries(DIRECTORY_FIELDS.map((f) => [f, config[f]])) as unknown as DirectorySettings;
}
