/**
 * Scaling a task group (the real `Job.Scale`, `JobScaleRequest.Validate` and `Job.ScaleStatus` in
 * `nomad/job_endpoint.go` and `nomad/structs`): the request's checks with the real texts and codes,
 * and the scale status, counted from the allocations and the recorded scaling events.
 */
import { type AllocRecord, type Json, SchedulerError, TERMINAL_CLIENT } from './model.js';

export interface ScaleRequest {
  /** `Target.Namespace`, or empty. */
  namespace: string;
  group: string;
  count: number | undefined;
  message: string;
  error: boolean;
  meta: Json | null;
  policyOverride: boolean;
  jobModifyIndex: number;
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Decodes the body as the real agent does before the token is looked at: Go's typed decoding (400)
 * and the job named in `Target` (400 at the HTTP layer); `validateScaleRequest` makes the real
 * `Validate` checks after the capability check.
 *
 * Where the spec and the real product differ, the spec wins and the real form is still accepted:
 * - `Error` is a string in the spec (the error's text) and a boolean in the real `api.ScalingRequest`;
 *   both are taken. A non-empty string records an error event whose message is that text (or
 *   `Message`, when both are given).
 * - The spec requires one of `Message` or `Error`; the real server requires neither. The sandbox
 *   follows the spec (400, checked after the real checks so their texts keep their order).
 */
export function parseScaleRequest(args: Json, jobId: string): ScaleRequest {
  const bad = (field: string, type: string) =>
    new SchedulerError(400, `json: cannot unmarshal ${field}: expected ${type}`);
  const { Count, Target, Message, Error, Meta, PolicyOverride, JobModifyIndex } = args;
  if (Count !== undefined && Count !== null && !Number.isInteger(Count)) throw bad('Count', 'integer');
  if (Target !== undefined && Target !== null && !isObject(Target)) throw bad('Target', 'object');
  const target = (Target ?? {}) as Json;
  for (const [k, v] of Object.entries(target)) if (typeof v !== 'string') throw bad(`Target.${k}`, 'string');
  if (Message !== undefined && Message !== null && typeof Message !== 'string')
    throw bad('Message', 'string');
  if (Error !== undefined && Error !== null && typeof Error !== 'boolean' && typeof Error !== 'string')
    throw bad('Error', 'boolean or string');
  if (Meta !== undefined && Meta !== null && !isObject(Meta)) throw bad('Meta', 'object');
  if (PolicyOverride !== undefined && PolicyOverride !== null && typeof PolicyOverride !== 'boolean')
    throw bad('PolicyOverride', 'boolean');
  const jmi = JobModifyIndex ?? 0;
  if (!Number.isInteger(jmi) || (jmi as number) < 0) throw bad('JobModifyIndex', 'unsigned integer');

  if (target.Job && target.Job !== jobId)
    throw new SchedulerError(400, 'job ID in payload did not match URL');
  return {
    namespace: (target.Namespace as string | undefined) ?? '',
    group: (target.Group as string | undefined) ?? '',
    count: (Count ?? undefined) as number | undefined,
    message: (Message as string | undefined) || (typeof Error === 'string' ? Error : ''),
    error: Error === true || (typeof Error === 'string' && Error !== ''),
    meta: (Meta as Json | undefined) ?? null,
    policyOverride: PolicyOverride === true,
    jobModifyIndex: jmi as number,
  };
}

/** The real `JobScaleRequest.Validate`, after the capability check: 400s in its order and texts. */
export function validateScaleRequest(req: ScaleRequest, namespace: string): void {
  if (req.namespace !== '' && req.namespace !== namespace)
    throw new SchedulerError(400, 'namespace in payload did not match header');
  if (req.group === '') throw new SchedulerError(400, 'missing task group name for scaling action');
  if (req.count !== undefined) {
    if (req.count < 0) throw new SchedulerError(400, "scaling action count can't be negative");
    if (req.error) throw new SchedulerError(400, 'scaling action should not contain count if error is true');
  }
  // The spec's rule (UNCONFIRMED text: the real server has no such check).
  if (req.message === '' && !req.error)
    throw new SchedulerError(400, 'one of Message or Error must be provided');
}

/** Checks against the stored job, after the 404 for a missing job: the real order and texts. */
export function checkScaleTarget(job: Json, req: ScaleRequest): Json {
  if (job.Type === 'system' && (req.count ?? 0) > 1)
    throw new SchedulerError(400, 'jobs of type "system" can only be scaled between 0 and 1');
  const tg = (job.TaskGroups as Json[]).find((g) => g.Name === req.group);
  if (!tg)
    throw new SchedulerError(400, `task group "${req.group}" specified for scaling does not exist in job`);
  const policy = tg.Scaling as Json | null | undefined;
  if (req.count !== undefined && isObject(policy)) {
    const min = policy.Min as number | undefined;
    const max = policy.Max as number | undefined;
    if (min !== undefined && min !== null && req.count < min)
      throw new SchedulerError(
        400,
        `group count was less than scaling policy minimum: ${req.count} < ${min}`,
      );
    if (max !== undefined && max !== null && max < req.count)
      throw new SchedulerError(
        400,
        `group count was greater than scaling policy maximum: ${req.count} > ${max}`,
      );
  }
  return tg;
}

/**
 * The real `JobScaleStatus`: per group the desired count, the non-terminal allocations placed,
 * running, and healthy or unhealthy by their deployment health, plus the group's scaling events.
 * Its index is the newest of the job, its allocations and the events.
 */
export function scaleStatus(
  job: Json,
  allocs: readonly AllocRecord[],
  events: Record<string, Json[]>,
): { index: number; value: Json } {
  const groups: Record<string, Json> = {};
  for (const tg of job.TaskGroups as Json[]) {
    const name = tg.Name as string;
    groups[name] = {
      Desired: tg.Count,
      Placed: 0,
      Running: 0,
      Healthy: 0,
      Unhealthy: 0,
      Events: events[name] ?? null,
    };
  }
  let index = job.ModifyIndex as number;
  for (const evs of Object.values(events))
    for (const e of evs) index = Math.max(index, (e.CreateIndex as number | undefined) ?? 0);
  for (const a of allocs) {
    const health = a.DeploymentStatus as Json | null | undefined;
    if (health?.Canary === true || a.DesiredStatus !== 'run' || TERMINAL_CLIENT.has(a.ClientStatus)) continue;
    const g = groups[a.TaskGroup];
    if (!g) continue;
    g.Placed = (g.Placed as number) + 1;
    if (a.ClientStatus === 'running') g.Running = (g.Running as number) + 1;
    if (health?.Healthy === true) g.Healthy = (g.Healthy as number) + 1;
    else if (health?.Healthy === false) g.Unhealthy = (g.Unhealthy as number) + 1;
    index = Math.max(index, a.ModifyIndex);
  }
  return {
    index,
    value: {
      JobID: job.ID,
      Namespace: job.Namespace,
      JobCreateIndex: job.CreateIndex,
      JobModifyIndex: job.ModifyIndex,
      JobStopped: job.Stop === true,
      TaskGroups: groups,
    },
  };
}
