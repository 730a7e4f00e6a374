/**
 * `converge job …`: the scheduler's operator commands, after its own CLI (`nomad job …`). Here: read a
 * job's status, history, allocations, evaluations and deployments, and dry-run a job file, plus the
 * helpers every job command shares; the one-off writes are in `./job-write.ts`. Registering a job is
 * not a command: that is `converge apply` with a Job manifest, which registers with check-and-set.
 */
import { describeFsError } from '../../common/text-file.js';
import { readFileSync } from 'node:fs';
import type { Job, SchedulerClient } from '../../clients/scheduler/client.js';
import type { Allocation, Deployment } from '../../clients/scheduler/types.js';
import { schedulerService } from '../../clients/scheduler/definition.js';
import { HttpStatusError, ServiceError } from '../../clients/http/errors.js';
import { printable, jsonOut } from '../../common/printable.js';
import {
  OWNERSHIP_META_KEY,
  OWNERSHIP_META_VALUE,
  parseMessageFor,
} from '../../resources/scheduler/job-spec.js';
import { withClient } from '../service-client.js';
import { CliError, EXIT } from '../exit-codes.js';
import { type Io, useColor, write } from '../io.js';
import { table } from '../table.js';
import { jobDiffHasChanges, maskJobDiff, renderJobDiff, secretDiffValues } from './job-diff.js';
import { sensitiveEnvFrom } from '../../common/allow-list.js';
import { copiedSecrets, maskCopies } from '../../planner/masking.js';
import { maskSecretsInValue, secretValuesInValue } from '../../planner/secret-names.js';
import { JOB_SECRET_MAPS } from '../../resources/scheduler/secret-maps.js';
import {
  allocationsTable,
  childrenLine,
  deploymentSection,
  deploymentsTable,
  dryRunSection,
  evaluationsTable,
  formatNanos,
  jobHeader,
  jobListTable,
  keyValues,
  planChangesAllocations,
  summaryTable,
} from './job-render.js';

/** The namespace the service uses when none is sent (the spec's default). */
const DEFAULT_NAMESPACE = 'default';

export interface JobFlags {
  namespace?: string;
  json?: boolean;
}

export interface JobListFlags extends JobFlags {
  prefix?: string;
}

export interface JobHistoryFlags extends JobFlags {
  diffs?: boolean;
  color?: boolean;
}

export interface JobAllFlags extends JobFlags {
  all?: boolean;
}

export interface JobPlanFlags extends JobFlags {
  detailedExitcode?: boolean;
  color?: boolean;
  verbose?: boolean;
}
export function ns(flags: JobFlags): { namespace?: string } {
  return flags.namespace !== undefined ? { namespace: flags.namespace } : {};
}

export function nsName(flags: JobFlags): string {
  return flags.namespace ?? DEFAULT_NAMESPACE;
}

/** `CONVERGE_SENSITIVE_ENV`'s rule: whether an entry's name says secret. */
function secretNameOf(io: Io): (name: string) => boolean {
  return sensitiveEnvFrom(io.env.CONVERGE_SENSITIVE_ENV).allows;
}

/**
 * The service's answer as JSON, but for the values of entries whose names say secret in every job it
 * holds (`Env.DB_PASSWORD`, `Config.auth.password`: a job, each version of a history, an allocation's
 * job), masked as the plan and the text output mask them: a `--json` pasted into a ticket or a CI log
 * is as public as either.
 */
export function printJson(io: Io, value: unknown, secrets: readonly string[] = []): void {
  const secretName = secretNameOf(io);
  // Their copies under other names too (`Env.DSN` holding the password, a task's `args`), as a plan
  // masks copies: the values are known from the entries whose names say secret.
  const copies = copiedSecrets([], () => undefined, [...jobSecrets(value, secretName), ...secrets]);
  const masked = maskJobs(value, secretName);
  write(io.stdout, jsonOut(copies ? maskCopies(masked, copies) : masked, null, 2));
}

/** The values of entries whose names say secret in every job `value` holds (`maskJobs`' jobs). */
function jobSecrets(value: unknown, secretName: (name: string) => boolean): string[] {
  if (Array.isArray(value)) return value.flatMap((item) => jobSecrets(item, secretName));
  if (typeof value !== 'object' || value === null) return [];
  const record = value as Record<string, unknown>;
  const own = Array.isArray(record.TaskGroups)
    ? secretValuesInValue(record, JOB_SECRET_MAPS, secretName)
    : [];
  return [...own, ...Object.values(record).flatMap((v) => jobSecrets(v, secretName))];
}

function maskJobs(value: unknown, secretName: (name: string) => boolean): unknown {
  if (Array.isArray(value)) return value.map((item) => maskJobs(item, secretName));
  if (typeof value !== 'object' || value === null) return value;
  const record = value as Record<string, unknown>;
  const masked = Array.isArray(record.TaskGroups)
    ? maskSecretsInValue(record, JOB_SECRET_MAPS, secretName)
    : record;
  return Object.fromEntries(Object.entries(masked).map(([k, v]) => [k, maskJobs(v, secretName)]));
}

/** The job, or the one clear error a user can act on (the service's 404 body says less). */
export async function requireJob(client: SchedulerClient, id: string, flags: JobFlags): Promise<Job> {
  const job = await client.readJob(id, ns(flags));
  if (!job) throw new CliError(`no job ${id} in namespace ${nsName(flags)}`);
  return job;
}

export { parseCount } from './job-args.js';

// ---- reads ----

export async function jobListCommand(flags: JobListFlags, io: Io): Promise<number> {
  return withClient(io, schedulerService, async (client) => {
    const jobs = await client.listJobs({
      ...ns(flags),
      ...(flags.prefix !== undefined ? { prefix: flags.prefix } : {}),
    });
    if (flags.json) printJson(io, jobs);
    else write(io.stdout, jobListTable(jobs, flags.namespace === '*'));
    return EXIT.ok;
  });
}

/**
 * The latest deployment, or undefined when the service keeps none for the job. A service that does
 * not implement the endpoint (404/501) leaves the section out instead of failing the whole status.
 */
async function latestDeploymentOrNone(client: SchedulerClient, id: string, flags: JobFlags) {
  try {
    return await client.latestDeployment(id, ns(flags));
  } catch (error) {
    if (error instanceof ServiceError && (error.status === 501 || error.status === 404)) return undefined;
    throw error;
  }
}

export async function jobStatusCommand(id: string | undefined, flags: JobListFlags, io: Io): Promise<number> {
  if (id === undefined) return jobListCommand(flags, io);
  return withClient(io, schedulerService, async (client) => {
    const job = await requireJob(client, id, flags);
    const [summary, allocations, deployment] = await Promise.all([
      client.jobSummary(id, ns(flags)),
      client.jobAllocations(id, ns(flags)),
      latestDeploymentOrNone(client, id, flags),
    ]);
    if (flags.json) {
      printJson(io, {
        Job: job,
        Summary: summary ?? null,
        LatestDeployment: deployment ?? null,
        Allocations: allocations,
      });
      return EXIT.ok;
    }
    const sections = [jobHeader(job)];
    if (summary) {
      const children = childrenLine(summary);
      sections.push(`Summary\n${summaryTable(summary)}${children ? `\n${children}` : ''}`);
    }
    if (deployment) sections.push(`Latest Deployment\n${deploymentSection(deployment)}`);
    sections.push(`Allocations\n${allocationsTable(allocations)}`);
    write(io.stdout, sections.join('\n\n'));
    return EXIT.ok;
  });
}

export async function jobHistoryCommand(id: string, flags: JobHistoryFlags, io: Io): Promise<number> {
  return withClient(io, schedulerService, async (client) => {
    const history = await client.jobVersions(id, { ...ns(flags), diffs: Boolean(flags.diffs) });
    if (!history) throw new CliError(`no job ${id} in namespace ${nsName(flags)}`);
    if (flags.json) {
      const secretName = secretNameOf(io);
      const secrets = [
        ...jobSecrets(history.Versions, secretName),
        ...(history.Diffs ?? []).flatMap((d) => secretDiffValues(d, secretName)),
      ];
      printJson(
        io,
        { ...history, Diffs: history.Diffs?.map((d) => maskJobDiff(d, secretName, secrets)) ?? null },
        secrets,
      );
      return EXIT.ok;
    }
    const color = useColor(io, flags.color);
    const versions = [...history.Versions].sort((a, b) => (b.Version ?? 0) - (a.Version ?? 0));
    if (!flags.diffs) {
      write(
        io.stdout,
        table(
          ['VERSION', 'STABLE', 'SUBMITTED'],
          versions.map((v) => [
            String(v.Version ?? ''),
            String(v.Stable ?? false),
            formatNanos(v.SubmitTime),
          ]),
        ),
      );
      return EXIT.ok;
    }
    // The service pairs Diffs[i] with Versions[i] (newest first): that version against the one before.
    const diffOf = new Map(history.Versions.map((v, i) => [v.Version, history.Diffs?.[i]]));
    // Every version's secrets, and every diff's: a copy in one version is masked in the others too.
    const secretName = secretNameOf(io);
    const secrets = [
      ...jobSecrets(history.Versions, secretName),
      ...(history.Diffs ?? []).flatMap((d) => secretDiffValues(d, secretName)),
    ];
    const blocks = versions.map((v) => {
      const head = keyValues([
        ['Version', String(v.Version ?? '')],
        ['Stable', String(v.Stable ?? false)],
        ['Submitted', formatNanos(v.SubmitTime)],
      ]);
      const diff = diffOf.get(v.Version);
      const oldest = v.Version === versions[versions.length - 1]?.Version;
      const body = oldest
        ? ''
        : jobDiffHasChanges(diff)
          ? `\nDiff:\n${renderJobDiff(diff, { color, secretName, secrets })}`
          : '\nDiff: (none)';
      return head + body;
    });
    write(io.stdout, blocks.join('\n\n'));
    return EXIT.ok;
  });
}

export async function jobAllocsCommand(id: string, flags: JobAllFlags, io: Io): Promise<number> {
  return jobRecordsCommand(id, flags, io, JOB_ALLOCATIONS);
}

export async function jobEvalsCommand(id: string, flags: JobFlags, io: Io): Promise<number> {
  return withClient(io, schedulerService, async (client) => {
    await requireJob(client, id, flags);
    const evals = await client.jobEvaluations(id, ns(flags));
    if (flags.json) printJson(io, evals);
    else write(io.stdout, evaluationsTable(evals));
    return EXIT.ok;
  });
}

export async function jobDeploymentsCommand(id: string, flags: JobAllFlags, io: Io): Promise<number> {
  return jobRecordsCommand(id, flags, io, JOB_DEPLOYMENTS);
}

/** How `jobRecordsCommand` reads one kind of a job's records and draws them as a table. */
interface JobRecords<T> {
  read(client: SchedulerClient, id: string, opts: { namespace?: string; all: boolean }): Promise<T[]>;
  table(records: T[]): string;
}

const JOB_ALLOCATIONS: JobRecords<Allocation> = {
  read: (client, id, opts) => client.jobAllocations(id, opts),
  table: allocationsTable,
};

const JOB_DEPLOYMENTS: JobRecords<Deployment> = {
  read: (client, id, opts) => client.jobDeployments(id, opts),
  table: deploymentsTable,
};

/**
 * A job's allocations or deployments, as JSON or a table. Without `--all` a missing job is an error of
 * its own; with it, records of a purged job are still listed, so the job is not looked up.
 */
async function jobRecordsCommand<T>(
  id: string,
  flags: JobAllFlags,
  io: Io,
  records: JobRecords<T>,
): Promise<number> {
  return withClient(io, schedulerService, async (client) => {
    if (!flags.all) await requireJob(client, id, flags);
    const found = await records.read(client, id, { ...ns(flags), all: Boolean(flags.all) });
    if (flags.json) printJson(io, found);
    else write(io.stdout, records.table(found));
    return EXIT.ok;
  });
}

// ---- plan ----

/** A job file: `.json` holds `{"Job": {...}}` or the bare job; anything else is the text spec the service parses. */
async function readJobFile(client: SchedulerClient, file: string): Promise<Job> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new CliError(`cannot read ${file}: ${describeFsError(error)}`);
  }
  if (!file.toLowerCase().endsWith('.json')) {
    try {
      return await client.parseJob(text);
    } catch (error) {
      if (error instanceof HttpStatusError && error.status === 400 && error.serviceMessage)
        throw new CliError(parseMessageFor(file, error.serviceMessage));
      throw error;
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    // The parser quotes the text it choked on: shown as one printable line.
    throw new CliError(printable(`${file} is not valid JSON: ${(error as Error).message}`));
  }
  const job =
    parsed && typeof parsed === 'object' && 'Job' in parsed ? (parsed as { Job: unknown }).Job : parsed;
  if (!job || typeof job !== 'object' || typeof (job as { ID?: unknown }).ID !== 'string' || !(job as Job).ID)
    throw new CliError(`${file} holds no job: expected {"Job": {"ID": …}} or a job object with an ID`);
  return job as Job;
}

export async function jobPlanCommand(file: string, flags: JobPlanFlags, io: Io): Promise<number> {
  return withClient(io, schedulerService, async (client) => {
    const job = await readJobFile(client, file);
    // The flag wins over the file, as with the scheduler's own CLI; the file's namespace otherwise.
    const namespace = flags.namespace ?? job.Namespace;
    const scoped = namespace !== undefined ? { ...job, Namespace: namespace } : job;
    // A job Converge registered carries its ownership marker, which a job file does not: plan with
    // it, so the comparison is the one `converge plan` makes (Meta changes replace allocations).
    const live = await client.readJob(job.ID, namespace !== undefined ? { namespace } : {});
    const toPlan =
      live?.Meta?.[OWNERSHIP_META_KEY] === OWNERSHIP_META_VALUE
        ? { ...scoped, Meta: { ...(scoped.Meta ?? {}), [OWNERSHIP_META_KEY]: OWNERSHIP_META_VALUE } }
        : scoped;
    const plan = await client.planJob(toPlan, {
      diff: true,
      ...(namespace !== undefined ? { namespace } : {}),
    });
    const changes = jobDiffHasChanges(plan.Diff) || planChangesAllocations(plan);
    // Values of fields whose names say secret are masked, as `converge plan` masks them: a job
    // plan's output goes into CI logs, and the service marks none of them.
    const secretName = secretNameOf(io);
    // The file's own secrets and the live job's: a copy of either in another field is masked too.
    const secrets = [...jobSecrets([job, live], secretName), ...secretDiffValues(plan.Diff, secretName)];
    if (flags.json) printJson(io, { ...plan, Diff: maskJobDiff(plan.Diff, secretName, secrets) }, secrets);
    else {
      const color = useColor(io, flags.color);
      const diff = renderJobDiff(plan.Diff, {
        color,
        verbose: Boolean(flags.verbose),
        secretName,
        secrets,
      });
      write(
        io.stdout,
        [
          diff || `No changes to job ${job.ID}.`,
          dryRunSection(plan, color),
          `Job Modify Index: ${plan.JobModifyIndex}`,
          'To register with that check-and-set index, declare the job in a manifest (kind Job) and run `converge apply`.',
        ].join('\n\n'),
      );
    }
    return flags.detailedExitcode && changes ? EXIT.changes : EXIT.ok;
  });
}
