/**
 * LdapGroup: a local group of the directory auth method, attaching policies to a directory group of
 * the same name. metadata.name is the group name, metadata.mount the method's mount (`ldap` by
 * default); spec.policies is a YAML list, sent as the comma-separated string the service takes.
 */
import { type Static, Type } from '@sinclair/typebox';
import type { LdapGroup } from '../../clients/secrets/client.js';
import { secretsService } from '../../clients/secrets/definition.js';
import type { ChangeImpact } from '../contract.js';
import { configKey, normalisePolicies, splitCommaList } from './common.js';
import { membersReached } from './group-members.js';
import { type EntryAccess, type EntryKind, entryKindBase, mountOf } from './entries.js';

const LdapGroupSpec = Type.Object(
  {
    // A list, or one comma-separated string as the service itself takes (and LdapConfig's lists).
    policies: Type.Optional(
      Type.Union([Type.Array(Type.String({ minLength: 1, pattern: '^[^,]+$' })), Type.String()], {
        description:
          'policies of members of this directory group (the service lower-cases them): a list, or one comma-separated string',
      }),
    ),
  },
  { additionalProperties: false },
);
export type LdapGroupSpec = Static<typeof LdapGroupSpec>;

function canonical(spec: { policies?: string | readonly string[] | null }) {
  return { policies: normalisePolicies(splitCommaList(spec.policies ?? [])) };
}

const access: EntryAccess<LdapGroupSpec, LdapGroup> = {
  collection: 'groups',
  listNames: (client, mount, opts) => client.listLdapGroups(mount, opts),
  read: ({ client, mount, name, opts }) => client.readLdapGroup(mount, name, opts),
  async write({ client, mount, name, opts }, spec) {
    const live = canonical(spec);
    await client.writeLdapGroup(mount, name, live, opts);
    return live;
  },
  remove: ({ client, mount, name, opts }) => client.deleteLdapGroup(mount, name, opts),
  canonical,
  canonicalSpec: canonical,
};

export const ldapGroupKind: EntryKind<LdapGroupSpec, LdapGroup> & ChangeImpact<LdapGroupSpec, LdapGroup> = {
  kind: 'LdapGroup',
  service: secretsService.name,
  description:
    'A directory (LDAP) group known to the auth method, with the policies its members get. metadata.mount is the mount (ldap by default).',
  specSchema: LdapGroupSpec,
  ...entryKindBase('LdapGroup', access),
  // A comma-separated string on the service, a set here: a plan shows the policies that come and go.
  listAttributes: ['policies'],

  // The users whose `groups` name the group get its policies: a policy change reaches them.
  impact: membersReached,

  dependencies: ({ key }) => [configKey(mountOf(key), key.connection)],
};
