/**
 * Job: a scheduler job. metadata.name is the job ID, metadata.namespace its namespace (`default` when
 * left out); the spec is the job inline or a job file (see ./job-spec.ts).
 *
 * The comparison is the service's own: every plan sends the job to the scheduler's plan endpoint (the
 * kind's server-side plan, kept beside the live job, not inside it), a dry run that answers with a structured diff against the stored job (after the service filled in its
 * defaults, so an unchanged manifest is `noop`), what it would do with allocations, and the
 * `JobModifyIndex` the diff was made against. Apply registers with check-and-set on that index, so a
 * job registered or scaled by someone else after the plan is refused, never overwritten.
 *
 * A stopped job counts as absent: the service only keeps it until garbage collection, and registering
 * the same ID again starts it (check-and-set on the stopped job's index).
 */
import pLimit from 'p-limit';
import { Type } from '@sinclair/typebox';
import { HttpStatusError } from '../../clients/http/errors.js';
import { printable } from '../../common/printable.js';
import type { Job, JobListItem, PlanResponse, SchedulerClient } from '../../clients/scheduler/client.js';
import { schedulerService } from '../../clients/scheduler/definition.js';
import type {
  ChangeImpact,
  Desired,
  DetailReads,
  Exportable,
  KindContext,
  LocalFiles,
  Namespaced,
  Observed,
  Prunable,
  RenderDetails,
  ResourceKey,
  ResourceKind,
  SensitiveAttributes,
  ServerSidePlan,
  SpecRules,
  Versioned,
} from '../contract.js';
import { exportJob } from './job-export.js';
import { JOB_SECRET_MAPS } from './secret-maps.js';
import {
  allocationNotes,
  periodicNote,
  placementFailureNotes,
  planDiffs,
  plansUpdates,
  setsUndiffedFields,
  templateImpact,
} from './job-plan.js';
import { createView, deleteView, serviceDefaultNotes } from './job-view.js';
import {
  inlineJob,
  isJsonFile,
  type JobLocal,
  type JobSpec,
  JobSpecSchema,
  jobDurationRules,
  jobSpecRules,
  localOf,
  parseMessageFor,
  OWNERSHIP_META_KEY,
  OWNERSHIP_META_VALUE,
  readJobSource,
  finish,
} from './job-spec.js';

export const DEFAULT_JOB_NAMESPACE = 'default';

/** The live job. */
export interface JobLive {
  job: Job;
  /**
   * `job` is the list's item (header fields, Meta, group names), not the whole job: enough to tell
   * ownership, the check-and-set index and that nothing changed; the whole job is read only when a
   * change needs it (kept counts in readDetails, a planned change in serverPlan, a prune in readWhole).
   */
  fromList?: true;
  /**
   * The list item's allocation counts per task group, when the job was listed: a deletion's blast
   * radius (the allocations it stops) without a request of its own.
   */
  summary?: JobListItem['JobSummary'];
}

/**
 * The service's plan of the manifest's job against the live one, or why the service refused to plan
 * it (a wrong field type, a missing namespace).
 */
export type JobServerPlan =
  /** `whole`: the live job read whole for a change found on a job observed from the list. */
  | { plan: PlanResponse; whole?: Job }
  /** `pointer`: where in the document the refusal is about (the spec, unless it names the namespace). */
  | { refused: string; pointer: string };

/** Reads of whole jobs for a list run at most this many at once. */
const LIST_READ_CONCURRENCY = 8;

/**
 * A list item as a job: its header fields, its Meta (the ownership marker) and its groups by name
 * (from the summary, without counts). Datacenters and counts are not in it.
 */
function jobFromListItem(item: JobListItem): Job {
  const { ID, Name, Namespace, Type, Priority, Status, Stop, ParentID, SubmitTime, JobModifyIndex } = item;
  const groups = Object.keys(item.JobSummary?.Summary ?? {}).sort();
  return Object.fromEntries(
    Object.entries({
      ID,
      Name,
      Namespace,
      Type,
      Priority,
      Status,
      Stop,
      ParentID,
      SubmitTime,
      JobModifyIndex,
      Meta: item.Meta ?? null,
      TaskGroups: groups.map((Name) => ({ Name })),
    }).filter(([, v]) => v !== undefined),
  ) as Job;
}

/**
 * Whether the list's items carry Meta: the service honours `meta=true` (Nomad 1.6 and later) when any
 * item has the key. It leaves the key out for a job without Meta (`omitempty`), so then a missing key
 * means no marker; when no item has it (an older service, or no job has Meta) every job is read.
 */
function listCarriesMeta(items: readonly JobListItem[]): boolean {
  return items.some((item) => item.Meta !== undefined && item.Meta !== null);
}

function client(ctx: KindContext, key: Pick<ResourceKey, 'connection'>): SchedulerClient {
  return ctx.client(schedulerService, key.connection);
}

function namespaceOf(key: ResourceKey): string {
  return key.namespace ?? DEFAULT_JOB_NAMESPACE;
}

function call(ctx: KindContext, key: ResourceKey) {
  return { namespace: namespaceOf(key), ...(ctx.signal ? { signal: ctx.signal } : {}) };
}

function observedOf(key: ResourceKey, job: Job): Observed<JobLive> {
  return {
    key,
    id: job.ID,
    live: { job },
    ...(job.JobModifyIndex !== undefined ? { version: job.JobModifyIndex } : {}),
  };
}

/** Whether a job (or a list item) is one Converge manages as an object: not stopped, not a child. */
function isDeclarable(job: { Stop?: boolean; ParentID?: string }): boolean {
  return !job.Stop && !job.ParentID;
}

/** The job to plan and register: the manifest's, with live counts kept when the manifest says so. */
function jobToSend(desired: Desired<JobSpec>, live?: Job): Job | undefined {
  const job = localOf(desired).job;
  if (!job || !desired.spec.preserveCounts || !live) return job;
  const counts = new Map((live.TaskGroups ?? []).map((g) => [g.Name, g.Count]));
  return {
    ...job,
    TaskGroups: (job.TaskGroups ?? []).map((g) =>
      counts.has(g.Name) && counts.get(g.Name) !== undefined ? { ...g, Count: counts.get(g.Name) } : g,
    ),
  };
}

/**
 * With `preserveCounts`, a task group whose manifest count differs from the live one keeps the live
 * one, so the plan shows no change there: said on the job, or a pull request that only edits a
 * count would read as a no-op.
 */
function keptCountNotes(desired: Desired<JobSpec>, live: Job | undefined): string[] {
  const job = localOf(desired).job;
  if (!job || !desired.spec.preserveCounts || !live) return [];
  const liveCounts = new Map((live.TaskGroups ?? []).map((g) => [g.Name, g.Count]));
  return (job.TaskGroups ?? []).flatMap((g) => {
    const kept = liveCounts.get(g.Name);
    if (kept === undefined || g.Count === undefined || g.Count === kept) return [];
    return [
      `task group ${JSON.stringify(g.Name)}: the manifest's Count ${g.Count} is not applied; preserveCounts keeps the live ${kept}`,
    ];
  });
}

/** `stops 3 running allocations (web: 2, worker: 1)`, or nothing when the job runs none. */
function stoppedAllocations(summary: JobLive['summary']): string[] {
  const groups = Object.entries(summary?.Summary ?? {})
    .map(([group, counts]) => [group, (counts.Running ?? 0) + (counts.Starting ?? 0)] as const)
    .filter(([, running]) => running > 0)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const total = groups.reduce((sum, [, running]) => sum + running, 0);
  if (total === 0) return [];
  const each = groups.map(([group, running]) => `${printable(group)}: ${running}`).join(', ');
  return [`stops ${total} running allocation${total === 1 ? '' : 's'} (${each})`];
}

/** A refused check-and-set, told as what it means for the user. */
function casRefusal(error: unknown, key: ResourceKey): Error | undefined {
  if (!(error instanceof HttpStatusError)) return undefined;
  const message = error.serviceMessage ?? error.message;
  if (!/Enforcing job modify index/i.test(message)) return undefined;
  return new Error(
    `job ${key.name} in namespace ${namespaceOf(key)} changed since the plan (registered, scaled or reverted by someone else): not overwritten. Run \`converge plan\` again to review it. (service: ${message})`,
  );
}

async function register(
  ctx: KindContext,
  desired: Desired<JobSpec>,
  job: Job,
  jobModifyIndex: number,
  { rawConflict = false }: { rawConflict?: boolean } = {},
): Promise<Observed<JobLive>> {
  const c = client(ctx, desired.key);
  try {
    const res = await c.registerJob(job, {
      ...call(ctx, desired.key),
      enforceIndex: true,
      jobModifyIndex,
      preserveCounts: desired.spec.preserveCounts ?? false,
    });
    return observedOf(desired.key, { ...job, JobModifyIndex: res.JobModifyIndex });
  } catch (error) {
    // A register is sent again after a 503 or a lost answer (the job's ID is its key: no second job).
    // When an earlier send had landed, the resend's check-and-set is refused as if someone else had
    // registered it: the service's plan of this same job then shows nothing to change.
    const refused = casRefusal(error, desired.key);
    if (refused && error instanceof HttpStatusError && error.attempts > 1) {
      const plan = await c.planJob(job, { ...call(ctx, desired.key), diff: true });
      if (plan.Diff?.Type === 'None')
        return observedOf(desired.key, { ...job, JobModifyIndex: plan.JobModifyIndex });
    }
    throw (rawConflict ? undefined : refused) ?? error;
  }
}

/**
 * The service's plan of a job, or its refusal of this job as a problem of the object: the service
 * answers a job it cannot take with 400 (decoding) or 500 (validation, a missing namespace), and one
 * bad job should not hide the plan of the others. Other failures (auth, unreachable) still throw.
 */
async function planOrRefusal(
  ctx: KindContext,
  key: ResourceKey,
  job: Job,
  diff: boolean,
): Promise<JobServerPlan> {
  try {
    return { plan: await client(ctx, key).planJob(job, { ...call(ctx, key), diff }) };
  } catch (error) {
    if (error instanceof HttpStatusError && (error.status === 400 || error.status === 500)) {
      const message = error.serviceMessage ?? error.message;
      // `job "x" is in nonexistent namespace "nope"` is about metadata.namespace, not the spec.
      const pointer = /nonexistent namespace/i.test(message) ? '/metadata/namespace' : '/spec';
      return { refused: `the scheduler refuses this job: ${message}`, pointer };
    }
    throw error;
  }
}

/**
 * The whole job for an object observed from the list; the list's item stays when the job went away
 * since (the plan then meets the missing job where it registers).
 */
async function wholeJob(ctx: KindContext, observed: Observed<JobLive>): Promise<Observed<JobLive>> {
  const job = await client(ctx, observed.key).readJob(observed.key.name, call(ctx, observed.key));
  if (!job) return observed;
  const whole = observedOf(observed.key, job);
  // The list's counts stay: the whole job does not carry them.
  return observed.live.summary
    ? { ...whole, live: { ...whole.live, summary: observed.live.summary } }
    : whole;
}

function requireJob(desired: Desired<JobSpec>): Job {
  const job = localOf(desired).job;
  // The planner refuses plans with problems, and a text spec that failed to parse is one.
  if (!job) throw new Error(`job ${desired.key.name}: its job specification was not parsed`);
  return job;
}

export const jobKind: ResourceKind<JobSpec, JobLive, JobServerPlan> &
  Namespaced &
  Versioned &
  LocalFiles<JobSpec> &
  SensitiveAttributes &
  SpecRules<JobSpec> &
  ServerSidePlan<JobSpec, JobLive, JobServerPlan> &
  RenderDetails<JobSpec, JobLive> &
  DetailReads<JobSpec, JobLive> &
  Exportable<JobSpec, JobLive> &
  ChangeImpact<JobSpec, JobLive> &
  Prunable<JobLive> = {
  kind: 'Job',
  service: schedulerService.name,
  description:
    "A scheduler job: inline in the service's own field names, or specFile naming a .json or text (HCL) job. metadata.name is the job ID.",
  // The job's Version counts spec changes; the check-and-set token is the modify index.
  versionLabel: 'JobModifyIndex',
  namespaceSchema: Type.String({
    pattern: '^[a-zA-Z0-9-]{1,128}$',
    description: 'a scheduler namespace: letters, digits and "-" (default: default)',
  }),
  effectiveNamespace: (key) => key.namespace ?? DEFAULT_JOB_NAMESPACE,
  nameSchema: Type.String({
    // The ID is a path segment of every job URL (`/v1/job/:job_id`), so what a path would read as
    // structure is refused like every other kind's names: `.` and `..`, `/` (also how the service
    // names dispatched and periodic children), `?`, `#`, `%`, whitespace (the service refuses
    // spaces) and control characters (it refuses NUL).
    pattern: '^(?!\\.\\.?$)[^\\s/?#%\\u0000-\\u001f\\u007f]{1,128}$',
    description:
      'the job ID: up to 128 characters, not "." or "..", without whitespace, control characters, "/", "?", "#" or "%"',
  }),
  specSchema: JobSpecSchema,
  localFiles: ['specFile'],
  // Tokens the service checks at registration and never stores (it clears them before the job is
  // kept): masked in every plan, never in a saved plan, scrubbed from errors.
  sensitive: ['SecretsToken', 'RegistryToken'],
  // Where a job's own names say what a value is (secret-maps.ts).
  secretsByName: JOB_SECRET_MAPS,
  ownership: 'marker',
  // Every register sends the whole job, marker included: an imported job gets it on its next apply.
  markerAttribute: `Meta.${OWNERSHIP_META_KEY}`,

  validateSpec: jobSpecRules,
  validateAnySpec: jobDurationRules,

  async resolve(desired) {
    const { local, problems } = await readJobSource(desired);
    return { desired: { ...desired, local }, problems };
  },

  async prepare(ctx, desired) {
    const local = localOf(desired);
    if (local.job || local.text === undefined) return { desired, problems: [] };
    try {
      const job = await client(ctx, desired.key).parseJob(
        local.text,
        ctx.signal ? { signal: ctx.signal } : {},
      );
      const done = finish(desired, { job, ...(local.file ? { file: local.file } : {}) }, '/spec/specFile');
      return { desired: { ...desired, local: done.local satisfies JobLocal }, problems: done.problems };
    } catch (error) {
      if (!(error instanceof HttpStatusError) || error.status !== 400) throw error;
      return {
        desired,
        problems: [
          {
            key: desired.key,
            message: parseMessageFor(local.file ?? 'job spec', error.serviceMessage ?? error.message),
            ...(desired.resource ? { position: desired.resource.locate('/spec/specFile') } : {}),
          },
        ],
      };
    }
  },

  async observe(ctx, key) {
    const job = await client(ctx, key).readJob(key.name, call(ctx, key));
    return job && isDeclarable(job) ? observedOf(key, job) : undefined;
  },

  async list(ctx, scope) {
    const c = client(ctx, scope);
    const namespace = scope.namespace ?? DEFAULT_JOB_NAMESPACE;
    const opts = { namespace, ...(ctx.signal ? { signal: ctx.signal } : {}) };
    // Each job's own namespace: a list of every namespace (`*`, as `converge export --namespace '*'`
    // asks for) is no place to read a job again or write it back to.
    const keyOf = (id: string, own: string | undefined): ResourceKey => ({
      kind: 'Job',
      name: id,
      namespace: own || (namespace === '*' ? DEFAULT_JOB_NAMESPACE : namespace),
      ...(scope.connection !== undefined ? { connection: scope.connection } : {}),
    });
    // One request: the items carry each job's Meta (the ownership marker) when the service can.
    const items = (await c.listJobs({ ...opts, meta: true })).filter(isDeclarable);
    if (listCarriesMeta(items)) {
      return items.map((item) => {
        const observed = observedOf(keyOf(item.ID, item.Namespace), jobFromListItem(item));
        const summary = item.JobSummary ? { summary: item.JobSummary } : {};
        return { ...observed, live: { ...observed.live, fromList: true as const, ...summary } };
      });
    }
    // A service that ignores meta=true: each job is read whole for its Meta, a few at a time.
    const limit = pLimit(LIST_READ_CONCURRENCY);
    const jobs = await Promise.all(
      items.map((item) =>
        limit(() => c.readJob(item.ID, { ...opts, namespace: keyOf(item.ID, item.Namespace).namespace! })),
      ),
    );
    return jobs
      .filter((job): job is Job => job !== undefined && isDeclarable(job))
      .map((job) => observedOf(keyOf(job.ID, job.Namespace), job));
  },

  async readWhole(ctx, listed) {
    return listed.live.fromList ? wholeJob(ctx, listed) : listed;
  },

  async readDetails(ctx, desired, observed) {
    // Kept counts are sent with the job, so they are read before it is planned.
    return observed.live.fromList && desired.spec.preserveCounts ? wholeJob(ctx, observed) : observed;
  },

  async serverPlan(ctx, desired, observed) {
    const job = jobToSend(desired, observed.live.job);
    if (!job) return undefined;
    const planned = await planOrRefusal(ctx, desired.key, job, true);
    // An unchanged job needs nothing more than the list told; a change is shown against the whole
    // live job (a removed group as it was, values typed as stored). A `None` diff is no proof when
    // the job sets fields the diff leaves out (a job's Update and Spreads), or the plan would update
    // allocations all the same: compare reads them on the whole job (job-plan.ts).
    if ('refused' in planned || !observed.live.fromList) return planned;
    if (planned.plan.Diff?.Type === 'None' && !setsUndiffedFields(job) && !plansUpdates(planned.plan))
      return planned;
    const whole = await wholeJob(ctx, observed);
    return whole.live.fromList ? planned : { ...planned, whole: whole.live.job };
  },

  async previewCreate(ctx, desired) {
    const job = localOf(desired).job;
    if (!job) return {};
    const planned = await planOrRefusal(ctx, desired.key, job, false);
    if ('refused' in planned) return { problems: [{ message: planned.refused, pointer: planned.pointer }] };
    const plan = planned.plan;
    // The scheduler's placements per task group are the create's blast radius (a template's: none).
    const impact = templateImpact(job) ?? allocationNotes(plan);
    return {
      notes: [...serviceDefaultNotes(job), ...placementFailureNotes(plan), ...periodicNote(plan)],
      ...(impact.length ? { impact } : {}),
    };
  },

  compare(desired, observed, serverPlan) {
    if (serverPlan && 'refused' in serverPlan)
      return { diffs: [], problems: [{ message: serverPlan.refused, pointer: serverPlan.pointer }] };
    const plan = serverPlan?.plan;
    if (!plan) {
      // Only when the job specification itself could not be read or parsed: that problem is reported.
      return { diffs: [], notCompared: 'its job specification has a problem' };
    }
    const local = localOf(desired);
    const whole = 'whole' in serverPlan ? serverPlan.whole : undefined;
    const diffs = planDiffs(plan, {
      before: whole ?? observed.live.job,
      ...(!whole && observed.live.fromList ? { partialBefore: true } : {}),
      after: jobToSend(desired, observed.live.job),
      fromText: local.file !== undefined && !isJsonFile(local.file),
      written: writtenJob(desired, local),
    });
    // What the scheduler would do with allocations matters when the job changes; a shortfall always.
    // Placements per task group are the change's blast radius (the planner drops it for a noop).
    const kept = keptCountNotes(desired, observed.live.job);
    const notes = [...kept, ...(diffs.length ? periodicNote(plan) : []), ...placementFailureNotes(plan)];
    const sent = jobToSend(desired, observed.live.job);
    const impact = (sent && templateImpact(sent)) ?? allocationNotes(plan);
    return {
      diffs,
      ...(notes.length ? { notes } : {}),
      ...(impact.length ? { impact } : {}),
      // Not "matches live state": the count differs, kept on purpose (said in the headline).
      ...(kept.length ? { keptLive: ['TaskGroups'] } : {}),
    };
  },

  // A deletion stops what the job runs: said from the list's counts when the plan listed the job.
  async impact(_ctx, subjects) {
    return subjects.map((subject) =>
      subject.action === 'delete' ? stoppedAllocations(subject.observed?.live.summary) : [],
    );
  },

  render(desired) {
    const local = localOf(desired);
    if (!local.job) return createView(desired.spec as Job, false);
    // An inline job as the manifest wrote it (`20s` stays `20s`), over what is sent (its ID, namespace).
    if (desired.spec.specFile === undefined)
      return createView({ ...local.job, ...inlineJob(desired.spec) } as Job, false);
    // A text spec was parsed by the service, which lists every field: only the ones it sets are shown.
    return createView(local.job, local.file !== undefined && !isJsonFile(local.file));
  },

  describe(observed) {
    return deleteView(observed.live.job);
  },

  async create(ctx, desired) {
    const job = requireJob(desired);
    // Check-and-set "only if new": one request when the ID is free. A stopped job of the same ID (it
    // counts as absent) makes that fail; it is then started again on its own index.
    try {
      return await register(ctx, desired, job, 0, { rawConflict: true });
    } catch (error) {
      if (!(error instanceof HttpStatusError) || !/job already exists/.test(error.serviceMessage ?? ''))
        throw error;
    }
    const existing = await client(ctx, desired.key).readJob(desired.key.name, call(ctx, desired.key));
    if (existing && isDeclarable(existing)) {
      throw new Error(
        `job ${desired.key.name} in namespace ${namespaceOf(desired.key)} was registered by someone else since the plan: not overwritten. Run \`converge plan\` again to review it.`,
      );
    }
    return register(ctx, desired, job, existing?.JobModifyIndex ?? 0);
  },

  async update(ctx, desired, observed) {
    const job = jobToSend(desired, observed.live.job) ?? requireJob(desired);
    // The index observed (and, for a saved plan, checked again just before): a register after that
    // moved it, so the service refuses this one. The plan's index is the same unless someone
    // registered between the read and the plan, which then fails the same way.
    const index = Number(observed.version ?? 0);
    return register(ctx, desired, job, index);
  },

  async delete(ctx, observed, desired) {
    await client(ctx, observed.key).stopJob(observed.key.name, {
      ...call(ctx, observed.key),
      purge: desired?.spec?.purgeOnDelete ?? false,
    });
  },

  // Jobs the service made itself (dispatched and periodic children) are never listed.
  exporter: {
    spec: (observed) => exportJob(observed.live.job) as JobSpec,
  },

  owns(observed) {
    const job = observed.live.job;
    return job.Meta?.[OWNERSHIP_META_KEY] === OWNERSHIP_META_VALUE && !job.ParentID;
  },
};

/**
 * The job as written, whose form the plan shows durations in: the manifest's inline job, or a JSON
 * job file as read; a text job has none (its parser turned `"20s"` into nanoseconds).
 */
function writtenJob(desired: Desired<JobSpec>, local: JobLocal): unknown {
  if (desired.spec.specFile === undefined) return inlineJob(desired.spec);
  return local.file !== undefined && isJsonFile(local.file) ? local.job : undefined;
}
