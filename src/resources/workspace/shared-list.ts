/**
 * One workspace list per run, organization and connection, shared by the plan-time organization
 * check and the planner's list of the same organization: the list answers 404 for an organization
 * that does not exist (or that the token may not see), so it tells existence and saves the separate
 * organization read.
 *
 * `list` takes the shared walk at most once: a later list in the same run reads again, so it never
 * sees a plan-time answer.
 */
import type { Workspace, WorkspacesClient } from '../../clients/workspaces/client.js';
import type { KindContext } from '../contract.js';
import { RunSharedRead, sharedReadId } from '../run-shared-read.js';

/** `undefined`: the organization does not exist (404). */
export type WorkspaceList = Promise<Workspace[] | undefined>;

const lists = new RunSharedRead<WorkspaceList>();

/** For the check: the run's walk of the organization's workspaces, started by whoever asks first. */
export function sharedWorkspaceList(
  ctx: KindContext,
  connection: string | undefined,
  org: string,
  walk: () => WorkspaceList,
): WorkspaceList {
  return lists.shared(ctx, sharedReadId(connection, org), walk);
}

/** For `list`: the check's walk the first time, a fresh one after that. */
export function takeWorkspaceList(
  ctx: KindContext,
  connection: string | undefined,
  org: string,
  walk: () => WorkspaceList,
): WorkspaceList {
  return lists.take(ctx, sharedReadId(connection, org), walk);
}

/** The walk itself: every page, `undefined` for a missing organization. */
export function walkWorkspaces(
  c: WorkspacesClient,
  org: string,
  include: string[],
  isNotFound: (error: unknown) => boolean,
): () => WorkspaceList {
  return () =>
    c.listWorkspaces(org, { include }).catch((error: unknown) => {
      if (isNotFound(error)) return undefined;
      throw error;
    });
}
