/**
 * The reconcile loop (`converge reconcile`): every interval it re-reads the manifest, plans against
 * live state and applies the difference (or, with `dryRun`, only reports it), through the engine's
 * library API like any other front end. A failed cycle is retried sooner, then ever later
 * (`backoff.ts`); a stop (SIGTERM) lets the change in flight finish, starts no other, and ends with a
 * summary line. Locks are the engine's: one cycle is one engine apply.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { ChangeResult } from '../applier/applier.js';
import type { Catalog } from '../engine/catalog.js';
import type { RunHttpOptions } from '../clients/service.js';
import { httpOptions } from '../engine/connections.js';
import type { DeletionLimits } from '../engine/deletion-guards.js';
import { inventoryFromEnv } from '../engine/inventory-backend.js';
import { defaultCatalog } from '../engine/services.js';
import {
  apply,
  connect,
  loadManifest,
  lockInventory,
  type ManifestAccess,
  plan,
  plannableObjects,
  type PlanRun,
} from '../engine/workflow.js';
import { pruneLeftovers } from '../planner/render/format.js';
import { planCounts, unplannedChanges, unplannedObjects } from '../planner/render/unplanned.js';
import type { Change, Plan } from '../planner/types.js';
import { backoffDelayMs } from './backoff.js';
import { health } from './health.js';
import type { ListenAddress } from './listen-address.js';
import { JsonLog, type LogSink } from './log.js';
import { ReconcileMetrics } from './metrics.js';
import { startStatusServer, type StatusServer } from './server.js';
import { RECONCILE_TOKEN_VARIABLE } from './token.js';
import { type SettingNames, settingNames } from '../common/setting-names.js';
import { allowedAddressesProblem } from '../engine/connection-addresses.js';
import { EngineError } from '../engine/errors.js';
import { formatPosition } from '../common/types.js';
import { addressOf } from '../resources/contract.js';

/** The first wait after a failed cycle (or the interval, when that is shorter). */
export const DEFAULT_RETRY_BASE_MS = 10_000;
/** The longest wait after failed cycles: `--max-backoff`'s default. */
export const DEFAULT_MAX_BACKOFF_MS = 15 * 60_000;

export interface ReconcileOptions extends ManifestAccess {
  /** Manifest files or folders, re-read every cycle. */
  paths: readonly string[];
  intervalMs: number;
  /** How errors name the settings (the CLI passes its flags); default the engine's option names. */
  settingNames?: Partial<SettingNames>;
  /** Report drift, change nothing. */
  dryRun?: boolean;
  /** Serve /healthz, /metrics and POST /reconcile here. */
  listen?: ListenAddress;
  /** Default `process.env`: connections, the state folder, CONVERGE_RECONCILE_TOKEN. */
  env?: NodeJS.ProcessEnv;
  catalog?: Catalog;
  /** Stops the loop: the change in flight finishes, nothing else starts, then the summary. */
  signal?: AbortSignal;
  /** Also delete objects Converge owns that the manifest no longer declares. */
  prune?: boolean;
  parallelism?: number;
  /** A request gives up after this long, retries included. */
  timeoutSeconds?: number;
  /** `--allow-empty` and `--max-deletes`: guards on what `prune` may delete each cycle. */
  limits?: DeletionLimits;
  /** How long a cycle waits for the inventory's lock held by another run (default 10 s). */
  lockTimeoutSeconds?: number;
  retryBaseMs?: number;
  maxBackoffMs?: number;
  /** Secret values never to print (the CLI passes the environment's tokens). */
  secrets?: readonly string[];
  /** Injected for tests: the clock, the waits between cycles, and the jitter. */
  now?: () => number;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  random?: () => number;
}

export type CycleOutcome = 'in_sync' | 'corrected' | 'drift' | 'failed' | 'interrupted';

export interface CycleReport {
  cycle: number;
  outcome: CycleOutcome;
  /** The wait before the next cycle (absent when the loop is stopping). */
  nextCycleInMs?: number;
}

export interface ReconcileSummary {
  cycles: number;
  failedCycles: number;
  lastOutcome: CycleOutcome | undefined;
  /** What stopped the loop: the signal's reason (`SIGTERM`). */
  reason: string;
}

export interface ReconcileLoop {
  /** Where the endpoints listen (the real port when `listen` asked for port 0). */
  readonly address: ListenAddress | undefined;
  readonly metrics: ReconcileMetrics;
  /** Asks for a cycle now; one in flight is not doubled, the request runs right after it. */
  trigger(): { inFlight: boolean };
  /** Whether a cycle is under way (not waiting for the next): what a stop lets finish. */
  cycleInFlight(): boolean;
  /** Settles once the loop stopped and the summary line is written. */
  readonly done: Promise<ReconcileSummary>;
}

/**
 * The longest a Node timer waits: a longer one (an `--interval` of 600h) fires after 1 ms with a
 * TimeoutOverflowWarning, which made the loop plan against the services every millisecond.
 */
const MAX_TIMER_MS = 2 ** 31 - 1;

async function wait(ms: number, signal: AbortSignal): Promise<void> {
  try {
    // In steps a timer can hold, however long the wait.
    for (let left = ms; left > 0 && !signal.aborted; left -= MAX_TIMER_MS)
      await delay(Math.min(left, MAX_TIMER_MS), undefined, { signal });
  } catch {
    // Woken early: a stop or a trigger.
  }
}

const SUCCESS: ReadonlySet<CycleOutcome> = new Set(['in_sync', 'corrected', 'drift']);

function reasonOf(signal: AbortSignal | undefined): string {
  const r: unknown = signal?.reason;
  if (typeof r === 'string') return r;
  if (r instanceof Error) return r.message;
  return 'stopped';
}

/** Starts the loop (and its endpoints, when `listen` is given) and returns at once. */
export async function runReconcile(
  options: ReconcileOptions,
  io: { stdout: LogSink },
): Promise<ReconcileLoop> {
  const env = options.env ?? process.env;
  // Refused before the first cycle, as `--allow-address` is while the command line is read: the same
  // environment fails every cycle the same way, so a loop of failed cycles would only hide it.
  const refused = allowedAddressesProblem(
    env,
    options.allowAddresses,
    settingNames(options.settingNames).allowAddresses,
  );
  if (refused !== undefined) throw new EngineError(refused);
  const catalog = options.catalog ?? defaultCatalog;
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? wait;
  const stop = options.signal ?? new AbortController().signal;
  const log = new JsonLog(io.stdout, now, options.secrets ?? []);
  const metrics = new ReconcileMetrics();
  const startedAt = now();
  let lastSuccessAt: number | undefined;
  /** Cycles failed in a row: a probe says that the loop is failing, not only that it is stale. */
  let failures = 0;
  let inFlight = false;
  let pending = false;
  let wake = new AbortController();

  const trigger = (): { inFlight: boolean } => {
    pending = true;
    if (inFlight) return { inFlight: true };
    wake.abort();
    return { inFlight: false };
  };

  let server: StatusServer | undefined;
  if (options.listen) {
    server = await startStatusServer(options.listen, {
      health: () =>
        health({
          startedAt,
          lastSuccessAt,
          intervalMs: options.intervalMs,
          now: now(),
          failures,
        }),
      metrics: async () => ({
        contentType: metrics.registry.contentType,
        body: await metrics.registry.metrics(),
      }),
      trigger,
      token: env[RECONCILE_TOKEN_VARIABLE],
    });
  }
  log.line('start', {
    interval_ms: options.intervalMs,
    dry_run: Boolean(options.dryRun),
    manifest: [...options.paths],
    ...(server ? { listen: `${server.address.host}:${server.address.port}` } : {}),
  });

  const runCycle = (cycle: number) =>
    reconcileOnce(cycle, { options, env, catalog, stop, log, metrics, now });

  const done = (async (): Promise<ReconcileSummary> => {
    let cycles = 0;
    let failedCycles = 0;
    let lastOutcome: CycleOutcome | undefined;
    try {
      while (!stop.aborted) {
        inFlight = true;
        pending = false;
        cycles += 1;
        const result = await runCycle(cycles);
        inFlight = false;
        lastOutcome = result.outcome;
        if (SUCCESS.has(result.outcome)) {
          failures = 0;
          lastSuccessAt = now();
          metrics.lastSuccess.set(lastSuccessAt / 1000);
        } else if (result.outcome === 'failed') {
          failures += 1;
          failedCycles += 1;
        }
        metrics.cycles.inc({ outcome: result.outcome });
        metrics.duration.observe(result.durationMs / 1000);
        const next = stop.aborted
          ? undefined
          : pending
            ? 0
            : failures > 0
              ? backoffDelayMs(failures, {
                  baseMs: Math.min(options.retryBaseMs ?? DEFAULT_RETRY_BASE_MS, options.intervalMs),
                  maxMs: options.maxBackoffMs ?? DEFAULT_MAX_BACKOFF_MS,
                  ...(options.random ? { random: options.random } : {}),
                })
              : options.intervalMs;
        log.line('cycle', {
          cycle: cycles,
          outcome: result.outcome,
          counts: result.counts,
          duration_ms: result.durationMs,
          ...(result.error ? { error: result.error } : {}),
          ...(failures > 0 ? { consecutive_failures: failures } : {}),
          ...(next !== undefined ? { next_cycle_in_ms: next } : {}),
        });
        if (next === undefined || next === 0) continue;
        wake = new AbortController();
        if (pending) continue;
        await sleep(next, AbortSignal.any([stop, wake.signal]));
      }
    } finally {
      inFlight = false;
      await server?.close();
    }
    const summary: ReconcileSummary = { cycles, failedCycles, lastOutcome, reason: reasonOf(stop) };
    log.line('shutdown', {
      reason: summary.reason,
      cycles,
      failed_cycles: failedCycles,
      last_outcome: lastOutcome ?? null,
      ...(lastSuccessAt !== undefined ? { last_success: new Date(lastSuccessAt).toISOString() } : {}),
    });
    return summary;
  })();

  return {
    get address() {
      return server?.address;
    },
    metrics,
    trigger,
    cycleInFlight: () => inFlight,
    done,
  };
}

interface CycleContext {
  options: ReconcileOptions;
  env: NodeJS.ProcessEnv;
  catalog: Catalog;
  stop: AbortSignal;
  log: JsonLog;
  metrics: ReconcileMetrics;
  now: () => number;
}

interface CycleResult {
  outcome: CycleOutcome;
  counts: Record<string, number>;
  durationMs: number;
  error?: string;
}

/** One cycle: load, plan, apply (or report). Never throws: a failure is the cycle's outcome. */
async function reconcileOnce(cycle: number, ctx: CycleContext): Promise<CycleResult> {
  const { options, env, catalog, stop, log, metrics, now } = ctx;
  // A cycle's duration runs from here to its outcome: the wait before the next cycle is never in it
  // (the loop sleeps after logging the cycle). The first cycle is slower than the rest because it
  // loads the clients and validators it needs on first use (lazy imports), not because of the wait.
  const started = now();
  // Every key in every cycle line, 0 where nothing was applied: a log query summing `applied` found
  // it missing from the in_sync and failed cycles.
  const counts: Record<string, number> = {
    create: 0,
    update: 0,
    replace: 0,
    delete: 0,
    unplanned: 0,
    applied: 0,
    failed: 0,
    skipped: 0,
    stale: 0,
  };
  // Planning writes nothing, so a stop aborts its reads at once; once applying, requests run to
  // their end and the applier starts no further change (`signal` below).
  const reads = new AbortController();
  const abortReads = () => reads.abort(stop.reason);
  stop.addEventListener('abort', abortReads, { once: true });
  let run: PlanRun | undefined;
  const result = (outcome: CycleOutcome, error?: string): CycleResult => ({
    outcome,
    counts,
    durationMs: Math.max(0, now() - started),
    ...(error !== undefined ? { error } : {}),
  });
  let releaseInventory: (() => Promise<void>) | undefined;
  // The loop's own option names where they differ from the engine's (`lockTimeoutSeconds`).
  const names = { settingNames: { lockTimeout: 'lockTimeoutSeconds', ...options.settingNames } };
  try {
    const http = {
      ...httpOptions(env, {
        ...(options.timeoutSeconds !== undefined ? { timeoutSeconds: options.timeoutSeconds } : {}),
        ...(options.parallelism !== undefined ? { parallelism: options.parallelism } : {}),
        ...names,
      }),
      ...requestLogging(cycle, log, metrics),
    };
    const inventory = inventoryFromEnv(env, http);
    // Loaded and checked before the inventory's lock, as apply does: a manifest refused (a bad edit
    // the loop pulled) writes nothing, neither a .converge/ folder nor a workspace inventory, which
    // taking its lock creates. Neither reads the inventory: planning does, under the lock.
    const manifest = await loadManifest(options.paths, {
      catalog,
      env,
      ...names,
      ...(options.allowEnv ? { allowEnv: options.allowEnv } : {}),
      ...(options.allowAddresses ? { allowAddresses: options.allowAddresses } : {}),
    });
    const connections = connect(manifest, { catalog, env, http, signal: reads.signal });
    try {
      // Keying's problems only: a missing file is the plan's problem, reported with every other
      // object's drift (one bad document must not hide the rest), as a --dry-run cycle reports it.
      await plannableObjects(manifest, connections, catalog, inventory.backend.storedIn);
      if (options.dryRun) {
        // Drift only: the inventory is read, never written, so no lock is taken.
        await inventory.open().finally(() => inventory.close());
      } else {
        // One cycle is one apply: the inventory's lock is held from before planning until it is
        // saved, so a laptop's apply or another loop never interleaves with this cycle.
        const locked = await lockInventory({
          inventory,
          command: `converge reconcile (cycle ${cycle})`,
          timeoutMs: (options.lockTimeoutSeconds ?? 10) * 1000,
          signal: reads.signal,
          ...names,
        });
        releaseInventory = locked.release;
      }
    } catch (error) {
      await connections.close();
      throw error;
    }
    run = await plan(manifest, {
      connections,
      catalog,
      env,
      writeOnly: inventory,
      managed: inventory.objects,
      ...(options.limits ? { limits: options.limits } : {}),
      prune: Boolean(options.prune),
      parallelism: options.parallelism ?? 10,
      signal: reads.signal,
      http,
      ...names,
    });
    stop.removeEventListener('abort', abortReads);
    if (stop.aborted) return result('interrupted');
    const work = run.plan.changes.filter((c) => c.action !== 'noop');
    // What the prune leaves of Converge's own objects is said each cycle, as drift is: a loop that
    // only ever said `in_sync` hid a role it could no longer reach on a Connection taken out.
    for (const { why, addresses } of pruneLeftovers(run.plan))
      for (const address of addresses) log.line('prune_left', { cycle, address, why });
    // So is what a kind holds back (someone else's lock, a push waiting for it): an `in_sync` cycle
    // read as the object matching the manifest, which it does not.
    for (const c of run.plan.changes)
      if (c.differs?.length) log.line('held_back', { cycle, address: c.address, attributes: c.differs });
    const tally = tallyPlan(run.plan);
    Object.assign(counts, tally.counts);
    metrics.setDrift(
      tally.drift,
      tally.unplanned,
      run.plan.changes.map((c) => c.key.kind),
    );
    if (run.plan.problems.length > 0) {
      // Counted once per service whose objects could not be planned, as a failed request would be.
      const services = new Set(run.plan.problems.map((p) => catalog.kind(p.key.kind)?.service));
      for (const service of services) if (service) metrics.errors.inc({ service });
      // The objects that could be planned still drift, and say so: one bad document must not hide
      // every other object's drift from whoever reads the log.
      for (const c of tally.planned) log.line('change', changeFields(cycle, c, 'drift'));
      // Said as `plan` says it: the object and the manifest's file and line, then what is wrong.
      const first = run.plan.problems[0]!;
      const where = first.position ? `${formatPosition(first.position)}: ` : '';
      return result(
        'failed',
        log.message(
          `the plan has ${run.plan.problems.length} problem${run.plan.problems.length === 1 ? '' : 's'}${options.dryRun ? '' : ', nothing applied'}; first: ${addressOf(first.key)}: ${where}${first.message}`,
        ),
      );
    }
    if (options.dryRun || work.length === 0) {
      for (const c of tally.planned) log.line('change', changeFields(cycle, c, 'drift'));
      return result(work.length === 0 ? 'in_sync' : 'drift');
    }
    const applied = await apply(run, {
      catalog,
      parallelism: options.parallelism ?? 10,
      inventory,
      stop,
      onEvent: (event) => {
        if (event.type === 'note' && event.resent) {
          // A create sent again after a lost answer: a retry, in the metrics and the log, as the
          // HTTP layer's own are.
          const service = catalog.kind(event.change.key.kind)?.service;
          if (service) metrics.retries.inc({ service });
          log.line('retry', {
            cycle,
            address: event.change.address,
            reason: log.message(event.message ?? ''),
          });
          return;
        }
        if (event.type !== 'finish' || !event.result) return;
        recordChange(cycle, event.change, event.result, ctx);
      },
    });
    // A corrected object no longer differs: a `drift > 0` alert fired for a whole interval after the
    // cycle that fixed it.
    const corrected = new Set(applied.results.filter((r) => r.status === 'applied').map((r) => r.address));
    const left = new Map<string, number>();
    for (const c of tally.planned)
      if (!corrected.has(c.address)) left.set(c.key.kind, (left.get(c.key.kind) ?? 0) + 1);
    metrics.setDrift(left, tally.unplanned, [], undefined);
    Object.assign(counts, applied.counts);
    // Said as `apply` says it: someone released this cycle's lock, and the records were merged.
    if (inventory.retakenLock)
      log.line('inventory_lock_retaken', { cycle, inventory: log.message(inventory.retakenLock) });
    if (applied.counts.failed + applied.counts.stale > 0) {
      // The cycle line says why, as for any failed cycle; each change's line has its message.
      const { failed, stale } = applied.counts;
      const parts = [
        ...(failed > 0 ? [`${failed} change${failed === 1 ? '' : 's'} failed`] : []),
        ...(stale > 0 ? [`${stale} change${stale === 1 ? ' was' : 's were'} stale`] : []),
      ];
      return result('failed', `${parts.join(', ')} (see their change lines)`);
    }
    if (applied.counts.skipped > 0) return result(stop.aborted ? 'interrupted' : 'failed');
    return result('corrected');
  } catch (error) {
    const service = (error as { service?: unknown }).service;
    if (typeof service === 'string') metrics.errors.inc({ service });
    if (stop.aborted) return result('interrupted');
    return result('failed', log.message(error instanceof Error ? error.message : String(error)));
  } finally {
    stop.removeEventListener('abort', abortReads);
    await run?.connections.close();
    await releaseInventory?.();
  }
}

/**
 * A plan's counts for the cycle's log line, and its drift and unplanned objects per kind for the
 * metrics, counted as `converge plan` counts its summary (`planCounts`): an object that could not be
 * planned (a problem, or a kind that could not compare it) is `unplanned`, never also under the
 * action it would have had. Its action is a guess (a role naming a missing policy reads as a create),
 * so counting it as a create or as drift told of a change no cycle would ever make.
 */
function tallyPlan(plan: Plan): {
  counts: Record<'create' | 'update' | 'replace' | 'delete' | 'unplanned', number>;
  drift: Map<string, number>;
  unplanned: Map<string, number>;
  /** The changes that were planned (unplanned objects left out): each a drift line of the log. */
  planned: Change[];
} {
  const unplanned = unplannedObjects(plan);
  const { create, update, replace, delete: del, unplanned: notPlanned } = planCounts(plan.changes, unplanned);
  const untrusted = unplannedChanges(plan, unplanned);
  const drift = new Map<string, number>();
  const planned = plan.changes.filter((c) => c.action !== 'noop' && !untrusted.has(c));
  for (const c of planned) drift.set(c.key.kind, (drift.get(c.key.kind) ?? 0) + 1);
  const unplannedByKind = new Map<string, number>();
  for (const u of unplanned) unplannedByKind.set(u.kind, (unplannedByKind.get(u.kind) ?? 0) + 1);
  return {
    counts: { create, update, replace, delete: del, unplanned: notPlanned },
    drift,
    unplanned: unplannedByKind,
    planned,
  };
}

/**
 * The metrics' request hooks, and a JSON line for each retry and each rate-limit pause, as `apply`
 * prints them on stderr: a slow or failing service is never silent in the loop's log either.
 */
function requestLogging(
  cycle: number,
  log: JsonLog,
  metrics: ReconcileMetrics,
): Pick<RunHttpOptions, 'onRequest' | 'onRetry' | 'onRateLimitPause'> {
  const hooks = metrics.requestHooks();
  return {
    onRequest: hooks.onRequest,
    onRetry: (event) => {
      hooks.onRetry(event);
      // A 429 met during a pause is the pause's, which has its own line.
      if (event.heldByPause) return;
      log.line('retry', {
        cycle,
        service: event.service,
        method: event.method,
        path: log.message(event.path),
        attempt: event.attempt,
        max_attempts: event.maxAttempts,
        reason: log.message(event.reason),
        delay_ms: Math.round(event.delayMs),
      });
    },
    onRateLimitPause: (event) => {
      log.line('rate_limit', {
        cycle,
        service: event.service,
        reason: log.message(event.reason),
        wait_ms: Math.round(event.waitMs),
        ...(event.throttlePerSecond !== undefined ? { per_second: event.throttlePerSecond } : {}),
      });
    },
  };
}

/** Attribute paths a drift line names at most: a whole replaced object would list hundreds. */
const DRIFT_PATHS_LISTED = 20;

function changeFields(cycle: number, change: Change, result: string): Record<string, unknown> {
  const fields: Record<string, unknown> = {
    cycle,
    kind: change.key.kind,
    address: change.address,
    action: change.action,
    result,
  };
  // What differs, by attribute (never its value): on-call reads where it drifted without a plan.
  if (result === 'drift' && change.action === 'update' && change.diffs.length > 0) {
    const paths = [...new Set(change.diffs.map((d) => d.path))];
    fields.attributes = paths.slice(0, DRIFT_PATHS_LISTED);
    if (paths.length > DRIFT_PATHS_LISTED) fields.attributes_not_listed = paths.length - DRIFT_PATHS_LISTED;
  }
  return fields;
}

function recordChange(cycle: number, change: Change, r: ChangeResult, ctx: CycleContext): void {
  const kind = change.key.kind;
  ctx.metrics.changes.inc({ kind, action: change.action, result: r.status });
  if (r.status === 'failed') {
    const service = ctx.catalog.kind(kind)?.service;
    if (service) ctx.metrics.errors.inc({ service });
  }
  ctx.log.line('change', {
    ...changeFields(cycle, change, r.status),
    duration_ms: r.durationMs,
    ...(r.message ? { message: ctx.log.message(r.message) } : {}),
  });
}
