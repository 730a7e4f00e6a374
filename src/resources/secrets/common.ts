/**
 * What the directory (LDAP) kinds share: the mount they live under, the client, and the service's
 * own normalisation of policy lists and durations, so a manifest compares equal to what the
 * service stores.
 */
import { Type } from '@sinclair/typebox';
import { formatSeconds, parseGoDuration } from '../../common/go-duration.js';
import type { SecretsClient } from '../../clients/secrets/client.js';
import { DEFAULT_LDAP_MOUNT } from '../../clients/secrets/types.js';
import { secretsService } from '../../clients/secrets/definition.js';
import { nodeCrypto } from '../../common/lazy-crypto.js';
import { canonicalJson } from '../compare.js';
import type { KindContext, ResourceKey } from '../contract.js';

export { DEFAULT_LDAP_MOUNT };

export function secretsClient(ctx: KindContext, key: Pick<ResourceKey, 'connection'>): SecretsClient {
  return ctx.client(secretsService, key.connection);
}

/** A mount path below `auth/`: `ldap`, `corp-ldap`, `team/ldap`. */
export const MOUNT_PATTERN = '^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$';

export const MOUNT_SCHEMA = Type.String({
  pattern: MOUNT_PATTERN,
  maxLength: 256,
  description: 'the auth method\'s mount path below auth/ ("ldap", "corp/ldap"), without slashes around it',
});

/**
 * The service's reading of a policy list (Vault's ParsePolicies): trimmed, lower-cased, empty entries
 * dropped, duplicates removed, sorted. Applied to both sides before comparing.
 */
export function normalisePolicies(policies: readonly string[] | undefined): string[] {
  return [...new Set((policies ?? []).map((p) => p.trim().toLowerCase()).filter((p) => p !== ''))].sort();
}

/** A comma-separated string as the service writes it, as a list (empty entries dropped). */
export function splitCommaList(value: string | readonly string[] | undefined): string[] {
  const items = typeof value === 'string' ? value.split(',') : [...(value ?? [])];
  return items.map((s) => s.trim()).filter((s) => s !== '');
}

/** A set of names, sorted and without duplicates: the form both sides of a list compare in. */
export function sortedSet(items: readonly string[]): string[] {
  return [...new Set(items)].sort();
}

/**
 * Seconds from a duration as the service reads it (Vault's ParseDurationSecond): an integer is
 * seconds, a string of digits too, anything else a Go duration (`90s`, `5m`, `1h30m`). Undefined when
 * it is none of those.
 */
export function durationSeconds(value: number | string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'number') return Number.isFinite(value) ? Math.floor(value) : undefined;
  const text = value.trim();
  if (text === '') return 0;
  if (/^\d+$/.test(text)) return Number(text);
  const ms = parseGoDuration(text);
  return ms === undefined || ms < 0 ? undefined : Math.floor(ms / 1000);
}

/**
 * A duration the service counts in seconds, shown in the form the manifest wrote the field in, so a
 * plan reads like the manifest: `"1h" -> "2h"` rather than `3600 -> 7200`. A field written as seconds
 * (a number, or a string of digits) stays seconds; one written as a duration, or left to the default,
 * becomes a duration (`3600` → `"1h"`). The manifest's own text is shown for its side, untouched.
 */
export function durationInManifestForm(
  written: unknown,
  seconds: unknown,
  side: 'desired' | 'live',
): unknown {
  if (typeof seconds !== 'number') return seconds;
  if (typeof written === 'number' || (typeof written === 'string' && /^\s*\d+\s*$/.test(written)))
    return seconds;
  if (side === 'desired' && typeof written === 'string') return written;
  return formatSeconds(seconds);
}

/** The manifest form of a duration: an integer of seconds or a Go duration string. */
export function durationSchema(description: string) {
  return Type.Union(
    [
      Type.Integer({ minimum: 0 }),
      Type.String({
        pattern: '^(\\d+|(\\d+(\\.\\d+)?(ns|us|µs|ms|s|m|h))+)$',
        description: 'seconds, or a duration such as "30s", "5m", "1h30m"',
      }),
    ],
    { description: `${description}; seconds, or a duration such as "30s", "5m", "1h30m"` },
  );
}

/**
 * Names of directory groups and users, and the local groups a user names: one path segment, in lower
 * case. The service lower-cases names (unless a mount sets `case_sensitive_names`), so a mixed-case
 * name would never match what it lists: a perpetual create, or a prune of the object just written.
 * Anything lower-casing changes, in any script (`Équipe`, `Ωmega`, `Ⅻ`), not only A-Z: the service
 * lower-cases them all (Go's `strings.ToLower`). A Unicode property class: ajv compiles patterns
 * with the `u` flag.
 */
export const LOWER_CASE_NAME = '^[^/\\s,\\p{Changes_When_Lowercased}]+$';

export const DIRECTORY_NAME_SCHEMA = Type.String({
  minLength: 1,
  maxLength: 256,
  pattern: LOWER_CASE_NAME,
  description:
    'the name in the directory method, in lower case (the service lower-cases names), without "/", "," or spaces',
});

/** The key of a mount's configuration object, which groups and users depend on. */
export function configKey(mount: string, connection: string | undefined): ResourceKey {
  return { kind: 'LdapConfig', name: mount, ...(connection !== undefined ? { connection } : {}) };
}

/**
 * A version for objects the service gives none (no index, no timestamp): a digest of what it shows,
 * so a saved plan applied later is refused when the object changed since it was planned.
 */
export function contentVersion(live: unknown): string {
  return nodeCrypto().createHash('sha256').update(canonicalJson(live)).digest('hex').slice(0, 16);
}
