/**
 * The secrets service's parts of the sandbox config: its section and the rights a token may hold in it.
 *
 * ```yaml
 * tokens:
 *   - { name: ldap-reader, secret: r-token, secrets: { ldap: read } } # read | write | none
 * secrets:
 *   recovery: { shares: 5, threshold: 3 } # the recovery key's split on first start (these are the defaults)
 *   mounts:
 *     - path: corp-ldap # under auth/; nested paths work (team/ldap); `ldap` (always mounted) may be seeded too
 *       config: { url: "ldap://dir.example:389", userdn: "ou=people,dc=example,dc=org", token_ttl: 1h }
 *       groups: [{ name: admins, policies: [admin, ops] }] # policies: a list or a comma-separated string
 *       users: [{ name: alice, policies: "dev", groups: [admins] }]
 * ```
 *
 * `config` takes the fields and value forms of `POST /auth/<mount>/config` (durations as seconds or
 * Go duration strings, lists as arrays or comma strings) and is checked by the same rules. Seeds go
 * into a mount only when the data folder has no saved state for it.
 */
import { type Static, Type } from '@sinclair/typebox';

const Level = Type.Unsafe<'read' | 'write' | 'none'>({ type: 'string', enum: ['read', 'write', 'none'] });

/**
 * `ldap`: the directory auth method on every mount: `read` allows GET and LIST of config, groups and
 * users; `write` also allows writes and deletes. Login needs no right (it needs no token).
 */
export const SecretsTokenRightsSchema = Type.Object(
  { ldap: Type.Optional(Level) },
  { additionalProperties: false, description: 'secrets service rights; write implies read' },
);
export type SecretsTokenRights = Static<typeof SecretsTokenRightsSchema>;

const Duration = Type.Union([Type.Integer(), Type.String()]);
const StringList = Type.Union([Type.Array(Type.String()), Type.String()]);

/** Every field of the spec's configuration table, in the forms the API accepts. */
export const LdapConfigSeedSchema = Type.Object(
  {
    url: Type.Optional(Type.String()),
    case_sensitive_names: Type.Optional(Type.Boolean()),
    connection_timeout: Type.Optional(Duration),
    request_timeout: Type.Optional(Duration),
    starttls: Type.Optional(Type.Boolean()),
    tls_min_version: Type.Optional(Type.String()),
    tls_max_version: Type.Optional(Type.String()),
    insecure_tls: Type.Optional(Type.Boolean()),
    certificate: Type.Optional(Type.String()),
    client_tls_cert: Type.Optional(Type.String()),
    client_tls_key: Type.Optional(Type.String()),
    binddn: Type.Optional(Type.String()),
    bindpass: Type.Optional(Type.String()),
    userdn: Type.Optional(Type.String()),
    userattr: Type.Optional(Type.String()),
    discoverdn: Type.Optional(Type.Boolean()),
    deny_null_bind: Type.Optional(Type.Boolean()),
    upndomain: Type.Optional(Type.String()),
    userfilter: Type.Optional(Type.String()),
    anonymous_group_search: Type.Optional(Type.Boolean()),
    groupfilter: Type.Optional(Type.String()),
    groupdn: Type.Optional(Type.String()),
    groupattr: Type.Optional(Type.String()),
    username_as_alias: Type.Optional(Type.Boolean()),
    max_page_size: Type.Optional(Type.Integer()),
    token_ttl: Type.Optional(Duration),
    token_max_ttl: Type.Optional(Duration),
    token_policies: Type.Optional(StringList),
    token_bound_cidrs: Type.Optional(StringList),
    token_explicit_max_ttl: Type.Optional(Duration),
    token_no_default_policy: Type.Optional(Type.Boolean()),
    token_num_uses: Type.Optional(Type.Integer()),
    token_period: Type.Optional(Duration),
    token_type: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
export type LdapConfigSeed = Static<typeof LdapConfigSeedSchema>;

export const GroupSeedSchema = Type.Object(
  { name: Type.String({ minLength: 1 }), policies: Type.Optional(StringList) },
  { additionalProperties: false },
);
export type GroupSeed = Static<typeof GroupSeedSchema>;

export const UserSeedSchema = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    policies: Type.Optional(StringList),
    groups: Type.Optional(StringList),
  },
  { additionalProperties: false },
);
export type UserSeed = Static<typeof UserSeedSchema>;

export const MountSeedSchema = Type.Object(
  {
    path: Type.String({ minLength: 1 }),
    config: Type.Optional(LdapConfigSeedSchema),
    groups: Type.Optional(Type.Array(GroupSeedSchema)),
    users: Type.Optional(Type.Array(UserSeedSchema)),
  },
  { additionalProperties: false },
);
export type MountSeed = Static<typeof MountSeedSchema>;

/**
 * How the recovery key made on first start is split: `shares` (1..255) of which `threshold` rebuild
 * it; a threshold of 1 only with 1 share (the real `SealConfig.Validate` rules). Used only when the
 * data folder holds no seal yet; a rekey changes both afterwards.
 */
export const RecoverySeedSchema = Type.Object(
  { shares: Type.Optional(Type.Integer()), threshold: Type.Optional(Type.Integer()) },
  { additionalProperties: false },
);
export type RecoverySeed = Static<typeof RecoverySeedSchema>;

export const SecretsConfigSchema = Type.Object(
  {
    mounts: Type.Optional(Type.Array(MountSeedSchema)),
    recovery: Type.Optional(RecoverySeedSchema),
  },
  { additionalProperties: false },
);
export type SecretsConfig = Static<typeof SecretsConfigSchema>;

// The service's section and token rights in the typed sandbox config (`SandboxConfig`).
declare module '../../config/types.js' {
  interface SandboxServiceSections {
    /** Directory auth mounts with seeded config, groups and users, and the recovery key's shares and threshold. */
    secrets?: SecretsConfig;
  }
  interface SandboxServiceTokenRights {
    /** Rights in the secrets service's directory auth method: `{ ldap: read|write|none }`. */
    secrets?: SecretsTokenRights;
  }
}
