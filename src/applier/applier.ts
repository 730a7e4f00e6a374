/**
 * Plan → ordered, concurrent execution. Each change starts as soon as the changes it depends on have
 * succeeded, with at most `parallelism` in flight. A failed change skips only its dependants; the
 * rest still run. Knows resource kinds only through the contract.
 */
import pLimit from 'p-limit';
import type { KindLookup } from '../planner/planner.js';
import type { Action, Change, Plan } from '../planner/types.js';
import {
  copiedSecrets,
  maskMessage,
  scrub,
  type SecretCopies,
  secretPaths,
  secretValues,
} from '../planner/masking.js';
import { movedWriteOnly, type WriteOnlyDigests, writeOnlyValues } from '../planner/write-only.js';
import {
  type AnyResourceKind,
  CLEARED_WRITE_ONLY,
  hasDetailReads,
  hasVersionChanges,
  hasWriteOnlyAttributes,
  type KindContext,
  type Observed,
  isVersioned,
  versionLabelOf,
} from '../resources/contract.js';
import { answerLost } from '../clients/http/retry-policy.js';
import { createOnce } from './create-once.js';
import { criticalPathFirst } from './start-order.js';
import { scopedContext } from './scoped-context.js';

export type ChangeStatus = 'applied' | 'failed' | 'skipped' | 'stale';

/** How a dependant's skip names what happened to the change it waited for. */
const BLOCKED_BECAUSE: Partial<Record<ChangeStatus, string>> = {
  skipped: 'was skipped',
  stale: 'changed since the plan (stale)',
  failed: 'failed',
};

export interface ChangeResult {
  address: string;
  action: Action;
  status: ChangeStatus;
  /** Why it failed or was skipped; never holds a secret (service errors carry no token). */
  message?: string;
  durationMs: number;
  /** The service's id of the object after a create, update or replace, when the kind reports one. */
  id?: string;
  /** Set when the change was never started because the run was interrupted. */
  interrupted?: true;
  /** Set when the change was never started because other objects of its saved plan moved. */
  planStale?: true;
  /**
   * Set on a create that failed with its answer lost: the service may have made the object. The
   * inventory records it as Converge's, so that `--prune` can delete it; a record of an object that
   * turns out not to exist is reported and dropped by the plan like any stale one.
   */
  mayHaveLanded?: true;
}

/**
 * `start` when a change is about to be sent (after the staleness check, when asked for), `finish`
 * when it is done. A change refused or skipped before anything was sent gets `finish` alone. `note`
 * says something about a running change (a create sent again after its answer was lost).
 */
export interface ApplyEvent {
  type: 'start' | 'finish' | 'note';
  change: Change;
  result?: ChangeResult;
  /** For `note`: one line, no secret. */
  message?: string;
  /** For `note`: a request was sent again (a create whose answer was lost, not found by its key). */
  resent?: boolean;
  done: number;
  total: number;
}

export interface ApplyOptions {
  parallelism?: number;
  /**
   * Re-read each object before changing it and refuse when it moved since the plan (for saved plans,
   * whose live state may have changed in between).
   */
  checkStale?: boolean;
  onEvent?: (event: ApplyEvent) => void;
  /** Where the digests of applied write-only values are recorded (see `planner/write-only.ts`). */
  writeOnly?: WriteOnlyDigests;
  /**
   * Stops the apply between changes (the first Ctrl-C or SIGTERM, a reconcile loop told to stop):
   * once aborted, no further change starts, while those in flight run to their end (the run's
   * `ctx.signal` aborts them, after a grace period). `ctx.signal` also stops new changes.
   */
  stop?: AbortSignal;
}

export interface ApplyResult {
  results: ChangeResult[];
  counts: Record<ChangeStatus, number>;
}

export class StaleChangeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StaleChangeError';
  }
}

/**
 * The error's text without any secret of the change (a service may echo a refused value back), nor a
 * copy of another object's secret (the same bind password in a description), as the plan masks them.
 */
function describeError(
  error: unknown,
  kind: AnyResourceKind | undefined,
  change: Change,
  copies: SecretCopies | undefined,
): string {
  const text = error instanceof Error ? error.message : String(error);
  const own =
    kind && change.desired ? scrub(text, secretValues(secretPaths(kind), change.desired.spec)) : text;
  return copies ? maskMessage(own, copies) : own;
}

/** Every secret the plan's objects carry, to mask copies of them in error messages. */
function planSecrets(plan: Plan, lookup: KindLookup): SecretCopies | undefined {
  return copiedSecrets(
    plan.changes.flatMap((c) => (c.desired ? [c.desired] : [])),
    lookup,
  );
}

/** After a change succeeded: what its write-only attributes now hold, or nothing for a deleted object. */
function recordWriteOnly(kind: AnyResourceKind, change: Change, digests: WriteOnlyDigests | undefined): void {
  if (!digests || !hasWriteOnlyAttributes(kind)) return;
  if (change.action === 'delete') {
    digests.forget(change.address);
    return;
  }
  const sent = new Set(change.desired?.changedWriteOnly ?? []);
  const values = new Map(change.desired ? writeOnlyValues(kind, change.desired) : []);
  const creates = change.action === 'create' || change.action === 'replace';
  for (const path of sent) {
    // A create sends only the values the manifest sets: the others were never sent, so nothing is
    // recorded of them (the planner marks every path of a create as changed).
    if (creates && !values.has(path)) continue;
    // Sent without a value: the kind cleared it, recorded as the empty value it sent, so later plans
    // know the service holds none (a forgotten record read as "most likely still set").
    const value = values.get(path) ?? CLEARED_WRITE_ONLY;
    digests.record(change.address, path, digests.digest(change.address, path, value));
  }
}

/**
 * Every change's object read again, as many at once as the apply may run: the fresh observation of
 * each, and why each one that moved since the plan is stale.
 */
async function checkAllFresh(
  work: readonly Change[],
  lookup: KindLookup,
  ctx: KindContext,
  limit: ReturnType<typeof pLimit>,
  digests: WriteOnlyDigests | undefined,
  copies: SecretCopies | undefined,
): Promise<{ stale: Map<string, string>; failed: Map<string, string> }> {
  const stale = new Map<string, string>();
  // An object that could not be read (a 403, a service down) cannot be shown unchanged either.
  const failed = new Map<string, string>();
  await Promise.all(
    work.map((change) =>
      limit(async () => {
        const kind = lookup(change.key.kind);
        if (!kind) return;
        try {
          await ensureNotStale(kind, scopedContext(ctx, { label: change.address }), change, digests);
        } catch (error) {
          if (error instanceof StaleChangeError) stale.set(change.address, error.message);
          else failed.set(change.address, describeError(error, kind, change, copies));
        }
      }),
    ),
  );
  return { stale, failed };
}

/** Refuses a change whose object moved since the plan was made. */
async function ensureNotStale(
  kind: AnyResourceKind,
  ctx: KindContext,
  change: Change,
  digests: WriteOnlyDigests | undefined,
): Promise<Observed | undefined> {
  const now = await kind.observe(ctx, change.key);
  if (change.action === 'create') {
    if (now)
      throw new StaleChangeError(
        `it exists now: created since the plan, and not recorded as Converge's (id ${now.id ?? 'unknown'})`,
      );
    return undefined;
  }
  if (!now) throw new StaleChangeError('it no longer exists: deleted since the plan');
  if (change.observedVersion !== undefined && now.version !== change.observedVersion) {
    // A version shown is a number or a kind's named index (JobModifyIndex); a kind's composite of
    // several fields (a workspace's update time, lock and state serial) says nothing to a person.
    const shown =
      isVersioned(kind) || (typeof change.observedVersion === 'number' && typeof now.version === 'number');
    const moved = hasVersionChanges(kind)
      ? kind.versionChange(change.observedVersion, now.version)
      : undefined;
    throw new StaleChangeError(
      shown
        ? `it changed since the plan (${versionLabelOf(kind)} ${change.observedVersion} → ${now.version})`
        : moved
          ? `it changed since the plan (${moved})`
          : 'it changed since the plan',
    );
  }
  // A write-only value moves no version: what Converge recorded of it is the only witness.
  const moved =
    change.writeOnlyBasis && digests && movedWriteOnly(change.writeOnlyBasis, change.address, digests);
  if (moved) {
    throw new StaleChangeError(
      `its ${moved} was set by another apply since the plan (Converge's record of the value changed; the service never shows it)`,
    );
  }
  // The same further reads the plan made (a workspace's current state, who holds its lock), so
  // the change is executed against what was reviewed.
  return hasDetailReads(kind) && change.desired && change.desired.ensure !== 'absent'
    ? kind.readDetails(ctx, change.desired, now)
    : now;
}

async function execute(
  kind: AnyResourceKind,
  ctx: KindContext,
  change: Change,
  observed: Observed | undefined,
  note: (message: string, resent?: boolean) => void,
): Promise<Observed | undefined> {
  const desired = change.desired;
  switch (change.action) {
    case 'create':
      return createOnce(kind, ctx, desired!, { onRetry: note });
    case 'update':
      return kind.update(ctx, desired!, observed!);
    case 'replace':
      await kind.delete(ctx, observed!);
      return createOnce(kind, ctx, desired!, { onRetry: note });
    case 'delete':
      await kind.delete(ctx, observed!, change.desired);
      return undefined;
    case 'noop':
      return undefined;
  }
}

export async function applyPlan(
  plan: Plan,
  lookup: KindLookup,
  ctx: KindContext,
  options: ApplyOptions = {},
): Promise<ApplyResult> {
  const limit = pLimit(Math.max(1, options.parallelism ?? 10));
  const work = plan.changes.filter((c) => c.action !== 'noop');
  // The plan's own, of the whole manifest, where it was made in this process; else its objects'.
  const copies = plan.secretCopies ?? planSecrets(plan, lookup);
  const outcomes = new Map<string, Promise<ChangeResult>>();
  let done = 0;
  const interrupted = () => Boolean(options.stop?.aborted || ctx.signal?.aborted);

  // A saved plan is applied whole or not at all: every object is read again first, and one that
  // moved since the plan refuses the plan before anything is sent. Checked object by object as each
  // change started, a reviewed membership change could land half (one group changed, its user not).
  const checked = options.checkStale
    ? await checkAllFresh(work, lookup, ctx, limit, options.writeOnly, copies)
    : undefined;
  if (checked && checked.stale.size + checked.failed.size > 0) {
    const why =
      checked.stale.size > 0
        ? `the saved plan is stale (${checked.stale.size} of its objects changed since it was saved)`
        : `${checked.failed.size} of the saved plan's objects could not be read again`;
    const results = work.map((change): ChangeResult => {
      const stale = checked.stale.get(change.address);
      const failed = checked.failed.get(change.address);
      if (stale !== undefined)
        return {
          address: change.address,
          action: change.action,
          status: 'stale',
          message: stale,
          durationMs: 0,
        };
      if (failed !== undefined)
        return {
          address: change.address,
          action: change.action,
          status: 'failed',
          message: `could not be read again before the plan was applied: ${failed}`,
          durationMs: 0,
        };
      // Held back by the refusal, whether or not an interrupt came meanwhile: the plan would be
      // refused again, so the refusal is what is said.
      return {
        address: change.address,
        action: change.action,
        status: 'skipped',
        message: `not attempted: ${why}`,
        durationMs: 0,
        planStale: true,
      };
    });
    results.forEach((result, i) => {
      done += 1;
      options.onEvent?.({ type: 'finish', change: work[i]!, result, done, total: work.length });
    });
    return { results, counts: countsOf(results) };
  }

  /** One change, once its slot is free: applied, failed, stale, or left alone after an interrupt. */
  const attempt = async (change: Change): Promise<ChangeResult> => {
    // After an interrupt, changes not yet started are left alone; those running finish their cleanup.
    if (interrupted()) {
      return {
        address: change.address,
        action: change.action,
        status: 'skipped' as const,
        message: 'not attempted: interrupted',
        durationMs: 0,
        interrupted: true,
      };
    }
    // Timed from here, not from when it was queued: waiting for a free slot is the other
    // changes' time, and counting it would report every change at parallelism 1 as slow.
    const started = Date.now();
    const kind = lookup(change.key.kind);
    // Requests made for this change carry its address, so a retry line can name the object.
    const own = scopedContext(ctx, { label: change.address });
    try {
      if (!kind) throw new Error(`unknown kind ${change.key.kind}`);
      // The re-read comes before the 'start' event: a stale object is refused with nothing
      // sent, so no progress line may first have said it was being changed.
      // A saved plan's objects were all read again before anything started (`checkAllFresh`), and
      // each is read once more right before its change: an object without check-and-set (a role)
      // edited in between must not be overwritten.
      const observed = options.checkStale
        ? await ensureNotStale(kind, own, change, options.writeOnly)
        : change.observed;
      options.onEvent?.({ type: 'start', change, done, total: work.length });
      const note = (message: string, resent = false) =>
        options.onEvent?.({
          type: 'note',
          change,
          message,
          ...(resent ? { resent } : {}),
          done,
          total: work.length,
        });
      const after = await execute(kind, own, change, observed, note);
      recordWriteOnly(kind, change, options.writeOnly);
      const id = after?.id ?? (change.action === 'update' ? change.id : undefined);
      return {
        address: change.address,
        action: change.action,
        status: 'applied' as const,
        durationMs: Date.now() - started,
        ...(id !== undefined ? { id } : {}),
      };
    } catch (error) {
      return {
        address: change.address,
        action: change.action,
        status: error instanceof StaleChangeError ? ('stale' as const) : ('failed' as const),
        message: describeError(error, kind, change, copies),
        durationMs: Date.now() - started,
        // Its answer lost and not found by a read back (or the read back failed too): it may exist.
        ...(change.action === 'create' && answerLost(error) ? { mayHaveLanded: true as const } : {}),
      };
    }
  };

  const run = (change: Change): Promise<ChangeResult> => {
    const existing = outcomes.get(change.address);
    if (existing) return existing;
    const outcome = (async (): Promise<ChangeResult> => {
      const deps = change.dependsOn.map((a) => outcomes.get(a)).filter((p) => p !== undefined);
      const depResults = await Promise.all(deps);
      const blocked = depResults.find((r) => r.status !== 'applied');
      // Reported finished before the slot is given back: otherwise the next change's 'start' came
      // first, and at --parallelism 1 two changes showed as under way at once.
      const finished = (result: ChangeResult): ChangeResult => {
        done += 1;
        options.onEvent?.({ type: 'finish', change, result, done, total: work.length });
        return result;
      };
      if (blocked) {
        // Left alone by the interrupt as much as what it waited for: said so, and as one of those.
        if (blocked.interrupted) {
          return finished({
            address: change.address,
            action: change.action,
            status: 'skipped',
            message: 'not attempted: interrupted',
            durationMs: 0,
            interrupted: true,
          });
        }
        return finished({
          address: change.address,
          action: change.action,
          status: 'skipped',
          message: `not attempted: ${blocked.address} ${BLOCKED_BECAUSE[blocked.status] ?? 'failed'}`,
          durationMs: 0,
        });
      }
      return limit(async () => finished(await attempt(change)));
    })();
    outcomes.set(change.address, outcome);
    return outcome;
  };

  // Changes are in dependency order, so each one's dependencies are registered before it; those
  // that others wait for are started first (`criticalPathFirst`, which keeps that order).
  // Deletions start only once every create and update succeeded: a failure earlier in the run
  // leaves everything else in place (as kapp and Argo CD order prunes last).
  const forward = work.filter((c) => c.action !== 'delete');
  const deletions = work.filter((c) => c.action === 'delete');
  // Reported in plan order, whatever order they started in.
  for (const change of criticalPathFirst(forward)) void run(change);
  const forwardResults = await Promise.all(forward.map(run));
  const blocker = forwardResults.find((r) => r.status !== 'applied');
  const deletionResults = blocker
    ? deletions.map((c): ChangeResult => {
        const stopped = interrupted();
        const result: ChangeResult = {
          address: c.address,
          action: c.action,
          status: 'skipped',
          message: stopped
            ? 'not attempted: interrupted'
            : `not attempted: deletions run only after every other change succeeded, and ${blocker.address} ${blocker.status === 'failed' ? 'failed' : `was ${blocker.status}`}`,
          durationMs: 0,
          ...(stopped ? { interrupted: true as const } : {}),
        };
        done += 1;
        options.onEvent?.({ type: 'finish', change: c, result, done, total: work.length });
        return result;
      })
    : await Promise.all(deletions.map(run));
  const results = [...forwardResults, ...deletionResults];
  return { results, counts: countsOf(results) };
}

function countsOf(results: readonly ChangeResult[]): Record<ChangeStatus, number> {
  const counts: Record<ChangeStatus, number> = { applied: 0, failed: 0, skipped: 0, stale: 0 };
  for (const r of results) counts[r.status] += 1;
  return counts;
}
