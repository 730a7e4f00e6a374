/**
 * `converge job …` writes a manifest does not declare: dispatch, revert, stability, evaluate, periodic
 * force, scale, stop. Each checks what it can before sending (a payload's size, a scaling reason, a
 * confirmation) and prints what happened in one line.
 */
import { describeFsError } from '../../common/text-file.js';
import { readFileSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { MAX_DISPATCH_PAYLOAD_BYTES } from '../../clients/scheduler/client.js';
import { schedulerService } from '../../clients/scheduler/definition.js';
import { HttpStatusError } from '../../clients/http/errors.js';
import { askYesNo } from '../ask-yes-no.js';
import { printable } from '../../common/printable.js';
import { type ClientRun, type OneShotWrite, withClient, withNote } from '../service-client.js';
import { quoteArg } from '../remedies.js';
import { CliError, EXIT } from '../exit-codes.js';
import { type Io, write } from '../io.js';
import { type JobFlags, ns, nsName, parseCount, printJson, requireJob } from './job.js';
import { forcedChild, namespaceFlag, nextStatusLine } from './job-next.js';
import { evaluationClause, shortId } from './job-render.js';

export interface JobDispatchFlags extends JobFlags {
  payloadFile?: string;
  meta?: string[];
}

export interface JobRevertFlags extends JobFlags {
  enforcePriorVersion?: number;
}

export interface JobStableFlags extends JobFlags {
  unset?: boolean;
}

export interface JobEvaluateFlags extends JobFlags {
  forceReschedule?: boolean;
}

export interface JobScaleFlags extends JobFlags {
  message?: string;
  error?: string;
}

export interface JobStopFlags extends JobFlags {
  purge?: boolean;
  yes?: boolean;
  /** False with `--no-color`: a plain confirmation prompt. */
  color?: boolean;
}

/** `k=v` pairs; the value may contain `=`, the key may not be empty. */
function parseMeta(pairs: string[] | undefined): Record<string, string> | undefined {
  if (!pairs || pairs.length === 0) return undefined;
  const meta: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new CliError(`--meta wants key=value, not "${pair}"`);
    meta[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return meta;
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream)
    chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string));
  return Buffer.concat(chunks);
}

async function readPayload(file: string, io: Io): Promise<Buffer> {
  if (file === '-') {
    if (!io.stdin) throw new CliError('--payload-file - reads standard input, but there is none');
    return readAll(io.stdin);
  }
  try {
    return readFileSync(file);
  } catch (error) {
    throw new CliError(`cannot read ${file}: ${describeFsError(error)}`);
  }
}

/**
 * The scheduler answers these writes for a job that is not there with a 500 ("job not found",
 * "parameterized job not found"), not a 404: said as every other job command says it.
 */
async function missingJobSaid<T>(request: Promise<T>, id: string, flags: JobFlags): Promise<T> {
  try {
    return await request;
  } catch (error) {
    if (
      error instanceof HttpStatusError &&
      (error.status === 404 || error.status === 500) &&
      // Only the job itself: `job "web" … at version 7 not found` is about a version.
      /^(parameterized )?job( "[^"]*")? not found$/i.test(error.serviceMessage ?? '')
    )
      throw new CliError(
        `no job ${id} in namespace ${nsName(flags)} (the service answered ${error.status}: ${printable(error.serviceMessage ?? '')})`,
      );
    throw error;
  }
}

/** A one-shot write to job `id`, checked with its status (`converge job status [--namespace NS] ID`). */
function writeTo(what: string, id: string, flags: JobFlags): OneShotWrite {
  return { what, check: `converge job status ${namespaceFlag(flags)}${quoteArg(id)}` };
}

/** Sends the write to job `id` as the run's one-shot write, a missing job said as such. */
function sendToJob<T>(run: ClientRun, id: string, flags: JobFlags, request: () => Promise<T>): Promise<T> {
  return missingJobSaid(run.send(request), id, flags);
}

export async function jobDispatchCommand(id: string, flags: JobDispatchFlags, io: Io): Promise<number> {
  const meta = parseMeta(flags.meta);
  let payload: Buffer | undefined;
  if (flags.payloadFile !== undefined) {
    payload = await readPayload(flags.payloadFile, io);
    // Refused here, before any request: the service would only answer a generic 500.
    if (payload.length > MAX_DISPATCH_PAYLOAD_BYTES) {
      const name =
        flags.payloadFile === '-' ? 'the payload on standard input' : `payload file ${flags.payloadFile}`;
      throw new CliError(
        `${name} is ${payload.length} bytes; the scheduler accepts at most ${MAX_DISPATCH_PAYLOAD_BYTES} bytes for a dispatch`,
      );
    }
  }
  return withClient(
    io,
    schedulerService,
    async (client, run) => {
      const res = await sendToJob(run, id, flags, () =>
        client.dispatchJob(id, {
          ...ns(flags),
          ...(payload !== undefined ? { payload } : {}),
          ...(meta ? { meta } : {}),
        }),
      );
      if (flags.json) printJson(io, res);
      else
        write(
          io.stdout,
          [
            `Job ${id} dispatched: ${res.DispatchedJobID} (${evaluationClause(res.EvalID)})`,
            nextStatusLine(res.DispatchedJobID, flags),
          ].join('\n'),
        );
      return EXIT.ok;
    },
    writeTo(`the dispatch of ${printable(id)}`, id, flags),
  );
}

export async function jobRevertCommand(
  id: string,
  version: string,
  flags: JobRevertFlags,
  io: Io,
): Promise<number> {
  const target = parseCount(version, 'VERSION');
  return withClient(
    io,
    schedulerService,
    async (client, run) => {
      const res = await sendToJob(run, id, flags, () =>
        client.revertJob(id, target, {
          ...ns(flags),
          ...(flags.enforcePriorVersion !== undefined
            ? { enforcePriorVersion: flags.enforcePriorVersion }
            : {}),
        }),
      );
      if (flags.json) {
        printJson(io, res);
        return EXIT.ok;
      }
      // A revert registers the old spec as a new version: which one is what the next revert names.
      const now = await client.readJob(id, ns(flags));
      const as = typeof now?.Version === 'number' ? `, as version ${now.Version}` : '';
      write(io.stdout, `Job ${id} reverted to version ${target}${as} (${evaluationClause(res.EvalID)})`);
      return EXIT.ok;
    },
    writeTo(`the revert of ${printable(id)} to version ${target}`, id, flags),
  );
}

export async function jobStableCommand(
  id: string,
  version: string,
  flags: JobStableFlags,
  io: Io,
): Promise<number> {
  const target = parseCount(version, 'VERSION');
  const stable = !flags.unset;
  return withClient(io, schedulerService, async (client) => {
    const res = await client.setJobStability(id, target, stable, ns(flags));
    if (flags.json) printJson(io, res);
    else write(io.stdout, `Job ${id} version ${target} marked ${stable ? 'stable' : 'not stable'}`);
    return EXIT.ok;
  });
}

export async function jobEvaluateCommand(id: string, flags: JobEvaluateFlags, io: Io): Promise<number> {
  return withClient(
    io,
    schedulerService,
    async (client, run) => {
      const res = await sendToJob(run, id, flags, () =>
        client.evaluateJob(id, {
          ...ns(flags),
          forceReschedule: Boolean(flags.forceReschedule),
        }),
      );
      if (flags.json) printJson(io, res);
      else
        write(
          io.stdout,
          `Job ${id} evaluated: evaluation ${shortId(res.EvalID)}${flags.forceReschedule ? ' (failed allocations rescheduled now)' : ''}`,
        );
      return EXIT.ok;
    },
    writeTo(`the evaluation of ${printable(id)}`, id, flags),
  );
}

export async function jobForcePeriodicCommand(id: string, flags: JobFlags, io: Io): Promise<number> {
  return withClient(
    io,
    schedulerService,
    async (client, run) => {
      const res = await sendToJob(run, id, flags, () => client.forcePeriodic(id, ns(flags)));
      const child = await forcedChild(client, id, res, flags);
      // --json keeps the service's answer and adds the child it does not name.
      if (flags.json) printJson(io, child ? { ...res, ChildJobID: child } : res);
      else if (child)
        write(
          io.stdout,
          [
            `Job ${id} launched now: ${child} (${evaluationClause(res.EvalID)})`,
            nextStatusLine(child, flags),
          ].join('\n'),
        );
      else
        write(
          io.stdout,
          [
            `Job ${id} launched now (${evaluationClause(res.EvalID)}); its child job was not found.`,
            `Next: \`converge job status --prefix ${id}/periodic-\` lists its children.`,
          ].join('\n'),
        );
      return EXIT.ok;
    },
    writeTo(`the launch of ${printable(id)}`, id, flags),
  );
}

export async function jobScaleCommand(
  id: string,
  group: string,
  count: string | undefined,
  flags: JobScaleFlags,
  io: Io,
): Promise<number> {
  // The service requires one of them; saying so here saves a round trip and names the flags.
  if (flags.message === undefined && flags.error === undefined)
    throw new CliError(
      'a scaling event needs its reason: --message TEXT (recorded with the event), or --error TEXT to record a failed scaling',
    );
  if (flags.message !== undefined && flags.error !== undefined)
    throw new CliError('give one of --message and --error, not both');
  if (flags.error !== undefined && count !== undefined)
    throw new CliError('--error records a failed scaling event: it takes no COUNT');
  const target = count === undefined ? undefined : parseCount(count, 'COUNT');
  return withClient(
    io,
    schedulerService,
    async (client, run) => {
      const job = await requireJob(client, id, flags);
      const tg = (job.TaskGroups ?? []).find((g) => g.Name === group);
      if (!tg) {
        const names = (job.TaskGroups ?? []).map((g) => g.Name).join(', ');
        throw new CliError(`job ${id} has no task group ${group}${names ? ` (groups: ${names})` : ''}`);
      }
      const res = await run
        .send(() =>
          client.scaleJob(id, group, {
            ...ns(flags),
            ...(target !== undefined ? { count: target } : {}),
            ...(flags.message !== undefined ? { message: flags.message } : {}),
            ...(flags.error !== undefined ? { error: flags.error } : {}),
          }),
        )
        .catch((error: unknown) => {
          // The service scales nothing while a deployment of the job runs: say what to wait for.
          if (error instanceof HttpStatusError && /active deployment/.test(error.serviceMessage ?? ''))
            throw withNote(
              error,
              `a deployment of ${printable(id)} is running: wait until it finishes (\`converge job deployments ${namespaceFlag(flags)}${printable(id)}\` shows it), then scale again`,
            );
          throw error;
        });
      if (flags.json) {
        printJson(io, res);
        return EXIT.ok;
      }
      const evaluation = evaluationClause(res.EvalID);
      write(
        io.stdout,
        target === undefined
          ? `Job ${id}: scaling ${flags.error !== undefined ? 'error' : 'event'} recorded for group ${group}, count unchanged at ${tg.Count ?? 1} (${evaluation})`
          : `Job ${id} scaled: group ${group} ${tg.Count ?? 1} → ${target} (${evaluation})`,
      );
      return EXIT.ok;
    },
    writeTo(`the scaling of group ${printable(group)} of ${printable(id)}`, id, flags),
  );
}

export async function jobStopCommand(id: string, flags: JobStopFlags, io: Io): Promise<number> {
  return withClient(
    io,
    schedulerService,
    async (client, run) => {
      await requireJob(client, id, flags);
      const what = flags.purge ? 'stop and purge' : 'stop';
      if (!flags.yes) {
        // A prompt needs someone to answer it; in CI the flag states the intent instead.
        const reply = await askYesNo(io, {
          ...(run.interrupt ? { interrupt: run.interrupt } : {}),
          message: `${what} job ${id} in namespace ${nsName(flags)}?`,
          color: flags.color,
          noTerminal: `refusing to ${what} job ${id} without confirmation: pass --yes (no terminal to ask on)`,
        });
        if (reply.answer !== 'yes') {
          const interrupted = reply.answer === 'interrupted';
          write(io.stderr, `${interrupted ? 'Interrupted' : 'Cancelled'}; job ${id} was not stopped.`);
          return interrupted ? reply.exitCode : EXIT.error;
        }
      }
      const res = await run.send(() => client.stopJob(id, { ...ns(flags), purge: Boolean(flags.purge) }));
      if (flags.json) printJson(io, res);
      else
        write(
          io.stdout,
          `Job ${id} ${flags.purge ? 'stopped and purged' : 'stopped'} (${evaluationClause(res.EvalID)})`,
        );
      return EXIT.ok;
    },
    writeTo(`the stop of ${printable(id)}`, id, flags),
  );
}
