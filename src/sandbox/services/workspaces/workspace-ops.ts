/**
 * Creating and changing workspace records: the shared path of the API and the config seeds, so a
 * seeded workspace obeys exactly the rules of one created over HTTP.
 */
import { invalidAttribute, now, randomId, type WorkspaceRecord } from './model.js';
import type { WorkspacesStore } from './store.js';
import {
  applySettings,
  checkName,
  resolveExecution,
  resolveVcsRepo,
  type WorkspaceInput,
} from './workspace-input.js';

export interface WorkspaceContext {
  store: WorkspacesStore;
  organization: string;
  agentPools: ReadonlyMap<string, string>;
  /** The "latest released" engine version: the create default. */
  engineVersion: string;
}

const PROJECT_POINTER = '/data/relationships/project/data/id';

/** A new record with the create defaults of the key table, not yet stored. */
export function buildWorkspace(ctx: WorkspaceContext, input: WorkspaceInput): WorkspaceRecord {
  const name = checkName(input.name);
  uniqueName(ctx, name, undefined);
  const project =
    input.projectId !== undefined
      ? projectIn(ctx, input.projectId)
      : ctx.store.defaultProject(ctx.organization);
  const execution = resolveExecution(undefined, input, ctx.agentPools);
  const createdAt = now();
  const ws: WorkspaceRecord = {
    id: randomId('ws'),
    organization: ctx.organization,
    projectId: project.id,
    name,
    description: null,
    agentPoolId: execution.agentPoolId,
    allowDestroyPlan: true,
    assessmentsEnabled: false,
    autoApply: false,
    executionMode: execution.executionMode,
    fileTriggersEnabled: true,
    globalRemoteState: false,
    queueAllRuns: false,
    sourceName: null,
    sourceUrl: null,
    speculativeEnabled: true,
    engineVersion: ctx.engineVersion,
    triggerPrefixes: [],
    triggerPatterns: [],
    tagNames: [],
    vcsRepo: resolveVcsRepo(null, input.vcsRepo),
    workingDirectory: null,
    lockedBy: null,
    lockReason: null,
    currentStateVersionId: null,
    resourceCount: 0,
    createdAt,
    updatedAt: createdAt,
    latestChangeAt: createdAt,
  };
  applySettings(ws, input, { creating: true });
  return ws;
}

/**
 * The record after an update, validated as a whole before anything changes (a 422 leaves the stored
 * workspace untouched). Returns the new project id when the body moves the workspace.
 */
export function updatedWorkspace(
  ctx: WorkspaceContext,
  current: WorkspaceRecord,
  input: WorkspaceInput,
): WorkspaceRecord {
  const next = structuredClone(current);
  if (input.name !== undefined && input.name !== current.name) {
    next.name = checkName(input.name);
    uniqueName(ctx, next.name, current.id);
  }
  if (input.projectId !== undefined && input.projectId !== current.projectId) {
    next.projectId = projectIn(ctx, input.projectId).id;
  }
  Object.assign(next, resolveExecution(current, input, ctx.agentPools));
  next.vcsRepo = resolveVcsRepo(current.vcsRepo, input.vcsRepo);
  applySettings(next, input, { creating: false });
  const stamp = now();
  next.updatedAt = stamp;
  next.latestChangeAt = stamp;
  return next;
}

function uniqueName(ctx: WorkspaceContext, name: string, self: string | undefined): void {
  const other = ctx.store.workspaceByName(ctx.organization, name);
  if (other && other.id !== self)
    throw invalidAttribute('/data/attributes/name', 'Name has already been taken');
}

/** UNCONFIRMED: a project id that is not a project of this organization is a 422 on the relationship. */
function projectIn(ctx: WorkspaceContext, id: string) {
  const project = ctx.store.project(id);
  if (!project || project.organization !== ctx.organization)
    throw invalidAttribute(PROJECT_POINTER, 'Project not found in this organization');
  return project;
}
