/**
 * Puts the config's `workspaces:` section into a store and checks it. Organizations and projects are
 * ensured on every start (so adding one to the config works with an existing data folder); seed
 * workspaces only go into a fresh store, so a workspace deleted through the API stays deleted. The same
 * function, run on an empty store, is the config check: every problem comes back with its path.
 */
import type { ServiceConfigIssue } from '../../core/service.js';
import {
  DEFAULT_ENGINE_VERSION,
  DEFAULT_ORGANIZATION,
  DEFAULT_PROJECT_NAME,
  OWNERS_TEAM,
  type WorkspaceSeed,
  type WorkspacesConfig,
  type WorkspacesTokenRights,
} from './config.js';
import { WorkspacesError } from './model.js';
import { agentPoolId } from './permissions.js';
import type { WorkspacesStore } from './store.js';
import { NAME_PATTERN } from './workspace-input.js';
import { buildWorkspace } from './workspace-ops.js';
import type { WorkspaceInput } from './workspace-input.js';

export function seedWorkspaces(
  store: WorkspacesStore,
  config: WorkspacesConfig | undefined,
  opts: { seedWorkspaces: boolean },
): ServiceConfigIssue[] {
  const issues: ServiceConfigIssue[] = [];
  const orgs = config?.organizations ?? [{ name: DEFAULT_ORGANIZATION }];
  const seenOrgs = new Map<string, number>();
  orgs.forEach((org, i) => {
    const at = (...path: (string | number)[]) => ['organizations', i, ...path];
    const first = seenOrgs.get(org.name);
    if (first !== undefined) {
      issues.push({ path: at('name'), message: `duplicate organization (also organizations[${first}])` });
      return;
    }
    seenOrgs.set(org.name, i);
    if (!NAME_PATTERN.test(org.name)) {
      issues.push({ path: at('name'), message: 'organization names use only letters, numbers, - and _' });
      return;
    }
    store.ensureOrganization(org.name);
    const projects = new Set([DEFAULT_PROJECT_NAME]);
    org.projects?.forEach((name, j) => {
      if (projects.has(name) && name !== DEFAULT_PROJECT_NAME)
        issues.push({ path: at('projects', j), message: `duplicate project "${name}"` });
      projects.add(name);
      store.ensureProject(org.name, name);
    });
    const pools = new Map<string, string>();
    org.agentPools?.forEach((pool, j) => {
      const id = pool.id ?? agentPoolId(org.name, pool.name);
      if (!/^apool-[A-Za-z0-9]+$/.test(id))
        issues.push({
          path: at('agentPools', j, 'id'),
          message: 'agent pool ids look like apool-<letters and digits>',
        });
      if ([...pools.values()].includes(pool.name) || pools.has(id))
        issues.push({ path: at('agentPools', j), message: `duplicate agent pool "${pool.name}"` });
      pools.set(id, pool.name);
    });
    const teams = new Set<string>();
    org.teams?.forEach((team, j) => {
      if (teams.has(team.name))
        issues.push({ path: at('teams', j, 'name'), message: `duplicate team "${team.name}"` });
      teams.add(team.name);
      if (
        team.name === OWNERS_TEAM &&
        (team.access || team.manageWorkspaces !== undefined || team.projectAdmin)
      )
        issues.push({
          path: at('teams', j),
          message: 'the owners team always has every right; it takes no settings',
        });
      team.projectAdmin?.forEach((p, k) => {
        if (!projects.has(p))
          issues.push({ path: at('teams', j, 'projectAdmin', k), message: `no project "${p}"` });
      });
    });
    if (!opts.seedWorkspaces) return;
    org.workspaces?.forEach((seed, j) => {
      try {
        const input = seedInput(seed, org.name, store, pools);
        const ws = buildWorkspace(
          {
            store,
            organization: org.name,
            agentPools: pools,
            engineVersion: config?.engineVersion ?? DEFAULT_ENGINE_VERSION,
          },
          input,
        );
        store.putWorkspace(ws);
      } catch (err) {
        if (!(err instanceof WorkspacesError)) throw err;
        issues.push({ path: at('workspaces', j), message: err.detail ?? err.title });
      }
    });
  });
  return issues;
}

function seedInput(
  seed: WorkspaceSeed,
  organization: string,
  store: WorkspacesStore,
  pools: Map<string, string>,
): WorkspaceInput {
  const input: WorkspaceInput = { name: seed.name };
  if (seed.project !== undefined) {
    const project = store.organization(organization)?.projects.find((p) => p.name === seed.project);
    if (!project) throw new WorkspacesError(422, 'invalid attribute', `no project "${seed.project}"`);
    input.projectId = project.id;
  }
  if (seed.description !== undefined) input.description = seed.description;
  if (seed.tags !== undefined) input.tagNames = [...new Set(seed.tags)];
  if (seed.executionMode !== undefined) input.executionMode = seed.executionMode;
  if (seed.agentPool !== undefined) {
    const id = [...pools].find(([, name]) => name === seed.agentPool)?.[0];
    if (!id) throw new WorkspacesError(422, 'invalid attribute', `no agent pool "${seed.agentPool}"`);
    input.agentPoolId = id;
  }
  if (seed.autoApply !== undefined) input.autoApply = seed.autoApply;
  if (seed.engineVersion !== undefined) input.engineVersion = seed.engineVersion;
  if (seed.workingDirectory !== undefined) input.workingDirectory = seed.workingDirectory;
  if (seed.globalRemoteState !== undefined) input.globalRemoteState = seed.globalRemoteState;
  return input;
}

/** Checks one token's `workspaces:` entry: one identity shape, organizations and teams that exist. */
export function checkTokenRights(
  rights: WorkspacesTokenRights,
  config: WorkspacesConfig | undefined,
): ServiceConfigIssue[] {
  const issues: ServiceConfigIssue[] = [];
  const orgs = new Map(
    (config?.organizations ?? [{ name: DEFAULT_ORGANIZATION }]).map((o) => [
      o.name,
      new Set([OWNERS_TEAM, ...(o.teams ?? []).map((t) => t.name)]),
    ]),
  );
  const teamsOf = (org: string, path: (string | number)[]) => {
    const teams = orgs.get(org);
    if (!teams) issues.push({ path, message: `no organization "${org}" in the workspaces section` });
    return teams;
  };
  if (rights.user !== undefined) {
    if (rights.team !== undefined || rights.organization !== undefined)
      issues.push({ path: [], message: 'a user token takes only user and teams' });
    for (const [org, teams] of Object.entries(rights.teams ?? {})) {
      const known = teamsOf(org, ['teams', org]);
      teams.forEach((team, i) => {
        if (known && !known.has(team))
          issues.push({ path: ['teams', org, i], message: `no team "${team}" in organization "${org}"` });
      });
    }
  } else if (rights.team !== undefined) {
    if (rights.organization === undefined)
      issues.push({ path: [], message: 'a team token needs organization: the team belongs to one' });
    else {
      const known = teamsOf(rights.organization, ['organization']);
      if (known && !known.has(rights.team))
        issues.push({
          path: ['team'],
          message: `no team "${rights.team}" in organization "${rights.organization}"`,
        });
    }
    if (rights.teams !== undefined) issues.push({ path: ['teams'], message: 'teams belongs to user tokens' });
  } else if (rights.organization !== undefined) {
    teamsOf(rights.organization, ['organization']);
    if (rights.teams !== undefined) issues.push({ path: ['teams'], message: 'teams belongs to user tokens' });
  } else if (rights.teams !== undefined) {
    issues.push({ path: [], message: 'teams needs user: the user who is member of them' });
  }
  return issues;
}
