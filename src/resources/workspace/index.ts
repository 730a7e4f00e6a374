/**
 * Workspace: a workspace of the workspace service. metadata.name is the workspace name and
 * metadata.namespace its organization (default: the connection's organization); spec holds the
 * service's body keys plus a declarative lock, a state file to seed, and the deletion mode.
 */
import { Type } from '@sinclair/typebox';
import { workspacesService } from '../../clients/workspaces/definition.js';
import type { Project, Workspace, WorkspacesClient } from '../../clients/workspaces/client.js';
import { HttpStatusError } from '../../clients/http/errors.js';
import { describeLockHolder } from '../../clients/workspaces/lock-holder.js';
import { parseStateFile } from '../../clients/workspaces/state-file.js';
import { unlockOwnLock } from '../../clients/workspaces/state-push.js';
import type {
  ApplySwitches,
  Desired,
  DetailReads,
  Exportable,
  KindContext,
  LocalFiles,
  Namespaced,
  Observed,
  PlanProblem,
  ChangeImpact,
  DeletionRefusal,
  VersionChanges,
  Prunable,
  RenderDetails,
  ResourceKey,
  ResourceKind,
  ServiceChecks,
  SpecRules,
} from '../contract.js';
import { listedKey } from '../contract.js';
import {
  diffAttributes,
  liveAttribute,
  ORDERLESS_ATTRIBUTES,
  serviceAttributes,
  updateBody,
} from './compare.js';
import { exportWorkspace } from './export.js';
import {
  CREATE_DEFAULTS,
  SERVICE_KEYS,
  type WorkspaceSpec,
  WorkspaceSpec as WorkspaceSpecSchema,
  workspaceRules,
} from './schema.js';
import { sharedWorkspaceList, takeWorkspaceList, walkWorkspaces } from './shared-list.js';
import { compareState, describeState, type LiveStateInfo, type LocalState, readLocalState } from './state.js';
import { groupBy } from '../../common/group-by.js';
import { printable } from '../../common/printable.js';
import { holdingLock, NOT_HELD } from '../../common/held-locks.js';
import { abandonedHere, abandonedPushNote, PUSH_REASON_PREFIX, pushLocalState } from './push.js';

/** The marker Converge sets on the workspaces it creates: only those are prune candidates. */
export const SOURCE_NAME = 'converge';

/**
 * The description of a workspace that holds a Converge inventory (`CONVERGE_INVENTORY=workspace:…`),
 * as the inventory writes it when it makes one: how a plan knows not to delete another run's records.
 */
export const INVENTORY_WORKSPACE_DESCRIPTION =
  'Converge inventory: the objects Converge manages (written by converge apply)';

export interface WorkspaceLive {
  workspace: Workspace;
  /** Who the token is (user tokens only), to tell our own lock from someone else's. */
  me?: { id: string; type: string };
  /** The current state when the manifest seeds one: `null` when there is none. */
  state?: LiveStateInfo | null;
}

interface WorkspaceLocal {
  state?: LocalState;
}

/**
 * A create-only attribute (`source-url`) the manifest changed on an existing workspace: the service
 * keeps what it was created with, so no change is planned, and the plan says so rather than show
 * nothing where the reviewer sees a changed line in the pull request.
 */
function createOnlyNote(spec: WorkspaceSpec, live: Workspace): string | undefined {
  const wanted = spec['source-url'];
  const kept = live.attributes['source-url'] ?? null;
  if (wanted === undefined || wanted === kept) return undefined;
  return `source-url is set only when a workspace is created: the service keeps ${JSON.stringify(kept)}, not ${JSON.stringify(wanted)}, and no change is planned (delete and create the workspace to change it)`;
}

function client(ctx: KindContext, key: ResourceKey): WorkspacesClient {
  return ctx.client(workspacesService, key.connection);
}

/** The object's organization: metadata.namespace, or the connection's default organization. */
function organizationIn(key: ResourceKey, settings: { organization?: string }): string {
  const org = key.namespace ?? settings.organization;
  if (!org) {
    // The environment's default organization is the default connection's alone: on a Connection,
    // only its own `organization` can stand in.
    throw new Error(
      key.connection === undefined
        ? `Workspace "${key.name}" names no organization: set metadata.namespace, or CONVERGE_WORKSPACES_ORGANIZATION`
        : `Workspace "${key.name}" names no organization: set metadata.namespace, or organization in the spec of Connection "${key.connection}"`,
    );
  }
  return org;
}

/** Keys reach the kind with their effective namespace filled in; the client's default is a fallback. */
function organizationOf(ctx: KindContext, key: ResourceKey): string {
  const fallback = key.namespace === undefined ? client(ctx, key).defaultOrganization : undefined;
  return organizationIn(key, fallback === undefined ? {} : { organization: fallback });
}

/** `--force-unlock`: release locks someone else holds where the manifest says `locked: false`. */
const FORCE_UNLOCK = 'force-unlock';

function observedOf(
  key: ResourceKey,
  workspace: Workspace,
  extra: Partial<WorkspaceLive> = {},
): Observed<WorkspaceLive> {
  return {
    key,
    id: workspace.id,
    live: { workspace, ...extra },
    // updated-at does not move on a lock or a state push: the lock holder and the current state
    // version are part of what a saved plan must find unchanged.
    version: [
      workspace.attributes['updated-at'] ?? '',
      workspace.lockedBy ? `${workspace.lockedBy.type}/${workspace.lockedBy.id}` : 'unlocked',
      // The reason too: the same user's lock taken again by another run is another lock.
      workspace.lockReason ?? '',
      workspace.currentStateVersionId ?? 'no-state',
    ].join('|'),
  };
}

/** The parts of a workspace's version (`observedOf`), named as a stale refusal says them. */
const VERSION_PARTS = ['settings updated at', 'lock', 'lock reason', 'current state version'] as const;

/** A version's parts: the lock reason, third, may itself hold `|`; the others never do. */
function versionParts(version: string): string[] | undefined {
  const parts = version.split('|');
  if (parts.length < VERSION_PARTS.length) return undefined;
  return [parts[0]!, parts[1]!, parts.slice(2, -1).join('|'), parts[parts.length - 1]!];
}

/** `lock unlocked → users/user-9`: the parts of two workspace versions that differ. */
function workspaceVersionChange(planned: unknown, now: unknown): string | undefined {
  if (typeof planned !== 'string' || typeof now !== 'string') return undefined;
  const before = versionParts(planned);
  const after = versionParts(now);
  if (!before || !after) return undefined;
  const show = (v: string | undefined) => (v === '' || v === undefined ? '(none)' : printable(v));
  const moved = VERSION_PARTS.flatMap((part, i) =>
    before[i] === after[i] ? [] : [`${part} ${show(before[i])} → ${show(after[i])}`],
  );
  return moved.length > 0 ? moved.join('; ') : undefined;
}

/**
 * Related resources every read of the plan asks for: the project's name, and the lock holder's name
 * for the messages that show it, at no extra request.
 */
const READ_INCLUDES = ['project', 'locked_by'];

/** `user bob (reason: "change freeze")`: who holds the lock, and why when they said. */
function lockDescription(w: Workspace): string {
  const who = w.lockedBy ? describeLockHolder(w.lockedBy, w.lockedByName) : 'someone else';
  return w.lockReason ? `${who} (reason: ${JSON.stringify(w.lockReason)})` : who;
}

/**
 * One identity lookup per client and run, shared by every workspace: keyed by the client itself
 * (`root`), not by the view of it each change gets (`withScope`).
 */
const identities = new WeakMap<object, Promise<{ id: string; type: string } | undefined>>();
function whoAmI(c: WorkspacesClient): Promise<{ id: string; type: string } | undefined> {
  const known = identities.get(clientKey(c));
  if (known) return known;
  const found = c.whoAmI();
  identities.set(clientKey(c), found);
  return found;
}

/** The client a change's scoped view was made from (`root`), or the client itself. */
function clientKey(c: WorkspacesClient): object {
  return (c as Partial<Pick<WorkspacesClient, 'root'>>).root ?? c;
}

/**
 * Takes the lock the manifest asks for (`locked: true`, with its `lock-reason`), sent again after a
 * lost answer (a 503, a dropped connection) as a read is: a second lock changes nothing, it is only
 * refused with 409. A refusal is read back: the workspace locked by this token with this reason is
 * the lock asked for, whichever send took it; any other lock is someone else's, and the refusal stands.
 * Sent once, one 503 failed the apply and left a workspace the manifest froze unlocked.
 */
async function takeLock(c: WorkspacesClient, id: string, reason: string): Promise<Workspace> {
  try {
    return await c.lockWorkspace(id, reason, { resend: true });
  } catch (error) {
    if (!(error instanceof HttpStatusError && error.status === 409)) throw error;
    const [now, me] = await Promise.all([
      c.readWorkspace({ id }).catch(() => undefined),
      whoAmI(c).catch(() => undefined),
    ]);
    // Without an identity (a token that may not read its account) the refusal stands: a common
    // reason ("change freeze") does not tell this token's lock from another user's.
    const mine = now?.attributes.locked && me !== undefined && now.lockedBy?.id === me.id;
    if (now && mine && (now.lockReason ?? '') === reason) return now;
    throw error;
  }
}

/**
 * Releases a lock this token holds, known by its reason: an unlock whose answer is lost is read back
 * and sent again only while that lock is still there (`unlockOwnLock`), never blindly, which could
 * release a lock another run took meanwhile.
 */
async function releaseOwnLock(c: WorkspacesClient, w: Workspace): Promise<Workspace> {
  const after = await unlockOwnLock(c, w.id, w.lockReason ?? '');
  // Locked by someone else meanwhile (another reason, or another user's 409): our lock is gone, but
  // the workspace is not unlocked, which is what every caller here needs.
  if (after.attributes.locked)
    throw new Error(
      `workspace ${w.organization}/${w.name} was locked by someone else meanwhile${after.lockReason ? ` (reason: "${printable(after.lockReason)}")` : ''}; it was not unlocked`,
    );
  return after;
}

function lockedByMe(live: WorkspaceLive): boolean {
  const by = live.workspace.lockedBy;
  return Boolean(by && live.me && by.id === live.me.id);
}

function localOf(desired: Desired<WorkspaceSpec>): WorkspaceLocal {
  return (desired.local ?? {}) as WorkspaceLocal;
}

/** One project list per client and organization, shared by the plan-time check, creates and updates. */
const projectLists = new WeakMap<object, Map<string, Promise<Project[]>>>();
function projectsOf(c: WorkspacesClient, org: string): Promise<Project[]> {
  // The client itself, not a change's view of it: one list for the run.
  const byOrg = projectLists.get(clientKey(c)) ?? new Map<string, Promise<Project[]>>();
  projectLists.set(clientKey(c), byOrg);
  const known = byOrg.get(org);
  if (known) return known;
  const listed = c.listProjects(org);
  byOrg.set(org, listed);
  return listed;
}

async function resolveProjectId(
  c: WorkspacesClient,
  org: string,
  spec: WorkspaceSpec,
): Promise<string | undefined> {
  if (!spec.project) return undefined;
  if ('id' in spec.project) return spec.project.id;
  const name = (spec.project as { name: string }).name;
  const project = (await projectsOf(c, org)).find((p) => p.name === name);
  if (!project) throw new Error(`project "${name}" does not exist in organization ${org}`);
  return project.id;
}

function namedProject(d: Desired<WorkspaceSpec>): string | undefined {
  return d.spec.project && 'name' in d.spec.project ? d.spec.project.name : undefined;
}

function isNotFound(error: unknown): boolean {
  return error instanceof HttpStatusError && error.status === 404;
}

/**
 * Problems of the workspaces of one organization (and connection). A missing organization (or one
 * the token may not see: the service answers 404 for both) is reported at each object's
 * `metadata.namespace`, or at the document when the organization came from the environment. One
 * request: the project list when some object names a project (a missing organization answers it
 * with 404 too); else, for several objects, the workspace list the planner reads anyway (shared, see
 * ./shared-list.ts); else a read of the organization.
 */
async function checkOrganization(
  ctx: KindContext,
  group: readonly Desired<WorkspaceSpec>[],
): Promise<PlanProblem[]> {
  const first = group[0]!;
  const c = client(ctx, first.key);
  const org = organizationOf(ctx, first.key);
  const named = group.filter((d) => namedProject(d) !== undefined);
  const projects = named.length > 0 ? await projectsUnlessMissing(c, org) : undefined;
  // The planner lists a scope for two objects or more (one is read by name, which tells nothing).
  const listed = () =>
    sharedWorkspaceList(ctx, first.key.connection, org, walkWorkspaces(c, org, READ_INCLUDES, isNotFound));
  const exists =
    named.length > 0
      ? projects !== undefined
      : group.length > 1
        ? (await listed()) !== undefined
        : (await c.readOrganization(org)) !== undefined;
  if (!exists) return group.map((d) => missingOrganizationProblem(d, org));
  const names = new Set((projects ?? []).map((p) => p.name));
  return named
    .filter((d) => !names.has(namedProject(d)!))
    .map((d) => ({
      key: d.key,
      message: `project "${namedProject(d)}" does not exist in organization ${org}`,
      ...(d.resource ? { position: d.resource.locate('/spec/project/name') } : {}),
    }));
}

/** The organization's projects; undefined when the organization does not exist (404). */
function projectsUnlessMissing(c: WorkspacesClient, org: string): Promise<Project[] | undefined> {
  return projectsOf(c, org).catch((error: unknown) => {
    if (isNotFound(error)) return undefined;
    throw error;
  });
}

/** An organization that does not exist, and where it came from unless the user named it. */
function missingOrganization(org: string, named: boolean, connection: string | undefined): string {
  const from = named
    ? ''
    : connection
      ? ` (the organization of Connection ${connection})`
      : ' (from CONVERGE_WORKSPACES_ORGANIZATION)';
  return `organization "${org}"${from} does not exist, or this token may not see it`;
}

function missingOrganizationProblem(d: Desired<WorkspaceSpec>, org: string): PlanProblem {
  const declared = d.resource?.namespace !== undefined;
  return {
    key: d.key,
    message: missingOrganization(org, declared, d.key.connection),
    ...(d.resource
      ? { position: declared ? d.resource.locate('/metadata/namespace') : d.resource.source }
      : {}),
  };
}

/**
 * Before acting on a push lock a gone process left (pushing as its holder, releasing it): the lock
 * must still be that one. Another run of the same token may have released it and locked again since
 * it was read (while a person confirmed the plan, say); its lock is live and not this apply's to take.
 */
async function assertLockUnchanged(c: WorkspacesClient, read: Workspace): Promise<void> {
  const now = await c.readWorkspace({ id: read.id });
  if (now?.attributes.locked && now.lockReason === read.lockReason) return;
  throw new Error(
    'the workspace lock left by a Converge state push changed since it was read (released, or taken by another run): plan again',
  );
}

/** Releases the abandoned push lock as its own (a lost answer read back, never resent blindly). */
async function unlockAbandoned(c: WorkspacesClient, held: Workspace): Promise<Workspace> {
  await unlockOwnLock(c, held.id, held.lockReason ?? '');
  return (await c.readWorkspace({ id: held.id }, { include: READ_INCLUDES })) ?? held;
}

/**
 * What a failed deletion by id leaves to report: nothing when a 404 is read back as gone (a resend
 * after the deletion's own lost answer, or someone else first), else the refusal. The service
 * answers 404 for "not there" and for "not yours to delete" alike, so a 404 is never taken as done
 * unread: a token without admin access was reported to have deleted a workspace that stayed.
 */
async function deletionRefusal(c: WorkspacesClient, id: string, error: unknown): Promise<unknown> {
  if (!isNotFound(error)) return error;
  const still = await c.readWorkspace({ id }).then(
    (found) => found !== undefined,
    () => undefined,
  );
  // Not read back: whether it is gone cannot be told, and the service's answer stands.
  if (still === undefined) return error;
  if (!still) return undefined;
  return new Error(
    `${(error as Error).message}; the workspace is still there: the service answers 404 too to a token that may not delete it (deleting needs admin access to the workspace)`,
    { cause: error },
  );
}

/**
 * Refuses, before any write, to release a lock someone else holds unless --force-unlock was given.
 * The comparison plans no such release without the switch; this keeps it so whatever asks `update`.
 */
function assertUnlockAllowed(
  ctx: KindContext,
  desired: Desired<WorkspaceSpec>,
  live: WorkspaceLive,
  unlocking: boolean,
): void {
  if (!unlocking || desired.spec.locked !== false || !live.workspace.attributes.locked || lockedByMe(live))
    return;
  if (!ctx.option(FORCE_UNLOCK)) {
    throw new Error(
      `the workspace is locked by ${lockDescription(live.workspace)}; the manifest wants it unlocked: run again with --force-unlock to release it`,
    );
  }
}

async function pushIfWanted(
  ctx: KindContext,
  c: WorkspacesClient,
  desired: Desired<WorkspaceSpec>,
  workspace: Workspace,
  lockedByCaller: boolean,
): Promise<void> {
  const local = localOf(desired).state;
  if (!local) return;
  await pushLocalState({
    client: c,
    workspace,
    local,
    lockedByCaller,
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  });
}

export const workspaceKind: ResourceKind<WorkspaceSpec, WorkspaceLive> &
  Namespaced &
  LocalFiles<WorkspaceSpec> &
  ApplySwitches &
  SpecRules<WorkspaceSpec> &
  ServiceChecks<WorkspaceSpec> &
  DetailReads<WorkspaceSpec, WorkspaceLive> &
  RenderDetails<WorkspaceSpec, WorkspaceLive> &
  Exportable<WorkspaceSpec, WorkspaceLive> &
  Prunable<WorkspaceLive> &
  DeletionRefusal<WorkspaceLive> &
  VersionChanges &
  ChangeImpact<WorkspaceSpec, WorkspaceLive> = {
  kind: 'Workspace',
  service: workspacesService.name,
  description:
    'A workspace: settings, VCS link, project, a declarative lock and seeded state. metadata.namespace is the organization.',
  namespaceLabel: 'organization',
  nameSchema: Type.String({
    pattern: '^[A-Za-z0-9_-]{1,90}$',
    description: '1 to 90 letters, digits, "-" or "_"; unique in the organization',
  }),
  specSchema: WorkspaceSpecSchema,
  localFiles: ['state'],
  ownership: 'marker',
  effectiveNamespace: (key, settings) => organizationIn(key, settings),
  versionChange: workspaceVersionChange,
  options: [
    {
      flag: FORCE_UNLOCK,
      description: 'release workspace locks held by someone else where the manifest says locked: false',
    },
  ],

  validateSpec: workspaceRules,

  async resolve(desired) {
    const statePath = desired.spec.state;
    if (statePath === undefined || !desired.resource) return { desired, problems: [] };
    try {
      const state = await readLocalState(desired, statePath);
      return { desired: { ...desired, local: { state } satisfies WorkspaceLocal }, problems: [] };
    } catch (error) {
      return {
        desired,
        problems: [
          {
            key: desired.key,
            message: (error as Error).message,
            position: desired.resource.locate('/spec/state'),
          },
        ],
      };
    }
  },

  async check(ctx, desired) {
    // The organization must exist, and projects named in the manifest too: one request per
    // organization and connection (the project list when it is needed anyway, else a read).
    const groups = groupBy(desired, (d) => `${d.key.connection ?? ''}\u0000${organizationOf(ctx, d.key)}`);
    const found = await Promise.all([...groups.values()].map((group) => checkOrganization(ctx, group)));
    return found.flat();
  },

  async observe(ctx, key) {
    const workspace = await client(ctx, key).readWorkspace(
      { organization: organizationOf(ctx, key), name: key.name },
      { include: READ_INCLUDES },
    );
    return workspace ? observedOf(key, workspace) : undefined;
  },

  async list(ctx, scope) {
    const c = ctx.client(workspacesService, scope.connection);
    const org = scope.namespace ?? c.defaultOrganization;
    if (!org) throw new Error('no organization to list workspaces in: set CONVERGE_WORKSPACES_ORGANIZATION');
    // No such organization (or not one this token sees): nothing lives there to compare or prune;
    // the check reports it for the objects the manifest declares in it.
    const workspaces =
      (await takeWorkspaceList(
        ctx,
        scope.connection,
        org,
        walkWorkspaces(c, org, READ_INCLUDES, isNotFound),
      )) ?? [];
    return workspaces.map((w) => observedOf(listedKey('Workspace', w.name, scope), w));
  },

  async readDetails(ctx, desired, observed) {
    const c = client(ctx, desired.key);
    const extra: Partial<WorkspaceLive> = {};
    const heldLock = observed.live.workspace.attributes.locked;
    // Who the token is tells our own lock from another's: asked when the manifest manages the lock,
    // and when a state push of ours may have left it behind.
    const pushLock = observed.live.workspace.lockReason?.startsWith(PUSH_REASON_PREFIX) ?? false;
    if (heldLock && (desired.spec.locked !== undefined || pushLock)) {
      const me = await whoAmI(c);
      if (me) extra.me = me;
    }
    if (localOf(desired).state) {
      const current = await c.currentStateVersion(observed.live.workspace.id);
      const url = current?.attributes['hosted-state-download-url'];
      if (!current) {
        extra.state = null;
      } else if (typeof url !== 'string') {
        // Treating an unreadable state as "no state" would let seeding overwrite it.
        throw new Error(
          `cannot read the current state of workspace ${desired.key.name} (state version ${current.id} has no download URL), so it cannot be compared with ${desired.spec.state}`,
        );
      } else {
        const info = parseStateFile(await c.downloadState(url), `the current state of ${desired.key.name}`);
        extra.state = { serial: info.serial, lineage: info.lineage, md5: info.md5 };
      }
    }
    return { ...observed, live: { ...observed.live, ...extra } };
  },

  compare(desired, observed, _serverPlan, run) {
    const live = observed.live;
    const diffs = diffAttributes(desired.spec, live.workspace);
    const problems: { message: string; pointer?: string }[] = [];
    const locked = Boolean(live.workspace.attributes.locked);
    const reason = desired.spec['lock-reason'];
    if (desired.spec.locked === true && !locked) {
      diffs.push({
        path: 'locked',
        op: 'change',
        before: false,
        after: true,
        ...(reason ? { note: `reason: ${JSON.stringify(reason)}` } : {}),
      });
    }
    const notes: string[] = [];
    const heldBack: string[] = [];
    const movedPast: string[] = [];
    if (desired.spec.locked === false && locked) {
      const held = live.workspace.lockReason;
      if (lockedByMe(live)) {
        const note = held ? `reason: ${JSON.stringify(held)}` : undefined;
        diffs.push({ path: 'locked', op: 'change', before: true, after: false, ...(note ? { note } : {}) });
      } else if (run?.option(FORCE_UNLOCK)) {
        diffs.push({
          path: 'locked',
          op: 'change',
          before: true,
          after: false,
          note: `locked by ${lockDescription(live.workspace)}: released by --force-unlock`,
        });
      } else {
        // Someone else's lock is released only with --force-unlock: without it the plan does not
        // count a release the apply would refuse, and says why the workspace stays locked. Held
        // back, so a saved plan that did release it (made with the switch) is stale here, not done.
        notes.push(
          `locked by ${lockDescription(live.workspace)}; the manifest says locked: false, but someone else's lock is released only with --force-unlock (plan or apply with it to release the lock; a plan made with another token than the one that applies sees that token's lock so too)`,
        );
        heldBack.push('locked');
      }
    }
    if (
      desired.spec.locked === undefined &&
      locked &&
      lockedByMe(live) &&
      abandonedHere(live.workspace.lockReason)
    ) {
      // A push of ours quit between its lock and its unlock, and its process is gone: nothing else
      // will ever release the lock, so the plan does (the push itself may have landed already).
      diffs.push({
        path: 'locked',
        op: 'change',
        before: true,
        after: false,
        note: `left by a Converge state push that did not finish; its process is gone (reason: ${printable(JSON.stringify(live.workspace.lockReason))})`,
      });
    } else {
      const abandoned = abandonedPushNote(live.workspace, desired.spec.locked === true);
      if (abandoned) notes.push(abandoned);
    }
    // A reason changed on a lock that stays: Converge's own lock is taken again with it; someone
    // else's is theirs, and the reason applies when Converge takes the lock.
    const heldReason = live.workspace.lockReason ?? '';
    if (desired.spec.locked === true && locked && reason !== undefined && reason !== heldReason) {
      if (lockedByMe(live))
        diffs.push({
          path: 'lock-reason',
          op: 'change',
          before: heldReason,
          after: reason,
          note: 'the lock is released and taken again with the new reason',
        });
      else {
        notes.push(
          `locked by ${lockDescription(live.workspace)}: the manifest's lock-reason applies when Converge takes the lock`,
        );
        // Held back: a saved plan that was to change the reason (made with the holder's token) is
        // stale where this token cannot, not "already in effect".
        heldBack.push('lock-reason');
      }
    }
    const sourceUrl = createOnlyNote(desired.spec, live.workspace);
    if (sourceUrl) notes.push(sourceUrl);
    const local = localOf(desired).state;
    if (local && live.state !== undefined) {
      const seeding = compareState(local, live.state);
      // A push needs the lock: one someone else holds, and this run does not release, would fail
      // the push at apply time, so it is held back with a note, as their lock is. Not the manifest's
      // own lock (`locked: true`, with its lock-reason), which the token that applies took and the
      // planning token (another user in CI) need not hold. Told by the reason alone, so that a plan
      // and its apply with another token agree; another user's lock with the manifest's very reason
      // is taken for the manifest's, and its push fails at apply time naming the holder.
      const manifestsLock =
        desired.spec.locked === true && (live.workspace.lockReason ?? '') === (reason ?? '');
      const theirLock =
        locked && !lockedByMe(live) && !manifestsLock && !diffs.some((d) => d.path === 'locked');
      if (seeding.diff && theirLock) {
        notes.push(
          `state: not pushed while ${lockDescription(live.workspace)} holds the lock (a push needs it); it is pushed once the lock is released`,
        );
        heldBack.push('state');
      } else if (seeding.diff) diffs.push(seeding.diff);
      if (seeding.problem) problems.push({ message: seeding.problem, pointer: '/spec/state' });
      if (seeding.note) notes.push(seeding.note);
      if (seeding.heldBack) {
        heldBack.push('state');
        // The seed is history once the workspace's runs continued it: in step, not a difference.
        movedPast.push('state');
      }
    }
    return {
      diffs,
      problems,
      ...(notes.length > 0 ? { notes } : {}),
      ...(heldBack.length > 0 ? { heldBack } : {}),
      ...(movedPast.length > 0 ? { movedPast } : {}),
    };
  },

  // Compared as sets (compare.ts): a tag added shows as one item coming, not as the attribute set to it.
  listAttributes: [...ORDERLESS_ATTRIBUTES],

  render(desired) {
    // What the manifest sets first, then the create defaults it leaves to the service.
    // serviceAttributes' own fresh object: a spread copy gaining the defaults cost ~20 µs a workspace.
    const attrs = serviceAttributes(desired.spec);
    for (const [k, v] of Object.entries(CREATE_DEFAULTS)) if (!(k in attrs)) attrs[k] = v;
    // Compared like the create defaults (compare.ts), so shown with them: remote unless said otherwise.
    if (attrs['execution-mode'] === undefined && attrs.operations === undefined)
      attrs['execution-mode'] = 'remote';
    if (desired.spec.project) attrs.project = desired.spec.project;
    if (desired.spec.locked !== undefined) attrs.locked = desired.spec.locked;
    if (desired.spec['lock-reason'] !== undefined) attrs['lock-reason'] = desired.spec['lock-reason'];
    const local = localOf(desired).state;
    if (local) attrs.state = `${local.path} (${describeState(local.info)})`;
    return attrs;
  },

  // How a deletion goes, beside it: a safe delete the service refuses while the workspace manages
  // resources (the apply then fails), a force delete destroys them with it. The plan looked alike for
  // both, so a reviewer could not tell the force delete of a workspace with resources.
  async impact(ctx, subjects) {
    const lines = subjects.map((s) => {
      if (s.action !== 'delete' || !s.observed) return [];
      // The service's count, trusted only as a count: an answer without one says nothing of it.
      const given = s.observed.live.workspace.attributes['resource-count'];
      const count =
        typeof given === 'number' && Number.isSafeInteger(given) && given >= 0 ? given : undefined;
      const resources =
        count === undefined
          ? 'resources (how many is not known)'
          : `${count} resource${count === 1 ? '' : 's'}`;
      if (s.desired?.spec.deletion === 'force')
        return [
          count === 0 ? 'force delete' : `force delete: the workspace goes with the ${resources} it manages`,
        ];
      if (count === 0) return ['safe delete: it manages no resources'];
      return [
        `safe delete: the service refuses it while the workspace manages ${resources} (the apply then fails; \`deletion: force\` deletes it anyway)`,
      ];
    });
    // A safe delete releases this token's own lock first (the service refuses a locked workspace):
    // said, since a lock taken by hand with the same token ("hotfix in progress") goes with it.
    await Promise.all(
      subjects.map(async (s, i) => {
        const w = s.observed?.live.workspace;
        if (s.action !== 'delete' || !w?.attributes.locked || s.desired?.spec.deletion === 'force') return;
        const me = s.observed!.live.me ?? (await whoAmI(client(ctx, s.key)).catch(() => undefined));
        const reason = w.lockReason ? ` (reason: ${JSON.stringify(printable(w.lockReason))})` : '';
        lines[i]!.push(
          me && w.lockedBy?.id === me.id
            ? `its lock, held by this token${reason}, is released for the deletion (taken again if the service refuses it)`
            : `locked by ${lockDescription(w)}: the service refuses a safe delete of a locked workspace (the apply then fails)`,
        );
      }),
    );
    return lines;
  },

  describe(observed) {
    const w = observed.live.workspace;
    // Every service attribute the manifest may set (what compare reads), then what the service fills
    // in. A hand-picked subset left out trigger-patterns and trigger-prefixes: a pattern added then
    // planned as `~ trigger-patterns = [ + "/c/**", ]` with no count of the patterns that stay (the
    // renderer counts them from here), which read as the list becoming that one pattern, and
    // `--json` readers could not see the live list at all.
    const attrs: Record<string, unknown> = {};
    for (const k of [...SERVICE_KEYS, 'locked', 'resource-count', 'source-name']) {
      const value = liveAttribute(w, k);
      if (value !== undefined && value !== null) attrs[k] = value;
    }
    if (w.projectName || w.projectId) attrs.project = w.projectName ?? w.projectId;
    if (w.attributes.locked && w.lockedBy)
      attrs['locked-by'] = describeLockHolder(w.lockedBy, w.lockedByName);
    if (w.lockReason) attrs['lock-reason'] = w.lockReason;
    // The current state, where the manifest seeds one (only then is it read): what a push replaces.
    const state = observed.live.state;
    if (state) attrs.state = describeState(state);
    return attrs;
  },

  async create(ctx, desired) {
    const c = client(ctx, desired.key);
    const org = organizationOf(ctx, desired.key);
    const projectId = await resolveProjectId(c, org, desired.spec);
    let workspace = await c.createWorkspace(
      org,
      { name: desired.key.name, ...serviceAttributes(desired.spec), 'source-name': SOURCE_NAME },
      projectId ? { projectId } : {},
    );
    await pushIfWanted(ctx, c, desired, workspace, false);
    if (desired.spec.locked) workspace = await takeLock(c, workspace.id, desired.spec['lock-reason'] ?? '');
    return observedOf(desired.key, workspace);
  },

  async update(ctx, desired, observed) {
    const c = client(ctx, desired.key);
    const live = observed.live;
    const local = localOf(desired).state;
    if (local && live.state === undefined) {
      throw new Error('the current state was not read before the update; run the plan again');
    }
    // Act on exactly what the comparison found, so plan and apply can never disagree.
    const diffs = workspaceKind.compare(desired, observed, undefined, ctx).diffs;
    const changed = (path: string) => diffs.some((d) => d.path === path || d.path.startsWith(`${path}.`));
    assertUnlockAllowed(ctx, desired, live, changed('locked'));
    let workspace = live.workspace;
    const body = updateBody(desired.spec, diffs);
    if (Object.keys(body).length > 0 || changed('project')) {
      const projectId = changed('project')
        ? await resolveProjectId(c, organizationOf(ctx, desired.key), desired.spec)
        : undefined;
      workspace = await c.updateWorkspace({ id: workspace.id }, body, projectId ? { projectId } : {});
    }
    const abandonedLock =
      desired.spec.locked === undefined && changed('locked') && abandonedHere(live.workspace.lockReason);
    if (abandonedLock) await assertLockUnchanged(c, live.workspace);
    // From here the abandoned lock is this apply's to release: named if it quits at once meanwhile.
    const label = `${live.workspace.organization}/${live.workspace.name}`;
    const forget = abandonedLock
      ? holdingLock({
          what: `workspace ${label}, left locked by a state push`,
          release: `converge workspace unlock ${label}`,
        })
      : NOT_HELD;
    // Someone else's lock released by --force-unlock goes first: a state push needs the lock free.
    const forcedRelease =
      changed('locked') && desired.spec.locked === false && !abandonedLock && !lockedByMe(live);
    if (forcedRelease) workspace = await c.forceUnlockWorkspace(workspace.id);
    try {
      if (changed('state')) {
        await pushIfWanted(
          ctx,
          c,
          desired,
          workspace,
          // Pushed as the lock's holder only where the manifest manages the lock, or a gone push of
          // ours left it: another run of the same token holding it may be mid-push.
          Boolean(workspace.attributes.locked) &&
            lockedByMe(live) &&
            (desired.spec.locked !== undefined || abandonedHere(live.workspace.lockReason)),
        );
      }
      if (changed('lock-reason')) {
        // The service keeps a lock's reason as it was taken: released and taken again, with no
        // state push in between (pushes ran above).
        await releaseOwnLock(c, workspace);
        workspace = await takeLock(c, workspace.id, desired.spec['lock-reason'] ?? '');
      }
      if (changed('locked') && !forcedRelease) {
        if (!desired.spec.locked && abandonedLock) forget.releasing();
        workspace = desired.spec.locked
          ? await takeLock(c, workspace.id, desired.spec['lock-reason'] ?? '')
          : abandonedLock
            ? await unlockAbandoned(c, live.workspace)
            : lockedByMe(live)
              ? await releaseOwnLock(c, workspace)
              : await c.forceUnlockWorkspace(workspace.id);
      }
    } finally {
      forget();
    }
    return observedOf(desired.key, workspace);
  },

  async delete(ctx, observed, desired) {
    const c = client(ctx, observed.key);
    const w = observed.live.workspace;
    if (desired?.spec.deletion === 'force') {
      const refusal = await c.forceDeleteWorkspace({ id: w.id }).then(
        () => undefined,
        (error: unknown) => deletionRefusal(c, w.id, error),
      );
      if (refusal !== undefined) throw refusal;
      return;
    }
    // The service refuses to safe-delete a locked workspace. A lock Converge's own token holds (a
    // manifest that said `locked: true`) must not stop a deletion the manifest or --prune asked for,
    // so it is released first; anyone else's lock stays, and the service refuses (the plan names the holder).
    let released = false;
    if (w.attributes.locked && w.lockedBy) {
      const me = await whoAmI(c);
      if (me && me.id === w.lockedBy.id) {
        await releaseOwnLock(c, w);
        released = true;
      }
    }
    try {
      await c.safeDeleteWorkspace({ id: w.id });
    } catch (answer) {
      // Gone (a 404 read back): what the deletion was for is done; reported as failed, the inventory
      // kept the record of a workspace this apply deleted.
      const error = await deletionRefusal(c, w.id, answer);
      if (error === undefined) return;
      // Refused (it still manages resources) or failed: the workspace stays, and so must its lock. A
      // change freeze was lifted by an apply that deleted nothing.
      if (released) {
        try {
          await takeLock(c, w.id, w.lockReason ?? '');
        } catch (relock) {
          const name = `${observed.key.namespace ?? ''}/${observed.key.name}`;
          // Locked by someone else in between: theirs now, and not to be taken; otherwise say how.
          const taken = relock instanceof HttpStatusError && relock.status === 409;
          throw new Error(
            taken
              ? `${(error as Error).message}; its lock, released for the deletion, was taken by someone else meanwhile (see \`converge workspace show ${name}\`)`
              : `${(error as Error).message}; and its lock, released for the deletion, could not be taken again (${(relock as Error).message}): lock it again with \`converge workspace lock ${name}\``,
            { cause: error },
          );
        }
      }
      throw error;
    }
  },

  exporter: {
    spec: (observed) => exportWorkspace(observed.live.workspace),
    // The list answers an organization that does not exist as empty (the check reports it to a
    // plan): an export that found nothing reads the organization, so a typo is not "nothing there".
    async missingScope(ctx, scope) {
      const key = listedKey('Workspace', '', scope);
      const org = organizationOf(ctx, key);
      if ((await client(ctx, key).readOrganization(org)) !== undefined) return undefined;
      return missingOrganization(org, scope.namespace !== undefined, scope.connection);
    },
  },

  owns(observed) {
    return observed.live.workspace.attributes['source-name'] === SOURCE_NAME;
  },

  // Another manifest's inventory: deleting it from a manifest wiped that folder's records, and its
  // next run started an empty one without a word, its own objects out of its prune's reach.
  refuseDeletion(observed) {
    const w = observed.live.workspace;
    if (w.attributes.description !== INVENTORY_WORKSPACE_DESCRIPTION) return undefined;
    return `workspace ${w.name} holds a Converge inventory (its description says so): deleting it from a manifest drops the records of the runs that keep their inventory there (CONVERGE_INVENTORY=workspace:${observed.key.namespace ?? 'ORG'}/${w.name}); if none does any more, delete it with \`converge workspace delete\`, outside the manifest`;
  },
};
