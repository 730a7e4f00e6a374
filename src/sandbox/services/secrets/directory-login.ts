/**
 * The directory half of an LDAP login: connect to the configured server(s), find the user's DN,
 * bind as the user, and collect the user's directory groups. The secrets service's login handler
 * adds the local users' and groups' policies and issues the token; this module knows nothing of
 * tokens or policies.
 */

export type TlsVersion = 'tls10' | 'tls11' | 'tls12' | 'tls13';

/** The mount's effective directory settings (spec field names; durations in seconds, defaults filled). */
export interface DirectorySettings {
  /** Comma-separated server URLs, tried in order. */
  url: string;
  connection_timeout: number;
  request_timeout: number;
  starttls: boolean;
  tls_min_version: TlsVersion;
  tls_max_version: TlsVersion;
  insecure_tls: boolean;
  certificate: string;
  client_tls_cert: string;
  client_tls_key: string;
  binddn: string;
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
  case_sensitive_names: boolean;
  max_page_size: number;
}

export interface DirectoryLoginResult {
  /** The DN the user bound as. */
  userDN: string;
  /** Group names found in the directory (the `groupattr` values, CN taken from DNs), as the server spells them. */
  groups: string[];
  /** Warnings for the response envelope (e.g. no directory groups found). */
  warnings: string[];
}

/** A login refused or failed; `status` is the HTTP status the real service answers with. */
export class DirectoryLoginError extends Error {
  constructor(
    message: string,
    readonly status: 400 | 403 | 500 = 400,
  ) {
    super(message);
    this.name = 'DirectoryLoginError';
  }
}

export function directoryLogin(
  _settings: DirectorySettings,
  _username: string,
  _password: string,
  _opts: { signal?: AbortSignal } = {},
): Promise<DirectoryLoginResult> {
  return Promise.reject(new DirectoryLoginError('directory login is not implemented yet', 500));
}
