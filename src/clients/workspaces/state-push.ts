/**
 * Pushing a state file: the service only accepts a state version from the user holding the
 * workspace's lock, so a push is lock → upload → unlock, and the workspace must not be left locked
 * behind the user's back, whatever happens in between.
 *
 * - The unlock runs on every path once this function took the lock: success, a refused upload (409,
 *   412, 422), a network failure, and an abort through `signal` (Ctrl-C). The unlock itself is never
 *   given the signal: aborting it would leave exactly the stale lock this module exists to avoid.
 * - The lock request is not given the signal either. Once it is sent, only its answer tells whether
 *   the service took the lock; an abort arriving meanwhile is acted on right after, with an unlock.
 * - A lock refused because someone holds it (409) is reported with the holder, read back from the
 *   workspace, and nothing is unlocked: the lock belongs to them. A lock request whose connection
 *   broke is followed by a best-effort unlock, since it may have been taken.
 */
import { printable } from '../../common/printable.js';
import { HttpStatusError, isServiceError } from '../http/errors.js';
import { answerLost } from '../http/retry-policy.js';
import { CreateSends, resendGrantOf } from '../http/create-sends.js';
import type { Workspace, WorkspacesClient } from './client.js';
import { describeLockHolder } from './lock-holder.js';
import { type HeldLock, holdingLock, NOT_HELD } from '../../common/held-locks.js';
import { parseStateFile, type StateFileInfo } from './state-file.js';
import { setTimeout as sleep } from 'node:timers/promises';
import type { StateVersion } from './types.js';

export const DEFAULT_LOCK_REASON = 'Locked by Converge to push state';

export interface PushStateOptions {
  /** Aborts the upload; the workspace is still unlocked before the promise rejects. */
  signal?: AbortSignal;
  /** The caller holds the lock already: neither lock nor unlock. */
  alreadyLockedByCaller?: boolean;
  /** Shown to others while the lock is held. */
  reason?: string;
  /** Replace the workspace's state even if the file does not continue it (another lineage, older serial). */
  force?: boolean;
  /**
   * Registered as held (`held-locks.ts`) from the moment the lock is taken until it is released, so
   * that quitting at once names it; never before it is taken.
   */
  holding?: HeldLock;
  /** Told once the push holds the lock (its own or the caller's): from then on it may upload. */
  onLocked?: () => void;
}

/** The lock is held by someone (possibly the caller, from an earlier run), so the push did not start. */
export class WorkspaceLockedError extends Error {
  readonly workspaceId: string;
  /** `relationships.locked-by.data` as read after the refusal; null if it was released meanwhile. */
  readonly lockedBy: { id: string; type: string } | null;
  /** The holder's username or team name, when the service included it. */
  readonly lockedByName?: string;
  /** The holder is the user of this client's token. */
  readonly heldByCaller: boolean;
  /** The reason the holder gave, as the service reports it (anyone with access may have set it). */
  readonly lockReason?: string;

  constructor(init: {
    workspaceId: string;
    message: string;
    lockedBy: { id: string; type: string } | null;
    lockedByName?: string;
    heldByCaller: boolean;
    lockReason?: string;
    cause: unknown;
  }) {
    super(init.message, { cause: init.cause });
    this.name = 'WorkspaceLockedError';
    this.workspaceId = init.workspaceId;
    this.lockedBy = init.lockedBy;
    if (init.lockedByName !== undefined) this.lockedByName = init.lockedByName;
    this.heldByCaller = init.heldByCaller;
    if (init.lockReason !== undefined) this.lockReason = init.lockReason;
  }
}

/** Unlocking after the push failed: the workspace stays locked until someone unlocks it. */
export class WorkspaceUnlockError extends Error {
  readonly workspaceId: string;
  /** Set when the upload itself succeeded. */
  readonly stateVersion?: StateVersion;
  /** Set when the upload failed (or was aborted) too; `cause` is the unlock's error. */
  readonly pushError?: unknown;

  constructor(init: {
    workspaceId: string;
    stateVersion?: StateVersion;
    pushError?: unknown;
    cause: unknown;
  }) {
    const unlock = messageOf(init.cause);
    const what = init.stateVersion
      ? `state version ${init.stateVersion.id} was created, but unlocking workspace ${init.workspaceId} failed: ${unlock}`
      : `pushing state to workspace ${init.workspaceId} failed (${messageOf(init.pushError)}), and unlocking it failed too: ${unlock}`;
    super(`${what}; it stays locked until unlocked (force-unlock needs admin access)`, { cause: init.cause });
    this.name = 'WorkspaceUnlockError';
    this.workspaceId = init.workspaceId;
    if (init.stateVersion) this.stateVersion = init.stateVersion;
    if (init.pushError !== undefined) this.pushError = init.pushError;
  }
}

export async function pushState(
  client: WorkspacesClient,
  workspaceId: string,
  state: StateFileInfo,
  opts: PushStateOptions = {},
): Promise<StateVersion> {
  const { signal } = opts;
  signal?.throwIfAborted();
  const ownLock = opts.alreadyLockedByCaller !== true;
  const reason = opts.reason ?? DEFAULT_LOCK_REASON;
  if (ownLock) await lock(client, workspaceId, reason);
  opts.onLocked?.();
  const forget = ownLock && opts.holding ? holdingLock(opts.holding) : NOT_HELD;

  let stateVersion: StateVersion | undefined;
  let failed = false;
  let failure: unknown;
  try {
    stateVersion = await uploadOnce(client, workspaceId, state, opts);
  } catch (err) {
    failed = true;
    failure = err;
  }

  if (ownLock) {
    try {
      forget.releasing();
      await unlockOwnLock(client, workspaceId, reason);
    } catch (unlockError) {
      throw new WorkspaceUnlockError({
        workspaceId,
        cause: unlockError,
        ...(failed ? { pushError: failure } : { stateVersion: stateVersion! }),
      });
    } finally {
      // Released, or named by the error that says it stays locked: a later quit-at-once (a long
      // reconcile) does not list it again as this run's.
      forget();
    }
  }
  if (failed) throw failure;
  return stateVersion!;
}

/**
 * The upload, sent again when its answer is lost (a 5xx, a broken connection, no answer in time) and
 * the workspace's current state shows it did not land: a state version is not idempotent (a second
 * one would be refused as not newer), so the current one is read back first, and one equal to this
 * file (serial and MD5 of its text) is the upload that landed.
 *
 * Its sends are counted as a create's (`withResends`): 9 attempts in all, each resend a retry from
 * the host's budget, shown as a retry line, and a last failure that says after how many attempts it
 * gave up. It had a limit of 3 sends of its own, not shown and not counted: at 30% 503s a push
 * failed one time in twenty, with a single 503 in its error.
 */
async function uploadOnce(
  client: WorkspacesClient,
  workspaceId: string,
  state: StateFileInfo,
  opts: PushStateOptions,
): Promise<StateVersion> {
  const { signal } = opts;
  const sends = new CreateSends();
  const uploader = client.withResends(sends);
  for (let send = 1; ; send++) {
    signal?.throwIfAborted();
    sends.claimed = false;
    try {
      return await uploader.createStateVersion(
        workspaceId,
        {
          serial: state.serial,
          md5: state.md5,
          state: state.base64,
          lineage: state.lineage,
          ...(opts.force ? { force: true } : {}),
        },
        signal ? { signal } : {},
      );
    } catch (err) {
      // A resend refused as not newer (409) after an earlier send whose answer was lost and whose
      // read-back failed: that earlier send most likely landed, which the read-back now tells.
      if (send > 1 && err instanceof HttpStatusError && err.status === 409 && !signal?.aborted) {
        const landed = await currentIfThis(client, workspaceId, state);
        if (landed) return landed;
        throw err;
      }
      const grant = resendGrantOf(err, sends);
      if (!answerLost(err) || signal?.aborted) {
        // Not sent again: the retry the HTTP layer took for it goes back to the budget.
        grant?.release?.();
        throw err;
      }
      const landed = await currentIfThis(client, workspaceId, state);
      if (landed) {
        grant?.release?.();
        return landed;
      }
      if (!grant) throw err;
      if (signal?.aborted) {
        grant.release?.();
        throw signal.reason;
      }
      grant.announce?.('read back: the state version did not land');
      await sleep(grant.delayMs, undefined, signal ? { signal } : {}).catch(() => {
        // Interrupted while waiting: not sent, so the retry goes back; the caller's reason, not the
        // timer's own AbortError.
        grant.release?.();
        throw signal?.reason ?? err;
      });
    }
  }
}

/** The workspace's current state version when it is this very file; undefined otherwise or unknown. */
export async function currentIfThis(
  client: WorkspacesClient,
  workspaceId: string,
  state: StateFileInfo,
): Promise<StateVersion | undefined> {
  try {
    const current = await client.currentStateVersion(workspaceId);
    if (!current || current.attributes.serial !== state.serial) return undefined;
    const md5 = current.attributes.md5;
    if (typeof md5 === 'string') return md5 === state.md5 ? current : undefined;
    // The real service does not show the MD5: the stored text itself tells.
    const url = current.attributes['hosted-state-download-url'];
    if (typeof url !== 'string') return undefined;
    const text = await client.downloadState(url);
    return parseStateFile(text, 'the current state').md5 === state.md5 ? current : undefined;
  } catch {
    // Unknown is not landed; the caller resends (a duplicate is refused as not newer) or reports.
    return undefined;
  }
}

async function lock(client: WorkspacesClient, workspaceId: string, reason: string): Promise<void> {
  try {
    await client.lockWorkspace(workspaceId, reason, { resend: true });
  } catch (err) {
    if (err instanceof HttpStatusError && err.status === 409) {
      const refusal = await lockedError(client, workspaceId, err);
      // The lock is sent again after a lost answer: a lock carrying this very reason (it names the
      // process and the time) is the one an earlier send took, whoever the service says we are.
      if (refusal.lockReason === reason) return;
      throw refusal;
    }
    // Every send's answer was lost: the service may have taken the lock. Released only when it
    // carries this run's reason: a blind unlock would release another run of the same user.
    if (answerLost(err)) await releaseIfOwn(client, workspaceId, reason).catch(() => undefined);
    throw err;
  }
}

/**
 * After a lock whose every answer was lost: the service may have taken it. Released only when it
 * carries this run's reason; any other lock (another run of the same user) is not this run's.
 */
export async function releaseIfOwn(
  client: WorkspacesClient,
  workspaceId: string,
  reason: string,
  /** Called just before the unlock is sent (not when the lock turns out not to be this run's). */
  onSend?: () => void,
): Promise<void> {
  if (carriesLock(await client.readWorkspace({ id: workspaceId }), reason)) {
    onSend?.();
    await unlockOwnLock(client, workspaceId, reason);
  }
}

/**
 * Whether the workspace is locked with this run's reason: the service tells lock holders apart by
 * token only, so two runs with one token (CI jobs share one) are told apart by the reason alone.
 */
export function carriesLock(workspace: Workspace | undefined, reason: string): boolean {
  return Boolean(workspace?.attributes.locked) && workspace?.lockReason === reason;
}

/**
 * Releases the lock this run took, known by its `reason`. An unlock whose answer is lost (a 5xx, a
 * broken connection) is not resent blindly: had the first send landed, another run could have
 * locked the workspace since, and a second unlock would release its lock. The workspace is read back
 * instead, and the unlock sent again only while the lock still carries this run's reason. Unlocked,
 * or locked with another reason, this run's lock is gone: done. Used by the state push and by the
 * inventory's workspace lock. Its sends are counted as the upload's are (`withResends`).
 */
export async function unlockOwnLock(
  client: WorkspacesClient,
  workspaceId: string,
  reason: string,
): Promise<Workspace> {
  const sends = new CreateSends();
  const unlocker = client.withResends(sends);
  let unbudgeted = 0;
  for (;;) {
    sends.claimed = false;
    try {
      return await unlocker.unlockWorkspace(workspaceId);
    } catch (err) {
      const conflict = err instanceof HttpStatusError && err.status === 409;
      if (!conflict && !answerLost(err)) throw err;
      const grant = conflict ? undefined : resendGrantOf(err, sends);
      const now = await client.readWorkspace({ id: workspaceId }).catch(() => undefined);
      // A lock without a reason reads back as none: the reason '' is that one.
      if (now && (!now.attributes.locked || (now.lockReason ?? '') !== reason)) {
        grant?.release?.();
        return now;
      }
      // Releasing a lock is cleanup: with the run's retry budget spent, it still gets the sends it had
      // before the budget applied to it, rather than leave the workspace for an admin to unlock.
      const cleanup =
        !grant &&
        !conflict &&
        isServiceError(err) &&
        err.retryBudgetSpent === true &&
        unbudgeted < MAX_UNBUDGETED_UNLOCK_RESENDS;
      if ((!grant && !cleanup) || !now) {
        grant?.release?.();
        throw err;
      }
      if (grant) {
        grant.announce?.('read back: still locked by this run');
        await sleep(grant.delayMs);
      } else {
        unbudgeted++;
        await sleep(UNBUDGETED_PAUSE_MS * unbudgeted);
      }
    }
  }
}

/** Resends of an unlock after the run's retry budget is spent (see `unlockOwnLock`), and their pause. */
const MAX_UNBUDGETED_UNLOCK_RESENDS = 2;
const UNBUDGETED_PAUSE_MS = 250;

/** Names the lock's holder; the lookups are best effort, the refusal is reported either way. */
async function lockedError(
  client: WorkspacesClient,
  workspaceId: string,
  refusal: HttpStatusError,
): Promise<WorkspaceLockedError> {
  const [read, me] = await Promise.all([
    client.readWorkspaceDocument({ id: workspaceId }, { include: ['locked_by'] }).catch(() => undefined),
    client.whoAmI().catch(() => undefined),
  ]);
  const workspace = read?.workspace;
  const lockedBy = workspace?.lockedBy ?? null;
  const label = workspace?.name
    ? `${workspace.organization}/${workspace.name} (${workspaceId})`
    : workspaceId;
  if (!lockedBy) {
    return new WorkspaceLockedError({
      workspaceId,
      message: `cannot lock workspace ${label} to push state: ${refusal.serviceMessage ?? 'conflict'}`,
      lockedBy: null,
      heldByCaller: false,
      cause: refusal,
    });
  }
  const name = workspace?.lockedByName ?? undefined;
  const heldByCaller = me !== undefined && lockedBy.type === 'users' && lockedBy.id === me.id;
  const holder = describeLockHolder(lockedBy, name);
  // The lock's reason says what holds it (a change freeze a manifest declares, a run): "unlock it if
  // nothing is running" without it advised lifting a freeze.
  const held = workspace?.lockReason ? ` with reason ${printable(JSON.stringify(workspace.lockReason))}` : '';
  const message = heldByCaller
    ? `workspace ${label} is already locked by you (${holder})${held}; the state was not pushed. ` +
      'A lock of yours (a push or run in progress, or a lock a manifest declares with locked: true) holds it: ' +
      'wait for it to finish; unlock the workspace only if the lock is not meant to stay'
    : `workspace ${label} is locked by ${holder}${held}; the state was not pushed. ` +
      'Wait until they unlock it (an admin can force-unlock it)';
  return new WorkspaceLockedError({
    workspaceId,
    message,
    lockedBy,
    ...(name ? { lockedByName: name } : {}),
    heldByCaller,
    ...(workspace?.lockReason ? { lockReason: workspace.lockReason } : {}),
    cause: refusal,
  });
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
