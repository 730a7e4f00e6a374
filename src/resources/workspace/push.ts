/**
 * Seeding a workspace's state from the manifest's file, and the lock that push takes.
 *
 * The push locks the workspace for its few requests (the service only takes a state version from
 * the lock's holder). A run that quits at once in between (a second Ctrl-C, a killed CI job) leaves
 * that lock behind, so:
 * - the lock's reason names the push, the host, the process and the time, as the inventory lock's
 *   does (`lock-reason.ts`): whoever finds it can tell what holds it and whether that still runs;
 * - while held it is registered (`held-locks.ts`), so quitting at once names it with its unlock
 *   command;
 * - a later push finding such a lock of the same user, left by a process of this host that is gone,
 *   releases it and pushes: the lock cannot be anyone else's, and nothing else would release it;
 * - a plan shows such a lock on the workspace it holds (`abandonedPushNote`).
 */
import type { Workspace, WorkspacesClient } from '../../clients/workspaces/client.js';
import { pushState, WorkspaceLockedError } from '../../clients/workspaces/state-push.js';
import { whileHolding } from '../../common/held-locks.js';
import { holderLiveness, holderOfReason, lockReason } from '../../common/lock-reason.js';
import { printable } from '../../common/printable.js';
import type { LocalState } from './state.js';

/** How every push lock's reason starts; nothing else Converge does locks with it. */
export const PUSH_REASON_PREFIX = 'converge: pushing ';

export interface PushRequest {
  client: WorkspacesClient;
  workspace: Pick<Workspace, 'id' | 'organization' | 'name'>;
  local: LocalState;
  signal?: AbortSignal;
  /** The run holds the workspace's lock already (the manifest locks it): no lock of the push's own. */
  lockedByCaller: boolean;
}

export async function pushLocalState(request: PushRequest): Promise<void> {
  const { client, workspace, local } = request;
  const push = () =>
    pushState(client, workspace.id, local.info, {
      ...(request.signal ? { signal: request.signal } : {}),
      alreadyLockedByCaller: request.lockedByCaller,
      // No CI job URL: the host and process are what tell whether the holder is gone.
      reason: lockReason(`${PUSH_REASON_PREFIX}${local.path}`, {}),
    });
  if (request.lockedByCaller) {
    await push();
    return;
  }
  const label = `${workspace.organization}/${workspace.name}`;
  await whileHolding(
    {
      what: `workspace ${label}, locked to push ${local.path}`,
      release: `converge workspace unlock ${label}`,
    },
    async () => {
      try {
        await push();
      } catch (error) {
        if (!abandonedHere(error)) throw withUnlockHint(error, label);
        await client.unlockWorkspace(workspace.id);
        await push();
      }
    },
  );
}

/** A lock of the same user taken by a push whose process, on this host, is gone. */
function abandonedHere(error: unknown): boolean {
  if (!(error instanceof WorkspaceLockedError) || !error.heldByCaller) return false;
  const holder = pushHolder(error.lockReason);
  return holder !== undefined && holderLiveness(holder) === 'dead';
}

function pushHolder(reason: string | null | undefined): { host: string; pid: number } | undefined {
  if (!reason?.startsWith(PUSH_REASON_PREFIX)) return undefined;
  return holderOfReason(reason);
}

/** The caller's own lock from elsewhere: say which command releases it once that run is gone. */
function withUnlockHint(error: unknown, label: string): unknown {
  if (!(error instanceof WorkspaceLockedError) || !error.heldByCaller) return error;
  const reason = error.lockReason ? ` (reason: ${printable(JSON.stringify(error.lockReason))})` : '';
  return new Error(
    `${error.message}${reason}. Once that run is gone: \`converge workspace unlock ${label}\``,
    { cause: error },
  );
}

/**
 * What a plan says of a workspace still locked by a push that did not finish, or undefined when
 * its lock is anything else. The reason is service text anyone with access may have set, so only a
 * strict match counts and it is shown printable.
 */
export function abandonedPushNote(workspace: Workspace): string | undefined {
  if (!workspace.attributes.locked) return undefined;
  const holder = pushHolder(workspace.lockReason);
  if (!holder) return undefined;
  const label = `${workspace.organization}/${workspace.name}`;
  const gone =
    holderLiveness(holder) === 'dead'
      ? '; that process is gone, and an apply that pushes state here releases the lock itself'
      : '';
  return (
    `locked by a Converge state push that may not have finished (${printable(JSON.stringify(workspace.lockReason))})${gone}. ` +
    `If no run holds it, release it with \`converge workspace unlock ${label}\``
  );
}
