/** Parses the WORKSPACE argument of the workspace and state commands: `org/name`, `name`, or a `ws-` id. */
import type { WorkspaceRef, WorkspacesClient } from '../clients/workspaces/client.js';
import { CliError } from './exit-codes.js';

/**
 * A workspace id: `ws-` and 16 letters and digits, as the service makes them (`ws-6jrRyVDv1J8zQMB5`).
 * Any other `ws-…` is a name: `workspace lock ws-a` read a workspace called `ws-a` as an id and
 * answered a bare 404.
 */
const WORKSPACE_ID = /^ws-[A-Za-z0-9]{16}$/;

export function parseWorkspaceRef(arg: string, defaultOrganization: string | undefined): WorkspaceRef {
  if (WORKSPACE_ID.test(arg)) return { id: arg };
  const slash = arg.indexOf('/');
  if (slash > 0 && slash < arg.length - 1 && arg.indexOf('/', slash + 1) < 0) {
    return { organization: arg.slice(0, slash), name: arg.slice(slash + 1) };
  }
  if (!arg.includes('/') && defaultOrganization) return { organization: defaultOrganization, name: arg };
  throw new CliError(
    `"${arg}" is not a workspace: give ORGANIZATION/NAME or a ws- id (or set CONVERGE_WORKSPACES_ORGANIZATION to use a bare name)`,
  );
}

export function describeRef(ref: WorkspaceRef): string {
  return 'id' in ref ? ref.id : `${ref.organization}/${ref.name}`;
}

/** The workspace's id, reading it by name when needed; a clear error when it is not there. */
export async function workspaceId(client: WorkspacesClient, ref: WorkspaceRef): Promise<string> {
  if ('id' in ref) return ref.id;
  const ws = await client.readWorkspace(ref);
  if (!ws) throw new CliError(`workspace ${describeRef(ref)} not found (or this token may not read it)`);
  return ws.id;
}
