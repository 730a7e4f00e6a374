/**
 * LdapConfig: the directory (LDAP) auth method's configuration on one mount of the secrets service.
 * metadata.name is the mount path below `auth/` (`ldap`, `corp/ldap`); spec holds the configuration
 * fields under the service's own names (spec table "Directory configuration").
 *
 * The manifest declares the whole configuration: a field left out means the service's default, so
 * removing a line from the manifest plans a change back to the default. The service updates only the
 * fields a write names, so every write sends every field.
 *
 * `bindpass` and `client_tls_key` are write-only: the service never returns them, so they are compared
 * by the planner's keyed digests of what Converge last set (see planner/write-only.ts), sent only when
 * they changed, and cleared when a value Converge set is dropped from the manifest.
 *
 * The service has no "delete" for a configuration and shows an unconfigured mount as the defaults, so
 * a configuration equal to the defaults reads as absent, and deleting one (`ensure: absent`) writes the
 * defaults back. Disabling the mount itself is outside Converge.
 */
import { type Static, Type } from '@sinclair/typebox';
import { LDAP_CONFIG_DEFAULTS, type LdapConfig, type LdapConfigInput } from '../../clients/secrets/types.js';
import { secretsService } from '../../clients/secrets/definition.js';
import { parseGoDuration } from '../../common/go-duration.js';
import { diffValues, deepEqual } from '../compare.js';
import {
  configReadForObserve,
  missingMount,
  missingMountProblems,
  unlessMountMissing,
} from './config-reads.js';
import type {
  AttributeDiff,
  Comparison,
  Desired,
  Exportable,
  KindContext,
  Observed,
  RenderDetails,
  ResourceKey,
  ResourceKind,
  ServiceChecks,
  SpecRules,
  WriteOnlyAttributes,
  UpsertCreate,
} from '../contract.js';
import {
  configKey,
  contentVersion,
  DEFAULT_LDAP_MOUNT,
  durationInManifestForm,
  durationSchema,
  durationSeconds,
  MOUNT_SCHEMA,
  secretsClient,
  sortedSet,
  splitCommaList,
} from './common.js';

const TLS_VERSIONS = ['tls10', 'tls11', 'tls12', 'tls13'] as const;
const TlsVersion = (description: string) =>
  Type.Optional(
    Type.Unsafe<(typeof TLS_VERSIONS)[number]>({ type: 'string', enum: [...TLS_VERSIONS], description }),
  );

const Str = (description: string) => Type.Optional(Type.String({ description }));
const Bool = (description: string) => Type.Optional(Type.Boolean({ description }));
const Duration = (description: string) => Type.Optional(durationSchema(description));
// The spec's "array or comma-separated string": `[a, b]` or `"a,b"`, sent as the array.
const List = (description: string) =>
  Type.Optional(
    Type.Union([Type.Array(Type.String({ minLength: 1 })), Type.String()], {
      description: `${description}: a list, or one comma-separated string`,
    }),
  );

const LdapConfigSpec = Type.Object(
  {
    url: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'LDAP server URLs, comma-separated, tried in order (default ldap://127.0.0.1)',
      }),
    ),
    case_sensitive_names: Bool('match user and group names case-sensitively (default false)'),
    connection_timeout: Duration('per-URL connect timeout before the next URL is tried (default 30s)'),
    request_timeout: Duration('timeout of requests to the server (default 90s)'),
    starttls: Bool('issue StartTLS after an unencrypted connection'),
    tls_min_version: TlsVersion('lowest TLS version (default tls12)'),
    tls_max_version: TlsVersion('highest TLS version (default tls12)'),
    insecure_tls: Bool('skip server certificate verification'),
    certificate: Str('PEM CA certificate, e.g. ${file:certs/ldap-ca.pem}'),
    client_tls_cert: Str(
      'PEM client certificate; the service never returns it, so a change is told by digest',
    ),
    client_tls_key: Str('PEM client key; write-only: never shown, set only when it changes'),
    binddn: Str('DN bound for the user search'),
    bindpass: Str('password of binddn; write-only: use ${env:NAME}, never shown, set only when it changes'),
    userdn: Str('base DN of the user search'),
    userattr: Str('attribute matched to the login username (default cn)'),
    discoverdn: Bool("use an anonymous bind to discover a user's DN"),
    deny_null_bind: Bool('refuse empty passwords (default true)'),
    upndomain: Str('bind as username@upndomain'),
    userfilter: Str('user search filter template over {{.UserAttr}} and {{.Username}}'),
    anonymous_group_search: Bool('search groups with an anonymous bind'),
    groupfilter: Str('group search filter template over {{.UserDN}} and {{.Username}}'),
    groupdn: Str('search base of group membership'),
    groupattr: Str('attribute of the results naming the groups (default cn; memberOf for user objects)'),
    username_as_alias: Bool('use the supplied username as alias name'),
    max_page_size: Type.Optional(Type.Integer({ minimum: 0, description: 'above 0: paged search' })),
    token_ttl: Duration('incremental token lifetime'),
    token_max_ttl: Duration('maximum token lifetime'),
    token_policies: List('policies encoded on tokens'),
    token_bound_cidrs: List('CIDR blocks logins and tokens are tied to'),
    token_explicit_max_ttl: Duration('hard cap on token life'),
    token_no_default_policy: Bool('do not add the default policy'),
    token_num_uses: Type.Optional(Type.Integer({ minimum: 0, description: '0: unlimited' })),
    token_period: Duration('periodic token period'),
    token_type: Type.Optional(
      Type.Unsafe<'service' | 'batch' | 'default'>({
        type: 'string',
        enum: ['service', 'batch', 'default'],
        description: 'default: the mount default',
      }),
    ),
  },
  { additionalProperties: false },
);
export type LdapConfigSpec = Static<typeof LdapConfigSpec>;

// The service never returns these: the client certificate is not secret, but only a digest can
// tell whether it changed, like the key it pairs with.
const WRITE_ONLY = ['bindpass', 'client_tls_key', 'client_tls_cert'] as const;
const DURATIONS = new Set([
  'connection_timeout',
  'request_timeout',
  'token_ttl',
  'token_max_ttl',
  'token_explicit_max_ttl',
  'token_period',
]);
const LISTS = new Set(['token_policies', 'token_bound_cidrs']);

/** The fields compared and always sent: all but the write-only ones. */
const COMPARED = (Object.keys(LDAP_CONFIG_DEFAULTS) as (keyof LdapConfig)[]).filter(
  (f) => !(WRITE_ONLY as readonly string[]).includes(f),
);

/** One field in the form both sides compare in, which is also the form it is sent in. */
function normalise(field: keyof LdapConfig, value: unknown): unknown {
  if (value === undefined || value === null) return LDAP_CONFIG_DEFAULTS[field];
  if (DURATIONS.has(field)) return durationSeconds(value as number | string) ?? value;
  if (LISTS.has(field)) return sortedSet(splitCommaList(value as string | string[]));
  // The service lower-cases the user attribute, and shows the effective group attribute.
  if (field === 'userattr') return String(value).toLowerCase();
  if (field === 'groupattr') return value === '' ? 'cn' : value;
  if (field === 'token_type') return value === '' ? 'default' : value;
  return value;
}

/**
 * A diff of a duration field in the manifest's form: both sides are compared in seconds (the form the
 * service stores), but a manifest that wrote `token_ttl: 1h` reads `"1h" -> "2h"`.
 */
function inManifestForm(diff: AttributeDiff, spec: LdapConfigSpec): AttributeDiff {
  if (!DURATIONS.has(diff.path)) return diff;
  const written = (spec as Record<string, unknown>)[diff.path];
  // A duration the manifest leaves out is 0 on the service, which means "the system's default", not
  // a zero lifetime: `token_ttl = "12h" -> "0s"` read as tokens that expire at once.
  const toDefault = written === undefined && 'after' in diff && Number(diff.after) === 0;
  return {
    ...diff,
    ...('before' in diff ? { before: durationInManifestForm(written, diff.before, 'live') } : {}),
    ...('after' in diff ? { after: durationInManifestForm(written, diff.after, 'desired') } : {}),
    ...(toDefault ? { note: "left out of the manifest: 0, the secrets service's system default" } : {}),
  };
}

/** Every compared field: the given value, or the default for one left out. */
function canonical(values: Partial<Record<keyof LdapConfig, unknown>>): Record<string, unknown> {
  return Object.fromEntries(COMPARED.map((f) => [f, normalise(f, values[f])]));
}

/** Only the fields the service showed: one it does not return cannot be compared. */
function shown(values: Record<string, unknown>, live: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(values).filter(([f]) => f in live));
}

/** A manifest configuration that sets nothing but defaults (write-only fields aside). */
function isAllDefaults(spec: LdapConfigSpec): boolean {
  const wanted = canonical(spec as Partial<Record<keyof LdapConfig, unknown>>);
  return deepEqual(wanted, canonical({})) && WRITE_ONLY.every((f) => !spec[f]);
}

function isUnconfigured(live: LdapConfig): boolean {
  return deepEqual(shown(canonical(live), live), shown(canonical({}), live));
}

function observedOf(key: ResourceKey, live: LdapConfig): Observed<LdapConfig> {
  return { key, id: `auth/${key.name}`, live, version: contentVersion(shown(canonical(live), live)) };
}

/** The write: every compared field, and the write-only ones the planner says changed. */
function body(desired: Desired<LdapConfigSpec>, writeOnly: readonly string[]): LdapConfigInput {
  const out = canonical(desired.spec as Partial<Record<keyof LdapConfig, unknown>>);
  for (const field of writeOnly) {
    out[field] = (desired.spec as Record<string, unknown>)[field] ?? '';
  }
  return out as LdapConfigInput;
}

async function writeConfig(
  ctx: KindContext,
  desired: Desired<LdapConfigSpec>,
  writeOnly: readonly string[],
): Promise<Observed<LdapConfig>> {
  const sent = body(desired, writeOnly);
  await secretsClient(ctx, desired.key).writeLdapConfig(
    desired.key.name,
    sent,
    ctx.signal ? { signal: ctx.signal } : {},
  );
  return observedOf(desired.key, {
    ...LDAP_CONFIG_DEFAULTS,
    ...sent,
    bindpass: '',
    client_tls_key: '',
  } as LdapConfig);
}

const TLS_ORDER = (v: string | undefined, fallback: string) => TLS_VERSIONS.indexOf((v ?? fallback) as never);

/** Rules the service enforces that JSON Schema cannot say, checked before anything is sent. */
function configRules(spec: LdapConfigSpec): { pointer: string; message: string }[] {
  const problems: { pointer: string; message: string }[] = [];
  // The service counts these in whole seconds and drops the rest: `0.4s` is stored as 0, which means
  // "the system default" (or no period), and the next plan shows no change.
  for (const field of DURATIONS) {
    const value = (spec as Record<string, unknown>)[field];
    if (typeof value !== 'string' || /^\s*\d*\s*$/.test(value)) continue;
    const ms = parseGoDuration(value.trim());
    if (ms !== undefined && ms % 1000 !== 0)
      problems.push({
        pointer: `/${field}`,
        message: `${field} is counted in whole seconds by the service, which would store ${JSON.stringify(value)} as ${Math.floor(ms / 1000)}; write whole seconds`,
      });
  }
  const userattr = (spec.userattr ?? LDAP_CONFIG_DEFAULTS.userattr).toLowerCase();
  // LDAP attribute names are case-insensitive: `sAMAccountName` in the filter names the userattr
  // the service keeps lower-cased (the sandbox reads the rule so too).
  if (
    spec.userfilter &&
    !spec.userfilter.includes('{{.UserAttr}}') &&
    !spec.userfilter.toLowerCase().includes(userattr)
  ) {
    problems.push({
      pointer: '/userfilter',
      message: `userfilter must contain {{.UserAttr}} or the userattr value "${userattr}", so that a search finds exactly one user`,
    });
  }
  if (TLS_ORDER(spec.tls_min_version, 'tls12') > TLS_ORDER(spec.tls_max_version, 'tls12')) {
    problems.push({
      pointer: spec.tls_min_version ? '/tls_min_version' : '/tls_max_version',
      message: `tls_max_version (${spec.tls_max_version ?? 'tls12'}) must not be lower than tls_min_version (${spec.tls_min_version ?? 'tls12'})`,
    });
  }
  const ttl = durationSeconds(spec.token_ttl) ?? 0;
  const maxTtl = durationSeconds(spec.token_max_ttl) ?? 0;
  if (ttl > 0 && maxTtl > 0 && ttl > maxTtl) {
    problems.push({ pointer: '/token_ttl', message: 'token_ttl must not be greater than token_max_ttl' });
  }
  if (isAllDefaults(spec)) {
    problems.push({
      pointer: '',
      message:
        'this configuration is all defaults, which is how the service shows a mount nobody configured, so Converge could never tell it was applied: set at least url, binddn or userdn',
    });
  }
  if (spec.client_tls_key && !spec.client_tls_cert) {
    problems.push({ pointer: '/client_tls_key', message: 'client_tls_key needs client_tls_cert' });
  }
  if (spec.client_tls_cert && !spec.client_tls_key) {
    problems.push({ pointer: '/client_tls_cert', message: 'client_tls_cert needs client_tls_key' });
  }
  return problems;
}

export const ldapConfigKind: ResourceKind<LdapConfigSpec, LdapConfig> &
  ServiceChecks<LdapConfigSpec> &
  WriteOnlyAttributes<LdapConfig> &
  SpecRules<LdapConfigSpec> &
  RenderDetails<LdapConfigSpec, LdapConfig> &
  Exportable<LdapConfigSpec, LdapConfig> &
  UpsertCreate = {
  kind: 'LdapConfig',
  service: secretsService.name,
  description:
    'The directory (LDAP) auth method configuration of one mount. metadata.name is the mount path below auth/ (ldap by default).',
  nameSchema: MOUNT_SCHEMA,
  specSchema: LdapConfigSpec,
  writeOnly: WRITE_ONLY,
  // The service never shows the bind password; a bind DN without one is rare.
  likelySet: (observed) => (observed.live.binddn ? ['bindpass'] : []),
  validateSpec: configRules,

  // Converge configures a mount, it does not enable one: a mount that is not there is a plan problem
  // at the line that names it (with the run's one configuration read of the mount), and the rest of
  // the manifest is still planned.
  check: (ctx, desired) => missingMountProblems(ctx, desired, (key) => key.name, 'name'),

  async observe(ctx, key) {
    // The plan-time mount check of this mount's groups and users may have read it already this run.
    const live = await unlessMountMissing(configReadForObserve(ctx, key.connection, key.name), undefined);
    return live && !isUnconfigured(live) ? observedOf(key, live) : undefined;
  },

  compare(desired, observed): Comparison {
    const live = observed.live;
    const diffs = diffValues(
      shown(canonical(desired.spec as Partial<Record<keyof LdapConfig, unknown>>), live),
      shown(canonical(live), live),
    );
    return { diffs: diffs.map((d) => inManifestForm(d, desired.spec)) };
  },

  // Comma-separated on the service, compared as sets: a plan shows the items that come and go.
  listAttributes: [...LISTS],

  render(desired) {
    // The manifest's fields in its own units (durations as "5m" rather than seconds), but in the form
    // they are sent in where the service keeps another (a list trimmed, sorted and without
    // duplicates, the user attribute lower-cased): a plan shows what the service will hold. The
    // planner masks the write-only ones.
    return Object.fromEntries(
      Object.entries(desired.spec).map(([field, value]) =>
        LISTS.has(field) || field === 'userattr'
          ? [field, normalise(field as keyof LdapConfig, value)]
          : [field, value],
      ),
    );
  },

  describe(observed) {
    // Only what differs from the defaults, durations as durations (`1h`, not 3600): a configuration
    // reads like the manifest that made it.
    const live = canonical(observed.live);
    const defaults = canonical({});
    return Object.fromEntries(
      Object.entries(shown(live, observed.live))
        .filter(([f, v]) => !deepEqual(v, defaults[f]))
        .map(([f, v]) => [f, DURATIONS.has(f) ? durationInManifestForm(undefined, v, 'live') : v]),
    );
  },

  exporter: {
    // What differs from the defaults, as `describe` shows it: the fields a user would have written.
    spec: (observed) => ldapConfigKind.describe(observed) as LdapConfigSpec,
    // The service lists no mounts: the one --namespace names, or the default mount.
    keys: (scope) => [configKey(scope.namespace ?? DEFAULT_LDAP_MOUNT, scope.connection)],
    // Its read answers a mount that is not there as no configuration: an export asks which it was.
    missingScope: (ctx, scope) => missingMount(ctx, scope.connection, scope.namespace ?? DEFAULT_LDAP_MOUNT),
  },

  // Create and update are one write of every field; what was written is what the service now holds
  // (apart from the write-only fields it never shows), so nothing is read back.
  create: (ctx, desired) =>
    writeConfig(
      ctx,
      desired,
      WRITE_ONLY.filter((f) => (desired.spec as Record<string, unknown>)[f] !== undefined),
    ),
  update: (ctx, desired) => writeConfig(ctx, desired, desired.changedWriteOnly ?? []),
  // The config is written by its mount path: writing it again after a lost answer is harmless.
  createIsUpsert: true,

  async delete(ctx, observed) {
    // No delete in the service: the defaults, secrets cleared, are what an unconfigured mount holds.
    const defaults: Record<string, unknown> = { ...LDAP_CONFIG_DEFAULTS };
    await secretsClient(ctx, observed.key).writeLdapConfig(
      observed.key.name,
      defaults as LdapConfigInput,
      ctx.signal ? { signal: ctx.signal } : {},
    );
  },
};
