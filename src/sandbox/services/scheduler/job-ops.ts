/**
 * The job operations beyond register/read/stop: deployments, scale, dispatch, periodic force, revert
 * and evaluate (`/v1/job/:id/<suffix>`). Each follows the real agent's order (`command/agent/
 * job_endpoint.go`, then the RPC in `nomad/job_endpoint.go`): body decoding and HTTP-layer checks
 * (400), then the token's capability (403), then state checks (the real codes and texts, uncoded 500).
 */
import type { SandboxRequest, SandboxResponse } from '../../core/http.js';
import type { TokenStore } from '../../core/tokens.js';
import { deploymentView, isActive } from './deployments.js';
import { checkDispatch, type DispatchRequest, dispatchedChild, periodicChild } from './dispatch.js';
import { type Json, SchedulerError } from './model.js';
import {
  authorizedNamespace,
  blockOn,
  Caller,
  decodeObject,
  foundOr404,
  parseObject,
  parseGoBool,
  queryMetaHeaders,
  readForJob,
  readOptionsOf,
  schedulerJson,
  writeIndexHeaders,
} from './request.js';
import { checkScaleTarget, parseScaleRequest, scaleStatus, validateScaleRequest } from './scale.js';
import type { SchedulerStore } from './store.js';

/** Fields the server sets on a stored version; a revert re-registers the spec without them. */
const SERVER_SET = ['Status', 'StatusDescription', 'Stable', 'Version', 'SubmitTime'];

export class JobOps {
  constructor(
    private readonly store: SchedulerStore,
    private readonly tokens: TokenStore,
  ) {}

  // ---- deployments ----

  async deployments(req: SandboxRequest, id: string): Promise<SandboxResponse> {
    const all = parseGoBool(req.query.get('all') ?? '') === true;
    const result = await readForJob(req, this.tokens, this.store.changes, (ns) => ({
      index: this.store.tableIndex('deployments'),
      value: this.store.deploymentsOf(ns, id, all).map(deploymentView),
    }));
    return schedulerJson(req, result.value, queryMetaHeaders(result.index));
  }

  /** The most recent deployment of the job, or `null` (the real answer when there is none). */
  async latestDeployment(req: SandboxRequest, id: string): Promise<SandboxResponse> {
    const result = await readForJob(req, this.tokens, this.store.changes, (ns) => {
      const d = this.store.latestDeployment(ns, id);
      return { index: this.store.tableIndex('deployments'), value: d ? deploymentView(d) : null };
    });
    return schedulerJson(req, result.value, queryMetaHeaders(result.index));
  }

  // ---- scale ----

  async scale(req: SandboxRequest, id: string): Promise<SandboxResponse> {
    if (req.method === 'GET') return this.scaleStatus(req, id);
    const args = await decodeObject(req);
    const caller = Caller.of(req, this.tokens);
    const ns = caller.namespace(req);
    const scale = parseScaleRequest(args, id);
    caller.require(ns, 'scale-job', 'submit-job');
    // The spec's table: PolicyOverride needs its own capability, as on register.
    if (scale.policyOverride) caller.require(ns, 'policy-override');
    validateScaleRequest(scale, ns);
    const job = this.store.job(ns, id);
    if (!job) throw new SchedulerError(404, `job "${id}" not found`);
    const tg = checkScaleTarget(job, scale);
    const event: Json = {
      Time: Date.now() * 1_000_000,
      Count: scale.count ?? null,
      PreviousCount: tg.Count,
      Message: scale.message,
      Error: scale.error,
      Meta: scale.meta,
      EvalID: null,
    };
    let reply: Json = { JobModifyIndex: job.ModifyIndex };
    // The spec: "evaluation created only when the change needs one": a count equal to the group's is
    // recorded as an event alone (no new version, no evaluation, no EvalID in the answer).
    // Any request that sets a count, its current one too, is refused during a deployment of this job
    // instance (the spec's "scale | job has an active deployment | rejected with 400", and the real
    // `Job.Scale`, which checks whenever Count is given); one without a count is an event alone.
    if (scale.count !== undefined) {
      const latest = this.store.latestDeployment(ns, id);
      if (latest && isActive(latest) && latest.JobCreateIndex === job.CreateIndex)
        throw new SchedulerError(400, 'job scaling blocked due to active deployment');
    }
    if (scale.count !== undefined && scale.count !== tg.Count) {
      if (scale.jobModifyIndex > 0 && scale.jobModifyIndex !== job.JobModifyIndex)
        throw new SchedulerError(
          500,
          `Enforcing job modify index ${scale.jobModifyIndex}: job exists with conflicting job modify index: ${String(job.JobModifyIndex)}`,
        );
      const scaled = withoutServerFields(job);
      (scaled.TaskGroups as Json[]).find((g) => g.Name === scale.group)!.Count = scale.count;
      const result = this.store.register(scaled, {
        enforceIndex: true,
        jobModifyIndex: job.JobModifyIndex as number,
        preserveCounts: false,
        triggeredBy: 'job-scaling',
        forceVersion: true,
      });
      reply = { JobModifyIndex: result.JobModifyIndex };
      if (result.EvalID) {
        reply.EvalID = result.EvalID;
        reply.EvalCreateIndex = result.EvalCreateIndex;
        event.EvalID = result.EvalID;
      }
    }
    const index = this.store.recordScalingEvent(ns, id, scale.group, event);
    return schedulerJson(
      req,
      { ...reply, Warnings: '', Index: index, LastContact: 0, KnownLeader: false },
      writeIndexHeaders(index),
    );
  }

  private async scaleStatus(req: SandboxRequest, id: string): Promise<SandboxResponse> {
    const opts = readOptionsOf(req);
    const caller = Caller.of(req, this.tokens);
    const ns = caller.namespace(req);
    caller.require(ns, 'read-job-scaling', 'read-job');
    const result = await blockOn(req, opts, this.store.changes, () => {
      const job = this.store.job(ns, id);
      if (!job) return { index: this.store.currentIndex, value: undefined };
      return scaleStatus(job, this.store.allocsOf(ns, id, false), this.store.scalingEvents(ns, id));
    });
    return foundOr404(req, result, 'job not found');
  }

  // ---- dispatch and periodic force ----

  async dispatch(req: SandboxRequest, id: string): Promise<SandboxResponse> {
    const args = await decodeObject(req);
    if (args.JobID !== undefined && args.JobID !== null && typeof args.JobID !== 'string')
      throw new SchedulerError(400, 'json: cannot unmarshal JobID: expected string');
    if (args.JobID && args.JobID !== id) throw new SchedulerError(400, 'Job ID does not match');
    const request = dispatchRequestOf(args);
    const ns = authorizedNamespace(req, this.tokens, 'dispatch-job');
    const parent = this.store.job(ns, id);
    checkDispatch(parent, id, request);
    const child = dispatchedChild(parent!, request);
    const result = this.store.register(child, {
      enforceIndex: false,
      jobModifyIndex: 0,
      preserveCounts: false,
    });
    return schedulerJson(
      req,
      {
        Index: result.Index,
        JobCreateIndex: result.JobModifyIndex,
        EvalID: result.EvalID,
        EvalCreateIndex: result.EvalCreateIndex,
        DispatchedJobID: child.ID,
      },
      writeIndexHeaders(result.Index),
    );
  }

  /** Launches a periodic job now (the real `Periodic.Force`), whatever its overlap rule says. */
  async periodicForce(req: SandboxRequest, id: string): Promise<SandboxResponse> {
    const caller = Caller.of(req, this.tokens);
    const ns = caller.namespace(req);
    caller.require(ns, 'dispatch-job', 'submit-job');
    const parent = this.store.job(ns, id);
    if (!parent) throw new SchedulerError(500, 'job not found');
    if (parent.Periodic === null || parent.Periodic === undefined)
      throw new SchedulerError(500, "can't force launch non-periodic job");
    // The real dispatcher tracks only active periodic jobs (`IsPeriodicActive`: enabled, not stopped,
    // not parameterized; `Enabled` defaults to true as the real client library fills it).
    const periodic = parent.Periodic as Json;
    const active = periodic.Enabled !== false && parent.Stop !== true && !parent.ParameterizedJob;
    if (!active)
      throw new SchedulerError(
        500,
        `force launch for job "${id}" failed: can't force run non-tracked job "${id}" (${ns})`,
      );
    const child = periodicChild(parent, (childId) => this.store.job(ns, childId) !== undefined);
    const result = this.store.register(child, {
      enforceIndex: false,
      jobModifyIndex: 0,
      preserveCounts: false,
      triggeredBy: 'periodic-job',
    });
    return schedulerJson(
      req,
      { EvalID: result.EvalID, EvalCreateIndex: result.EvalCreateIndex, Index: result.EvalCreateIndex },
      writeIndexHeaders(result.Index),
    );
  }

  // ---- revert and evaluate ----

  /** Re-registers an earlier version's spec as a new version (the real `Job.Revert`). */
  async revert(req: SandboxRequest, id: string): Promise<SandboxResponse> {
    const args = await decodeObject(req);
    if (args.JobID !== undefined && args.JobID !== null && typeof args.JobID !== 'string')
      throw new SchedulerError(400, 'json: cannot unmarshal JobID: expected string');
    const version = args.JobVersion ?? 0;
    if (!Number.isInteger(version) || (version as number) < 0)
      throw new SchedulerError(400, 'json: cannot unmarshal JobVersion: expected unsigned integer');
    const prior = args.EnforcePriorVersion;
    if (prior !== undefined && prior !== null && (!Number.isInteger(prior) || (prior as number) < 0))
      throw new SchedulerError(400, 'json: cannot unmarshal EnforcePriorVersion: expected unsigned integer');
    if (!args.JobID) throw new SchedulerError(400, 'JobID must be specified');
    if (args.JobID !== id) throw new SchedulerError(400, 'Job ID does not match');
    const ns = authorizedNamespace(req, this.tokens, 'submit-job');
    const current = this.store.job(ns, id);
    if (!current) throw new SchedulerError(500, `job "${id}" not found`);
    if (version === current.Version) throw new SchedulerError(500, "can't revert to current version");
    const target = this.store.versions(ns, id)!.find((v) => v.Version === version);
    if (!target)
      throw new SchedulerError(
        500,
        `job "${id}" in namespace "${ns}" at version ${String(version)} not found`,
      );
    const enforce = prior !== undefined && prior !== null;
    if (enforce && current.Version !== prior)
      throw new SchedulerError(
        500,
        `Current job has version ${String(current.Version)}; enforcing version ${String(prior)}`,
      );
    const result = this.store.register(withoutServerFields(target), {
      enforceIndex: enforce,
      jobModifyIndex: current.JobModifyIndex as number,
      preserveCounts: false,
    });
    return schedulerJson(
      req,
      { ...result, Warnings: '', LastContact: 0, KnownLeader: false },
      writeIndexHeaders(result.Index),
    );
  }

  /**
   * A new evaluation of the job as it is (the real `Job.Evaluate`): its trigger is `job-register` and
   * the reply's JobModifyIndex the job's ModifyIndex, as the real server fills them. `ForceReschedule`
   * is accepted; the sandbox has no failed allocations to reschedule. The capability is the spec's
   * `read-job` (the real server asks for `submit-job`).
   */
  async evaluate(req: SandboxRequest, id: string): Promise<SandboxResponse> {
    const raw = await req.text();
    // The real agent still accepts the old form without a body: the path's job is evaluated.
    if (raw.trim() !== '') {
      const args = parseObject(raw);
      if (args.JobID !== undefined && args.JobID !== null && typeof args.JobID !== 'string')
        throw new SchedulerError(400, 'json: cannot unmarshal JobID: expected string');
      const options = args.EvalOptions;
      if (options !== undefined && options !== null) {
        if (typeof options !== 'object' || Array.isArray(options))
          throw new SchedulerError(400, 'json: cannot unmarshal EvalOptions: expected object');
        const force = (options as Json).ForceReschedule;
        if (force !== undefined && force !== null && typeof force !== 'boolean')
          throw new SchedulerError(
            400,
            'json: cannot unmarshal EvalOptions.ForceReschedule: expected boolean',
          );
      }
      if (!args.JobID) throw new SchedulerError(400, 'Job ID must be specified');
      if (args.JobID !== id) throw new SchedulerError(400, 'JobID not same as job name');
    }
    const ns = authorizedNamespace(req, this.tokens, 'read-job');
    const job = this.store.job(ns, id);
    if (!job) throw new SchedulerError(500, 'job not found');
    if (job.Periodic !== null && job.Periodic !== undefined)
      throw new SchedulerError(500, "can't evaluate periodic job");
    if (job.ParameterizedJob !== null && job.ParameterizedJob !== undefined && job.Dispatched !== true)
      throw new SchedulerError(500, "can't evaluate parameterized job");
    const result = this.store.reevaluate(ns, id)!;
    return schedulerJson(
      req,
      { ...result, Warnings: '', LastContact: 0, KnownLeader: false },
      writeIndexHeaders(result.Index),
    );
  }

  // ---- helpers ----
}

function withoutServerFields(job: Json): Json {
  const copy = structuredClone(job);
  for (const f of SERVER_SET) delete copy[f];
  return copy;
}

/** The body and types of a dispatch request; `Payload` is base64, as Go decodes a `[]byte`. */
function dispatchRequestOf(args: Json): DispatchRequest {
  const payload = args.Payload ?? '';
  if (typeof payload !== 'string')
    throw new SchedulerError(400, 'json: cannot unmarshal Payload: expected string');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(payload) || payload.length % 4 !== 0)
    throw new SchedulerError(400, 'illegal base64 data in Payload');
  const meta = args.Meta ?? {};
  if (
    typeof meta !== 'object' ||
    Array.isArray(meta) ||
    Object.values(meta).some((v) => typeof v !== 'string')
  )
    throw new SchedulerError(400, 'json: cannot unmarshal Meta: expected an object of strings');
  const priority = args.Priority;
  if (priority !== undefined && priority !== null && !Number.isInteger(priority))
    throw new SchedulerError(400, 'json: cannot unmarshal Priority: expected integer');
  return {
    payload: Buffer.from(payload, 'base64'),
    payloadBase64: payload,
    meta: meta as Record<string, string>,
    // Zero or absent: the parent's priority, as the real server fills it.
    priority: priority ? (priority as number) : undefined,
  };
}
