/**
 * Workspace endpoints: create, list, show, update (both path forms), safe and force delete, and the
 * lock state machine (lock, unlock, force-unlock), each row of the spec's transition table.
 * Check order everywhere: token (401), visibility (404), the endpoint's right (404, 403 for force
 * delete), body (400 malformed, 422 invalid), then state (409).
 */
import type { SandboxRequest, SandboxResponse } from '../../core/http.js';
import type { Access } from './access.js';
import { includesOf, WORKSPACE_INCLUDES } from './include.js';
import { baseUrlOf, isObject, jsonApi, noContent, readJson } from './jsonapi.js';
import { conflict, invalidAttribute, notFound, type WorkspaceRecord, WorkspacesError } from './model.js';
import { paginate } from './pagination.js';
import { type Caller, lockIdentity, type WorkspaceRights } from './permissions.js';
import {
  actorJson,
  organizationJson,
  projectJson,
  type Resource,
  stateVersionJson,
  stateVersionOutputsJson,
  workspaceJson,
} from './serialize.js';
import { decodeWorkspaceBody } from './workspace-input.js';
import { buildWorkspace, updatedWorkspace, type WorkspaceContext } from './workspace-ops.js';

export class WorkspaceHandlers {
  constructor(private readonly access: Access) {}

  private get store() {
    return this.access.store;
  }

  private context(organization: string): WorkspaceContext {
    return {
      store: this.store,
      organization,
      agentPools: this.access.permissions.org(organization).agentPools,
      engineVersion: this.access.deps.engineVersion,
    };
  }

  async create(req: SandboxRequest): Promise<SandboxResponse> {
    const caller = this.access.caller(req);
    const org = this.access.organization(caller, req.params.organization!);
    if (!this.access.permissions.canCreateWorkspaces(caller, org)) throw notFound();
    const input = decodeWorkspaceBody(await readJson(req));
    const ws = buildWorkspace(this.context(org), input);
    this.store.putWorkspace(ws);
    return jsonApi(201, this.document(req, caller, ws, new Set()));
  }

  show(req: SandboxRequest): SandboxResponse {
    const caller = this.access.caller(req);
    const { ws } = this.access.workspace(req, caller);
    const includes = includesOf(req, WORKSPACE_INCLUDES);
    return jsonApi(200, this.document(req, caller, ws, includes));
  }

  async update(req: SandboxRequest): Promise<SandboxResponse> {
    const caller = this.access.caller(req);
    if (!this.access.workspace(req, caller).rights.admin) throw notFound();
    const body = await readJson(req);
    // Looked up again once the body has arrived: another request may have changed or deleted the
    // workspace meanwhile, and writing back the earlier copy would undo that.
    const { ws, rights } = this.access.workspace(req, caller);
    if (!rights.admin) throw notFound();
    const input = decodeWorkspaceBody(body);
    const next = updatedWorkspace(this.context(ws.organization), ws, input);
    if (next.projectId !== ws.projectId) {
      // Moving needs admin on both projects (spec); without it the move is not found, like other denials.
      const from = this.store.project(ws.projectId)?.name ?? '';
      const to = this.store.project(next.projectId)?.name ?? '';
      const perms = this.access.permissions;
      if (
        !perms.isProjectAdmin(caller, ws.organization, from) ||
        !perms.isProjectAdmin(caller, ws.organization, to)
      )
        throw notFound();
    }
    this.store.putWorkspace(next);
    return jsonApi(200, this.document(req, caller, next, new Set()));
  }

  list(req: SandboxRequest): SandboxResponse {
    const caller = this.access.caller(req);
    const org = this.access.organization(caller, req.params.organization!);
    const includes = includesOf(req, WORKSPACE_INCLUDES);
    // Who sees every workspace (owners, the organization token) needs no check per workspace: a
    // page of 100 of 500 checked all 500 for every page, a fifth of the sandbox's work on a list.
    const all = this.store.workspacesOf(org);
    const readable = this.access.permissions.seesEveryWorkspace(caller, org)
      ? all
      : all.filter((ws) => this.access.rights(caller, ws).runs !== 'none');
    const visible = readable.filter(workspaceFilter(req));
    const page = paginate(req, baseUrlOf(req), visible);
    const included = new Map<string, Resource>();
    const data = page.items.map((ws) => {
      for (const r of this.included(req, ws, includes)) included.set(`${r.type}/${r.id}`, r);
      return this.resource(req, caller, ws, this.access.rights(caller, ws));
    });
    return jsonApi(200, {
      data,
      ...(includes.size > 0 ? { included: [...included.values()] } : {}),
      links: page.links,
      meta: page.meta,
    });
  }

  /**
   * Safe delete: 409 while locked (go-tfe looks for "locked") or while the current state manages
   * resources (any other text: go-tfe's "not safe to delete"). Needs admin on the workspace.
   */
  safeDelete(req: SandboxRequest): SandboxResponse {
    const caller = this.access.caller(req);
    const { ws, rights } = this.access.workspace(req, caller);
    if (!rights.admin) throw notFound();
    if (ws.lockedBy) throw conflict('Workspace is currently locked and cannot be deleted; unlock it first');
    if (ws.resourceCount > 0) {
      throw conflict(
        `Workspace cannot be safely deleted because it is still managing ${ws.resourceCount} ${
          ws.resourceCount === 1 ? 'resource' : 'resources'
        }`,
      );
    }
    this.store.deleteWorkspace(ws.id);
    return noContent();
  }

  /** Force delete: no resource check; 403 for a caller who sees the workspace but may not force delete. */
  forceDelete(req: SandboxRequest): SandboxResponse {
    const caller = this.access.caller(req);
    const { ws, rights } = this.access.workspace(req, caller);
    if (!rights.forceDelete)
      throw new WorkspacesError(403, 'forbidden', 'You are not authorized to force delete this workspace');
    this.store.deleteWorkspace(ws.id);
    return noContent();
  }

  /** unlocked → locked (200, `locked-by` = caller); locked → 409. */
  async lock(req: SandboxRequest): Promise<SandboxResponse> {
    const caller = this.access.caller(req);
    const holder = lockIdentity(caller);
    // Organization tokens hold no lock right (they cannot lock: there is no user to hold the lock).
    if (!this.access.workspace(req, caller).rights.lock || !holder) throw notFound();
    const body = await readJson(req, { optional: true });
    // Looked up again once the body has arrived (see update).
    const { ws, rights } = this.access.workspace(req, caller);
    if (!rights.lock) throw notFound();
    const reason = lockReason(body);
    // UNCONFIRMED: the real detail text (go-tfe maps every 409 here to "workspace already locked").
    if (ws.lockedBy) throw conflict('Unable to lock workspace. The workspace is already locked.');
    ws.lockedBy = holder;
    ws.lockReason = reason;
    this.store.putWorkspace(ws);
    return jsonApi(200, this.document(req, caller, ws, new Set()));
  }

  /** locked by the caller → unlocked (200); locked by another → 409 (real text); unlocked → 409. */
  unlock(req: SandboxRequest): SandboxResponse {
    const caller = this.access.caller(req);
    const { ws, rights } = this.access.workspace(req, caller);
    const me = lockIdentity(caller);
    if (!rights.lock || !me) throw notFound();
    if (!ws.lockedBy) throw conflict('Unable to unlock workspace. The workspace is not locked.');
    if (ws.lockedBy.type !== me.type || ws.lockedBy.id !== me.id) {
      const kind = ws.lockedBy.type === 'teams' ? 'Team' : 'User';
      throw conflict(
        `Unable to unlock workspace. The workspace is locked by ${kind} ${ws.lockedBy.id} and may not be unlocked except by them.`,
      );
    }
    return this.release(req, caller, ws);
  }

  /** locked → unlocked (200) for admins; unlocked → 409. */
  forceUnlock(req: SandboxRequest): SandboxResponse {
    const caller = this.access.caller(req);
    const { ws, rights } = this.access.workspace(req, caller);
    if (!rights.admin) throw notFound();
    if (!ws.lockedBy) throw conflict('Unable to force-unlock workspace. The workspace is not locked.');
    return this.release(req, caller, ws);
  }

  private release(req: SandboxRequest, caller: Caller, ws: WorkspaceRecord): SandboxResponse {
    ws.lockedBy = null;
    ws.lockReason = null;
    this.store.putWorkspace(ws);
    return jsonApi(200, this.document(req, caller, ws, new Set()));
  }

  private resource(
    req: SandboxRequest,
    caller: Caller,
    ws: WorkspaceRecord,
    rights: WorkspaceRights,
  ): Resource {
    const current = ws.currentStateVersionId ? this.store.stateVersion(ws.currentStateVersionId) : undefined;
    return workspaceJson(ws, rights, caller, {
      baseUrl: baseUrlOf(req),
      outputIds: current ? Object.values(current.outputIds) : [],
    });
  }

  private document(req: SandboxRequest, caller: Caller, ws: WorkspaceRecord, includes: Set<string>) {
    const data = this.resource(req, caller, ws, this.access.rights(caller, ws));
    return includes.size > 0 ? { data, included: this.included(req, ws, includes) } : { data };
  }

  /** The `included` entries that exist in the sandbox (runs, configuration versions, readme: none). */
  private included(req: SandboxRequest, ws: WorkspaceRecord, includes: Set<string>): Resource[] {
    const out: Resource[] = [];
    if (includes.has('organization')) {
      const org = this.store.organization(ws.organization);
      if (org) out.push(organizationJson(org));
    }
    if (includes.has('project')) {
      const project = this.store.project(ws.projectId);
      if (project) out.push(projectJson(project));
    }
    if (includes.has('locked_by') && ws.lockedBy) out.push(actorJson(ws.lockedBy));
    const current = ws.currentStateVersionId ? this.store.stateVersion(ws.currentStateVersionId) : undefined;
    if (current && includes.has('current_state_version')) out.push(stateVersionJson(current, baseUrlOf(req)));
    if (current && includes.has('outputs')) {
      for (const output of stateVersionOutputsJson(current)) {
        const { type: outputType, ...rest } = output.attributes ?? {};
        out.push({
          ...output,
          type: 'workspace-outputs',
          attributes: { ...rest, 'output-type': outputType },
        });
      }
    }
    return out;
  }
}

/** `{reason}` as plain JSON (go-tfe) or inside `data.attributes`; no body means "". */
function lockReason(body: unknown): string {
  if (body === undefined || body === null) return '';
  if (!isObject(body)) throw invalidAttribute('/reason', 'Reason must be a string');
  const attrs = isObject(body.data) && isObject(body.data.attributes) ? body.data.attributes : body;
  const reason = attrs.reason;
  if (reason === undefined || reason === null) return '';
  if (typeof reason !== 'string') throw invalidAttribute('/reason', 'Reason must be a string');
  return reason;
}

/**
 * The list filters. `search[name]` is a case-insensitive substring match (the real one is fuzzy);
 * `search[tags]` keeps workspaces with all the tags, `search[exclude-tags]` drops those with any;
 * `search[wildcard-name]` takes `*` as prefix, suffix or both (case-insensitive; no `*`: exact name);
 * `filter[project][id]` keeps one project's workspaces.
 */
export function workspaceFilter(req: SandboxRequest): (ws: WorkspaceRecord) => boolean {
  const q = req.query;
  const name = q.get('search[name]')?.toLowerCase() ?? '';
  const tags = splitList(q.get('search[tags]'));
  const excluded = splitList(q.get('search[exclude-tags]'));
  const wildcard = q.get('search[wildcard-name]') ?? '';
  const project = q.get('filter[project][id]') ?? '';
  const wildcardMatch = wildcardMatcher(wildcard);
  return (ws) =>
    (name === '' || ws.name.toLowerCase().includes(name)) &&
    tags.every((t) => ws.tagNames.includes(t)) &&
    !excluded.some((t) => ws.tagNames.includes(t)) &&
    wildcardMatch(ws.name) &&
    (project === '' || ws.projectId === project);
}

function splitList(raw: string | null): string[] {
  return (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

function wildcardMatcher(pattern: string): (name: string) => boolean {
  if (pattern === '') return () => true;
  const p = pattern.toLowerCase();
  const prefix = p.startsWith('*');
  const suffix = p.endsWith('*') && p.length > 1;
  const core = p.slice(prefix ? 1 : 0, suffix ? -1 : undefined);
  return (raw) => {
    const n = raw.toLowerCase();
    if (prefix && suffix) return n.includes(core);
    if (prefix) return n.endsWith(core);
    if (suffix) return n.startsWith(core);
    return n === core;
  };
}
