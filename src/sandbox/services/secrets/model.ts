/**
 * What one directory (LDAP) auth mount holds: its configuration (spec field names; durations in whole
 * seconds; lists as arrays), its local groups and its local users. Names are stored as the write
 * produced them (lower-cased unless `case_sensitive_names`), as the real service keys its storage.
 */
import {
  LDAP_SPEC_DEFAULTS,
  type LdapConfigFields,
  type LdapTokenFields,
} from '../../../clients/secrets/ldap-config.js';
import type { DirectorySettings } from './directory-login.js';

export { TLS_VERSIONS } from '../../../clients/secrets/ldap-config.js';

/** `token_type` as stored and read back; `default` is the real service's name for "the mount's default". */
export type TokenType = 'default' | 'service' | 'batch';

export type TokenSettings = LdapTokenFields<TokenType>;

/** A mount's configuration: the wire format's fields (the client's description of them). */
export type LdapConfigRecord = LdapConfigFields<TokenType>;

/** Every field of the spec's table with its default, with lists of its own to change. */
export function defaultLdapConfig(): LdapConfigRecord {
  return { ...LDAP_SPEC_DEFAULTS, token_policies: [], token_bound_cidrs: [] };
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
