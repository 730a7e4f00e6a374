/**
 * The directory half of an LDAP login: connect to the configured server(s), find the user's DN,
 * bind as the user, and collect the user's directory groups. The secrets service's login handler
 * adds the local users' and groups' policies and issues the token; this module knows nothing of
 * tokens or policies.
 *
 * The steps and messages follow Vault's LDAP method: `builtin/credential/ldap/backend.go` (Login)
 * over hashicorp/cap `ldap/client.go` (Authenticate), which replaced `sdk/helper/ldaputil/client.go`
 * in Vault 1.16 with the same flow:
 *
 * 1. `deny_null_bind` and an empty password: refused before connecting.
 * 2. Connect to the first reachable URL (`ldap-connect.ts`).
 * 3. The user's bind DN: with `discoverdn`, or `binddn` and `bindpass`, bind as the service account
 *    (an unauthenticated bind when `bindpass` is empty) and search `userdn` (subtree) with the
 *    rendered `userfilter`; exactly one entry is required. Otherwise `userattr=<username>,userdn`,
 *    or `<username>@upndomain`, with the username DN-escaped.
 * 4. Bind as the user (an unauthenticated bind for an empty password).
 * 5. Re-bind as `binddn` when `binddn` and `bindpass` are set.
 * 6. The user's DN: the bind DN, or with `upndomain` the one entry whose `userPrincipalName` is
 *    `<username>@upndomain`.
 * 7. Read the user's entry (its attributes feed the entity alias).
 * 8. `anonymous_group_search`: bind anonymously. Search `groupdn` (subtree) with the rendered
 *    `groupfilter`, paged when `max_page_size` > 0, and take the CN of each `groupattr` value (or of
 *    the entry's DN when the entry has no such attribute). No `groupdn`, no search; a missing
 *    `groupdn` entry gives no groups rather than an error.
 *
 * Vault's Login turns any error from steps 3–4 into "ldap operation failed: failed to bind as user",
 * and any other into its own text; all are 400 (`logical.ErrorResponse`).
 */

import { NoSuchObjectError, ResultCodeError, type Client, type Entry } from 'ldapts';
import { ConnectError, connectDirectory, type DirectoryConnection } from './ldap-connect.js';
import {
  TemplateError,
  escapeDNValue,
  escapeFilterValue,
  getCN,
  parseDN,
  renderGoTemplate,
} from './ldap-filters.js';
import type { LdapDirectoryFields } from '../../../clients/secrets/ldap-config.js';

export type { TlsVersion } from '../../../clients/secrets/ldap-config.js';

/** The mount's effective directory settings (spec field names; durations in seconds, defaults filled). */
export type DirectorySettings = LdapDirectoryFields;

export interface DirectoryLoginResult {
  /** The DN the user bound as. */
  userDN: string;
  /** Group names found in the directory (the `groupattr` values, CN taken from DNs), as the server spells them. */
  groups: string[];
  /** Warnings for the response envelope (e.g. no directory groups found). */
  warnings: string[];
  /** The DN the user bound with (differs from `userDN` only with `upndomain`: `user@domain`). */
  userBindDN: string;
  /**
   * The user's entry, attribute names lower-cased (as Vault's LowerUserAttributeKeys), passwords left
   * out. Vault names the entity alias after `userAttributes[userattr][0]` unless `username_as_alias`.
   */
  userAttributes: Record<string, string[]>;
  /** `userAttributes[userattr lower-cased][0]`: Vault's entity alias name; undefined when missing. */
  aliasName: string | undefined;
}

/** A login refused or failed; `status` is the HTTP status the real service answers with. */
export class DirectoryLoginError extends Error {
  constructor(
    message: string,
    readonly status: 400 | 403 | 500 = 400,
    /** The underlying directory error when `message` hides it (Vault logs it at debug level). */
    readonly detail?: string,
  ) {
    super(message);
    this.name = 'DirectoryLoginError';
  }
}

export const ERR_NULL_BIND = 'password cannot be of zero length when passwordless binds are being denied';
export const ERR_USER_BIND_FAILED = 'ldap operation failed: failed to bind as user';
export const DEFAULT_GROUP_FILTER =
  '(|(memberUid={{.Username}})(member={{.UserDN}})(uniqueMember={{.UserDN}}))';
export const DEFAULT_USER_FILTER = '({{.UserAttr}}={{.Username}})';

/**
 * Logs `username` in against the directory described by `settings`. Resolves with the user's DN
 * and directory groups; rejects with `DirectoryLoginError` (400 with Vault's message) when the
 * login is refused or the directory fails, or with `signal.reason` when aborted. Every connection
 * opened is closed before the promise settles.
 */
export async function directoryLogin(
  settings: DirectorySettings,
  username: string,
  password: string,
  opts: { signal?: AbortSignal } = {},
): Promise<DirectoryLoginResult> {
  const { signal } = opts;
  signal?.throwIfAborted();
  if (settings.deny_null_bind && password.length === 0) throw new DirectoryLoginError(ERR_NULL_BIND, 400);
  if (username === '') throw new DirectoryLoginError(`${AUTH}: missing username: invalid parameter`, 400);

  let connection: DirectoryConnection;
  try {
    connection = await connectDirectory(settings, signal);
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    if (err instanceof ConnectError)
      throw new DirectoryLoginError(`${AUTH}: failed to connect: ${err.message}`, 400);
    throw err;
  }
  const onAbort = () => void connection.close();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    return await authenticate(connection.client, settings, username, password, signal);
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    if (err instanceof LoginStepError) {
      if (
        err.message.includes('discovery of user bind DN failed') ||
        err.message.includes('unable to bind user')
      ) {
        throw new DirectoryLoginError(ERR_USER_BIND_FAILED, 400, err.message);
      }
      throw new DirectoryLoginError(err.message, 400);
    }
    throw new DirectoryLoginError(`${AUTH}: ${describeLdapError(err)}`, 500);
  } finally {
    signal?.removeEventListener('abort', onAbort);
    await connection.close();
  }
}

const AUTH = 'ldap.(Client).Authenticate';

/** A step failed; `message` is the whole wrapped chain, as Go's `%w` wrapping would print it. */
class LoginStepError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LoginStepError';
  }
}

async function authenticate(
  client: Client,
  settings: DirectorySettings,
  username: string,
  password: string,
  signal: AbortSignal | undefined,
): Promise<DirectoryLoginResult> {
  const cfg = effective(settings);

  const userBindDN = await step(`${AUTH}: discovery of user bind DN failed`, () =>
    getUserBindDN(client, cfg, username),
  );
  signal?.throwIfAborted();

  // The actual authentication. An empty password (allowed when deny_null_bind is off) makes this an
  // unauthenticated bind, which servers either refuse or treat as anonymous (RFC 4513 5.1.2).
  await step(`${AUTH}: unable to bind user`, () => client.bind(userBindDN, password));
  signal?.throwIfAborted();

  if (cfg.binddn !== '' && cfg.bindpass !== '') {
    await step(`${AUTH}: unable to re-bind with the configuration BindDN user`, () =>
      client.bind(cfg.binddn, cfg.bindpass),
    );
  }

  const userDN = await step(`${AUTH}: failed to get the DN for the authenticated user`, () =>
    getUserDN(client, cfg, userBindDN, username),
  );
  signal?.throwIfAborted();

  const userAttributes = await step(`${AUTH}: failed to get user attributes`, () =>
    getUserAttributes(client, userDN),
  );
  signal?.throwIfAborted();

  if (cfg.anonymous_group_search) {
    // Vault sets cap's AllowEmptyAnonymousGroupSearch, so this is a true anonymous bind (empty DN).
    await step(`${AUTH}: group search anonymous bind failed`, () => client.bind('', ''));
  }

  const groups = await step(`${AUTH}: unable to get user groups`, () =>
    getGroups(client, cfg, userDN, username),
  );

  const warnings: string[] = [];
  if (groups.length === 0) {
    // Vault ≤ 1.15 (ldaputil) returns this as a response warning; 1.16+ (cap) only logs it with %q.
    warnings.push(
      `no LDAP groups found in groupDN '${cfg.groupdn}'; only policies from locally-defined groups available`,
    );
  }
  return {
    userDN,
    groups,
    warnings,
    userBindDN,
    userAttributes,
    aliasName: userAttributes[cfg.userattr.toLowerCase()]?.[0],
  };
}

/** Settings with cap's defaults for empty values (NewClient): userattr/groupattr `cn`, the default group filter. */
function effective(settings: DirectorySettings): DirectorySettings {
  return {
    ...settings,
    userattr: settings.userattr || 'cn',
    groupattr: settings.groupattr || 'cn',
    groupfilter: settings.groupfilter || DEFAULT_GROUP_FILTER,
    userfilter: settings.userfilter || DEFAULT_USER_FILTER,
  };
}

/** Runs one step, prefixing any failure with `context` (LDAP errors worded like go-ldap's). */
async function step<T>(context: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof LoginStepError) throw new LoginStepError(`${context}: ${err.message}`);
    throw new LoginStepError(`${context}: ${describeLdapError(err)}`);
  }
}

async function getUserBindDN(client: Client, cfg: DirectorySettings, username: string): Promise<string> {
  const op = 'ldap.(Client).getUserBindDN';
  if (
    !cfg.discoverdn &&
    (cfg.binddn === '' || cfg.bindpass === '') &&
    cfg.upndomain === '' &&
    cfg.userdn === ''
  ) {
    throw new LoginStepError(
      `${op}: cannot derive UserBindDN based on config (see combination of: discoverdn, binddn, bindpass, upndomain, userdn): invalid parameter`,
    );
  }
  if (cfg.discoverdn || (cfg.binddn !== '' && cfg.bindpass !== '')) {
    // With an empty bindpass this is an unauthenticated bind; with an empty binddn too, anonymous.
    await step(`${op}: bind (service) failed`, () => client.bind(cfg.binddn, cfg.bindpass));
    const filter = renderUserSearchFilter(cfg, username);
    const result = await step(
      `${op}: LDAP search for binddn failed using (baseDN: ${goQuote(cfg.userdn)} / filter: ${goQuote(filter)})`,
      () => client.search(cfg.userdn, { scope: 'sub', filter, attributes: ['1.1'] }),
    );
    if (result.searchEntries.length !== 1) throw new LoginStepError('LDAP search for binddn 0 or not unique');
    return result.searchEntries[0]!.dn;
  }
  return cfg.upndomain !== ''
    ? `${escapeDNValue(username)}@${cfg.upndomain}`
    : `${cfg.userattr}=${escapeDNValue(username)},${cfg.userdn}`;
}

/** cap's renderUserSearchFilter: `UserAttr` and `Username` filter-escaped; with upndomain, the UPN. */
export function renderUserSearchFilter(
  cfg: Pick<DirectorySettings, 'userfilter' | 'userattr' | 'upndomain'>,
  username: string,
): string {
  const op = 'ldap.(Client).renderUserSearchFilter';
  const fields =
    cfg.upndomain !== ''
      ? { UserAttr: 'userPrincipalName', Username: `${escapeFilterValue(username)}@${cfg.upndomain}` }
      : { UserAttr: escapeFilterValue(cfg.userattr || 'cn'), Username: escapeFilterValue(username) };
  try {
    return renderGoTemplate(cfg.userfilter || DEFAULT_USER_FILTER, fields);
  } catch (err) {
    if (err instanceof TemplateError) {
      throw new LoginStepError(
        `${op}: search failed due to template ${err.phase === 'compilation' ? 'compilation' : 'parsing'} error: ${err.message}`,
      );
    }
    throw err;
  }
}

async function getUserDN(
  client: Client,
  cfg: DirectorySettings,
  bindDN: string,
  username: string,
): Promise<string> {
  const op = 'ldap.(Client).getUserDN';
  if (cfg.upndomain === '') return bindDN;
  // cap DN-escapes the username here (escapeValue); a filter needs RFC 4515 escaping, used instead.
  const filter = `(userPrincipalName=${escapeFilterValue(username)}@${cfg.upndomain})`;
  const result = await step(
    `${op}: LDAP search failed for detecting user (baseDN: ${goQuote(cfg.userdn)} / filter: ${goQuote(filter)})`,
    () => client.search(cfg.userdn, { scope: 'sub', filter, attributes: ['1.1'] }),
  );
  if (result.searchEntries.length !== 1)
    throw new LoginStepError(`${op}: LDAP search for user 0 or not unique`);
  return result.searchEntries[0]!.dn;
}

const PASSWORD_ATTRIBUTES = new Set(['userpassword', 'unicodepwd']);

async function getUserAttributes(client: Client, userDN: string): Promise<Record<string, string[]>> {
  const op = 'ldap.(Client).getUserAttributes';
  const filter = '(objectClass=*)';
  const result = await step(
    `${op}: LDAP search for user attributes failed (baseDN: ${goQuote(userDN)} / filter: ${goQuote(filter)})`,
    () => client.search(userDN, { scope: 'base', filter }),
  );
  if (result.searchEntries.length !== 1)
    throw new LoginStepError(`${op}: LDAP search for user attributes was 0 or not unique`);
  const attributes: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(result.searchEntries[0]!)) {
    if (name === 'dn' || PASSWORD_ATTRIBUTES.has(name.toLowerCase())) continue;
    attributes[name.toLowerCase()] = valuesOf(value);
  }
  return attributes;
}

async function getGroups(
  client: Client,
  cfg: DirectorySettings,
  userDN: string,
  username: string,
): Promise<string[]> {
  const op = 'ldap.(Client).getGroups';
  const entries = await step(op, () => filterGroupsSearch(client, cfg, userDN, username));
  const names: string[] = [];
  const seen = new Set<string>();
  const add = (name: string) => {
    if (!seen.has(name)) {
      seen.add(name);
      names.push(name);
    }
  };
  for (const entry of entries) {
    const rdns = parseDN(entry.dn);
    if (!rdns || rdns.length === 0) continue;
    const attrName = Object.keys(entry).find(
      (k) => k !== 'dn' && k.toLowerCase() === cfg.groupattr.toLowerCase(),
    );
    const values = attrName === undefined ? [] : valuesOf(entry[attrName]!);
    if (values.length > 0) for (const value of values) add(getCN(value));
    else add(getCN(entry.dn));
  }
  return names;
}

async function filterGroupsSearch(
  client: Client,
  cfg: DirectorySettings,
  userDN: string,
  username: string,
): Promise<Entry[]> {
  const op = 'ldap.(Client).filterGroupsSearch';
  if (cfg.groupdn === '') return [];
  let filter: string;
  try {
    filter = renderGoTemplate(cfg.groupfilter, {
      UserDN: escapeFilterValue(userDN),
      Username: escapeFilterValue(username),
    });
  } catch (err) {
    if (err instanceof TemplateError) {
      throw new LoginStepError(
        `${op}: LDAP search failed due to template ${err.phase === 'compilation' ? 'compilation' : 'parsing'} error: ${err.message}`,
      );
    }
    throw err;
  }
  try {
    const result = await client.search(cfg.groupdn, {
      scope: 'sub',
      filter,
      attributes: [cfg.groupattr],
      ...(cfg.max_page_size > 0 ? { paged: { pageSize: cfg.max_page_size } } : {}),
    });
    return result.searchEntries;
  } catch (err) {
    // cap: a missing groupdn is not an error, just no groups (and a logged warning).
    if (err instanceof NoSuchObjectError) return [];
    throw new LoginStepError(
      `${op}: LDAP search failed (baseDN: ${goQuote(cfg.groupdn)} / filter: ${goQuote(filter)}): ${describeLdapError(err)}`,
    );
  }
}

function valuesOf(value: Entry[string]): string[] {
  const list = Array.isArray(value) ? value : [value];
  return list.map((v) => (Buffer.isBuffer(v) ? v.toString('utf8') : v));
}

/** Go's %q for the ASCII-printable strings seen here (JSON quoting is close enough otherwise). */
function goQuote(value: string): string {
  return JSON.stringify(value);
}

/** go-ldap's names for result codes, used to word errors as `LDAP Result Code 49 "Invalid Credentials": …`. */
const RESULT_CODE_NAMES: Record<number, string> = {
  1: 'Operations Error',
  2: 'Protocol Error',
  3: 'Time Limit Exceeded',
  4: 'Size Limit Exceeded',
  7: 'Auth Method Not Supported',
  8: 'Strong Auth Required',
  11: 'Admin Limit Exceeded',
  12: 'Unavailable Critical Extension',
  13: 'Confidentiality Required',
  16: 'No Such Attribute',
  17: 'Undefined Attribute Type',
  18: 'Inappropriate Matching',
  19: 'Constraint Violation',
  21: 'Invalid Attribute Syntax',
  32: 'No Such Object',
  34: 'Invalid DN Syntax',
  48: 'Inappropriate Authentication',
  49: 'Invalid Credentials',
  50: 'Insufficient Access Rights',
  51: 'Busy',
  52: 'Unavailable',
  53: 'Unwilling To Perform',
  80: 'Other',
};

function describeLdapError(err: unknown): string {
  if (err instanceof ResultCodeError) {
    const diagnostic = err.message.replace(/\s*Code: 0x[0-9a-f]+$/i, '');
    return `LDAP Result Code ${err.code} ${goQuote(RESULT_CODE_NAMES[err.code] ?? 'Unknown')}: ${diagnostic}`;
  }
  if (err instanceof Error) {
    if (/timed out/i.test(err.message))
      return 'LDAP Result Code 200 "Network Error": ldap: connection timed out';
    if (/Connection closed|Socket|connection was lost/i.test(err.message)) {
      return `LDAP Result Code 200 "Network Error": ${err.message.split('\n')[0]}`;
    }
    return err.message;
  }
  return String(err);
}
