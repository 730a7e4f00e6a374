/**
 * `converge apply`: plan, show, confirm, execute. `apply FILE` executes a saved plan instead, after
 * checking its MAC, refusing objects that moved since it was made. The whole run holds the local
 * inventory's lock, so two applies on one machine never lose each other's records.
 */
import { existsSync } from 'node:fs';
import type { ApplyResult } from '../../applier/applier.js';
import type { Catalog } from '../../engine/catalog.js';
import type { ServiceConnections } from '../../engine/connections.js';
import { EngineError, InventoryNotSavedError } from '../../engine/errors.js';
import { INVENTORY_VARIABLE, inventoryFromEnv } from '../../engine/inventory-backend.js';
import type { LocalInventory } from '../../engine/inventory.js';
import {
  alreadyDeleted,
  createsDeletedSince,
  deletionsStillThere,
  heldBackSincePlan,
  movedSincePlan,
  readPlanFile,
  reconcileSavedPlan,
  refuseOtherInventory,
  refuseOtherServices,
  type SavedPlan,
  verifyPlanFile,
} from '../../engine/plan-file.js';
import { adoptObjects, type AdoptResult } from '../../engine/adopt.js';
import { markedElsewhereWarning } from './import.js';
import {
  apply,
  connect,
  loadManifest,
  lockInventory,
  plan as planRun,
  checkBeforeLock,
} from '../../engine/workflow.js';
import type { Manifest } from '../../manifest/types.js';
import { renderHuman } from '../../planner/render/human.js';
import { hasChanges } from '../../planner/types.js';
import { annotatePlanProblems } from '../ci/github.js';
import { quoteArg, remedyText, settingFlags } from '../remedies.js';
import { printable } from '../../common/printable.js';
import { CliError, EXIT } from '../exit-codes.js';
import { type Interrupt, onInterrupt } from '../interrupt.js';
import { type Io, useColor, write } from '../io.js';
import { requireManifestPaths } from '../manifest-paths.js';
import { applyProgress } from '../progress.js';
import { type RunWaits, writeApplySummary, writeInterruptSummary } from '../apply-summary.js';
import type { RateLimitPauseEvent, RetryEvent } from '../../clients/http/index.js';
import { askYesNo } from '../ask-yes-no.js';
import { sayLockWait } from '../lock-wait.js';
import { runHttpOptions } from '../service-client.js';
import { CLI_SETTING_NAMES } from '../setting-flags.js';
import { type PlanningFlags, readingProgress } from './plan.js';

export interface ApplyFlags extends PlanningFlags {
  autoApprove?: boolean;
  /** `--import`: addresses to adopt into the inventory before planning. */
  import?: string[];
  /** Seconds to wait for another apply's lock on the inventory. */
  lockTimeout?: number;
}

/**
 * `--import`: adopts the addresses into the inventory (under the lock the apply holds) with the
 * manifest and connections the plan then takes, so the run reads its files and opens its connections
 * once. The caller owns the connections (the plan closes them if it fails).
 */
async function adoptBeforePlanning(
  manifest: Manifest,
  connections: ServiceConnections,
  flags: ApplyFlags,
  catalog: Catalog,
  inventory: LocalInventory,
): Promise<AdoptResult[]> {
  try {
    return await adoptObjects(manifest, flags.import ?? [], connections, inventory, catalog);
  } catch (error) {
    await connections.close();
    throw error;
  }
}

export async function applyCommand(
  planFile: string | undefined,
  flags: ApplyFlags,
  io: Io,
  catalog: Catalog,
): Promise<number> {
  const interrupt = onInterrupt(io);
  try {
    return await applyUntilInterrupted(planFile, flags, io, catalog, interrupt);
  } catch (error) {
    // Cut short by Ctrl-C or SIGTERM (waiting for the lock, planning): said plainly, with the
    // signal's exit code, never as a failed request.
    if (interrupt.exitCode === undefined) throw error;
    const message = error === interrupt.signal.reason ? undefined : (error as Error).message;
    write(io.stderr, message ?? 'Interrupted while planning; nothing was changed.');
    return interrupt.exitCode;
  } finally {
    interrupt.dispose();
  }
}

async function applyUntilInterrupted(
  planFile: string | undefined,
  flags: ApplyFlags,
  io: Io,
  catalog: Catalog,
  interrupt: Interrupt,
): Promise<number> {
  if (planFile && flags.file.length > 0) {
    throw new CliError(
      'give either a saved plan file or -f PATH, not both: a saved plan names its own manifest',
    );
  }
  const reported = runHttpOptions(io, flags.timeout, flags.parallelism);
  // Counted for the summary as well as said as they happen.
  const waits: RunWaits = { retries: 0, rateLimitPauses: 0 };
  const http = {
    ...reported,
    onRetry: (event: RetryEvent) => {
      if (!event.heldByPause) waits.retries += 1;
      reported.onRetry?.(event);
    },
    onRateLimitPause: (event: RateLimitPauseEvent) => {
      if (event.throttlePerSecond === undefined) waits.rateLimitPauses += 1;
      reported.onRateLimitPause?.(event);
    },
  };
  const inventory = inventoryFromEnv(io.env, http);
  // A bad CONVERGE_STATE_KEY or state.key is reported up front, whether or not this run needs it.
  const currentKey = inventory.existingStateKey();
  const saved = planFile ? await readPlanFile(planFile) : undefined;
  // Before anything is planned or sent: a plan edited after review must not run at all.
  if (saved && planFile) {
    verifyPlanFile(
      saved,
      planFile,
      currentKey,
      `CONVERGE_STATE_KEY is not set and ${inventory.keyFile} does not exist`,
    );
  }
  // Before the inventory's lock (a workspace inventory is made if missing) and before any request:
  // the services the environment points at, compared with those the plan was made against.
  if (saved && planFile) await refuseOtherEnvironment(saved, planFile, io.env, catalog);
  // The inventory too, before its lock is taken (a workspace one is made by it): what the plan
  // prunes is what the inventory it was made with recorded as Converge's.
  if (saved && planFile)
    refuseOtherInventory(
      saved,
      inventory.identity,
      planFile,
      !io.env[INVENTORY_VARIABLE]
        ? `the default under CONVERGE_STATE_DIR: ${INVENTORY_VARIABLE} is not set`
        : inventory.identity?.type === 'workspace'
          ? `${INVENTORY_VARIABLE} and CONVERGE_WORKSPACES_ADDR`
          : INVENTORY_VARIABLE,
    );
  const paths = saved ? saved.manifest : flags.file;
  // Said before the lock is taken, so a usage error leaves no .converge/ folder behind.
  requireManifestPaths(paths);
  if (saved && planFile) refuseMovedManifest(saved.manifest, planFile);
  if (saved && flags.import?.length) {
    throw new CliError(
      '--import adopts objects before planning: give it to `converge import`, then plan again',
    );
  }
  if (saved && (flags.target?.length || flags.exclude?.length)) {
    throw new CliError('a saved plan keeps the --target and --exclude it was made with: give them to `plan`');
  }
  // As the targets: the plan reviewed pruned or did not, and a flag here that did nothing (or said
  // the opposite of the file) would read as if it had.
  if (saved && flags.prune) {
    throw new CliError(
      saved.prune
        ? 'a saved plan keeps the --prune it was made with: this one was made with --prune already; apply it without the flag'
        : 'a saved plan keeps the --prune it was made with, and this one was made without: give --prune to `plan`, review, then apply the new plan',
    );
  }
  // The switches too: the reviewed plan released someone else's lock or did not, and the apply of it
  // must do what it showed (a switch given only here would add a release nobody reviewed).
  if (saved && flags.options?.length) {
    const given = flags.options.map((o) => `--${o}`).join(' ');
    throw new CliError(
      (saved.options ?? []).length > 0
        ? `a saved plan keeps the switches it was made with (${(saved.options ?? []).map((o) => `--${printable(o)}`).join(' ')}): apply it without ${given}`
        : `a saved plan keeps the switches it was made with, and this one was made without ${given}: give ${given} to \`plan\`, review, then apply the new plan`,
    );
  }
  const known = new Set(catalog.kindOptions().map((o) => o.flag));
  const unknown = (saved?.options ?? []).filter((o) => !known.has(o));
  if (unknown.length > 0) {
    // A switch this Converge does not know cannot be given effect: applied without it, the plan's
    // changes it enabled would be quietly left undone.
    throw new CliError(
      `${planFile} was made with switches this Converge does not know (${unknown.map((o) => `--${printable(o)}`).join(' ')}): apply it with the Converge that made it, or plan again`,
    );
  }
  const options = saved ? (saved.options ?? []) : (flags.options ?? []);
  const prune = saved ? saved.prune : Boolean(flags.prune);
  const targets = saved ? (saved.targets ?? []) : (flags.target ?? []);
  const excludes = saved ? (saved.excludes ?? []) : (flags.exclude ?? []);
  // What to run once this run stops short (an interrupt, objects it could not read again): the saved
  // plan's apply again, or the plan of what is left; either loads the manifest as this run did.
  const rerun = planFile
    ? ['converge apply', quoteArg(planFile), ...settingFlags(flags)].join(' ')
    : [
        'converge plan',
        ...paths.map((p) => `-f ${quoteArg(p)}`),
        ...(prune ? ['--prune'] : []),
        ...targets.map((t) => `--target ${quoteArg(t)}`),
        ...excludes.map((t) => `--exclude ${quoteArg(t)}`),
        ...settingFlags(flags),
        ...options.map((o) => `--${quoteArg(o)}`),
      ].join(' ');
  /** How to make a stale saved plan again: the plan command as it was made. */
  const planAgain = () =>
    remedyText({
      remedy: 'make-saved-plan-again',
      manifest: paths,
      prune,
      targets,
      excludes,
      options,
      file: planFile ?? 'PLANFILE',
      verified: true,
      // The plan's own deletion guard, unless this run gives one (the MAC covers the saved value).
      ...(savedMaxDeletes(saved) !== undefined ? { maxDeletes: savedMaxDeletes(saved)! } : {}),
      ...allowFlags(flags),
    });
  const progress = readingProgress(io);
  // Loaded and keyed before the inventory's lock, as validate checks it: a manifest refused writes
  // nothing, neither a .converge/ folder (the lock file's) nor a workspace inventory (made by taking
  // its lock). Neither step reads the inventory: the plan still reads it under the lock, and so sees
  // what the last holder saved. The connections are made here and contact no service until planning.
  const manifest = await loadManifest(paths, {
    catalog,
    env: io.env,
    settingNames: CLI_SETTING_NAMES,
    allowEnv: flags.allowEnv ?? [],
    ...(flags.allowAddress ? { allowAddresses: flags.allowAddress } : {}),
  });
  const connections = connect(manifest, {
    catalog,
    env: io.env,
    http,
    signal: interrupt.signal,
    options,
  });
  await checkBeforeLock(
    manifest,
    connections,
    catalog,
    inventory.backend.storedIn,
    { targets, excludes },
    CLI_SETTING_NAMES,
  ).catch(async (error: unknown) => {
    await connections.close();
    throw error;
  });
  // Held from before planning (which reads the inventory) until after it is saved.
  const lock = await lockInventory({
    inventory,
    command: `converge apply ${planFile ?? paths.map((p) => `-f ${p}`).join(' ')}`,
    timeoutMs: (flags.lockTimeout ?? 10) * 1000,
    signal: interrupt.signal,
    onNote: (note) => write(io.stderr, note),
    onWait: sayLockWait(io, flags.lockTimeout),
    settingNames: CLI_SETTING_NAMES,
  }).catch(async (error: unknown) => {
    await connections.close();
    interrupt.dispose();
    throw error;
  });
  const adoptions = flags.import?.length
    ? await adoptBeforePlanning(manifest, connections, flags, catalog, inventory).catch(
        async (error: unknown) => {
          await lock.release();
          interrupt.dispose();
          throw error;
        },
      )
    : [];
  for (const a of adoptions) {
    write(io.stdout, `Imported ${a.address}${a.id ? ` (id ${a.id})` : ''}.`);
    if (a.markedElsewhere) write(io.stdout, `  ${markedElsewhereWarning(a.address)}`);
  }
  const run = await planRun(manifest, {
    connections,
    catalog,
    env: io.env,
    writeOnly: inventory,
    managed: inventory.objects,
    limits: {
      // A saved plan was only written when its guards passed (with --allow-empty when it prunes a
      // whole kind): applying it re-checks the deletion count, not the emptiness it was reviewed with.
      ...(flags.allowEmpty || saved ? { allowEmpty: true } : {}),
      ...(flags.maxDeletes !== undefined ? { maxDeletes: flags.maxDeletes } : {}),
    },
    http,
    settingNames: CLI_SETTING_NAMES,
    parallelism: flags.parallelism,
    prune,
    targets,
    excludes,
    signal: interrupt.signal,
    options,
    ...(progress ? { onProgress: progress } : {}),
  }).catch(async (error: unknown) => {
    await lock.release();
    interrupt.dispose();
    throw error;
  });
  try {
    if (interrupt.signal.aborted) {
      write(io.stderr, 'Interrupted while planning; nothing was changed.');
      return interrupt.exitCode ?? EXIT.error;
    }
    // Before anything is compared or written: a plan of staging is not applied to production.
    if (saved && planFile) refuseOtherServices(saved, run.connections.addresses(), planFile);
    const plan =
      saved && planFile
        ? withRunFlags(
            () =>
              reconcileSavedPlan(saved, run.plan, {
                file: planFile,
                digests: inventory,
                managed: inventory.objects,
                catalog,
              }),
            flags,
          )
        : run.plan;
    const color = useColor(io, flags.color);
    write(io.stdout, renderHuman(plan, { color }));
    const leftOut = saved ? alreadyDeleted(saved, plan) : [];
    // A deletion the fresh plan no longer has is done only if its object is gone; one still there
    // changed since the plan was saved (no longer Converge's, say), which makes the plan stale.
    const changedSince =
      saved && leftOut.length > 0 ? await deletionsStillThere(saved, leftOut, run.connections, catalog) : [];
    // Reads that finished as the signal came: the run stops as announced, not as a stale plan.
    if (interrupt.stop.aborted) return interruptedBeforeChanges(io, interrupt);
    const deleted = leftOut.filter((address) => !changedSince.includes(address));
    if (changedSince.length > 0) {
      for (const address of changedSince)
        write(
          io.stderr,
          `${printable(address)}: STALE: it changed since the plan was saved (it is still there, and no longer one the plan would delete)`,
        );
      write(
        io.stderr,
        `Nothing was applied: a saved plan is applied whole, and some of its objects changed since it was saved.${planAgain()}`,
      );
      return EXIT.stale;
    }
    // A create of what an apply deleted since the plan was saved would undo that deletion.
    // Only what the plan still creates: one made again since (already in effect) undoes nothing.
    const stillCreated = new Set(plan.changes.filter((c) => c.action === 'create').map((c) => c.address));
    const undone = saved
      ? createsDeletedSince(saved, (address) => inventory.deletion(address), inventory.serial).filter((u) =>
          stillCreated.has(u.address),
        )
      : [];
    if (undone.length > 0) {
      for (const { address, at } of undone)
        write(
          io.stderr,
          `${printable(address)}: STALE: an apply deleted it at ${printable(at)}, after the plan was saved; making it again would undo that deletion`,
        );
      write(
        io.stderr,
        `Nothing was applied: a saved plan is applied whole, and some of its objects changed since it was saved.${planAgain()}`,
      );
      return EXIT.stale;
    }
    // A saved change the fresh plan holds back in part would be written without that part.
    const heldBack = saved ? heldBackSincePlan(saved, run.plan) : [];
    if (heldBack.length > 0) {
      for (const { address, why } of heldBack)
        write(io.stderr, `${printable(address)}: STALE: ${printable(why)}`);
      write(
        io.stderr,
        `Nothing was applied: a saved plan is applied whole, and some of its changes would not be made as saved.${planAgain()}`,
      );
      return EXIT.stale;
    }
    if (deleted.length > 0)
      write(
        io.stdout,
        `Nothing left to delete since ${planFile} was saved (gone, or no longer recorded as Converge's), so left out: ${deleted.map(printable).join(', ')}.`,
      );
    if (plan.problems.length > 0) {
      annotatePlanProblems(io, plan.problems);
      // A problem with an object that moved since the plan was saved makes the plan stale, not wrong
      // (the fresh plan, as read now, against the versions the saved one recorded).
      const moved = saved ? movedSincePlan(saved, run.plan) : [];
      if (moved.length > 0) {
        for (const address of moved)
          write(
            io.stderr,
            `${printable(address)}: STALE: it changed since the plan was saved (its problem above is new)`,
          );
        write(
          io.stderr,
          `Nothing was applied: a saved plan is applied whole, and some of its objects changed since it was saved.${planAgain()}`,
        );
        return EXIT.stale;
      }
      write(io.stderr, 'Nothing was applied: fix the problems above first.');
      return EXIT.error;
    }
    if (!hasChanges(plan)) {
      if (saved && planFile && saved.changes.some((c) => c.action !== 'noop'))
        write(
          io.stdout,
          `\nEverything ${planFile} would change is already in effect (done since it was saved, by an apply or by hand): nothing to apply.`,
        );
      return EXIT.ok;
    }

    // A saved plan was reviewed when it was made; otherwise a person confirms, or CI says so.
    if (!saved && !flags.autoApprove) {
      const answer = await askYesNo(io, {
        message: 'Apply these changes?',
        color,
        noTerminal:
          'refusing to apply without confirmation: no terminal to ask on. Pass --auto-approve to apply anyway.',
        interrupt,
      });
      if (answer.answer === 'interrupted') {
        write(io.stderr, 'Interrupted before any change started; nothing was changed.');
        return answer.exitCode;
      }
      if (answer.answer === 'no') {
        write(io.stderr, 'Apply cancelled; nothing was changed.');
        return EXIT.error;
      }
    }

    // A signal that came since planning (during the reads above) aborted every request: the changes
    // would be refused as unreadable, with exit 1, rather than left alone with the signal's code.
    if (interrupt.stop.aborted) return interruptedBeforeChanges(io, interrupt);
    // From here a first Ctrl-C lets changes in flight finish rather than cutting them midway.
    interrupt.letInFlightFinish();
    // A second one quits at once: what was applied by then stays recorded (prune finds what this run
    // created), where the inventory can be written without waiting.
    interrupt.beforeQuit(() => {
      if (inventory.saveNow()) {
        write(io.stderr, `The changes applied so far are recorded in the inventory (${inventory.file}).`);
      } else if (inventory.unsaved) {
        write(
          io.stderr,
          `The inventory (${inventory.file}) could not be saved in time: objects this run created are not recorded. Adopt them with \`converge import ADDRESS\` once \`converge plan\` shows them unchanged.`,
        );
      }
    });
    const progressOut = applyProgress(io);
    let unsaved: InventoryNotSavedError<ApplyResult> | undefined;
    const result = await apply(
      { plan, connections: run.connections },
      {
        catalog,
        parallelism: flags.parallelism,
        checkStale: Boolean(saved),
        onEvent: (event) => {
          // A create sent again after a lost answer is a request sent again: the HTTP layer left it
          // to the applier, which reads the object back first.
          if (event.type === 'note' && event.resent) waits.retries += 1;
          progressOut.onEvent(event);
        },
        inventory,
        stop: interrupt.stop,
      },
    ).catch((error: unknown) => {
      if (!(error instanceof InventoryNotSavedError)) throw error;
      unsaved = error as InventoryNotSavedError<ApplyResult>;
      return unsaved.result;
    });
    progressOut.end();
    if (inventory.retakenLock)
      write(
        io.stderr,
        `Note: the lock of ${inventory.retakenLock} was released by someone else during this run; Converge took it again and merged this run's records into the inventory as it found it.`,
      );
    if (unsaved) {
      // What landed is said first: the changes are real whether or not they are recorded.
      writeApplySummary(io, result, waits);
      write(io.stderr, unrecordedText(unsaved, result, importCommandPrefix(paths ?? [], flags)));
      return EXIT.error;
    }
    // An interrupt that came once every change had been made left nothing undone: the apply is
    // complete, and a script that goes on after it (`converge apply && deploy`) should go on.
    const allApplied = result.results.every((r) => r.status === 'applied');
    // A saved plan refused before anything was sent (stale, or unreadable): that is the outcome,
    // whether or not a signal came during its reads; applying it again would be refused again.
    const refusedWhole = result.results.some((r) => r.planStale);
    if (interrupt.exitCode !== undefined && !allApplied && !refusedWhole) {
      writeInterruptSummary(io, result.results, saved ? planFile : undefined, rerun);
      return interrupt.exitCode;
    }
    if (interrupt.exitCode !== undefined && allApplied) {
      write(
        io.stderr,
        `The interrupt (${interrupt.signalName ?? 'signal'}) came after every change had been made: nothing is left undone.`,
      );
    }
    writeApplySummary(io, result, waits);
    const { failed, skipped, stale } = result.counts;
    if (refusedWhole && stale === 0) {
      write(
        io.stderr,
        `Nothing was applied: a saved plan is applied whole, and some of its objects could not be read again (above). \`${planFile ? rerun : 'converge apply PLANFILE'}\` tries again.`,
      );
      return EXIT.error;
    }
    if (stale > 0 && failed === 0) {
      write(io.stderr, `Some objects changed since the plan was saved.${planAgain()}`);
      return EXIT.stale;
    }
    return failed + skipped + stale > 0 ? EXIT.error : EXIT.ok;
  } finally {
    try {
      await lock.release();
    } finally {
      interrupt.dispose();
      await run.connections.close();
    }
  }
}

/** Interrupted between planning and the first change: nothing was changed, and the signal's code. */
function interruptedBeforeChanges(io: Io, interrupt: Interrupt): number {
  write(io.stderr, 'Interrupted before any change started; nothing was changed.');
  return interrupt.exitCode ?? EXIT.error;
}

/** A saved plan's `--max-deletes`, when it holds a usable one. */
function savedMaxDeletes(saved: { max_deletes?: unknown } | undefined): number | undefined {
  const value = saved?.max_deletes;
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/**
 * The run's `--allow-env` and `--allow-address` values, which a plan command to suggest must repeat,
 * and its `--max-deletes`, which the plan made again should keep.
 */
function allowFlags(flags: { allowEnv?: string[]; allowAddress?: string[]; maxDeletes?: number }): {
  allowEnv?: string[];
  allowAddresses?: string[];
  maxDeletes?: number;
} {
  return {
    ...(flags.allowEnv?.length ? { allowEnv: flags.allowEnv } : {}),
    ...(flags.allowAddress?.length ? { allowAddresses: flags.allowAddress } : {}),
    ...(flags.maxDeletes !== undefined ? { maxDeletes: flags.maxDeletes } : {}),
  };
}

/**
 * `work`, with a refused saved plan's remedy completed by the run's allow flags: the command it
 * suggests then loads the manifest as this run did (a `${env:}` it reads needs its `--allow-env`).
 */
function withRunFlags<T>(
  work: () => T,
  flags: { allowEnv?: string[]; allowAddress?: string[]; maxDeletes?: number },
): T {
  try {
    return work();
  } catch (error) {
    if (!(error instanceof EngineError)) throw error;
    const { remedy } = error;
    if (typeof remedy !== 'object' || !remedy.verified) throw error;
    const completed = new EngineError(error.message, { ...remedy, ...allowFlags(flags) });
    if (error.stack !== undefined) completed.stack = error.stack;
    throw completed;
  }
}

/**
 * The addresses the environment gives the services a saved plan was made against, compared before
 * anything is sent: clients are made, not used. A Connection the manifest declares is compared once
 * the manifest is loaded (after planning, still before any write).
 */
async function refuseOtherEnvironment(
  saved: SavedPlan,
  planFile: string,
  env: NodeJS.ProcessEnv,
  catalog: Catalog,
): Promise<void> {
  const connections = await connect(undefined, { env, catalog }).ready();
  try {
    for (const id of Object.keys(saved.services ?? {})) {
      const definition = catalog.definitions.find((d) => d.name === id);
      if (!definition) continue;
      try {
        connections.client(definition);
      } catch {
        // Not configured, or configured wrongly: the plan says so in its own words later.
      }
    }
    refuseOtherServices(saved, connections.addresses(), planFile);
  } finally {
    await connections.close();
  }
}

/**
 * A saved plan names its manifest by the absolute path it was planned from, and applies only where
 * that path holds the manifest: "no such file" alone did not say why, and the CI job that applies
 * (another checkout, another runner folder) is where it happens.
 */
function refuseMovedManifest(recorded: readonly string[], planFile: string): void {
  const missing = recorded.filter((p) => !existsSync(p));
  if (missing.length === 0) return;
  throw new CliError(
    `${planFile} was planned from the manifest at ${missing.map((p) => printable(p)).join(', ')}, which is not there: a saved plan applies only where its manifest has the path it was planned from (in CI, check out to one fixed path in the plan and the apply jobs: GitLab's GIT_CLONE_PATH, a fixed working directory elsewhere), or plan again here with \`converge plan -f PATH -out ${printable(planFile)}\``,
  );
}

/**
 * The changes landed, the records did not: which objects `--prune` will not know Converge created,
 * and how to record them.
 */
function unrecordedText(
  error: InventoryNotSavedError<ApplyResult>,
  result: ApplyResult,
  importCommand: string,
): string {
  const created = result.results
    .filter((r) => r.status === 'applied' && (r.action === 'create' || r.action === 'replace'))
    .map((r) => r.address);
  // Every one of them, in one command that works as printed: an object left out of it stays
  // unrecorded for good (a plan calls it unchanged, and the inventory does not list it).
  const what = created.length
    ? ` The ${created.length === 1 ? 'object' : `${created.length} objects`} this run created ${created.length === 1 ? 'is' : 'are'} not recorded, so \`--prune\` will not delete ${created.length === 1 ? 'it' : 'them'} once the manifest drops ${created.length === 1 ? 'it' : 'them'}; adopt ${created.length === 1 ? 'it' : 'them'} with:\n  ${importCommand} ${created.map(quoteArg).join(' ')}`
    : '';
  return `Error: the changes above landed, but ${error.message}.${what}`;
}

/** `converge import` with the manifest and the allow flags of this run: the adoption loads it as this run did. */
function importCommandPrefix(
  paths: readonly string[],
  flags: { allowEnv?: string[]; allowAddress?: string[] },
): string {
  return ['converge import', ...paths.map((p) => `-f ${quoteArg(p)}`), ...settingFlags(flags)].join(' ');
}
