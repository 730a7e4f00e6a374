/**
 * What the workspaces client hands to its callers: JSON:API resources flattened to the few fields
 * Converge branches on, with every attribute kept as the service sent it (kebab-case) so that nothing
 * the spec adds later is lost on the way.
 */

/** A workspace by id (`ws-…`), or by organization and name. */
export type WorkspaceRef = { id: string } | { organization: string; name: string };

export interface Workspace {
  /** `ws-…` */
  id: string;
  organization: string;
  name: string;
  /** Kebab-case, exactly as the service sends them. */
  attributes: Record<string, unknown>;
  projectId: string | null;
  /** From `include=project`, when the response included the project. */
  projectName: string | null;
  /** `relationships.locked-by.data`: a user, team or run. */
  lockedBy: { id: string; type: string } | null;
  /** The holder's username or team name, from `include=locked_by`, when the response included it. */
  lockedByName: string | null;
  /**
   * Why it is locked, as the locker said (the lock body's `reason`); null when unlocked, not given,
   * or not reported. The spec shows no attribute for it; the real API and the sandbox send
   * `locked-reason`.
   */
  lockReason: string | null;
  currentStateVersionId: string | null;
  /**
   * `relationships.agent-pool.data.id`: where the service reports the pool an `agent` workspace runs
   * on. `agent-pool-id` is a body key only (the spec's update table), never an attribute it returns.
   */
  agentPoolId: string | null;
}

/** An organization; its id is its name. */
export interface Organization {
  name: string;
  attributes: Record<string, unknown>;
}

export interface Project {
  id: string;
  name: string;
  organization: string;
}

export interface StateVersion {
  /** `sv-…` */
  id: string;
  workspaceId: string | null;
  attributes: Record<string, unknown>;
}

export interface Pagination {
  currentPage: number;
  pageSize: number;
  prevPage: number | null;
  nextPage: number | null;
  totalPages: number;
  totalCount: number;
}

export interface WorkspaceListQuery {
  /** `search[name]` */
  name?: string;
  /** `search[tags]`: workspaces with all of these tags. */
  tags?: string[];
  /** `search[exclude-tags]`: leaves out workspaces with any of these tags. */
  excludeTags?: string[];
  /** `search[wildcard-name]`: `*` as prefix, suffix or both. */
  wildcardName?: string;
  /** `filter[project][id]` */
  projectId?: string;
  /** `include`: related resources to embed (`project`, `locked_by`, …). */
  include?: string[];
}

/** What a state version upload carries; `state`, `jsonState` and `jsonStateOutputs` are base64. */
export interface StateVersionInput {
  serial: number;
  md5: string;
  state: string;
  lineage?: string;
  jsonState?: string;
  jsonStateOutputs?: string;
  /**
   * Replace the current state even when the upload does not continue it (another lineage, a serial
   * not greater). Not in the spec's key table; the real API and the sandbox read `force`.
   */
  force?: boolean;
}

export interface RequestOptions {
  /** Aborts the request (Ctrl-C); the promise rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** A resource identifier: `{type, id}`. */
export interface JsonApiIdentifier {
  id: string;
  type: string;
}

export interface JsonApiRelationship {
  data?: JsonApiIdentifier | JsonApiIdentifier[] | null;
  links?: Record<string, unknown>;
}

/** A JSON:API resource object, as found in `data` and `included`. */
export interface JsonApiResource {
  id: string;
  type: string;
  attributes?: Record<string, unknown>;
  relationships?: Record<string, JsonApiRelationship>;
  links?: Record<string, unknown>;
}

export interface JsonApiDocument {
  data?: JsonApiResource | JsonApiResource[] | null;
  included?: JsonApiResource[];
  links?: Record<string, unknown>;
  meta?: Record<string, unknown>;
}
