/**
 * Allow-lists the operator sets outside the manifest (`CONVERGE_ALLOW_ENV` / `--allow-env`,
 * `CONVERGE_ALLOW_ADDRESSES` / `--allow-address`): names or globs, from a comma-separated variable and
 * from repeatable flags, matched with picomatch. `*` never crosses a `/`, so `https://*.corp.example`
 * matches a host of that domain and not `https://evil.test/.corp.example`.
 */
import picomatch from 'picomatch';

export interface AllowList {
  /** The patterns as the operator wrote them, for messages ("allowed: DEMO_*, TEAM"). */
  readonly patterns: readonly string[];
  allows(text: string): boolean;
  /**
   * How the caller names the option that adds to the list (`--allow-env`, `allowEnv`), for a refusal
   * to say how to allow what it refused; the list's user has a default.
   */
  readonly setting?: string;
}

/** `CONVERGE_ALLOW_ENV="DEMO_*, TEAM"` plus `--allow-env X --allow-env Y`: blanks and empties dropped. */
export function allowListFrom(
  variable: string | undefined,
  flags: readonly string[] = [],
  setting?: string,
): AllowList {
  const patterns = [...(variable ?? '').split(','), ...flags.flatMap((f) => f.split(','))]
    .map((p) => p.trim())
    .filter((p) => p !== '');
  const matchers = patterns.map((p) => picomatch(p, { dot: true, nobrace: true, noextglob: true }));
  return {
    patterns,
    allows: (text) => matchers.some((m) => m(text)),
    ...(setting !== undefined ? { setting } : {}),
  };
}

export const EMPTY_ALLOW_LIST: AllowList = { patterns: [], allows: () => false };

/**
 * A sensitive variable's value is a secret from this length: shorter ones (`on`, `dev`) would mask
 * every occurrence of a common word in a plan and hide more than they protect.
 */
export const MIN_SENSITIVE_VALUE_CHARS = 4;

/**
 * Variables whose values are secrets wherever a manifest copies them (`CONVERGE_SENSITIVE_ENV`):
 * names or globs, letter case ignored. Unset, the names that say so: a password or passphrase (an
 * LDAP `BINDPASS`, a name ending in `_PASS` or `_PWD`, as MySQL's `MYSQL_PWD`), a secret, a token, a
 * credential, a private key, an API key or a name ending in `KEY` (`MASTERKEY`, `SSH_KEY`). Set (even empty), exactly what it lists. Masking one name too many
 * hides a value from a reviewer everywhere it appears (a `*KEY*` caught `CACHE_KEY_PREFIX: platform`
 * and masked every "platform" of the plan); one too few prints a password on a pull request.
 */
export const DEFAULT_SENSITIVE_ENV =
  '*PASSWORD*,*PASSWD*,*PASSPHRASE*,*BINDPASS*,*_PASS,*_PWD,*SECRET*,*TOKEN*,*CREDENTIAL*,*PRIVATE*,*API_KEY*,*APIKEY*,*KEY';

export function sensitiveEnvFrom(variable: string | undefined): AllowList {
  const patterns = (variable ?? DEFAULT_SENSITIVE_ENV)
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  const matchers = patterns.map((p) =>
    picomatch(p, { dot: true, nobrace: true, noextglob: true, nocase: true }),
  );
  return { patterns, allows: (text) => matchers.some((m) => m(text)) };
}
