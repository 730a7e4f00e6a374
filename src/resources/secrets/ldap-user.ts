/**
 * LdapUser: a local user of the directory auth method: policies of its own, and local groups added
 * to those the directory reports. metadata.name is the username, metadata.mount the method's mount
 * (`ldap` by default); spec.policies and spec.groups are YAML lists, sent as comma-separated strings.
 * A user is applied after the groups it names and its mount's configuration.
 */
import { type Static, Type } from '@sinclair/typebox';
import type { LdapUser } from '../../clients/secrets/client.js';
import { secretsService } from '../../clients/secrets/definition.js';
import { diffValues } from '../compare.js';
import type { Desired, KindContext, ResourceKey, ResourceKind } from '../contract.js';
import {
  configKey,
  LOWER_CASE_NAME,
  normalisePolicies,
  secretsClient,
  sortedSet,
  splitCommaList,
} from './common.js';
import { callOptions, type EntryAccess, entryKindBase, entryObserved, mountOf } from './entries.js';

const LdapUserSpec = Type.Object(
  {
    policies: Type.Optional(
      Type.Array(Type.String({ minLength: 1, pattern: '^[^,]+$' }), {
        description: "the user's own policies (the service lower-cases them)",
      }),
    ),
    groups: Type.Optional(
      Type.Array(Type.String({ minLength: 1, pattern: LOWER_CASE_NAME }), {
        description: 'local groups (LdapGroup names on the same mount) added to those the directory reports',
      }),
    ),
  },
  { additionalProperties: false },
);
export type LdapUserSpec = Static<typeof LdapUserSpec>;

const access: EntryAccess<LdapUser> = {
  collection: 'users',
  listNames: (client, mount, opts) => client.listLdapUsers(mount, opts),
  read: (client, mount, name, opts) => client.readLdapUser(mount, name, opts),
  canonical: (live) => canonicalLive(live),
};

function canonicalSpec(spec: LdapUserSpec) {
  return { policies: normalisePolicies(spec.policies), groups: sortedSet(splitCommaList(spec.groups)) };
}

function canonicalLive(live: LdapUser) {
  return { policies: normalisePolicies(live.policies ?? []), groups: sortedSet(splitCommaList(live.groups)) };
}

/** Create and update are the same write: the service sets the whole entry at its path. */
async function writeUser(ctx: KindContext, desired: Desired<LdapUserSpec>) {
  const wanted = canonicalSpec(desired.spec);
  await secretsClient(ctx, desired.key).writeLdapUser(
    mountOf(desired.key),
    desired.key.name,
    wanted,
    callOptions(ctx),
  );
  return entryObserved(access, desired.key, { policies: wanted.policies, groups: wanted.groups.join(',') });
}

export const ldapUserKind: ResourceKind<LdapUserSpec, LdapUser> = {
  kind: 'LdapUser',
  service: secretsService.name,
  description:
    'A directory (LDAP) user known to the auth method: its own policies and extra local groups. metadata.mount is the mount (ldap by default).',
  specSchema: LdapUserSpec,
  ...entryKindBase<LdapUser>('LdapUser', access),

  dependencies({ key, desired, observed }) {
    const groups = desired
      ? splitCommaList(desired.spec.groups)
      : observed
        ? splitCommaList(observed.live.groups)
        : [];
    return [
      configKey(mountOf(key), key.connection),
      ...groups.map((name): ResourceKey => ({
        kind: 'LdapGroup',
        name,
        namespace: mountOf(key),
        ...(key.connection !== undefined ? { connection: key.connection } : {}),
      })),
    ];
  },

  compare(desired, observed) {
    return { diffs: diffValues(canonicalSpec(desired.spec), canonicalLive(observed.live)) };
  },
  render: (desired) => canonicalSpec(desired.spec),
  describe: (observed) => canonicalLive(observed.live),

  create: writeUser,
  // Written by name: sending the write again after a lost answer is harmless.
  createIsUpsert: true,
  update: (ctx, desired) => writeUser(ctx, desired),
  async delete(ctx, observed) {
    await secretsClient(ctx, observed.key).deleteLdapUser(
      mountOf(observed.key),
      observed.key.name,
      callOptions(ctx),
    );
  },
};
