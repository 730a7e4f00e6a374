/**
 * The inventory kept in a workspace of the workspace service (`CONVERGE_INVENTORY=workspace:ORG/NAME`),
 * shared by every machine that applies: its content is the workspace's current state version (a
 * format-4 state document carrying the inventory under `converge_inventory`, so the service's own
 * serial and lineage order the writes), and the workspace's lock, taken with a reason naming the run,
 * keeps two runs from interleaving.
 *
 * - The lock is never stolen: a run that finds it taken waits (polling with backoff) up to its
 *   deadline, then fails naming the holder's reason. `converge inventory unlock` releases a stale one.
 * - Lock and unlock are not given the run's signal (the client sends them uninterruptibly): once a
 *   lock is sent only its answer tells who holds it, and an aborted unlock would leave the stale lock
 *   this exists to avoid.
 * - The credentials are the environment's (CONVERGE_WORKSPACES_ADDR / _TOKEN), never a manifest's.
 */
import { INVENTORY_WORKSPACE_DESCRIPTION } from '../resources/workspace/index.js';
import { settingNames } from '../common/setting-names.js';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { HttpStatusError } from '../clients/http/errors.js';
import { truncate } from '../common/scrub.js';
import type { WorkspacesClient } from '../clients/workspaces/client.js';
import { parseStateFile } from '../clients/workspaces/state-file.js';
import { carriesLock, pushState, releaseIfOwn } from '../clients/workspaces/state-push.js';
import { answerLost } from '../clients/http/retry-policy.js';
import type { Workspace } from '../clients/workspaces/types.js';
import type { ResourceKey } from '../resources/contract.js';
import { printable } from '../common/printable.js';
import { EngineError } from './errors.js';
import {
  type InventoryBackend,
  type InventoryIdentity,
  type InventoryLockOptions,
  InventoryLockRetaken,
} from './inventory.js';
import { holderLiveness, holderOfReason, lockReason } from '../common/lock-reason.js';
import { holdingLock } from '../common/held-locks.js';

/** `workspace:ORG/NAME` → its parts; undefined when the text is not of that form. */
export function parseWorkspaceTarget(text: string): { organization: string; name: string } | undefined {
  const match = /^workspace:([A-Za-z0-9_-][A-Za-z0-9_.-]*)\/([A-Za-z0-9_-][A-Za-z0-9_.-]*)$/.exec(text);
  return match ? { organization: match[1]!, name: match[2]! } : undefined;
}

/** The field of the state document that holds the inventory. */
const FIELD = 'converge_inventory';
const FIRST_POLL_MS = 200;
const MAX_POLL_MS = 2_000;

export class WorkspaceInventoryBackend implements InventoryBackend {
  private workspaceId: string | undefined;
  private serial = -1;
  private lineage: string | undefined;

  constructor(
    private readonly client: WorkspacesClient,
    readonly organization: string,
    readonly name: string,
    private readonly env: NodeJS.ProcessEnv,
    private readonly closeClient: () => Promise<void> = async () => undefined,
    /** The workspaces service's address, as a saved plan records it (`identity`); no user info. */
    private readonly address?: string,
  ) {}

  get identity(): InventoryIdentity | undefined {
    return this.address === undefined
      ? undefined
      : { type: 'workspace', workspace: `${this.organization}/${this.name}`, address: this.address };
  }

  /** The reason this run's lock carries while it holds it: how a lock taken from it is told. */
  private heldReason: string | undefined;

  get description(): string {
    return `workspace ${this.organization}/${this.name}`;
  }

  /** The workspace's own lock, on the service this backend's connection reaches. */
  get lockedThing(): string {
    return `workspace ${this.organization}/${this.name}`;
  }

  get storedIn(): ResourceKey {
    return { kind: 'Workspace', namespace: this.organization, name: this.name };
  }

  /**
   * The workspace's id; `create` makes the workspace when it does not exist (taking the lock does,
   * so the first apply starts from nothing), while reading never writes to the service: a missing
   * workspace reads as an empty inventory.
   */
  private async id(create: boolean): Promise<string | undefined> {
    if (this.workspaceId) return this.workspaceId;
    const ref = { organization: this.organization, name: this.name };
    const found = (await this.client.readWorkspace(ref)) ?? (create ? await this.create() : undefined);
    this.workspaceId = found?.id;
    return this.workspaceId;
  }

  private async create() {
    try {
      return await this.client.createWorkspace(this.organization, {
        name: this.name,
        description: INVENTORY_WORKSPACE_DESCRIPTION,
      });
    } catch (error) {
      // The service answers 404 for an organization that does not exist and for one the token may
      // not see alike (it does not tell them apart, so as not to reveal which exist).
      if (error instanceof HttpStatusError && error.status === 404)
        throw new EngineError(
          `cannot create ${this.description} to keep the inventory in: the workspaces service has no organization "${this.organization}" this token can see (404). Create the organization, or name one that exists (workspace:ORG/NAME)`,
        );
      throw error;
    }
  }

  private async existing(): Promise<string> {
    return (await this.id(true))!;
  }

  /** Why the last read found no inventory (ManagedObjects.absent). */
  absentBecause: string | undefined;

  async read(): Promise<string | undefined> {
    const id = await this.id(false);
    const current = id === undefined ? undefined : await this.client.currentStateVersion(id);
    // The service answers a workspace that is not there and one this token may not see alike (404):
    // a plan token without access reads no inventory, which must not pass for an empty one.
    this.absentBecause =
      id === undefined
        ? 'it does not exist, or this token may not see it'
        : current
          ? undefined
          : 'it holds no inventory yet';
    if (!current) return undefined;
    const url = current.attributes['hosted-state-download-url'];
    if (typeof url !== 'string' || url === '')
      throw new EngineError(`${this.description}: its current state version has no download URL`);
    const text = await this.client.downloadState(url);
    let doc: Record<string, unknown>;
    try {
      doc = JSON.parse(text) as Record<string, unknown>;
    } catch {
      throw new EngineError(`${this.description}: its current state is not JSON`);
    }
    if (typeof doc !== 'object' || doc === null || !(FIELD in doc))
      throw new EngineError(
        `${this.description} holds a state that is not a Converge inventory; name another workspace in CONVERGE_INVENTORY`,
      );
    // The service's answer: a serial the next version continues, a lineage it keeps; both bounded.
    const serial = doc.serial ?? 0;
    if (!Number.isSafeInteger(serial) || (serial as number) < 0)
      throw new EngineError(`${this.description}: its current state has a serial that is not a whole number`);
    const lineage = doc.lineage;
    if (lineage !== undefined && (typeof lineage !== 'string' || lineage.length > 200))
      throw new EngineError(`${this.description}: its current state has a lineage that is not a short text`);
    this.serial = serial as number;
    this.lineage = lineage;
    return JSON.stringify(doc[FIELD]);
  }

  /** A new state version continuing the current one (next serial, same lineage); the lock is ours. */
  async write(text: string): Promise<void> {
    const id = await this.existing();
    const doc = {
      version: 4,
      serial: this.serial + 1,
      lineage: (this.lineage ??= randomUUID()),
      outputs: {},
      resources: [],
      [FIELD]: JSON.parse(text) as unknown,
    };
    const state = parseStateFile(`${JSON.stringify(doc, null, 2)}\n`, this.description);
    // Looked at before writing: someone may have released this run's lock meanwhile (`converge
    // inventory unlock`, a force-unlock), and another run taken it, with the same token even, which
    // the service would let write. The records are not written over whatever that run writes.
    if (this.heldReason !== undefined) {
      const now = await this.client.readWorkspace({ id });
      if (!carriesLock(now, this.heldReason)) {
        // Free: taken again, and the caller merges its records into what is there now, which
        // another run may have written while the lock was free (`InventoryLockRetaken`).
        if (now && !now.attributes.locked && (await this.tryLock(id, this.heldReason)) === true)
          throw new InventoryLockRetaken(this.description);
        throw new EngineError(
          `the lock of ${this.description} was released by someone else during this run (\`converge inventory unlock\`, or a force-unlock on the service), and another run holds it now, so the inventory was not written over its records`,
        );
      }
    }
    await pushState(this.client, id, state, { alreadyLockedByCaller: true });
    this.serial = doc.serial;
  }

  async lock(options: InventoryLockOptions): Promise<{ release(): Promise<void> }> {
    const id = await this.existing();
    const reason = lockReason(options.command, this.env);
    const deadline = Date.now() + options.timeoutMs;
    let pause = FIRST_POLL_MS;
    let told = false;
    for (;;) {
      const taken = await this.tryLock(id, reason);
      if (taken === true) {
        this.heldReason = reason;
        const forget = holdingLock({
          what: `the inventory in ${this.description}`,
          release: 'converge inventory unlock',
        });
        return {
          release: async () => {
            this.heldReason = undefined;
            try {
              // Marked as the unlock goes out, after the read that decides it: a quit before then
              // leaves the lock held, and says so.
              await this.unlock(id, reason, () => forget.releasing());
            } finally {
              // Released, or named by the error that says it stays locked: a later quit-at-once (a
              // long reconcile) does not list it again as this run's.
              forget();
            }
          },
        };
      }
      const left = deadline - Date.now();
      if (left <= 0) throw this.busy(taken, options);
      if (!told) {
        told = true;
        options.onWait?.(`${this.holderOf(taken)} (${this.description})`);
      }
      try {
        await sleep(Math.min(pause, left), undefined, options.signal ? { signal: options.signal } : {});
      } catch {
        throw new EngineError(
          `Interrupted while waiting for the lock of ${this.description}; nothing was changed.`,
        );
      }
      pause = Math.min(pause * 2, MAX_POLL_MS);
    }
  }

  /** True when the lock is ours; else the workspace as read after the refusal (who holds it). */
  private async tryLock(id: string, reason: string): Promise<true | Workspace | undefined> {
    try {
      await this.client.lockWorkspace(id, reason, { resend: true });
      return true;
    } catch (error) {
      if (error instanceof HttpStatusError && error.status === 409) {
        const now = await this.client.readWorkspace({ id }, { include: ['locked_by'] });
        // The lock is sent again after a lost answer: this run's own reason means the earlier send took it.
        return now?.lockReason === reason ? true : now;
      }
      // The request may have been taken even though its answer was lost: the reason names this run
      // alone, so a lock carrying it is ours to release.
      if (answerLost(error)) await releaseIfOwn(this.client, id, reason).catch(() => undefined);
      throw error;
    }
  }

  private async unlock(id: string, reason: string, onSend?: () => void): Promise<void> {
    try {
      // Only a lock carrying this run's reason: one released by someone else during the run and
      // taken by another run with the same token would otherwise be released from under that run.
      await releaseIfOwn(this.client, id, reason, onSend);
    } catch (error) {
      throw new EngineError(
        `could not unlock ${this.description} (${error instanceof Error ? error.message : String(error)}); ` +
          'it stays locked until released by hand.',
        'release-inventory-lock',
      );
    }
  }

  /** Who holds the lock, as the workspace says: its reason (a run's) and the user. */
  private holderOf(workspace: Workspace | undefined): string {
    // The reason is text anyone with access may have set: one printable line of bounded length.
    const reason = workspace?.lockReason ? truncate(printable(workspace.lockReason), 300) : undefined;
    const who = workspace?.lockedByName ?? workspace?.lockedBy?.id;
    return `another run${reason ? `: ${reason}` : ''}${who ? ` (as ${truncate(printable(who), 100)})` : ''}`;
  }

  private busy(
    workspace: Workspace | undefined,
    { timeoutMs, settingNames: names }: InventoryLockOptions,
  ): EngineError {
    // A holder on this host whose process is gone (killed) will never release it: said as such,
    // rather than "if that run is gone", which this host can tell.
    const holder = workspace?.lockReason ? holderOfReason(workspace.lockReason) : undefined;
    if (holder && holderLiveness(holder) === 'dead')
      return new EngineError(
        `${this.description} is locked by ${this.holderOf(workspace)}, and no process ${holder.pid} runs on this host: if that run was here, it is gone and nothing but you will release the lock (a container sharing this host name has processes of its own, so check there first).`,
        'release-inventory-lock',
      );
    return new EngineError(
      `${this.description} is locked by ${this.holderOf(workspace)}. ` +
        `Waited ${Math.round(timeoutMs / 1000)}s. Let it finish and run again, or wait longer (${settingNames(names).lockTimeout}); ` +
        'if that run is gone, release the lock.',
      'release-inventory-lock',
    );
  }

  /** Releases the lock whoever holds it (`converge inventory unlock`); the workspace as it was. */
  async forceUnlock(): Promise<Workspace | undefined> {
    const id = await this.id(false);
    if (id === undefined) return undefined;
    const before = await this.client.readWorkspace({ id }, { include: ['locked_by'] });
    if (!before?.lockedBy) return undefined;
    // The holder's own token unlocks; anyone else's lock needs the admin's force-unlock.
    await this.client.unlockWorkspace(id).catch(() => this.client.forceUnlockWorkspace(id));
    return before;
  }

  /** Who holds the lock now, for `converge inventory unlock` to show before asking. */
  async lockState(): Promise<Workspace | undefined> {
    const id = await this.id(false);
    return id === undefined ? undefined : this.client.readWorkspace({ id }, { include: ['locked_by'] });
  }

  async close(): Promise<void> {
    await this.closeClient();
  }
}
