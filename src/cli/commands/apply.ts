/**
 * `converge apply`: plan, show, confirm, execute. `apply FILE` executes a saved plan instead, after
 * checking its MAC, refusing objects that moved since it was made. The whole run holds the local
 * inventory's lock, so two applies on one machine never lose each other's records.
 */
import { confirm, isCancel } from '@clack/prompts';
import type { Catalog } from '../../engine/catalog.js';
import { LocalInventory } from '../../engine/inventory.js';
import { readPlanFile, reconcileSavedPlan, verifyPlanFile } from '../../engine/plan-file.js';
import { acquireStateLock } from '../../engine/state-lock.js';
import { apply, plan as planRun } from '../../engine/workflow.js';
import { renderHuman } from '../../planner/render/human.js';
import { hasChanges } from '../../planner/types.js';
import { annotatePlanProblems } from '../ci/github.js';
import { CliError, EXIT } from '../exit-codes.js';
import { onInterrupt } from '../interrupt.js';
import { type Io, useColor, write } from '../io.js';
import { requireManifestPaths } from '../manifest-paths.js';
import { applyProgress } from '../progress.js';
import { runHttpOptions } from '../service-client.js';
import { readingProgress } from './plan.js';

export interface ApplyFlags {
  file: string[];
  /** `--allow-env`: variables the manifest may read, beside CONVERGE_ALLOW_ENV. */
  allowEnv?: string[];
  autoApprove?: boolean;
  prune?: boolean;
  parallelism: number;
  /** Seconds a request may take, retries included. */
  timeout?: number;
  color?: boolean;
  /** Kind options switched on (`force-unlock`). */
  options?: string[];
  /** Seconds to wait for another apply's lock on the inventory. */
  lockTimeout?: number;
  /** Addresses the operator allows manifest Connections to send an outside token to. */
  allowAddress?: string[];
}

async function confirmed(): Promise<boolean> {
  const answer = await confirm({ message: 'Apply these changes?', initialValue: false });
  return !isCancel(answer) && answer === true;
}

export async function applyCommand(
  planFile: string | undefined,
  flags: ApplyFlags,
  io: Io,
  catalog: Catalog,
): Promise<number> {
  if (planFile && flags.file.length > 0) {
    throw new CliError(
      'give either a saved plan file or -f PATH, not both: a saved plan names its own manifest',
    );
  }
  const inventory = new LocalInventory(io.env);
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
  const paths = saved ? saved.manifest : flags.file;
  // Said before the lock is taken, so a usage error leaves no .converge/ folder behind.
  requireManifestPaths(paths);
  const prune = saved ? saved.prune : Boolean(flags.prune);
  const progress = readingProgress(io);
  const interrupt = onInterrupt(io);
  // Held from before planning (which reads the inventory) until after it is saved.
  const lock = await acquireStateLock(inventory.dir, {
    command: `converge apply ${planFile ?? paths.map((p) => `-f ${p}`).join(' ')}`,
    timeoutMs: (flags.lockTimeout ?? 10) * 1000,
    signal: interrupt.signal,
    onNote: (note) => write(io.stderr, note),
  }).catch((error: unknown) => {
    interrupt.dispose();
    throw error;
  });
  const run = await planRun(paths, {
    catalog,
    env: io.env,
    writeOnly: inventory,
    http: runHttpOptions(io, flags.timeout),
    parallelism: flags.parallelism,
    prune,
    allowEnv: flags.allowEnv ?? [],
    signal: interrupt.signal,
    options: flags.options ?? [],
    ...(flags.allowAddress ? { allowAddresses: flags.allowAddress } : {}),
    ...(progress ? { onProgress: progress } : {}),
  }).catch((error: unknown) => {
    lock.release();
    interrupt.dispose();
    throw error;
  });
  try {
    if (interrupt.signal.aborted) {
      write(io.stderr, 'Interrupted while planning; nothing was changed.');
      return EXIT.error;
    }
    const plan =
      saved && planFile
        ? reconcileSavedPlan(saved, run.plan, { file: planFile, digests: inventory, catalog })
        : run.plan;
    const color = useColor(io, flags.color);
    write(io.stdout, renderHuman(plan, { color }));
    if (plan.problems.length > 0) {
      annotatePlanProblems(io, plan.problems);
      write(io.stderr, 'Nothing was applied: fix the problems above first.');
      return EXIT.error;
    }
    if (!hasChanges(plan)) return EXIT.ok;

    // A saved plan was reviewed when it was made; otherwise a person confirms, or CI says so.
    if (!saved && !flags.autoApprove) {
      if (!io.stdinIsTTY || !io.stdout.isTTY) {
        write(
          io.stderr,
          'Refusing to apply without confirmation: no terminal to ask on. Pass --auto-approve to apply anyway.',
        );
        return EXIT.error;
      }
      if (!(await confirmed())) {
        write(io.stderr, 'Apply cancelled; nothing was changed.');
        return EXIT.error;
      }
    }

    const progressOut = applyProgress(io);
    const result = await apply(
      { plan, connections: run.connections },
      {
        catalog,
        parallelism: flags.parallelism,
        checkStale: Boolean(saved),
        onEvent: progressOut.onEvent,
        inventory,
      },
    );
    progressOut.end();
    const { applied, failed, skipped, stale } = result.counts;
    write(
      io.stdout,
      `\nApply ${failed + skipped + stale === 0 ? 'complete' : 'finished with errors'}: ${applied} applied, ${failed} failed, ${skipped} skipped, ${stale} stale.`,
    );
    for (const r of result.results.filter((x) => x.status !== 'applied')) {
      write(io.stderr, `  ${r.status}: ${r.address}: ${r.message ?? ''}`);
    }
    if (stale > 0 && failed === 0) {
      write(
        io.stderr,
        'Some objects changed since the plan was saved: run `converge plan` again and review.',
      );
      return EXIT.stale;
    }
    return failed + skipped + stale > 0 ? EXIT.error : EXIT.ok;
  } finally {
    lock.release();
    interrupt.dispose();
    await run.connections.close();
  }
}
