/** `converge plan`: what apply would do, as text, JSON or markdown; optionally saved for `apply FILE`. */
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';

import { renderHuman } from '../../planner/render/human.js';
import { renderFailedPlanJson, renderInvalidManifestJson, renderJson } from '../../planner/render/json.js';
import {
  renderFailedPlanMarkdown,
  renderInvalidManifestMarkdown,
  renderMarkdown,
} from '../../planner/render/markdown.js';
import { ManifestError } from '../../manifest/types.js';
import { hasChanges } from '../../planner/types.js';
import type { Catalog } from '../../engine/catalog.js';
import { inventoryFromEnv } from '../../engine/inventory-backend.js';
import { writePlanFileSync } from '../../engine/plan-file.js';
import { sayAfterError } from '../after-error.js';
import { errorText } from '../error-text.js';
import { type Interrupt, onInterrupt } from '../interrupt.js';
import { plan as planRun } from '../../engine/workflow.js';
import { annotatePlanProblems, writePlanSummary } from '../ci/github.js';
import { CliError, EXIT } from '../exit-codes.js';
import { type Io, useColor, write } from '../io.js';
import { requireManifestPaths } from '../manifest-paths.js';
import { quoteArg, settingFlags } from '../remedies.js';
import { runHttpOptions } from '../service-client.js';
import { VERSION } from '../version.js';
import { CLI_SETTING_NAMES } from '../setting-flags.js';

/** The flags `plan` and `apply` share: what to read, what to plan, how to reach the services. */
export interface PlanningFlags {
  file: string[];
  /** `--allow-env`: variables the manifest may read, beside CONVERGE_ALLOW_ENV. */
  allowEnv?: string[];
  prune?: boolean;
  /** `--target` / `--exclude`: address globs (engine/targeting.ts). */
  target?: string[];
  exclude?: string[];
  /** `--allow-empty`: prune a kind where (connection, namespace) the manifest no longer declares any of it. */
  allowEmpty?: boolean;
  /** `--max-deletes N`: refuse a plan with more deletions. */
  maxDeletes?: number;
  parallelism: number;
  /** Seconds a request may take, retries included. */
  timeout?: number;
  color?: boolean;
  /** Addresses the operator allows manifest Connections to send an outside token to. */
  allowAddress?: string[];
  /** Kind options switched on (`force-unlock`): the plan shows what an apply with them does. */
  options?: string[];
}

export interface PlanFlags extends PlanningFlags {
  json?: boolean;
  markdown?: boolean;
  detailedExitcode?: boolean;
  out?: string;
}

/** A live "reading" line on a terminal while live state is read. */
export function readingProgress(io: Io): ((done: number, total: number) => void) | undefined {
  if (!io.stderr.isTTY) return undefined;
  return (done, total) => {
    io.stderr.write(`\r\x1b[2KReading live state: ${done}/${total}`);
    if (done === total) io.stderr.write('\r\x1b[2K');
  };
}

/**
 * An invalid manifest under `--json` or `--markdown`: stdout still gets a document that says so (a PR
 * comment workflow would otherwise post an empty comment), and so does the step summary under GitHub
 * Actions. The problems also go to stderr, as for any run, and the exit code stays 1.
 */
async function reportInvalidManifest(error: ManifestError, flags: PlanFlags, io: Io): Promise<void> {
  if (flags.json) write(io.stdout, renderInvalidManifestJson(error.problems, VERSION));
  else if (flags.markdown) write(io.stdout, renderInvalidManifestMarkdown(error.problems));
  await writePlanSummary(io, () => renderInvalidManifestMarkdown(error.problems));
}

/**
 * A plan that stopped before it was made (a service that cannot be reached, an unreadable inventory):
 * under `--json` or `--markdown` stdout still gets a document that says why, as for an invalid
 * manifest, and so does the step summary under GitHub Actions. The error itself goes to stderr as
 * for any run.
 */
async function reportFailedPlan(error: unknown, flags: PlanFlags, io: Io): Promise<void> {
  const message = errorText(error, io.env);
  if (flags.json) write(io.stdout, renderFailedPlanJson(message, VERSION));
  else if (flags.markdown) write(io.stdout, renderFailedPlanMarkdown(message));
  await writePlanSummary(io, () => renderFailedPlanMarkdown(message));
}

export async function planCommand(flags: PlanFlags, io: Io, catalog: Catalog): Promise<number> {
  requireManifestPaths(flags.file);
  const stage = { saving: false, printed: false };
  // Ctrl-C or SIGTERM (a cancelled CI job) stops the reads and says so, with the signal's exit code.
  const interrupt = onInterrupt(io);
  try {
    return await planAndSave(flags, io, catalog, stage, interrupt);
  } catch (error) {
    if (interrupt.exitCode !== undefined) {
      // An earlier file of that name is not this plan: said, so that a CI step uploading it anyway
      // is not taken for this run's.
      const earlier =
        flags.out && existsSync(flags.out) ? ` The earlier ${flags.out} is left as it was.` : '';
      const saved = flags.out ? ` Nothing was saved to ${flags.out}.${earlier}` : '';
      // Once printed, the plan on standard output is whole, but the run that made it was stopped.
      const when = stage.printed ? ' after it was printed' : '; nothing was planned';
      write(io.stderr, `Plan interrupted (${interrupt.signalName ?? 'signal'})${when}.${saved}`);
      return interrupt.exitCode;
    }
    if (!stage.printed && !(error instanceof ManifestError)) await reportFailedPlan(error, flags, io);
    // Whatever stopped it (a bad state key, a manifest, a service, the file itself), say so: an
    // earlier file of that name must not pass for this plan.
    if (flags.out && !(error instanceof OutFileRefused)) {
      const why = stage.saving ? 'it could not be written' : 'the plan could not be made';
      sayAfterError(error, notSavedLine(flags.out, why));
    }
    throw error;
  } finally {
    interrupt.dispose();
  }
}

async function planAndSave(
  flags: PlanFlags,
  io: Io,
  catalog: Catalog,
  stage: { saving: boolean; printed: boolean },
  interrupt: Interrupt,
): Promise<number> {
  const { signal } = interrupt;
  // A plan that cannot be saved is found out before minutes of reading services, not after.
  if (flags.out) outFolderMustExist(flags.out);
  const progress = flags.json || flags.markdown ? undefined : readingProgress(io);
  const http = runHttpOptions(io, flags.timeout, flags.parallelism);
  const inventory = inventoryFromEnv(io.env, http);
  // A bad CONVERGE_STATE_KEY or state.key is reported up front, whether or not this run needs it.
  inventory.existingStateKey();
  // Read without its lock: a plan changes nothing, and must not wait for an apply in progress.
  await inventory.open().finally(() => inventory.close());
  const run = await planRun(flags.file, {
    catalog,
    env: io.env,
    writeOnly: inventory,
    managed: inventory.objects,
    limits: {
      ...(flags.allowEmpty ? { allowEmpty: true } : {}),
      ...(flags.maxDeletes !== undefined ? { maxDeletes: flags.maxDeletes } : {}),
    },
    http,
    settingNames: CLI_SETTING_NAMES,
    parallelism: flags.parallelism,
    prune: Boolean(flags.prune),
    targets: flags.target ?? [],
    excludes: flags.exclude ?? [],
    ...(flags.allowAddress ? { allowAddresses: flags.allowAddress } : {}),
    allowEnv: flags.allowEnv ?? [],
    signal,
    options: flags.options ?? [],
    ...(progress ? { onProgress: progress } : {}),
  }).catch(async (error: unknown) => {
    if (error instanceof ManifestError) await reportInvalidManifest(error, flags, io);
    throw error;
  });
  const { plan } = run;
  try {
    // Reads cut short by an interrupt may come back as problems rather than as an error.
    if (signal.aborted) throw signal.reason;
    if (flags.json) write(io.stdout, renderJson(plan, VERSION));
    else if (flags.markdown) write(io.stdout, renderMarkdown(plan));
    else write(io.stdout, renderHuman(plan, { color: useColor(io, flags.color) }));
    stage.printed = true;
    // Under GitHub Actions: the same Markdown in the step summary, the problems as annotations.
    await writePlanSummary(io, () => renderMarkdown(plan));
    annotatePlanProblems(io, plan.problems);
  } finally {
    await run.connections.close();
  }
  // The last wait of the run is over. A signal that came during any of them (the last reads, the
  // step summary, closing the connections) was announced as stopping the run: it does, and `-out`
  // gets nothing. From this check to the end of the command nothing waits, so no signal handler runs
  // in between: the plan is saved whole, after no announced interrupt, or not at all.
  if (signal.aborted) throw signal.reason;

  if (plan.problems.length > 0) {
    if (flags.out)
      notSaved(
        io,
        flags.out,
        // Printed as JSON or Markdown, the problems are in the document on standard output.
        `the plan has problems (${flags.json ? 'in the JSON on standard output' : flags.markdown ? 'in the Markdown on standard output' : 'above'}), and an incomplete plan is never applied`,
      );
    return EXIT.error;
  }
  if (flags.out) {
    stage.saving = true;
    // Written and renamed without a wait (see the check above).
    writePlanFileSync(flags.out, plan, {
      catalog,
      manifest: flags.file,
      prune: Boolean(flags.prune),
      targets: flags.target ?? [],
      excludes: flags.exclude ?? [],
      ...(flags.maxDeletes !== undefined ? { maxDeletes: flags.maxDeletes } : {}),
      options: flags.options ?? [],
      services: Object.fromEntries(
        Object.entries(run.connections.addresses()).map(([id, { address }]) => [id, address]),
      ),
      version: VERSION,
      inventorySerial: inventory.serial,
      ...(inventory.identity ? { inventory: inventory.identity } : {}),
      digests: inventory,
      key: inventory.stateKey(),
    });
    // Saved: a signal from now on is not announced as stopping a run that has nothing left to stop.
    interrupt.dispose();
    if (!flags.json && !flags.markdown) {
      write(
        io.stdout,
        // The apply loads the manifest again: with this plan's --allow-env and --allow-address.
        `\nSaved the plan to ${flags.out}. Apply exactly this plan with: ${['converge apply', quoteArg(flags.out), ...settingFlags(flags)].join(' ')}`,
      );
    }
  }
  return flags.detailedExitcode && hasChanges(plan) ? EXIT.changes : EXIT.ok;
}

/** `-out` given but nothing written: said, so that an earlier file of that name is not taken for this plan. */
function notSaved(io: Io, file: string, why: string): void {
  write(io.stderr, notSavedLine(file, why));
}

function notSavedLine(file: string, why: string): string {
  const earlier = existsSync(file) ? ` The earlier ${file} is left as it was.` : '';
  return `Plan not saved to ${file}: ${why}.${earlier}`;
}

/** `-out`'s file refused before anything was planned: its error already says it was not written. */
class OutFileRefused extends CliError {}

/** The folder `-out` writes into exists and is a folder (whether it is writable, the write says). */
function outFolderMustExist(out: string): void {
  // `-out --json` took the next flag as the file's name: a plan saved as "--json", and the JSON
  // asked for never printed. A file so named is still written as ./--json.
  if (out.startsWith('-'))
    throw new OutFileRefused(
      `-out needs a file name before the next flag, not "${out}" (write -out FILE ${out}, or -out ./${out} for a file so named)`,
    );
  const folder = path.dirname(path.resolve(out));
  let isFolder = false;
  try {
    isFolder = statSync(folder).isDirectory();
  } catch {
    // Missing: said below.
  }
  if (!isFolder) throw new OutFileRefused(`-out ${out}: the folder ${folder} does not exist`);
  // A folder given as the file: refused before anything is read, not with EISDIR after the plan.
  let outIsFolder = false;
  try {
    outIsFolder = statSync(out).isDirectory();
  } catch {
    // Not there yet: the plan is saved under that name.
  }
  if (outIsFolder)
    throw new OutFileRefused(
      `-out ${out} is a folder: give a file name (-out ${path.join(out, 'plan.bin')})`,
    );
}
