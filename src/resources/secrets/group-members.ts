/**
 * The blast radius of a directory group's change: the users whose effective policies it alters. A
 * user gets a group's policies when its `groups` name the group, so those users are the ones a change
 * of the group's policies reaches: the manifest's users (what is about to be) and the service's (what
 * is), on the group's mount and connection.
 */
import { printable } from '../../common/printable.js';
import type { LdapGroup, LdapUser } from '../../clients/secrets/client.js';
import type { Desired, ImpactSubject, KindContext, Observed } from '../contract.js';
import { splitCommaList } from './common.js';
import { mountOf } from './entries.js';
import { ldapUserKind } from './ldap-user.js';

/** How many user names a plan lists before it only counts the rest. */
export const MEMBERS_SHOWN = 10;

function touchesPolicies(subject: ImpactSubject<{ policies?: string[] }, LdapGroup>): boolean {
  switch (subject.action) {
    case 'create':
      return (subject.desired?.spec.policies ?? []).length > 0;
    case 'delete':
      return (subject.observed?.live.policies ?? []).length > 0;
    default:
      return subject.diffs.some((d) => d.path === 'policies' || d.path.startsWith('policies'));
  }
}

type UserReader = (mount: string, connection: string | undefined) => Promise<Observed<LdapUser>[]>;

/**
 * The service's users of a mount, read once however many of the mount's groups change: reading them
 * costs a request per user.
 */
function userReader(ctx: KindContext): UserReader {
  const read = new Map<string, Promise<Observed<LdapUser>[]>>();
  return (mount, connection) => {
    const id = JSON.stringify([connection, mount]);
    let users = read.get(id);
    if (!users) {
      users = ldapUserKind.list!(ctx, {
        namespace: mount,
        ...(connection !== undefined ? { connection } : {}),
      });
      read.set(id, users);
    }
    return users;
  };
}

/** For each changed group, the users its policy change reaches (see `memberLine`). */
export async function membersReached(
  ctx: KindContext,
  subjects: readonly ImpactSubject<{ policies?: string[] }, LdapGroup>[],
  manifest: readonly Desired[],
): Promise<string[][]> {
  const users = userReader(ctx);
  const out: string[][] = [];
  // One after another: the reads of a mount are shared, and each read is already parallel inside.
  for (const subject of subjects) out.push(await memberLine(ctx, users, subject, manifest));
  return out;
}

/** `changes the effective policies of 3 users: alice, bob, carol`, or nothing when none is reached. */
async function memberLine(
  ctx: KindContext,
  users: UserReader,
  subject: ImpactSubject<{ policies?: string[] }, LdapGroup>,
  manifest: readonly Desired[],
): Promise<string[]> {
  if (!touchesPolicies(subject)) return [];
  const { key } = subject;
  const mount = mountOf(key);
  const members = new Set<string>();
  for (const d of manifest) {
    if (d.key.kind !== ldapUserKind.kind || d.ensure === 'absent') continue;
    if (mountOf(d.key) !== mount || d.key.connection !== key.connection) continue;
    if (splitCommaList((d.spec as { groups?: string[] }).groups).includes(key.name)) members.add(d.key.name);
  }
  let unread = false;
  try {
    const live = await users(mount, key.connection);
    for (const user of live)
      if (splitCommaList(user.live.groups).includes(key.name)) members.add(user.key.name);
  } catch (error) {
    // An interrupt stops the plan; any other failure leaves only this line incomplete, and says so.
    if (ctx.signal?.aborted) throw error;
    unread = true;
  }
  const caveat = unread ? " (the service's users could not be read: the manifest's only)" : '';
  if (members.size === 0) return unread ? [`reaches no user named in the manifest${caveat}`] : [];
  const names = [...members].sort();
  const shown = names.slice(0, MEMBERS_SHOWN).map((n) => printable(n));
  const more = names.length > shown.length ? `, and ${names.length - shown.length} more` : '';
  const count = `${names.length} user${names.length === 1 ? '' : 's'}`;
  return [`changes the effective policies of ${count}: ${shown.join(', ')}${more}${caveat}`];
}
