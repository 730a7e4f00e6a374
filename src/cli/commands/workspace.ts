/** `converge workspace list|show|lock|unlock|force-unlock|delete`: operator commands on workspaces. */
import type { Workspace, WorkspaceRef, WorkspacesClient } from '../../clients/workspaces/client.js';
import { HttpStatusError } from '../../clients/http/errors.js';
import { printable, jsonOut } from '../../common/printable.js';
import { workspacesService } from '../../clients/workspaces/definition.js';
import { describeLockHolder } from '../../clients/workspaces/lock-holder.js';
import { askYesNo } from '../ask-yes-no.js';
import { withClient } from '../service-client.js';
import { CliError, EXIT } from '../exit-codes.js';
import { type Io, write } from '../io.js';
import { keyValues, table } from '../table.js';
import { describeRef, parseWorkspaceRef, workspaceId } from '../workspace-ref.js';

export interface WorkspaceListFlags {
  org?: string;
  search?: string;
  wildcard?: string;
  tags?: string;
  excludeTags?: string;
  project?: string;
  json?: boolean;
}

/**
 * Reads ask the service to include the project (its name) and the lock holder (`username` or team
 * `name`), so both show as names without a request per workspace.
 */
const READ_INCLUDES = ['project', 'locked_by'];

function lockText(w: Workspace): string {
  if (!w.attributes.locked) return 'no';
  return w.lockedBy ? `by ${describeLockHolder(w.lockedBy, w.lockedByName)}` : 'yes';
}

function details(w: Workspace): string {
  const a = w.attributes;
  const vcs = a['vcs-repo'] as { identifier?: string; branch?: string } | null | undefined;
  const rows: [string, string][] = [
    ['ID', w.id],
    ['Name', w.name],
    ['Organization', w.organization],
    ['Project', w.projectName ?? w.projectId ?? ''],
    ['Description', String(a.description ?? '')],
    ['Execution mode', String(a['execution-mode'] ?? '')],
    ['Engine version', String(a['engine-version'] ?? '')],
    ['Auto apply', String(a['auto-apply'] ?? '')],
    ['Working directory', String(a['working-directory'] ?? '')],
    ['VCS repository', vcs ? `${vcs.identifier ?? ''}${vcs.branch ? ` (${vcs.branch})` : ''}` : ''],
    ['Tags', ((a['tag-names'] as string[] | undefined) ?? []).join(', ')],
    ['Locked', lockText(w)],
    ...(w.lockReason ? [['Lock reason', w.lockReason] satisfies [string, string]] : []),
    ['Resources', String(a['resource-count'] ?? 0)],
    ['Current state', w.currentStateVersionId ?? ''],
    ['Created by', String(a['source-name'] ?? '')],
    ['Updated', String(a['updated-at'] ?? '')],
  ];
  return keyValues(rows);
}

function splitList(value: string | undefined): string[] | undefined {
  return value === undefined
    ? undefined
    : value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
}

export async function workspaceListCommand(flags: WorkspaceListFlags, io: Io): Promise<number> {
  return withClient(io, workspacesService, async (client) => {
    const org = flags.org ?? client.defaultOrganization;
    if (!org)
      throw new CliError('which organization? pass --org ORG or set CONVERGE_WORKSPACES_ORGANIZATION');
    const tags = splitList(flags.tags);
    const excludeTags = splitList(flags.excludeTags);
    const workspaces = await client
      .listWorkspaces(org, {
        include: READ_INCLUDES,
        ...(flags.search !== undefined ? { name: flags.search } : {}),
        ...(flags.wildcard !== undefined ? { wildcardName: flags.wildcard } : {}),
        ...(tags ? { tags } : {}),
        ...(excludeTags ? { excludeTags } : {}),
        ...(flags.project !== undefined ? { projectId: flags.project } : {}),
      })
      .catch((error: unknown) => {
        // The service answers an organization that is not there (or hidden from this token) with a
        // bare 404: said in the words plan and export use, not as the request's encoded URL.
        if (error instanceof HttpStatusError && error.status === 404)
          throw new CliError(`organization "${printable(org)}" does not exist, or this token may not see it`);
        throw error;
      });
    if (flags.json) {
      write(io.stdout, jsonOut(workspaces, null, 2));
    } else if (workspaces.length === 0) {
      const filtered =
        flags.search !== undefined ||
        flags.wildcard !== undefined ||
        tags !== undefined ||
        excludeTags !== undefined ||
        flags.project !== undefined;
      write(io.stdout, filtered ? `No workspaces in ${org} match the filters.` : `No workspaces in ${org}.`);
    } else {
      write(
        io.stdout,
        table(
          ['NAME', 'ID', 'PROJECT', 'MODE', 'LOCKED', 'RESOURCES', 'UPDATED'],
          workspaces.map((w) => [
            w.name,
            w.id,
            w.projectName ?? w.projectId ?? '',
            String(w.attributes['execution-mode'] ?? ''),
            lockText(w),
            String(w.attributes['resource-count'] ?? 0),
            String(w.attributes['updated-at'] ?? ''),
          ]),
        ),
      );
    }
    return EXIT.ok;
  });
}

export async function workspaceShowCommand(arg: string, flags: { json?: boolean }, io: Io): Promise<number> {
  return withClient(io, workspacesService, async (client) => {
    const ref = parseWorkspaceRef(arg, client.defaultOrganization);
    const w = await client.readWorkspace(ref, { include: READ_INCLUDES });
    if (!w) throw new CliError(`workspace ${describeRef(ref)} not found (or this token may not read it)`);
    write(io.stdout, flags.json ? jsonOut(w, null, 2) : details(w));
    return EXIT.ok;
  });
}

export type LockAction = 'lock' | 'unlock' | 'force-unlock';

export async function workspaceLockCommand(
  action: LockAction,
  arg: string,
  flags: { reason?: string },
  io: Io,
): Promise<number> {
  return withClient(io, workspacesService, async (client) => {
    const ref = parseWorkspaceRef(arg, client.defaultOrganization);
    const id = await workspaceId(client, ref);
    const w =
      action === 'lock'
        ? await lockNamingHolder(client, ref, id, flags.reason ?? '')
        : action === 'unlock'
          ? await unlockOwn(client, ref, id)
          : await client.forceUnlockWorkspace(id);
    // The action's answer does not include the holder; after a lock it is the caller, by definition.
    const state = !w.attributes.locked
      ? 'unlocked'
      : action === 'lock'
        ? `locked by you${flags.reason ? ` (reason: ${JSON.stringify(flags.reason)})` : ''}`
        : `locked (${lockText(w)})`;
    write(io.stdout, `${describeRef(ref)} (${w.id}): ${state}`);
    return EXIT.ok;
  });
}

/**
 * Who holds a workspace's lock and why, as the refusals say it: `user bob` and ` (reason: "r")`. Both
 * are the service's text: one printable line each.
 */
function heldBy(w: Workspace, lockedBy: NonNullable<Workspace['lockedBy']>): { who: string; why: string } {
  return {
    who: printable(describeLockHolder(lockedBy, w.lockedByName)),
    why: w.lockReason ? ` (reason: ${printable(JSON.stringify(w.lockReason))})` : '',
  };
}

/**
 * A lock refused because the workspace is locked already names who holds it and why, as `unlock`
 * does: the service's 409 said only "already locked".
 */
async function lockNamingHolder(
  client: WorkspacesClient,
  ref: WorkspaceRef,
  id: string,
  reason: string,
): Promise<Workspace> {
  try {
    return await client.lockWorkspace(id, reason);
  } catch (error) {
    if (!(error instanceof HttpStatusError) || error.status !== 409) throw error;
    const w = await client.readWorkspace({ id }, { include: READ_INCLUDES }).catch(() => undefined);
    if (!w?.attributes.locked || !w.lockedBy) throw error;
    const { who, why } = heldBy(w, w.lockedBy);
    throw new CliError(
      `workspace ${describeRef(ref)} is already locked by ${who}${why} (the service answered 409 Conflict): nothing changed`,
    );
  }
}

/**
 * `unlock` releases only the caller's own lock. The service's refusal names the holder by id
 * (`User user-83Fp…`) while the plan and `workspace show` name them (`user bob`), so on a 409 the
 * workspace is read again with its holder included and the refusal is worded the way the plan
 * words it, with the commands that do release someone else's lock.
 */
async function unlockOwn(client: WorkspacesClient, ref: WorkspaceRef, id: string): Promise<Workspace> {
  try {
    return await client.unlockWorkspace(id);
  } catch (error) {
    if (!(error instanceof HttpStatusError) || error.status !== 409) throw error;
    const w = await client.readWorkspace({ id }, { include: READ_INCLUDES });
    const name = describeRef(ref);
    if (w && !w.attributes.locked)
      throw new CliError(
        `workspace ${name} is not locked: nothing to unlock (the service answered 409 Conflict)`,
      );
    if (!w?.lockedBy) throw error;
    // The holder's name and reason are the service's text: one printable line each.
    const { who, why: reason } = heldBy(w, w.lockedBy);
    throw new CliError(
      [
        `workspace ${name} is locked by ${who}${reason}: only they may unlock it (the service answered 409 Conflict).`,
        `To release it anyway (admin access): \`converge workspace force-unlock ${name}\`,`,
        'or `converge apply --force-unlock` where the manifest says `locked: false`.',
      ].join('\n'),
    );
  }
}

export async function workspaceDeleteCommand(
  arg: string,
  flags: { force?: boolean; autoApprove?: boolean; yes?: boolean; color?: boolean },
  io: Io,
): Promise<number> {
  return withClient(io, workspacesService, async (client) => {
    const ref = parseWorkspaceRef(arg, client.defaultOrganization);
    const how = flags.force ? 'force-delete (even if it manages resources)' : 'safe-delete';
    if (!flags.autoApprove && !flags.yes) {
      const reply = await askYesNo(io, {
        message: `${how} workspace ${describeRef(ref)}?`,
        color: flags.color,
        noTerminal: `refusing to ${how} ${describeRef(ref)} without confirmation: pass --yes`,
      });
      if (reply.answer !== 'yes') {
        const interrupted = reply.answer === 'interrupted';
        write(io.stderr, `${interrupted ? 'Interrupted' : 'Cancelled'}; nothing was deleted.`);
        return interrupted ? reply.exitCode : EXIT.error;
      }
    }
    try {
      if (flags.force) await client.forceDeleteWorkspace(ref);
      else await client.safeDeleteWorkspace(ref);
    } catch (error) {
      throw await lockedDeleteError(client, ref, error);
    }
    write(io.stdout, `Deleted workspace ${describeRef(ref)}.`);
    return EXIT.ok;
  });
}

/**
 * A delete refused because the workspace is locked (409) names the holder and the command that
 * releases the lock: the service said only "unlock it first".
 */
async function lockedDeleteError(
  client: WorkspacesClient,
  ref: WorkspaceRef,
  error: unknown,
): Promise<unknown> {
  if (!(error instanceof HttpStatusError) || error.status !== 409) return error;
  const w = await client.readWorkspace(ref, { include: READ_INCLUDES }).catch(() => undefined);
  if (!w?.attributes.locked || !w.lockedBy) return error;
  const name = describeRef(ref);
  const { who, why } = heldBy(w, w.lockedBy);
  return new CliError(
    [
      `workspace ${name} is locked by ${who}${why}, so it was not deleted (the service answered 409 Conflict).`,
      `Release the lock first: \`converge workspace unlock ${name}\` (your own lock), or \`converge workspace force-unlock ${name}\` (someone else's, with admin access).`,
    ].join('\n'),
  );
}
