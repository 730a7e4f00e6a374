/**
 * A directory group's blast radius from what the service answers, with a service the sandbox cannot
 * play: one that names a user with terminal escapes, one that names a user twice, and one that
 * refuses to list its users; and from what the plan read already, which it does not read again.
 */
import { describe, expect, it } from 'vitest';
import {
  addressOf,
  type Desired,
  type KindContext,
  type Observed,
  type PlanReads,
} from '../../src/resources/contract.js';
import { membersReached } from '../../src/resources/secrets/group-members.js';

function contextWith(client: Record<string, unknown>): KindContext {
  return { client: () => client as never, option: () => false };
}

const group = {
  key: { kind: 'LdapGroup', name: 'ops', namespace: 'ldap' },
  action: 'update' as const,
  diffs: [{ path: 'policies[1]', op: 'add' as const, after: 'audit' }],
};
const manifestUser: Desired = {
  key: { kind: 'LdapUser', name: 'alice', namespace: 'ldap' },
  spec: { groups: ['ops'] },
};

describe('the users a group change reaches, as the service tells them', () => {
  it('shows a user name with control characters as one printable line, and reads the users once', async () => {
    let lists = 0;
    const ctx = contextWith({
      listLdapUsers: async () => {
        lists += 1;
        return ['evil\u001b[2J\n::error::x', 'zed'];
      },
      readLdapUser: async (_mount: string, name: string) => ({
        policies: [],
        groups: name === 'zed' ? 'other' : 'ops',
      }),
    });
    const second = { ...group, key: { ...group.key, name: 'devs' } };
    const lines = await membersReached(ctx, [group, second], [manifestUser]);
    expect(lines[0]).toEqual([
      'changes the effective policies of 2 users: alice, evil\\u001b[2J\\n::error::x',
    ]);
    expect(lines[1]).toEqual([]);
    expect(lists).toBe(1);
  });

  it("says the service's users could not be read, and still lists the manifest's", async () => {
    const ctx = contextWith({
      listLdapUsers: async () => {
        throw new Error('permission denied');
      },
    });
    const lines = await membersReached(ctx, [group], [manifestUser]);
    expect(lines).toEqual([
      [
        "changes the effective policies of 1 user: alice (the service's users could not be read: the manifest's only)",
      ],
    ]);
  });

  it('takes group names such as __proto__ and constructor as plain names, from manifest and service alike', async () => {
    const ctx = contextWith({
      listLdapUsers: async () => ['mallory', 'trent'],
      readLdapUser: async (_mount: string, name: string) => ({
        policies: [],
        groups: name === 'mallory' ? '__proto__, constructor' : 'toString',
      }),
    });
    const named = (name: string) => ({ ...group, key: { ...group.key, name } });
    const declared: Desired = {
      key: { kind: 'LdapUser', name: 'bob', namespace: 'ldap' },
      spec: { groups: ['constructor'] },
    };
    const lines = await membersReached(
      ctx,
      [named('__proto__'), named('constructor'), named('hasOwnProperty')],
      [declared],
    );
    expect(lines).toEqual([
      ['changes the effective policies of 1 user: mallory'],
      ['changes the effective policies of 2 users: bob, mallory'],
      [],
    ]);
  });

  it('is silent for a change that leaves the policies alone', async () => {
    const ctx = contextWith({});
    expect(await membersReached(ctx, [{ ...group, diffs: [] }], [manifestUser])).toEqual([[]]);
  });
});

describe('the users a group change reaches, from what the plan read', () => {
  const observedUser = (name: string, groups: string): Observed => ({
    key: { kind: 'LdapUser', name, namespace: 'ldap' },
    live: { policies: [], groups },
  });

  it("takes the plan's list of the mount's users and asks the service nothing", async () => {
    const ctx = contextWith({});
    const reads: PlanReads = {
      listed: (kind, scope) =>
        kind === 'LdapUser' && scope.namespace === 'ldap' && scope.connection === undefined
          ? Promise.resolve([observedUser('bob', 'ops'), observedUser('zed', 'other')])
          : undefined,
      observed: () => undefined,
    };
    expect(await membersReached(ctx, [group], [manifestUser], reads)).toEqual([
      ['changes the effective policies of 2 users: alice, bob'],
    ]);
  });

  it('reads only the users the plan did not read, each once though the service names one twice', async () => {
    const asked: string[] = [];
    const ctx = contextWith({
      listLdapUsers: async () => ['alice', 'gone', 'zed', 'zed'],
      readLdapUser: async (_mount: string, name: string) => {
        asked.push(name);
        return { policies: [], groups: 'ops' };
      },
    });
    // The plan read alice (a member) and gone (not there then: the plan creates it).
    const known = new Map<string, Observed | null>([
      [addressOf({ kind: 'LdapUser', name: 'alice', namespace: 'ldap' }), observedUser('alice', 'ops')],
      [addressOf({ kind: 'LdapUser', name: 'gone', namespace: 'ldap' }), null],
    ]);
    const reads: PlanReads = { listed: () => undefined, observed: (key) => known.get(addressOf(key)) };
    expect(await membersReached(ctx, [group], [manifestUser], reads)).toEqual([
      ['changes the effective policies of 2 users: alice, zed'],
    ]);
    expect(asked).toEqual(['zed']);
  });
});
