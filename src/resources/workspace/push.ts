/**
 * Seeding a workspace's state from the manifest's file, and the lock that push takes.
 *
 * The push locks the workspace for its few requests (the service only takes a state version from
 * the lock's holder). A run that quits at once in between (a second Ctrl-C, a killed CI job) leaves
 * that lock behind, so:
 * - the lock's reason names the push, the PID namespace, the host, the process and the time, as the
 *   inventory lock's does (`lock-reason.ts`): whoever finds it can tell what holds it and whether
 *   that still runs;
 * - while held it is registered (`held-locks.ts`), so quitting at once names it with its unlock
 *   command;
 * - a plan of the same user finding such a lock, left by a process of this host, PID namespace and
 *   boot that is gone, plans its release (`abandonedHere`, the workspace kind's compare), and the
 *   apply reads it again before releasing it: nothing else would release it;
 * - any other push lock is noted on its workspace (`abandonedPushNote`).
 */
import { readFileSync, readlinkSync } from 'node:fs';
import type { Workspace, WorkspacesClient } from '../../clients/workspaces/client.js';
import { pushState, WorkspaceLockedError } from '../../clients/workspaces/state-push.js';
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
  const label = `${workspace.organization}/${workspace.name}`;
  try {
    await pushState(client, workspace.id, local.info, {
      ...(request.signal ? { signal: request.signal } : {}),
      alreadyLockedByCaller: request.lockedByCaller,
      // No CI job URL: the host, the PID namespace and the process tell whether the holder is gone.
      reason: pushReason(local.path),
      holding: {
        what: `workspace ${label}, locked to push ${local.path}`,
        release: `converge workspace unlock ${label}`,
      },
    });
  } catch (error) {
    throw withUnlockHint(error, label);
  }
}

/**
 * `converge: pushing PATH (pid namespace N, boot B) on host H, pid P, since T`. The PID namespace
 * and the boot id are part of the holder's identity: containers that share a host name (host
 * networking) each have their own process ids, and machines that share one their own boot, so a live
 * process of another looks gone from here. Without both, no holder is ever taken for gone.
 */
function pushReason(file: string): string {
  const namespace = ownPidNamespace();
  const boot = ownBootId();
  const identity = namespace && boot ? ` (pid namespace ${namespace}, boot ${boot})` : '';
  return lockReason(`${PUSH_REASON_PREFIX}${file}${identity}`, {});
}

/**
 * This machine's boot id (Linux): PID namespace numbers repeat across machines (every host's first
 * one has the same), so two machines sharing a host name (`localhost`, a fixed CI hostname) are
 * told apart by it.
 */
function ownBootId(): string | undefined {
  try {
    return /^[0-9a-f-]{36}$/.exec(readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim())?.[0];
  } catch {
    return undefined;
  }
}

/** This process's PID namespace (Linux), or undefined where it cannot be read. */
function ownPidNamespace(): string | undefined {
  try {
    return /^pid:\[(\d+)\]$/.exec(readlinkSync('/proc/self/ns/pid'))?.[1];
  } catch {
    return undefined;
  }
}

/**
 * Whether a push lock's holder is a process of this host and PID namespace that is gone. A reason
 * without a namespace (another system, an older Converge) is never taken for gone.
 */
export function abandonedHere(reason: string | null | undefined): boolean {
  if (!reason?.startsWith(PUSH_REASON_PREFIX)) return false;
  const identity = / \(pid namespace (\d+), boot ([0-9a-f-]{36})\) on host /.exec(reason);
  if (!identity || identity[1] !== ownPidNamespace() || identity[2] !== ownBootId()) return false;
  const holder = holderOfReason(reason);
  return holder !== undefined && holderLiveness(holder) === 'dead';
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
export function abandonedPushNote(workspace: Workspace, manifestLocks: boolean): string | undefined {
  if (!workspace.attributes.locked || !workspace.lockReason?.startsWith(PUSH_REASON_PREFIX)) return undefined;
  if (!holderOfReason(workspace.lockReason)) return undefined;
  const label = `${workspace.organization}/${workspace.name}`;
  const gone =
    !manifestLocks && abandonedHere(workspace.lockReason)
      ? "; that process is gone, and a plan with the holder's token plans its release"
      : '';
  return (
    `locked by a Converge state push that may not have finished (${printable(JSON.stringify(workspace.lockReason))})${gone}. ` +
    `If no run holds it, release it with \`converge workspace unlock ${label}\``
  );
}
