/**
 * Who is calling and what they may do. Tokens map to callers (the root token is a user in the owners
 * team of every organization; config tokens are users with team memberships, team tokens or
 * organization tokens); teams and their access come from the config, so rights are recomputed on every
 * start and never persisted. Rights on a workspace are the union over the caller's teams.
 */
import type { SandboxToken, TokenStore } from '../../core/tokens.js';
import {
  type AccessConfig,
  DEFAULT_ORGANIZATION,
  OWNERS_TEAM,
  RUN_LEVELS,
  type RunLevel,
  STATE_LEVELS,
  type StateLevel,
  type WorkspacesConfig,
  type WorkspacesTokenRights,
} from './config.js';
import { type ActorRef, stableId, type WorkspaceRecord } from './model.js';

export interface TeamSettings {
  id: string;
  name: string;
  organization: string;
  manageWorkspaces: boolean;
  projectAdmin: Set<string>;
  access: Record<string, AccessConfig>;
}

export interface OrganizationSettings {
  name: string;
  forceDeleteByAdmins: boolean;
  teams: Map<string, TeamSettings>;
  /** Agent pool id → name. */
  agentPools: Map<string, string>;
}

export type Caller =
  | {
      kind: 'user';
      id: string;
      username: string;
      /** Organization name → team names. */
      teams: Map<string, string[]>;
      /** The root token: owner everywhere, also in organizations created later. */
      root: boolean;
    }
  | { kind: 'team'; organization: string; team: TeamSettings; serviceUser: { id: string; username: string } }
  | { kind: 'organization'; organization: string };

export interface WorkspaceRights {
  runs: RunLevel;
  lock: boolean;
  admin: boolean;
  stateVersions: StateLevel;
  forceDelete: boolean;
}

const NO_RIGHTS: WorkspaceRights = {
  runs: 'none',
  lock: false,
  admin: false,
  stateVersions: 'none',
  forceDelete: false,
};
const OWNER_RIGHTS: WorkspaceRights = {
  runs: 'apply',
  lock: true,
  admin: true,
  stateVersions: 'write',
  forceDelete: true,
};
/**
 * UNCONFIRMED (spec: org tokens create workspaces and manage settings, and cannot create state
 * versions): they read everything, administer every workspace and may force delete, but cannot queue
 * runs, lock, or write state versions (the real product refuses those endpoints to them).
 */
const ORGANIZATION_TOKEN_RIGHTS: WorkspaceRights = {
  runs: 'read',
  lock: false,
  admin: true,
  stateVersions: 'read',
  forceDelete: true,
};

export const userId = (username: string): string => stableId('user', `user:${username}`);
export const teamId = (organization: string, team: string): string =>
  stableId('team', `team:${organization}/${team}`);

/** Organization settings from the config: teams (owners always), agent pools, force-delete rule. */
export function organizationSettings(
  config: WorkspacesConfig | undefined,
): Map<string, OrganizationSettings> {
  const out = new Map<string, OrganizationSettings>();
  const orgs = config?.organizations ?? [{ name: DEFAULT_ORGANIZATION }];
  for (const org of orgs) {
    const teams = new Map<string, TeamSettings>();
    teams.set(OWNERS_TEAM, ownersTeam(org.name));
    for (const team of org.teams ?? []) {
      if (team.name === OWNERS_TEAM) continue;
      teams.set(team.name, {
        id: teamId(org.name, team.name),
        name: team.name,
        organization: org.name,
        manageWorkspaces: team.manageWorkspaces ?? false,
        projectAdmin: new Set(team.projectAdmin ?? []),
        access: team.access ?? {},
      });
    }
    const agentPools = new Map<string, string>();
    for (const pool of org.agentPools ?? [])
      agentPools.set(pool.id ?? agentPoolId(org.name, pool.name), pool.name);
    out.set(org.name, {
      name: org.name,
      forceDeleteByAdmins: org.forceDeleteByAdmins ?? false,
      teams,
      agentPools,
    });
  }
  return out;
}

export const agentPoolId = (organization: string, name: string): string =>
  stableId('apool', `apool:${organization}/${name}`);

function ownersTeam(organization: string): TeamSettings {
  return {
    id: teamId(organization, OWNERS_TEAM),
    name: OWNERS_TEAM,
    organization,
    manageWorkspaces: true,
    projectAdmin: new Set(),
    access: {},
  };
}

/** Settings of an organization that exists only in saved state (its config entry was removed). */
export function settingsFor(
  settings: Map<string, OrganizationSettings>,
  organization: string,
): OrganizationSettings {
  let found = settings.get(organization);
  if (!found) {
    found = {
      name: organization,
      forceDeleteByAdmins: false,
      teams: new Map([[OWNERS_TEAM, ownersTeam(organization)]]),
      agentPools: new Map(),
    };
    settings.set(organization, found);
  }
  return found;
}

/** The caller behind a token. A config token without `workspaces:` is a user in no team. */
export function callerOf(token: SandboxToken, settings: Map<string, OrganizationSettings>): Caller {
  if (token.root) return { kind: 'user', id: userId('root'), username: 'root', teams: new Map(), root: true };
  const rights = token.rights.workspaces as WorkspacesTokenRights | undefined;
  if (rights?.team !== undefined && rights.organization !== undefined) {
    const team =
      settingsFor(settings, rights.organization).teams.get(rights.team) ??
      // Config validation refuses unknown teams; this only guards a hand-built config object.
      unknownTeam(rights.organization, rights.team);
    const username = `api-team_${team.id}`;
    return {
      kind: 'team',
      organization: rights.organization,
      team,
      serviceUser: { id: userId(username), username },
    };
  }
  if (rights?.organization !== undefined && rights.user === undefined) {
    return { kind: 'organization', organization: rights.organization };
  }
  const username = rights?.user ?? token.name;
  return {
    kind: 'user',
    id: userId(username),
    username,
    teams: new Map(Object.entries(rights?.teams ?? {})),
    root: false,
  };
}

function unknownTeam(organization: string, team: string): never {
  throw new Error(`token refers to team '${team}' that organization '${organization}' does not have`);
}

export function lookupCaller(
  tokens: TokenStore,
  secret: string,
  settings: Map<string, OrganizationSettings>,
): Caller | undefined {
  const token = tokens.lookup(secret);
  return token ? callerOf(token, settings) : undefined;
}

/** The teams a caller acts through in an organization (empty: not a member). */
function teamsIn(caller: Caller, org: OrganizationSettings): TeamSettings[] {
  switch (caller.kind) {
    case 'user':
      if (caller.root) return [org.teams.get(OWNERS_TEAM)!];
      return (caller.teams.get(org.name) ?? [])
        .map((name) => org.teams.get(name))
        .filter((t): t is TeamSettings => t !== undefined);
    case 'team':
      return caller.organization === org.name ? [caller.team] : [];
    case 'organization':
      return [];
  }
}

export class Permissions {
  constructor(private readonly settings: Map<string, OrganizationSettings>) {}

  org(organization: string): OrganizationSettings {
    return settingsFor(this.settings, organization);
  }

  /** Whether the caller belongs to the organization at all (sees it, its projects, its lists). */
  isMember(caller: Caller, organization: string): boolean {
    if (caller.kind === 'organization') return caller.organization === organization;
    return teamsIn(caller, this.org(organization)).length > 0;
  }

  isOwner(caller: Caller, organization: string): boolean {
    return teamsIn(caller, this.org(organization)).some((t) => t.name === OWNERS_TEAM);
  }

  /** Owners team, teams with manage-workspaces, the organization token. */
  canCreateWorkspaces(caller: Caller, organization: string): boolean {
    if (caller.kind === 'organization') return caller.organization === organization;
    return teamsIn(caller, this.org(organization)).some((t) => t.manageWorkspaces);
  }

  /** Admin on a project: owners, manage-workspaces, the org token, or the team's `projectAdmin`. */
  isProjectAdmin(caller: Caller, organization: string, projectName: string): boolean {
    if (this.canCreateWorkspaces(caller, organization)) return true;
    return teamsIn(caller, this.org(organization)).some((t) => t.projectAdmin.has(projectName));
  }

  /**
   * Whether the caller reads runs of every workspace of the organization, whatever its name or
   * project: the organization's token, owners, and teams that manage workspaces. A list then needs
   * no per-workspace check to know what the caller sees.
   */
  seesEveryWorkspace(caller: Caller, organization: string): boolean {
    if (caller.kind === 'organization') return caller.organization === organization;
    return teamsIn(caller, this.org(organization)).some((t) => t.name === OWNERS_TEAM || t.manageWorkspaces);
  }

  workspaceRights(caller: Caller, ws: WorkspaceRecord, projectName: string): WorkspaceRights {
    const org = this.org(ws.organization);
    if (caller.kind === 'organization') {
      return caller.organization === ws.organization ? ORGANIZATION_TOKEN_RIGHTS : NO_RIGHTS;
    }
    let rights = NO_RIGHTS;
    for (const team of teamsIn(caller, org)) {
      rights = union(rights, teamRights(team, ws.name, projectName));
    }
    // Force delete: owners only, unless the organization extends it to admins of the workspace.
    const forceDelete =
      teamsIn(caller, org).some((t) => t.name === OWNERS_TEAM) || (org.forceDeleteByAdmins && rights.admin);
    return { ...rights, forceDelete };
  }
}

function teamRights(team: TeamSettings, workspace: string, projectName: string): WorkspaceRights {
  if (team.name === OWNERS_TEAM || team.manageWorkspaces || team.projectAdmin.has(projectName))
    return OWNER_RIGHTS;
  // A workspace's own entry refines the "*" entry key by key.
  const access = { ...team.access['*'], ...team.access[workspace] };
  if (access.admin) return OWNER_RIGHTS;
  return {
    runs: access.runs ?? 'none',
    lock: access.lock ?? false,
    admin: false,
    stateVersions: access.stateVersions ?? 'none',
    forceDelete: false,
  };
}

function union(a: WorkspaceRights, b: WorkspaceRights): WorkspaceRights {
  return {
    runs: RUN_LEVELS[Math.max(RUN_LEVELS.indexOf(a.runs), RUN_LEVELS.indexOf(b.runs))]!,
    lock: a.lock || b.lock,
    admin: a.admin || b.admin,
    stateVersions:
      STATE_LEVELS[Math.max(STATE_LEVELS.indexOf(a.stateVersions), STATE_LEVELS.indexOf(b.stateVersions))]!,
    forceDelete: a.forceDelete || b.forceDelete,
  };
}

export const atLeastRuns = (r: WorkspaceRights, level: RunLevel): boolean =>
  RUN_LEVELS.indexOf(r.runs) >= RUN_LEVELS.indexOf(level);
export const atLeastState = (r: WorkspaceRights, level: StateLevel): boolean =>
  STATE_LEVELS.indexOf(r.stateVersions) >= STATE_LEVELS.indexOf(level);

/** The identity a lock records for this caller; organization tokens cannot lock. */
export function lockIdentity(caller: Caller): ActorRef | undefined {
  switch (caller.kind) {
    case 'user':
      return { type: 'users', id: caller.id, name: caller.username };
    case 'team':
      return { type: 'teams', id: caller.team.id, name: caller.team.name };
    case 'organization':
      return undefined;
  }
}

/** The user a state version records as `created-by` (a team token's service user for team tokens). */
export function creatorIdentity(caller: Caller): ActorRef | undefined {
  // Users and organization tokens are recorded as for a lock; only a team differs.
  if (caller.kind !== 'team') return lockIdentity(caller);
  return { type: 'users', id: caller.serviceUser.id, name: caller.serviceUser.username };
}

/** The spec's `permissions` object of a workspace, for this caller. */
export function permissionsJson(caller: Caller, r: WorkspaceRights): Record<string, boolean> {
  const read = atLeastRuns(r, 'read');
  return {
    'can-create-state-versions': caller.kind !== 'organization' && atLeastState(r, 'write'),
    'can-destroy': r.admin,
    'can-force-unlock': r.admin,
    'can-lock': r.lock,
    'can-manage-run-tasks': r.admin,
    'can-manage-tags': r.admin,
    'can-queue-apply': atLeastRuns(r, 'apply'),
    'can-queue-destroy': atLeastRuns(r, 'apply'),
    'can-queue-run': atLeastRuns(r, 'plan'),
    'can-read-settings': read,
    'can-read-state-versions': atLeastState(r, 'read'),
    'can-read-variable': read,
    'can-unlock': r.lock,
    'can-update': r.admin,
    'can-update-variable': r.admin,
    'can-read-assessment-result': read,
    'can-read-assessment-results': read,
    'can-force-delete': r.forceDelete,
    'can-read-state-outputs': atLeastState(r, 'read-outputs'),
    'can-manage-assessments': r.admin,
  };
}
