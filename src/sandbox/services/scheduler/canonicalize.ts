/**
 * The one place the sandbox scheduler makes a job canonical: what the real service does to a job on
 * register before it stores it (`api/jobs.go` and `api/tasks.go` `Canonicalize`, which the agent runs
 * when it converts the request, then `nomad/structs` `Job`/`TaskGroup`/`Task.Canonicalize`), so that
 * every read, list item, version and plan sees the job whole: each field the spec lists for a job, a
 * task group and a task is present, with the real default, or null where unused (Go's nil pointers,
 * slices and maps), and empty lists and maps are null as the real `Canonicalize` makes them (so `[]`
 * and null never differ). Register and plan call it (through admission.ts, which also drops the
 * submit tokens), parse calls it when asked to `Canonicalize`, and a state file written by an earlier
 * sandbox is brought to this form when it is loaded, so reads always answer with the canonical job.
 *
 * Which fields: the spec's lists (`registry-roles-and-scheduler-jobs.md`, part B, "Job (scheduler)")
 * come first, in its names (`SecretsToken`, `RegistryToken`, `SchedulerTokenID`, `SecretsNamespace`
 * are the real `VaultToken`, `ConsulToken`, `NomadTokenID`, `VaultNamespace`); where the spec is
 * silent the real source decides the values (durations in nanoseconds, as in the real JSON). Fields
 * the spec does not list are kept as sent, never invented: the real `ConsulNamespace`, for instance,
 * has no name in the spec. Defaults depend on the job type as in the real code: restart policy
 * (service and system vs the rest), reschedule policy (service, batch; none for system and sysbatch),
 * migrate strategy (service only) and update strategy (service and system).
 *
 * Two choices where the real service and the spec differ, both made so no existing reader breaks:
 * the job-level `Update` keeps every field of the default strategy (the real store keeps only
 * `Stagger` and `MaxParallel` there, a batch job's being all zeros; the spec lists the block with its
 * fields and a batch job's as unused, null), and `LogConfig` holds the spec's `MaxFiles` and
 * `MaxFileSizeMB` (the real one adds `Disabled: false`).
 */
import {
  DEFAULT_CPU_MHZ,
  DEFAULT_EPHEMERAL_DISK,
  DEFAULT_JOB_PRIORITY,
  DEFAULT_JOB_TYPE,
  DEFAULT_KILL_TIMEOUT,
  DEFAULT_LOG_CONFIG,
  DEFAULT_MEMORY_MB,
  DEFAULT_MIGRATE,
  DEFAULT_NODE_POOL,
  DEFAULT_UPDATE,
  defaultReschedulePolicy,
  defaultRestartPolicy,
} from '../../../clients/scheduler/defaults.js';
import type { Json } from './model.js';

/** The fields a job always has, in the spec's order, with what the real service fills when unset. */
const JOB_DEFAULTS: Json = {
  ID: '',
  ParentID: '',
  Name: '',
  Namespace: '',
  Region: '',
  Type: DEFAULT_JOB_TYPE,
  Priority: DEFAULT_JOB_PRIORITY,
  AllAtOnce: false,
  // The default since the real 1.5: a glob over every datacenter.
  Datacenters: ['*'],
  NodePool: DEFAULT_NODE_POOL,
  Constraints: null,
  Affinities: null,
  Spreads: null,
  TaskGroups: null,
  Update: null,
  Periodic: null,
  ParameterizedJob: null,
  Payload: null,
  Meta: null,
  Multiregion: null,
  // Job-level blocks merged into every group (below); kept as sent, null when unused.
  Migrate: null,
  Reschedule: null,
  Stable: false,
  Stop: false,
  Dispatched: false,
  Version: 0,
  SubmitTime: 0,
  Status: '',
  StatusDescription: '',
  CreateIndex: 0,
  ModifyIndex: 0,
  JobModifyIndex: 0,
  // Submit tokens: always empty once stored (see submit-tokens.ts).
  SecretsToken: '',
  RegistryToken: '',
  // UNCONFIRMED in effect: the real server records the submitting token's accessor here when ACLs
  // are on; the sandbox does not, so it stays as sent (empty by default).
  SchedulerTokenID: '',
  SecretsNamespace: '',
};

const GROUP_DEFAULTS: Json = {
  Name: '',
  Count: null,
  Constraints: null,
  Affinities: null,
  Spreads: null,
  Meta: null,
  Tasks: null,
  Networks: null,
  Services: null,
  Volumes: null,
  Scaling: null,
  // Pointers in the real struct: null when unset.
  ShutdownDelay: null,
  StopAfterClientDisconnect: null,
  RestartPolicy: null,
  ReschedulePolicy: null,
  EphemeralDisk: null,
  Migrate: null,
  Update: null,
};

const TASK_DEFAULTS: Json = {
  Name: '',
  Driver: '',
  User: '',
  Config: null,
  Env: null,
  Meta: null,
  Leader: false,
  Kind: '',
  KillTimeout: DEFAULT_KILL_TIMEOUT,
  KillSignal: '',
  ShutdownDelay: 0,
  Lifecycle: null,
  LogConfig: null,
  Resources: null,
  Services: null,
  Templates: null,
  Artifacts: null,
  DispatchPayload: null,
  Constraints: null,
  Affinities: null,
  RestartPolicy: null,
  ScalingPolicies: null,
  CSIPluginConfig: null,
  VolumeMounts: null,
  // The spec's integration block: null when unused.
  Secrets: null,
};

/**
 * A job as the real service stores it after register. `namespace` is the one the request resolved
 * to; `region` replaces an empty or `global` region (the agent's own, as the real agent does).
 * The input is not changed. Idempotent: a canonical job comes back equal, so a job read back and sent
 * again plans no change.
 */
export function canonicalizeJob(input: Json, namespace: string, region: string): Json {
  const job = withDefaults(structuredClone(input), JOB_DEFAULTS);
  job.Namespace = namespace;
  if (job.Region === '' || job.Region === 'global') job.Region = region;
  if (job.Name === '') job.Name = job.ID;
  if (Array.isArray(job.Datacenters) && job.Datacenters.length === 0) job.Datacenters = ['*'];
  emptyToNull(job, ['Meta', 'Constraints', 'Affinities', 'Spreads']);
  // `api.Job.Canonicalize`: a service or system job without an update block gets the default one.
  if (isObject(job.Update)) job.Update = fill(job.Update, DEFAULT_UPDATE);
  else if (job.Type === 'service' || job.Type === 'system') job.Update = { ...DEFAULT_UPDATE };
  if (isObject(job.Periodic)) job.Periodic = canonicalPeriodic(job.Periodic);
  if (isObject(job.ParameterizedJob)) job.ParameterizedJob = canonicalParameterized(job.ParameterizedJob);
  job.TaskGroups = list(job.TaskGroups).map((tg) => canonicalGroup(tg, job));
  return job;
}

/** `api.PeriodicConfig.Canonicalize` (the spec's fields, plus the real `TimeZone` default). */
function canonicalPeriodic(periodic: Json): Json {
  return fill(periodic, {
    Enabled: true,
    Spec: '',
    SpecType: 'cron',
    ProhibitOverlap: false,
    TimeZone: 'UTC',
  });
}

/** `structs.ParameterizedJobConfig.Canonicalize`: the payload is optional unless the job says. */
function canonicalParameterized(params: Json): Json {
  const out = fill(params, { Payload: '', MetaRequired: null, MetaOptional: null });
  if (out.Payload === '') out.Payload = 'optional';
  return out;
}

/** `api.TaskGroup.Canonicalize` then `structs.TaskGroup.Canonicalize`, with the job's blocks merged in. */
function canonicalGroup(input: Json, job: Json): Json {
  const type = job.Type;
  const tg = withDefaults(input, GROUP_DEFAULTS);
  emptyToNull(tg, ['Meta', 'Constraints', 'Affinities', 'Spreads']);
  if (tg.Count === null) {
    // A group with a scaling block starts at its minimum.
    const min = isObject(tg.Scaling) ? tg.Scaling.Min : undefined;
    tg.Count = typeof min === 'number' ? min : 1;
  }
  tg.EphemeralDisk = fill(isObject(tg.EphemeralDisk) ? tg.EphemeralDisk : {}, DEFAULT_EPHEMERAL_DISK);
  tg.Update = groupUpdate(job, tg);

  // The job's reschedule block under the group's own; then the type's default (none for system and
  // sysbatch jobs, which do not reschedule), every unset field filled.
  let reschedule = merged(job.Reschedule, tg.ReschedulePolicy);
  if (reschedule === null && type !== 'system' && type !== 'sysbatch') reschedule = {};
  tg.ReschedulePolicy = reschedule && fill(reschedule, defaultReschedulePolicy(type));

  // The job's migrate block under the group's own; service groups always have one.
  let migrate = merged(job.Migrate, tg.Migrate);
  if (migrate === null && type === 'service') migrate = {};
  tg.Migrate = migrate && fill(migrate, DEFAULT_MIGRATE);

  // The group's restart policy over the type's default.
  tg.RestartPolicy = { ...defaultRestartPolicy(type), ...setFields(tg.RestartPolicy) };
  tg.Tasks = list(tg.Tasks).map((t) => canonicalTask(t, tg));
  return tg;
}

/**
 * The real update merge: the job's block under the group's own (filled with the defaults), or the
 * job's whole when the group has none and the job's is not empty (all zero), else the group's own.
 */
function groupUpdate(job: Json, tg: Json): Json | null {
  const jobUpdate = isObject(job.Update) ? job.Update : undefined;
  const own = isObject(tg.Update) ? tg.Update : undefined;
  if (jobUpdate && own) return fill({ ...jobUpdate, ...setFields(own) }, DEFAULT_UPDATE);
  if (jobUpdate && !isEmptyUpdate(jobUpdate)) return { ...jobUpdate };
  return own ? fill(own, DEFAULT_UPDATE) : null;
}

/** `api.UpdateStrategy.Empty`: nothing set to a non-zero value. */
function isEmptyUpdate(u: Json): boolean {
  return Object.values(u).every((v) => v === null || v === undefined || v === 0 || v === '' || v === false);
}

/** `api.Task.Canonicalize` then `structs.Task.Canonicalize`. */
function canonicalTask(input: Json, tg: Json): Json {
  const task = withDefaults(input, TASK_DEFAULTS);
  emptyToNull(task, ['Meta', 'Config', 'Env', 'Constraints', 'Affinities', 'VolumeMounts']);
  task.Resources = canonicalResources(isObject(task.Resources) ? task.Resources : {});
  // The real `structs.Task.Canonicalize` also replaces a zero timeout.
  if (task.KillTimeout === 0) task.KillTimeout = TASK_DEFAULTS.KillTimeout;
  task.LogConfig = fill(isObject(task.LogConfig) ? task.LogConfig : {}, DEFAULT_LOG_CONFIG);
  // `api.TaskLifecycle.Empty`: a lifecycle block without a hook is none.
  if (isObject(task.Lifecycle) && (task.Lifecycle.Hook ?? '') === '') task.Lifecycle = null;
  // The group's restart policy, the task's own fields over it.
  task.RestartPolicy = { ...(tg.RestartPolicy as Json), ...setFields(task.RestartPolicy) };
  return task;
}

/**
 * `api.Resources.Canonicalize` (100 MHz and 300 MB; no CPU default when cores are asked for), with
 * the spec's other resource fields at the real zero values.
 */
function canonicalResources(resources: Json): Json {
  const cores = resources.Cores;
  const cpuDefault = cores === undefined || cores === null ? DEFAULT_CPU_MHZ : 0;
  return fill(resources, {
    CPU: cpuDefault,
    MemoryMB: DEFAULT_MEMORY_MB,
    DiskMB: 0,
    IOPS: 0,
    Devices: null,
    Networks: null,
  });
}

// ---- helpers ----

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const unset = (v: unknown) => v === undefined || v === null;

function list(v: unknown): Json[] {
  return Array.isArray(v) ? (v.filter(isObject) as Json[]) : [];
}

/**
 * The fields of `defaults` first, in their order (the value sent, or the default when unset), then
 * every other field as sent, so fields this sandbox does not model survive a round trip.
 */
function withDefaults(source: Json, defaults: Json): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(defaults)) out[k] = unset(source[k]) ? structuredClone(v) : source[k];
  for (const [k, v] of Object.entries(source)) if (!(k in out)) out[k] = v;
  return out;
}

/** A copy of `block` with each unset field of `defaults` filled. */
function fill(block: Json, defaults: Json): Json {
  const out: Json = { ...block };
  for (const [k, v] of Object.entries(defaults)) if (unset(out[k])) out[k] = structuredClone(v);
  return out;
}

/** The fields of a block that are set (the real `Merge`: only non-nil pointers override). */
function setFields(block: unknown): Json {
  if (!isObject(block)) return {};
  return Object.fromEntries(Object.entries(block).filter(([, v]) => !unset(v)));
}

/** The job's block with the group's set fields over it; either alone; null when neither is given. */
function merged(jobBlock: unknown, own: unknown): Json | null {
  if (!isObject(jobBlock) && !isObject(own)) return null;
  return { ...setFields(jobBlock), ...setFields(own) };
}

/** Empty lists and maps become null, as the real `Canonicalize` makes them (`len(x) == 0` → nil). */
function emptyToNull(o: Json, fields: readonly string[]): void {
  for (const f of fields) {
    const v = o[f];
    if ((Array.isArray(v) && v.length === 0) || (isObject(v) && Object.keys(v).length === 0)) o[f] = null;
  }
}
