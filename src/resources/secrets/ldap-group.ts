/**
 * LdapGroup: a local group of the directory auth method, attaching policies to a directory group of
 * the same name. metadata.name is the group name, metadata.mount the method's mount (`ldap` by
 * default); spec.policies is a YAML list, sent as the comma-separated string the service takes.
 */
import { type Static, Type } from '@sinclair/typebox';
import type { LdapGroup } from '../../clients/secrets/client.js';
import { secretsService } from '../../clients/secrets/definition.js';
import { diffValues } from '../compare.js';
import type { Desired, KindContext, ResourceKind } from '../contract.js';
import { configKey, normalisePolicies, secretsClient } from './common.js';
import { membersReached } from './group-members.js';
import { callOptions, type EntryAccess, entryKindBase, entryObserved, mountOf } from './entries.js';

const LdapGroupSpec = Type.Object(
  {
    policies: Type.Optional(
      Type.Array(Type.String({ minLength: 1, pattern: '^[^,]+$' }), {
        description: 'policies of members of this directory group (the service lower-cases them)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type LdapGroupSpec = Static<typeof LdapGroupSpec>;

const access: EntryAccess<LdapGroup> = {
  collection: 'groups',
  listNames: (client, mount, opts) => client.listLdapGroups(mount, opts),
  read: (client, mount, name, opts) => client.readLdapGroup(mount, name, opts),
  canonical: (live) => canonical(live),
};

function canonical(spec: { policies?: readonly string[] | null }) {
  return { policies: normalisePolicies(spec.policies ?? []) };
}

/** Create and update are the same write: the service sets the whole entry at its path. */
async function writeGroup(ctx: KindContext, desired: Desired<LdapGroupSpec>) {
  const live = canonical(desired.spec);
  await secretsClient(ctx, desired.key).writeLdapGroup(
    mountOf(desired.key),
    desired.key.name,
    live,
    callOptions(ctx),
  );
  return entryObserved(access, desired.key, live);
}

export const ldapGroupKind: ResourceKind<LdapGroupSpec, LdapGroup> = {
  kind: 'LdapGroup',
  service: secretsService.name,
  description:
    'A directory (LDAP) group known to the auth method, with the policies its members get. metadata.mount is the mount (ldap by default).',
  specSchema: LdapGroupSpec,
  ...entryKindBase<LdapGroup>('LdapGroup', access),

  dependencies: ({ key }) => [configKey(mountOf(key), key.connection)],

  compare(desired, observed) {
    return { diffs: diffValues(canonical(desired.spec), canonical(observed.live)) };
  },
  // The users whose `groups` name the group get its policies: a policy change reaches them.
  impact: membersReached,
  render: (desired) => canonical(desired.spec),
  describe: (observed) => canonical(observed.live),

  create: writeGroup,
  update: (ctx, desired) => writeGroup(ctx, desired),
  async delete(ctx, observed) {
    await secretsClient(ctx, observed.key).deleteLdapGroup(
      mountOf(observed.key),
      observed.key.name,
      callOptions(ctx),
    );
  },
};
