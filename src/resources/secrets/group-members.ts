/**
 * The blast radius of a directory group's change: the users whose effective policies it alters. A
 * user gets a group's policies when its `groups` name the group, so those users are the ones a change
 * of the group's policies reaches: the manifest's users (what is about to be) and the service's (what
 * is), on the group's mount and connection. The service's users are the plan's own reads wherever
 * it made them: a plan that listed the mount's users pays nothing more for the blast radius.
 */
import pLimit from 'p-limit';
import { printable } from '../../common/printable.js';
import { HttpStatusError } from '../../clients/http/errors.js';
import type { LdapGroup, LdapUser } from '../../clients/secrets/client.js';
import {
  type Desired,
  type ImpactSubject,
  type KindContext,
  listedKey,
  type ListScope,
  NO_PLAN_READS,
  type Observed,
  type PlanReads,
} from '../contract.js';
import { secretsClient, splitCommaList } from './common.js';
import { callOptions, mountOf } from './entries.js';
import { ldapUserKind } from './ldap-user.js';

/** Reads at a time of users the plan did not read, when the run does not say (`ctx.parallelism`). */
const USER_READ_CONCURRENCY = 8;

/** How many user names a plan lists before it only counts the rest. */
export const MEMBERS_SHOWN = 10;

function touchesPolicies(subject: ImpactSubject<{ policies?: string | string[] }, LdapGroup>): boolean {
  switch (subject.action) {
    case 'create':
      return splitCommaList(subject.desired?.spec.policies).length > 0;
    case 'delete':
      return (subject.observed?.live.policies ?? []).length > 0;
    default:
      return subject.diffs.some((d) => d.path === 'policies' || /^policies[.[]/.test(d.path));
  }
}

/** The usernames on a mount; none where nothing is mounted (the plan's mount check reports that). */
async function userNames(ctx: KindContext, scope: ListScope & { namespace: string }): Promise<string[]> {
  try {
    return await secretsClient(ctx, scope).listLdapUsers(scope.namespace, callOptions(ctx));
  } catch (error) {
    if (error instanceof HttpStatusError && error.status === 404) return [];
    throw error;
  }
}

/**
 * The service's users of a mount. The plan's list when it made one (no request); otherwise the names
 * (one request) and a read of each user the plan did not read itself, since the API has no bulk read.
 */
async function usersOf(
  ctx: KindContext,
  reads: PlanReads,
  scope: ListScope & { namespace: string },
): Promise<Observed<LdapUser>[]> {
  const listed = reads.listed(ldapUserKind.kind, scope);
  if (listed) return (await listed) as Observed<LdapUser>[];
  // A service may name a user twice: it is read once.
  const names = [...new Set(await userNames(ctx, scope))];
  const limit = pLimit(ctx.parallelism ?? USER_READ_CONCURRENCY);
  const users = await Promise.all(
    names.map((name) =>
      limit(async () => {
        const key = listedKey(ldapUserKind.kind, name, scope);
        const known = reads.observed(key);
        // Read by the plan and not there then: the plan creates it, and the manifest says its groups.
        if (known !== undefined) return (known ?? undefined) as Observed<LdapUser> | undefined;
        return ldapUserKind.observe(ctx, key);
      }),
    ),
  );
  return users.filter((u): u is Observed<LdapUser> => u !== undefined);
}

/** Who is in each group of one mount and connection: group name → usernames. */
type Membership = Map<string, Set<string>>;

const scopeId = (mount: string, connection: string | undefined) =>
  JSON.stringify([connection ?? null, mount]);

function addMembers(into: Membership, groups: unknown, user: string): void {
  for (const group of splitCommaList(groups as string[] | string | undefined)) {
    let members = into.get(group);
    if (!members) into.set(group, (members = new Set()));
    members.add(user);
  }
}

/**
 * The manifest's users by mount and group, indexed in one pass: a plan that creates hundreds of
 * groups asked every group about every object of the manifest before (time quadratic in its size).
 */
function manifestMembership(manifest: readonly Desired[]): Map<string, Membership> {
  const byScope = new Map<string, Membership>();
  for (const d of manifest) {
    if (d.key.kind !== ldapUserKind.kind || d.ensure === 'absent') continue;
    const id = scopeId(mountOf(d.key), d.key.connection);
    let membership = byScope.get(id);
    if (!membership) byScope.set(id, (membership = new Map()));
    addMembers(membership, (d.spec as { groups?: string[] }).groups, d.key.name);
  }
  return byScope;
}

/** The service's users of a mount by group, read and indexed once however many of its groups change. */
function liveMembership(
  ctx: KindContext,
  reads: PlanReads,
): (mount: string, connection: string | undefined) => Promise<Membership> {
  const read = new Map<string, Promise<Membership>>();
  return (mount, connection) => {
    const id = scopeId(mount, connection);
    let membership = read.get(id);
    if (!membership) {
      membership = usersOf(ctx, reads, {
        namespace: mount,
        ...(connection !== undefined ? { connection } : {}),
      }).then((users) => {
        const index: Membership = new Map();
        for (const user of users) addMembers(index, user.live.groups, user.key.name);
        return index;
      });
      read.set(id, membership);
    }
    return membership;
  };
}

/** For each changed group, the users its policy change reaches (see `memberLine`). */
export async function membersReached(
  ctx: KindContext,
  subjects: readonly ImpactSubject<{ policies?: string[] }, LdapGroup>[],
  manifest: readonly Desired[],
  reads: PlanReads = NO_PLAN_READS,
): Promise<string[][]> {
  const live = liveMembership(ctx, reads);
  const declared = manifestMembership(manifest);
  const out: string[][] = [];
  // One after another: the reads of a mount are shared, and each read is already parallel inside.
  for (const subject of subjects) out.push(await memberLine(ctx, live, declared, subject, reads));
  return out;
}

/** `changes the effective policies of 3 users: alice, bob, carol`, or nothing when none is reached. */
async function memberLine(
  ctx: KindContext,
  live: ReturnType<typeof liveMembership>,
  declared: ReadonlyMap<string, Membership>,
  subject: ImpactSubject<{ policies?: string[] }, LdapGroup>,
  reads: PlanReads,
): Promise<string[]> {
  if (!touchesPolicies(subject)) return [];
  const { key } = subject;
  const mount = mountOf(key);
  const members = new Set(declared.get(scopeId(mount, key.connection))?.get(key.name));
  // A user the same plan deletes keeps no policies to change.
  const goes = (user: string) =>
    reads.deleting?.({
      kind: ldapUserKind.kind,
      name: user,
      namespace: mount,
      ...(key.connection !== undefined ? { connection: key.connection } : {}),
    }) === true;
  let unread = false;
  try {
    for (const user of (await live(mount, key.connection)).get(key.name) ?? [])
      if (!goes(user)) members.add(user);
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
