/**
 * JSON:API rendering of the service's resources: workspaces (every attribute of the spec's table,
 * relationships, links, the caller's permissions), state versions (with derived attributes and hosted
 * download URLs), projects, organizations, users, teams and state version outputs.
 */
import { DEFAULT_ENGINE_VERSION } from './config.js';
import type {
  ActorRef,
  OrganizationRecord,
  ProjectRecord,
  StateVersionRecord,
  WorkspaceRecord,
} from './model.js';
import { type Caller, permissionsJson, type WorkspaceRights } from './permissions.js';
import { decodeBase64, deriveState, outputTypeName, parseStateFile, type StateFile } from './state-file.js';

export const API = '/api/v2';
/** Path of the hosted state downloads (the real ones live on `archivist.terraform.io/v1/object/`). */
export const ARCHIVIST_PATH = '/_archivist/v1/object';

export interface Resource {
  id: string;
  type: string;
  attributes?: Record<string, unknown>;
  relationships?: Record<string, unknown>;
  links?: Record<string, unknown>;
}

export function workspaceJson(
  ws: WorkspaceRecord,
  rights: WorkspaceRights,
  caller: Caller,
  opts: { baseUrl: string; outputIds: string[] },
): Resource {
  const repo = ws.vcsRepo;
  return {
    id: ws.id,
    type: 'workspaces',
    attributes: {
      // UNCONFIRMED: true when the caller may delete the workspace (the real samples show it true
      // together with full permissions, also with resources under management).
      actions: { 'is-destroyable': rights.admin },
      'allow-destroy-plan': ws.allowDestroyPlan,
      'apply-duration-average': null,
      'plan-duration-average': null,
      'policy-check-failures': null,
      'run-failures': null,
      'workspace-kpis-runs-count': null,
      'assessments-enabled': ws.assessmentsEnabled,
      'last-assessment-result-at': null,
      'auto-apply': ws.autoApply,
      'auto-destroy-at': null,
      'created-at': ws.createdAt,
      'updated-at': ws.updatedAt,
      'latest-change-at': ws.latestChangeAt,
      description: ws.description,
      environment: 'default',
      'execution-mode': ws.executionMode,
      operations: ws.executionMode === 'remote',
      'file-triggers-enabled': ws.fileTriggersEnabled,
      'global-remote-state': ws.globalRemoteState,
      locked: ws.lockedBy !== null,
      // Not in the spec's table; the real API has it and it is where the lock's reason shows.
      'locked-reason': ws.lockReason,
      name: ws.name,
      permissions: permissionsJson(caller, rights),
      'pull-request-outputs-enabled': false,
      'queue-all-runs': ws.queueAllRuns,
      'resource-count': ws.resourceCount,
      source: 'tfe-api',
      'source-name': ws.sourceName,
      'source-url': ws.sourceUrl,
      'speculative-enabled': ws.speculativeEnabled,
      'structured-run-output-enabled': true,
      'engine-version': ws.engineVersion,
      // The real product's name of `engine-version`, so clients of the real API (go-tfe) read it too.
      'terraform-version': ws.engineVersion,
      'trigger-prefixes': [...ws.triggerPrefixes],
      'trigger-patterns': [...ws.triggerPatterns],
      'tag-names': [...ws.tagNames],
      'vcs-repo': repo
        ? {
            branch: repo.branch,
            'display-identifier': repo.identifier,
            identifier: repo.identifier,
            'ingress-submodules': repo.ingressSubmodules,
            'oauth-token-id': repo.oauthTokenId,
            // UNCONFIRMED: the provider behind an oauth token is unknown to the sandbox; GitHub is assumed.
            'repository-http-url': `https://github.com/${repo.identifier}`,
            'service-provider': 'github',
            'tags-regex': repo.tagsRegex,
            'webhook-url': `${opts.baseUrl}/_webhooks/vcs/${repo.webhookId}`,
          }
        : null,
      'vcs-repo-identifier': repo ? repo.identifier : null,
      'working-directory': ws.workingDirectory,
    },
    relationships: {
      organization: { data: { id: ws.organization, type: 'organizations' } },
      project: { data: { id: ws.projectId, type: 'projects' } },
      'agent-pool': { data: ws.agentPoolId ? { id: ws.agentPoolId, type: 'agent-pools' } : null },
      'current-configuration-version': { data: null },
      'current-run': { data: null },
      'latest-run': { data: null },
      'current-state-version': {
        data: ws.currentStateVersionId ? { id: ws.currentStateVersionId, type: 'state-versions' } : null,
        links: { related: `${API}/workspaces/${ws.id}/current-state-version` },
      },
      'current-assessment-result': { data: null },
      ...(ws.lockedBy
        ? {
            'locked-by': {
              data: { id: ws.lockedBy.id, type: ws.lockedBy.type },
              links: { related: `${API}/${ws.lockedBy.type}/${ws.lockedBy.id}` },
            },
          }
        : {}),
      outputs: { data: opts.outputIds.map((id) => ({ id, type: 'workspace-outputs' })) },
      readme: { data: null },
      'remote-state-consumers': {
        links: { related: `${API}/workspaces/${ws.id}/relationships/remote-state-consumers` },
      },
      vars: { data: [] },
    },
    links: { self: workspaceLink(ws) },
  };
}

export function workspaceLink(ws: { organization: string; name: string }): string {
  return `${API}/organizations/${encodeURIComponent(ws.organization)}/workspaces/${encodeURIComponent(ws.name)}`;
}

export function projectJson(project: ProjectRecord): Resource {
  return {
    id: project.id,
    type: 'projects',
    attributes: { name: project.name, 'created-at': project.createdAt },
    relationships: { organization: { data: { id: project.organization, type: 'organizations' } } },
    links: { self: `${API}/projects/${project.id}` },
  };
}

export function organizationJson(org: OrganizationRecord): Resource {
  return {
    id: org.name,
    type: 'organizations',
    attributes: { name: org.name, 'created-at': org.createdAt },
    links: { self: `${API}/organizations/${encodeURIComponent(org.name)}` },
  };
}

export function actorJson(actor: ActorRef): Resource {
  return actor.type === 'users'
    ? {
        id: actor.id,
        type: 'users',
        attributes: { username: actor.name, 'is-service-account': actor.name.startsWith('api-team_') },
        links: { self: `${API}/users/${actor.id}` },
      }
    : {
        id: actor.id,
        type: 'teams',
        attributes: { name: actor.name },
        links: { self: `${API}/teams/${actor.id}` },
      };
}

/** The raw state of a stored version, parsed (it was checked at upload). */
export function storedState(sv: StateVersionRecord): StateFile {
  const parsed = parseStateFile(decodeBase64(sv.state) ?? Buffer.alloc(0));
  if (typeof parsed === 'string') throw new Error(`stored state of ${sv.id} is damaged: ${parsed}`);
  return parsed;
}

export function stateVersionJson(sv: StateVersionRecord, baseUrl: string): Resource {
  const state = storedState(sv);
  const derived = deriveState(state);
  const size = (decodeBase64(sv.state) ?? Buffer.alloc(0)).byteLength;
  return {
    id: sv.id,
    type: 'state-versions',
    attributes: {
      'created-at': sv.createdAt,
      size,
      serial: sv.serial,
      'state-version': state.version,
      'engine-version': state.terraformVersion || DEFAULT_ENGINE_VERSION,
      // The real product's name of `engine-version` (go-tfe reads this one).
      'terraform-version': state.terraformVersion || DEFAULT_ENGINE_VERSION,
      // Not in the spec's table; kept because clients compare it before an upload.
      lineage: sv.lineage,
      md5: sv.md5,
      status: 'finalized',
      'hosted-state-download-url': `${baseUrl}${ARCHIVIST_PATH}/${sv.downloadSecret}`,
      'hosted-json-state-download-url': sv.jsonDownloadSecret
        ? `${baseUrl}${ARCHIVIST_PATH}/${sv.jsonDownloadSecret}`
        : null,
      modules: derived.modules,
      providers: derived.providers,
      resources: derived.resources,
      'resources-processed': true,
      'vcs-commit-sha': null,
      'vcs-commit-url': null,
    },
    relationships: {
      run: { data: sv.runId ? { id: sv.runId, type: 'runs' } : null },
      'created-by': {
        data: { id: sv.createdBy.id, type: sv.createdBy.type },
        links: {
          self: `${API}/${sv.createdBy.type}/${sv.createdBy.id}`,
          related: `${API}/state-versions/${sv.id}/created-by`,
        },
      },
      workspace: { data: { id: sv.workspaceId, type: 'workspaces' } },
      outputs: {
        data: Object.values(sv.outputIds).map((id) => ({ id, type: 'state-version-outputs' })),
      },
    },
    links: { self: `${API}/state-versions/${sv.id}` },
  };
}

/**
 * The state version's outputs. UNCONFIRMED: sensitive values are rendered as null here (the real
 * service redacts them in most views).
 */
export function stateVersionOutputsJson(sv: StateVersionRecord): Resource[] {
  const state = storedState(sv);
  return Object.entries(sv.outputIds).map(([name, id]) => {
    const output = state.outputs[name];
    const sensitive = output?.sensitive === true;
    return {
      id,
      type: 'state-version-outputs',
      attributes: {
        name,
        sensitive,
        type: outputTypeName(output?.type),
        value: sensitive ? null : (output?.value ?? null),
        'detailed-type': output?.type ?? null,
      },
      links: { self: `${API}/state-version-outputs/${id}` },
    };
  });
}
