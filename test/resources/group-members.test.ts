/**
 * A directory group's blast radius from what the service answers, with a service the sandbox cannot
 * play: one that names a user with terminal escapes, and one that refuses to list its users.
 */
import { describe, expect, it } from 'vitest';
import type { Desired, KindContext } from '../../src/resources/contract.js';
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

  it('is silent for a change that leaves the policies alone', async () => {
    const ctx = contextWith({});
    expect(await membersReached(ctx, [{ ...group, diffs: [] }], [manifestUser])).toEqual([[]]);
  });
});
