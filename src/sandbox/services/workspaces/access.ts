/**
 * What every endpoint starts with: authenticating the bearer token (401 for none or an unknown one,
 * as the real service), finding a workspace by id or by organization and name, and hiding what the
 * caller may not see behind a 404, as the real service does.
 */
import type { SandboxRequest } from '../../core/http.js';
import type { TokenStore } from '../../core/tokens.js';
import { bearerToken } from './jsonapi.js';
import { notFound, type WorkspaceRecord, WorkspacesError } from './model.js';
import {
  atLeastRuns,
  type Caller,
  lookupCaller,
  type OrganizationSettings,
  Permissions,
  type WorkspaceRights,
} from './permissions.js';
import type { WorkspacesStore } from './store.js';

export interface ServiceDeps {
  store: WorkspacesStore;
  tokens: TokenStore;
  settings: Map<string, OrganizationSettings>;
  engineVersion: string;
}

export interface VisibleWorkspace {
  ws: WorkspaceRecord;
  rights: WorkspaceRights;
}

export class Access {
  readonly permissions: Permissions;

  constructor(readonly deps: ServiceDeps) {
    this.permissions = new Permissions(deps.settings);
  }

  get store(): WorkspacesStore {
    return this.deps.store;
  }

  /**
   * The caller, or 401 `{"errors":[{"status":"401","title":"unauthorized"}]}` for a missing or unknown
   * token (the real service's answer; go-tfe maps it to ErrUnauthorized).
   */
  caller(req: SandboxRequest): Caller {
    const secret = bearerToken(req);
    const caller = secret === '' ? undefined : lookupCaller(this.deps.tokens, secret, this.deps.settings);
    if (!caller) throw new WorkspacesError(401, 'unauthorized');
    return caller;
  }

  /** An organization the caller belongs to; 404 for a missing one and for one of others alike. */
  organization(caller: Caller, name: string): string {
    if (!this.store.organization(name) || !this.permissions.isMember(caller, name)) throw notFound();
    return name;
  }

  rights(caller: Caller, ws: WorkspaceRecord): WorkspaceRights {
    const project = this.store.project(ws.projectId);
    return this.permissions.workspaceRights(caller, ws, project?.name ?? '');
  }

  /** The workspace of `/workspaces/:id` or `/organizations/:org/workspaces/:name`, if the caller may read runs. */
  workspace(req: SandboxRequest, caller: Caller): VisibleWorkspace {
    const { id, organization, name } = req.params;
    const ws =
      id !== undefined
        ? this.store.workspace(id)
        : organization !== undefined && name !== undefined
          ? this.store.workspaceByName(organization, name)
          : undefined;
    if (!ws) throw notFound();
    const rights = this.rights(caller, ws);
    if (!atLeastRuns(rights, 'read')) throw notFound();
    return { ws, rights };
  }
}
