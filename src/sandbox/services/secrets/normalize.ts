/**
 * Turning request bodies (and the config file's seeds, which take the same forms) into stored records,
 * the way the real service's field framework and the LDAP method read them:
 * - strings, booleans, integers with Go's weak typing (`"true"`, `1`, `"30"` are accepted);
 * - durations (`framework.TypeDurationSecond`): an integer of seconds, an integer string, or a Go
 *   duration string (`"30s"`, `"5m"`, `"1h30m"`); read back as whole seconds;
 * - lists (`framework.TypeCommaStringSlice`): an array, or one comma-separated string;
 * - policies (`policyutil.ParsePolicies`): trimmed, lower-cased, empty entries dropped, deduplicated,
 *   sorted; `root` alone wins.
 * A value of the wrong shape is refused as the framework does, before the handler runs:
 * `Field validation failed: error converting input <v> for field "<name>"...` (400).
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { isIP } from 'node:net';
import { parseGoDuration } from '../../core/duration.js';
import type { TlsVersion } from './directory-login.js';
import {
  defaultLdapConfig,
  type GroupRecord,
  type LdapConfigRecord,
  TLS_VERSIONS,
  type TokenType,
  type UserRecord,
} from './model.js';
import { SecretsError } from './vault.js';

type FieldKind = 'string' | 'bool' | 'int' | 'duration' | 'list';

/** The directory fields (`ldaputil.ConfigFields`) the spec's table lists, in the table's order. */
const DIRECTORY_FIELDS = {
  url: 'string',
  case_sensitive_names: 'bool',
  connection_timeout: 'duration',
  request_timeout: 'duration',
  starttls: 'bool',
  tls_min_version: 'string',
  tls_max_version: 'string',
  insecure_tls: 'bool',
  certificate: 'string',
  client_tls_cert: 'string',
  client_tls_key: 'string',
  binddn: 'string',
  bindpass: 'string',
  userdn: 'string',
  userattr: 'string',
  discoverdn: 'bool',
  deny_null_bind: 'bool',
  upndomain: 'string',
  userfilter: 'string',
  anonymous_group_search: 'bool',
  groupfilter: 'string',
  groupdn: 'string',
  groupattr: 'string',
  username_as_alias: 'bool',
  max_page_size: 'int',
} as const satisfies Record<string, FieldKind>;

/** The token fields every auth method shares (`tokenutil.TokenFields`). */
const TOKEN_FIELDS = {
  token_ttl: 'duration',
  token_max_ttl: 'duration',
  token_policies: 'list',
  token_bound_cidrs: 'list',
  token_explicit_max_ttl: 'duration',
  token_no_default_policy: 'bool',
  token_num_uses: 'int',
  token_period: 'duration',
  token_type: 'string',
} as const satisfies Record<string, FieldKind>;

export const CONFIG_FIELDS: Record<string, FieldKind> = { ...DIRECTORY_FIELDS, ...TOKEN_FIELDS };

/** Vault's warning text for a `userfilter` that ignores `userattr`; the spec makes it a refusal. */
export const USERFILTER_MESSAGE =
  'userfilter configured does not consider userattr and may result in colliding entity aliases on logins';

class ConvertError extends Error {}

/** Go's `%v` of a JSON value, for messages. */
function goValue(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(goValue).join(' ')}]`;
  if (value !== null && typeof value === 'object') {
    return `map[${Object.entries(value)
      .map(([k, v]) => `${k}:${goValue(v)}`)
      .join(' ')}]`;
  }
  return String(value);
}

function toStringValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new ConvertError(`expected a string, got ${Array.isArray(value) ? 'a list' : typeof value}`);
}

const GO_TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const GO_FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

function toBool(value: unknown): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value !== 0;
  if (typeof value === 'string') {
    if (GO_TRUE.has(value)) return true;
    if (GO_FALSE.has(value)) return false;
    throw new ConvertError(`strconv.ParseBool: parsing ${JSON.stringify(value)}: invalid syntax`);
  }
  throw new ConvertError(`expected a bool, got ${typeof value}`);
}

function toInt(value: unknown): number {
  if (typeof value === 'number' && Number.isFinite(value)) return Math.trunc(value);
  if (typeof value === 'string' && /^[-+]?\d+$/.test(value.trim())) return Number(value.trim());
  throw new ConvertError(`expected an integer, got ${JSON.stringify(value)}`);
}

/**
 * `parseutil.ParseDurationSecond`: numbers are seconds; strings are seconds when they are plain
 * integers, else Go durations (a `d` suffix counts days, as recent releases accept). Whole seconds,
 * rounded toward zero.
 */
export function toDurationSeconds(value: unknown): number {
  if (typeof value === 'number' && Number.isFinite(value)) return Math.trunc(value);
  if (typeof value === 'string') {
    const text = value.trim();
    if (text === '') return 0;
    if (/^[-+]?\d+$/.test(text)) return Number(text);
    const days = /^(\d+)d$/.exec(text);
    if (days) return Number(days[1]) * 86_400;
    const ms = parseGoDuration(text);
    if (ms !== undefined) return Math.trunc(ms / 1000);
    throw new ConvertError(`time: invalid duration ${JSON.stringify(text)}`);
  }
  throw new ConvertError(`expected a duration, got ${typeof value}`);
}

/** `TypeCommaStringSlice`: an array (items weakly typed to strings) or one comma-separated string; items trimmed. */
export function toCommaList(value: unknown): string[] {
  let items: string[];
  if (Array.isArray(value)) items = value.map(toStringValue);
  else if (typeof value === 'string') items = value === '' ? [] : value.split(',');
  else if (typeof value === 'number' || typeof value === 'boolean') items = [String(value)];
  else throw new ConvertError(`expected a list or a comma-separated string, got ${typeof value}`);
  // UNCONFIRMED: empty items are dropped here; the real parser keeps them, a list never wants them.
  return items.map((i) => i.trim()).filter((i) => i !== '');
}

function convert(kind: FieldKind, value: unknown): string | boolean | number | string[] {
  switch (kind) {
    case 'string':
      return toStringValue(value);
    case 'bool':
      return toBool(value);
    case 'int':
      return toInt(value);
    case 'duration':
      return toDurationSeconds(value);
    case 'list':
      return toCommaList(value);
  }
}

/**
 * Converts every known field present in a body (the framework's `FieldData.Validate`), refusing the
 * first that does not convert. `null` stays null (see `applyConfigWrite`). Returns the converted values
 * and the body keys the endpoint does not know, sorted.
 */
export function convertFields(
  body: Record<string, unknown>,
  fields: Record<string, FieldKind>,
): { values: Record<string, unknown>; unknown: string[] } {
  const values: Record<string, unknown> = {};
  for (const [name, kind] of Object.entries(fields)) {
    if (!Object.hasOwn(body, name)) continue;
    const value = body[name];
    if (value === null || value === undefined) {
      values[name] = null;
      continue;
    }
    try {
      values[name] = convert(kind, value);
    } catch (err) {
      if (!(err instanceof ConvertError)) throw err;
      throw new SecretsError(
        400,
        `Field validation failed: error converting input ${goValue(value)} for field ${JSON.stringify(name)}: ${err.message}`,
      );
    }
  }
  const unknown = Object.keys(body)
    .filter((k) => !Object.hasOwn(fields, k))
    .sort();
  return { values, unknown };
}

/** The framework's warning for body keys an endpoint does not know (it ignores them). */
export function ignoredWarning(unknown: string[]): string[] {
  return unknown.length > 0 ? [`Endpoint ignored these unrecognized parameters: [${unknown.join(' ')}]`] : [];
}

/**
 * A config write. IMPORTANT: the real write UPDATES the stored config (`ldaputil.NewConfigEntry(existing,
 * d)` sets a directory field only when the request carries it, `d.Raw[field]`; `ParseTokenFields` sets a
 * token field only when `d.GetOk` finds it), so fields the request leaves out keep their current value,
 * and a first write starts from the defaults. A directory field sent as `null` is present but has no
 * value, so it goes back to its default; a token field sent as `null` is not "ok" and stays unchanged.
 * Checks run in the real order; the first failure refuses the whole write (400) and changes nothing.
 */
export function applyConfigWrite(
  existing: LdapConfigRecord | undefined,
  body: Record<string, unknown>,
): { config: LdapConfigRecord; warnings: string[] } {
  const { values, unknown } = convertFields(body, CONFIG_FIELDS);
  const defaults = defaultLdapConfig();
  const next: LdapConfigRecord = existing ? cloneConfig(existing) : defaults;
  const target = next as unknown as Record<string, unknown>;
  const refuse = (message: string): never => {
    throw new SecretsError(400, message);
  };

  for (const name of Object.keys(DIRECTORY_FIELDS)) {
    if (!Object.hasOwn(values, name)) continue;
    const value = values[name];
    target[name] = value === null ? (defaults as unknown as Record<string, unknown>)[name] : value;
  }
  // NewConfigEntry lower-cases these two.
  if (Object.hasOwn(values, 'url')) next.url = next.url.toLowerCase();
  if (Object.hasOwn(values, 'userattr')) next.userattr = next.userattr.toLowerCase();

  if (Object.hasOwn(values, 'userfilter') && next.userfilter !== '') {
    const problem = templateProblem(next.userfilter);
    if (problem) refuse(`invalid userfilter: ${problem}`);
  }
  if (Object.hasOwn(values, 'groupfilter') && next.groupfilter !== '') {
    const problem = templateProblem(next.groupfilter);
    if (problem) refuse(`invalid groupfilter: ${problem}`);
  }
  if (Object.hasOwn(values, 'certificate') && next.certificate !== '') {
    const problem = certificateProblem(next.certificate);
    if (problem) refuse(`failed to parse server tls cert: ${problem}`);
  }
  if (next.client_tls_cert !== '' && next.client_tls_key !== '') {
    const problem = keyPairProblem(next.client_tls_cert, next.client_tls_key);
    if (problem) refuse(`failed to parse client X509 key pair: ${problem}`);
  } else if (next.client_tls_cert !== '' || next.client_tls_key !== '') {
    refuse('both client_tls_cert and client_tls_key must be set');
  }
  if (Object.hasOwn(values, 'tls_min_version') && !isTlsVersion(next.tls_min_version)) {
    refuse("invalid 'tls_min_version'");
  }
  if (Object.hasOwn(values, 'tls_max_version') && !isTlsVersion(next.tls_max_version)) {
    refuse("invalid 'tls_max_version'");
  }
  // A string comparison in the real code; it orders tls10 < tls11 < tls12 < tls13 all the same.
  if (next.tls_max_version < next.tls_min_version) {
    refuse("'tls_max_version' must be greater than or equal to 'tls_min_version'");
  }

  applyTokenFields(next, values);

  // The spec's rule (the real service only warns, with the same text): a userfilter must single out the
  // user by `userattr`, through the template variable or the attribute's literal name. `userattr` is
  // kept lower-cased, and LDAP attribute names are case-insensitive: `sAMAccountName` in the filter
  // names the `samaccountname` it holds.
  if (
    next.userfilter !== '' &&
    !next.userfilter.includes('{{.UserAttr}}') &&
    !next.userfilter.toLowerCase().includes(next.userattr.toLowerCase())
  ) {
    refuse(USERFILTER_MESSAGE);
  }
  return { config: next, warnings: ignoredWarning(unknown) };
}

/** `TokenParams.ParseTokenFields` for a config (no role-only token types), with its messages. */
function applyTokenFields(next: LdapConfigRecord, values: Record<string, unknown>): void {
  const given = (name: string) => Object.hasOwn(values, name) && values[name] !== null;
  const refuse = (message: string): never => {
    throw new SecretsError(400, message);
  };
  if (given('token_bound_cidrs')) {
    const cidrs = values.token_bound_cidrs as string[];
    for (const cidr of cidrs) {
      if (!parseCidr(cidr)) refuse(`error parsing address ${JSON.stringify(cidr)}: invalid address`);
    }
    next.token_bound_cidrs = cidrs;
  }
  if (given('token_explicit_max_ttl')) next.token_explicit_max_ttl = values.token_explicit_max_ttl as number;
  if (given('token_max_ttl')) next.token_max_ttl = values.token_max_ttl as number;
  if (next.token_max_ttl < 0) refuse("'token_max_ttl' cannot be negative");
  if (given('token_no_default_policy'))
    next.token_no_default_policy = values.token_no_default_policy as boolean;
  if (given('token_period')) next.token_period = values.token_period as number;
  if (next.token_period < 0) refuse("'token_period' cannot be negative");
  if (given('token_policies')) next.token_policies = values.token_policies as string[];
  if (given('token_type')) {
    const text = values.token_type as string;
    const type: TokenType | undefined =
      text === '' || text === 'default'
        ? 'default'
        : text === 'service' || text === 'batch'
          ? text
          : undefined;
    if (!type) refuse(`invalid 'token_type' value ${JSON.stringify(text)}`);
    next.token_type = type!;
  }
  if (given('token_num_uses')) next.token_num_uses = values.token_num_uses as number;
  if (next.token_num_uses < 0) refuse("'token_num_uses' cannot be negative");
  if (next.token_type === 'batch') {
    if (next.token_period !== 0) {
      refuse("'token_type' cannot be 'batch' or 'default_batch' when set to generate periodic tokens");
    }
    if (next.token_num_uses !== 0) {
      refuse(
        "'token_type' cannot be 'batch' or 'default_batch' when set to generate tokens with limited use count",
      );
    }
  }
  if (given('token_ttl')) next.token_ttl = values.token_ttl as number;
  if (next.token_ttl < 0) refuse("'token_ttl' cannot be negative");
  if (next.token_ttl > 0 && next.token_max_ttl > 0 && next.token_ttl > next.token_max_ttl) {
    refuse("'token_ttl' cannot be greater than 'token_max_ttl'");
  }
}

function isTlsVersion(value: string): value is TlsVersion {
  return (TLS_VERSIONS as readonly string[]).includes(value);
}

function cloneConfig(config: LdapConfigRecord): LdapConfigRecord {
  return {
    ...config,
    token_policies: [...config.token_policies],
    token_bound_cidrs: [...config.token_bound_cidrs],
  };
}

/**
 * The one template problem the sandbox can name like Go's `text/template` parser: an action opened
 * with `{{` and never closed. UNCONFIRMED beyond that case (other template errors pass).
 */
function templateProblem(text: string): string | undefined {
  let pos = 0;
  for (;;) {
    const open = text.indexOf('{{', pos);
    if (open === -1) return undefined;
    const close = text.indexOf('}}', open + 2);
    if (close === -1) {
      const line = text.slice(0, open).split('\n').length;
      return `template: queryTemplate:${line}: unclosed action`;
    }
    pos = close + 2;
  }
}

function pemBlocks(text: string): { type: string; der: string }[] {
  const blocks: { type: string; der: string }[] = [];
  const re = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/g;
  for (let m = re.exec(text); m; m = re.exec(text)) blocks.push({ type: m[1]!, der: m[2]! });
  return blocks;
}

/** `validateCertificate`: the first PEM block must be a CERTIFICATE that parses as X.509. */
function certificateProblem(pem: string): string | undefined {
  const first = pemBlocks(pem)[0];
  if (!first || first.type !== 'CERTIFICATE') return 'failed to decode PEM block in the certificate';
  try {
    new X509Certificate(pem);
  } catch (err) {
    return `failed to parse certificate ${(err as Error).message}`;
  }
  return undefined;
}

/** `tls.X509KeyPair`: a certificate and a private key that belong together. Inner texts UNCONFIRMED. */
function keyPairProblem(certPem: string, keyPem: string): string | undefined {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certPem);
  } catch {
    return 'tls: failed to find any PEM data in certificate input';
  }
  try {
    const key = createPrivateKey(keyPem);
    if (!cert.checkPrivateKey(key)) return 'tls: private key does not match public key';
  } catch {
    return 'tls: failed to find any PEM data in key input';
  }
  return undefined;
}

/** An address or CIDR block as `sockaddr.NewSockAddr` reads it; undefined when it is neither. */
export function parseCidr(
  text: string,
): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | undefined {
  const [address = '', prefixText, extra] = text.split('/');
  if (extra !== undefined) return undefined;
  const version = isIP(address);
  if (version === 0) return undefined;
  const max = version === 4 ? 32 : 128;
  let prefix = max;
  if (prefixText !== undefined) {
    if (!/^\d{1,3}$/.test(prefixText)) return undefined;
    prefix = Number(prefixText);
    if (prefix > max) return undefined;
  }
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

/** `strutil.RemoveDuplicates`: trimmed, optionally lower-cased, empty entries dropped, deduplicated, sorted. */
export function removeDuplicates(items: readonly string[], lowercase: boolean): string[] {
  const set = new Set<string>();
  for (const raw of items) {
    let item = raw.trim();
    if (item === '') continue;
    if (lowercase) item = item.toLowerCase();
    set.add(item);
  }
  return [...set].sort(compareGo);
}

/** Go's `sort.Strings`: byte order, not locale order. */
export function compareGo(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * `policyutil.SanitizePolicies`: lower-case and trim; `root` anywhere leaves only `root`; `default`
 * added when asked and absent; then deduplicated and sorted.
 */
export function sanitizePolicies(policies: readonly string[], addDefault: boolean): string[] {
  const cleaned = policies.map((p) => p.trim().toLowerCase());
  if (cleaned.includes('root')) return ['root'];
  if (addDefault && !cleaned.includes('default')) cleaned.push('default');
  return removeDuplicates(cleaned, true);
}

/** `policyutil.ParsePolicies` over an already converted list. */
export function parsePolicies(list: readonly string[]): string[] {
  return sanitizePolicies(list, false);
}

/** A group write (`pathGroupWrite`): only `policies` (`name` comes from the path). */
export function groupFromBody(body: Record<string, unknown>): { group: GroupRecord; warnings: string[] } {
  const { values, unknown } = convertFields(body, { name: 'string', policies: 'list' });
  return {
    group: { policies: parsePolicies((values.policies as string[] | null) ?? []) },
    warnings: ignoredWarning(unknown),
  };
}

/**
 * A user write (`pathUserWrite`): `policies` as ParsePolicies; `groups` deduplicated, trimmed and sorted,
 * lower-cased unless the mount is case sensitive (`strutil.RemoveDuplicates(groups, lowercase)`).
 */
export function userFromBody(
  body: Record<string, unknown>,
  caseSensitive: boolean,
): { user: UserRecord; warnings: string[] } {
  const { values, unknown } = convertFields(body, { name: 'string', policies: 'list', groups: 'list' });
  return {
    user: {
      policies: parsePolicies((values.policies as string[] | null) ?? []),
      groups: removeDuplicates((values.groups as string[] | null) ?? [], !caseSensitive),
    },
    warnings: ignoredWarning(unknown),
  };
}

/**
 * The config read's `data`. The real read (`pathConfigRead`) returns `ConfigEntry.PasswordlessMap()`
 * plus `PopulateTokenData`, so besides the spec's list it shows `case_sensitive_names`, `userfilter`,
 * `anonymous_group_search`, the timeouts, `username_as_alias`, `max_page_size` and every `token_*` field
 * (the spec leaves open whether they appear: they do). `bindpass` is shown as an empty string, as the
 * spec says (the real map leaves it out); `client_tls_cert` and `client_tls_key` are left out, as the
 * real map does. Vault-only fields the spec does not list (`use_token_groups`, `dereference_aliases`,
 * rotation settings) are not emulated.
 */
export function configReadData(config: LdapConfigRecord): Record<string, unknown> {
  const { client_tls_cert: _cert, client_tls_key: _key, ...shown } = config;
  return {
    ...shown,
    bindpass: '',
    token_policies: [...config.token_policies],
    token_bound_cidrs: [...config.token_bound_cidrs],
  };
}
