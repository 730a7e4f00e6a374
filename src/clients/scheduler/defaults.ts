/**
 * What the scheduler fills in for what a job leaves out: the real service's `api` package
 * `Canonicalize` defaults (`api/jobs.go`, `api/tasks.go`, `api/resources.go`), durations in
 * nanoseconds as on the wire. One definition for both sides: the sandbox fills them in on register
 * (sandbox/services/scheduler/canonicalize.ts), and `converge export` leaves out what equals them, so
 * an exported job reads as a user would write it.
 */
const SECOND = 1_000_000_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

type Json = Record<string, unknown>;

export const DEFAULT_JOB_TYPE = 'service';
export const DEFAULT_JOB_PRIORITY = 50;
export const DEFAULT_NODE_POOL = 'default';
/** The region a job without one gets (the agent's own; `global` unless it is configured otherwise). */
export const DEFAULT_REGION = 'global';
/** Every datacenter, the default since the real 1.5. */
export const DEFAULT_DATACENTERS: readonly string[] = ['*'];
export const DEFAULT_KILL_TIMEOUT = 5 * SECOND;

/** `api.DefaultUpdateStrategy`. */
export const DEFAULT_UPDATE: Readonly<Json> = {
  Stagger: 30 * SECOND,
  MaxParallel: 1,
  HealthCheck: 'checks',
  MinHealthyTime: 10 * SECOND,
  HealthyDeadline: 5 * MINUTE,
  ProgressDeadline: 10 * MINUTE,
  AutoRevert: false,
  Canary: 0,
  AutoPromote: false,
};

/** `api.DefaultMigrateStrategy`. */
export const DEFAULT_MIGRATE: Readonly<Json> = {
  MaxParallel: 1,
  HealthCheck: 'checks',
  MinHealthyTime: 10 * SECOND,
  HealthyDeadline: 5 * MINUTE,
};

/** `api.DefaultEphemeralDisk`. */
export const DEFAULT_EPHEMERAL_DISK: Readonly<Json> = { Sticky: false, SizeMB: 300, Migrate: false };

/** `api.DefaultLogConfig`, limited to the spec's fields. */
export const DEFAULT_LOG_CONFIG: Readonly<Json> = { MaxFiles: 10, MaxFileSizeMB: 10 };

/** `api.Resources.Canonicalize`: 100 MHz (none when cores are asked for) and 300 MB. */
export const DEFAULT_CPU_MHZ = 100;
export const DEFAULT_MEMORY_MB = 300;

/** `api.defaultServiceJobRestartPolicy` / `defaultBatchJobRestartPolicy`, by job type. */
export function defaultRestartPolicy(type: unknown): Json {
  const service = type === 'service' || type === 'system';
  return {
    Attempts: service ? 2 : 3,
    Interval: service ? 30 * MINUTE : 24 * HOUR,
    Delay: 15 * SECOND,
    Mode: 'fail',
    RenderTemplates: false,
  };
}

/**
 * `api.NewDefaultReschedulePolicy`: service jobs reschedule without limit (exponential from 30s up to
 * 1h), batch jobs once a day after 5s; any other type gets the all-zero policy the real code uses to
 * fill a block the job gave.
 */
export function defaultReschedulePolicy(type: unknown): Json {
  if (type === 'service')
    return {
      Attempts: 0,
      Interval: 0,
      Delay: 30 * SECOND,
      DelayFunction: 'exponential',
      MaxDelay: HOUR,
      Unlimited: true,
    };
  if (type === 'batch')
    return {
      Attempts: 1,
      Interval: 24 * HOUR,
      Delay: 5 * SECOND,
      DelayFunction: 'constant',
      MaxDelay: 0,
      Unlimited: false,
    };
  return { Attempts: 0, Interval: 0, Delay: 0, DelayFunction: '', MaxDelay: 0, Unlimited: false };
}
