/**
 * LdapUser: a local user of the directory auth method: policies of its own, and local groups added
 * to those the directory reports. metadata.name is the username, metadata.mount the method's mount
 * (`ldap` by default); spec.policies and spec.groups are YAML lists, sent as comma-separated strings.
 * A user is applied after the groups it names and its mount's configuration.
 */
import { type Static, Type } from '@sinclair/typebox';
import type { LdapUser } from '../../clients/secrets/client.js';
import { secretsService } from '../../clients/secrets/definition.js';
import type { ResourceKey } from '../contract.js';
import { configKey, LOWER_CASE_NAME, normalisePolicies, sortedSet, splitCommaList } from './common.js';
import { type EntryAccess, type EntryKind, entryKindBase, mountOf } from './entries.js';
import type { SpecRules } from '../contract.js';

const LdapUserSpec = Type.Object(
  {
    // Lists, or one comma-separated string each, as the service itself takes them.
    policies: Type.Optional(
      Type.Union([Type.Array(Type.String({ minLength: 1, pattern: '^[^,]+$' })), Type.String()], {
        description:
          "the user's own policies (the service lower-cases them): a list, or one comma-separated string",
      }),
    ),
    groups: Type.Optional(
      Type.Union(
        [
          Type.Array(
            Type.String({
              minLength: 1,
              pattern: LOWER_CASE_NAME,
              // Said in words where a value is refused, as a group's own name is, not as the pattern alone.
              description:
                'an LdapGroup name, in lower case (the service lower-cases names), without "/", "," or spaces',
            }),
          ),
          // Each name of the string is held to the same rule (ldapUserRules).
          Type.String(),
        ],
        {
          description:
            'local groups (LdapGroup names on the same mount) added to those the directory reports: a list, or one comma-separated string',
        },
      ),
    ),
  },
  { additionalProperties: false },
);
export type LdapUserSpec = Static<typeof LdapUserSpec>;

function canonicalSpec(spec: LdapUserSpec) {
  return {
    policies: normalisePolicies(splitCommaList(spec.policies)),
    groups: sortedSet(splitCommaList(spec.groups)),
  };
}

function canonicalLive(live: LdapUser) {
  return { policies: normalisePolicies(live.policies ?? []), groups: sortedSet(splitCommaList(live.groups)) };
}

const access: EntryAccess<LdapUserSpec, LdapUser> = {
  collection: 'users',
  listNames: (client, mount, opts) => client.listLdapUsers(mount, opts),
  read: ({ client, mount, name, opts }) => client.readLdapUser(mount, name, opts),
  async write({ client, mount, name, opts }, spec) {
    const wanted = canonicalSpec(spec);
    await client.writeLdapUser(mount, name, wanted, opts);
    return { policies: wanted.policies, groups: wanted.groups.join(',') };
  },
  remove: ({ client, mount, name, opts }) => client.deleteLdapUser(mount, name, opts),
  canonical: canonicalLive,
  canonicalSpec,
};

/** A group name a comma-separated `groups` holds is held to the list items' rule. */
const GROUP_NAME = new RegExp(LOWER_CASE_NAME, 'u');

export const ldapUserKind: EntryKind<LdapUserSpec, LdapUser> & SpecRules<LdapUserSpec> = {
  kind: 'LdapUser',
  service: secretsService.name,
  description:
    'A directory (LDAP) user known to the auth method: its own policies and extra local groups. metadata.mount is the mount (ldap by default).',
  specSchema: LdapUserSpec,
  ...entryKindBase('LdapUser', access),
  // Comma-separated strings on the service, sets here: a plan shows the policies and groups that come and go.
  listAttributes: ['policies', 'groups'],

  validateSpec(spec) {
    if (typeof spec.groups !== 'string') return [];
    // Named by its field's place among the commas (empty fields counted, as the user counts them),
    // not quoted: the string may have come from a variable. A reference left unfilled (an unset
    // variable) is reported as that, not as a name.
    return spec.groups.split(',').flatMap((field, i) => {
      const name = field.trim();
      if (name === '' || name.includes('${') || GROUP_NAME.test(name)) return [];
      return [
        {
          pointer: '/groups',
          message: `group ${i + 1} of the comma-separated groups is not an LdapGroup name: in lower case (the service lower-cases names), without "/" or spaces`,
        },
      ];
    });
  },

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
};
