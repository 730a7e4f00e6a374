/**
 * The scheduler's HTTP endpoints. Paths under `/v1/job/` are split as the real agent does
 * (`jobSpecificRequest`: by suffix, since job IDs may contain `/`). The order of checks is the real
 * one: request decoding (400) before the token and its capabilities (403) before validation and state
 * checks (500, as the real agent answers every uncoded error).
 */
import type { SandboxRequest, SandboxResponse } from '../../core/http.js';
import type { Handler, Router } from '../../core/router.js';
import type { TokenStore } from '../../core/tokens.js';
import { answeringErrors } from '../shared/answer-errors.js';
import { JobOps } from './job-ops.js';
import { versionDiffs } from './diff.js';
import { type PlanDeps, parseHandler, planHandler } from './handlers-plan.js';
import { admitJob } from './admission.js';
import { type AllocRecord, checkJobShape, type Json, SchedulerError, validateJob } from './model.js';
import {
  ALL_NAMESPACES,
  authorizedNamespace,
  blockOn,
  boolField,
  Caller,
  decodeObject,
  foundOr404,
  notEmulated,
  parseGoBool,
  queryBool,
  queryMetaHeaders,
  readForJob,
  readOptionsOf,
  schedulerJson,
  schedulerText,
  writeIndexHeaders,
} from './request.js';
import type { SchedulerStore } from './store.js';

export interface SchedulerDeps {
  store: SchedulerStore;
  tokens: TokenStore;
}

/** The region the sandbox's one agent is in: the real default. */
export const REGION = 'global';

/** Suffixes of `/v1/job/<id>/...` the real agent serves; those not listed in `IMPLEMENTED` answer 501. */
const SUFFIXES = [
  'evaluate',
  'allocations',
  'evaluations',
  'periodic/force',
  'plan',
  'summary',
  'dispatch',
  'versions',
  'revert',
  'deployments',
  'deployment',
  'stable',
  'scale',
  'submission',
  'services',
  'actions',
  'action',
] as const;

export function registerSchedulerRoutes(router: Router, deps: SchedulerDeps): void {
  const h = new SchedulerHandlers(deps);
  const wrap = answeringErrors(SchedulerError, (err) => schedulerText(err.status, err.message));
  const every = (fn: Handler) =>
    Object.fromEntries(['GET', 'PUT', 'POST', 'DELETE'].map((m) => [m, wrap(fn)] as const));
  router.add('/v1/jobs', {
    GET: wrap((r) => h.list(r)),
    PUT: wrap((r) => h.register(r, '')),
    POST: wrap((r) => h.register(r, '')),
  });
  router.add(
    '/v1/jobs/parse',
    every((r) => parseHandler(r, h.planDeps)),
  );
  router.add(
    '/v1/jobs/*rest',
    every((r) => notEmulated(`${r.method} ${r.path}`)),
  );
  router.add(
    '/v1/job/*rest',
    every((r) => h.jobSpecific(r)),
  );
}

class SchedulerHandlers {
  /** Deployments, scale, dispatch, periodic force, revert and evaluate. */
  private readonly ops: JobOps;

  constructor(private readonly deps: SchedulerDeps) {
    this.ops = new JobOps(deps.store, deps.tokens);
  }

  private get store(): SchedulerStore {
    return this.deps.store;
  }

  /** What the plan and parse endpoints (handlers-plan.ts) need. */
  get planDeps(): PlanDeps {
    return { store: this.deps.store, tokens: this.deps.tokens, region: REGION, decode: decodeObject };
  }

  jobSpecific(req: SandboxRequest): Promise<SandboxResponse> | SandboxResponse {
    const rest = req.params.rest ?? '';
    const suffix = SUFFIXES.find((s) => rest.endsWith(`/${s}`));
    const id = suffix ? rest.slice(0, -(suffix.length + 1)) : rest;
    const method = (allowed: string[], fn: () => Promise<SandboxResponse>) => {
      if (!allowed.includes(req.method)) throw new SchedulerError(405, 'Invalid method');
      return fn();
    };
    switch (suffix) {
      case undefined:
        if (req.method === 'GET') return this.read(req, id);
        if (req.method === 'DELETE') return this.stop(req, id);
        return method(['PUT', 'POST'], () => this.register(req, id));
      case 'versions':
        return method(['GET'], () => this.versions(req, id));
      case 'allocations':
        return method(['GET'], () => this.allocations(req, id));
      case 'evaluations':
        return method(['GET'], () => this.evaluations(req, id));
      case 'summary':
        return method(['GET'], () => this.summary(req, id));
      case 'stable':
        return method(['PUT', 'POST'], () => this.stable(req, id));
      case 'deployments':
        return method(['GET'], () => this.ops.deployments(req, id));
      case 'deployment':
        return method(['GET'], () => this.ops.latestDeployment(req, id));
      case 'scale':
        return method(['GET', 'PUT', 'POST'], () => this.ops.scale(req, id));
      case 'dispatch':
        return method(['PUT', 'POST'], () => this.ops.dispatch(req, id));
      case 'periodic/force':
        return method(['PUT', 'POST'], () => this.ops.periodicForce(req, id));
      case 'revert':
        return method(['PUT', 'POST'], () => this.ops.revert(req, id));
      case 'evaluate':
        return method(['PUT', 'POST'], () => this.ops.evaluate(req, id));
      case 'plan':
        return method(['PUT', 'POST'], () => planHandler(req, id, this.planDeps));
      default:
        return notEmulated(`${req.method} /v1/job/:job_id/${suffix}`);
    }
  }

  // ---- reads ----

  async list(req: SandboxRequest): Promise<SandboxResponse> {
    const opts = readOptionsOf(req);
    const caller = Caller.of(req, this.deps.tokens);
    const ns = caller.namespace(req);
    let visible: (n: string) => boolean;
    if (ns === ALL_NAMESPACES) {
      // The real `AllowNsOp("*", op)`: allowed if any namespace allows it; then only those are listed.
      const allowed = [...this.store.namespaces].filter((n) => caller.allows(n, 'list-jobs'));
      if (allowed.length === 0 && !caller.token?.root) throw new SchedulerError(403, 'Permission denied');
      visible = (n) => caller.token?.root === true || allowed.includes(n);
    } else {
      caller.require(ns, 'list-jobs');
      visible = (n) => n === ns;
    }
    const prefix = req.query.get('prefix') ?? '';
    // The real `parseBool(req, "meta")` (Nomad 1.6 and later): each stub then carries the job's Meta.
    const withMeta = queryBool(req, 'meta', 400);
    const result = await blockOn(req, opts, this.store.changes, () => ({
      index: this.store.tableIndex('jobs'),
      value: this.store.listJobs(visible, prefix).map((j) => this.listItem(j, withMeta)),
    }));
    return schedulerJson(req, result.value, queryMetaHeaders(result.index));
  }

  async read(req: SandboxRequest, id: string): Promise<SandboxResponse> {
    const result = await readForJob(req, this.deps.tokens, this.store.changes, (ns) => {
      const job = this.store.job(ns, id);
      return { index: (job?.ModifyIndex as number | undefined) ?? this.store.tableIndex('jobs'), value: job };
    });
    return foundOr404(req, result, 'job not found');
  }

  async versions(req: SandboxRequest, id: string): Promise<SandboxResponse> {
    const opts = readOptionsOf(req);
    const diffs = queryBool(req, 'diffs', 500);
    const ns = authorizedNamespace(req, this.deps.tokens, 'read-job');
    const result = await blockOn(req, opts, this.store.changes, () => {
      const versions = this.store.versions(ns, id);
      return {
        // The newest change of any version: marking an older version stable moves only its index.
        index: versions?.length
          ? Math.max(...versions.map((v) => v.ModifyIndex as number))
          : this.store.tableIndex('jobs'),
        value: versions,
      };
    });
    const meta = queryMetaHeaders(result.index);
    if (!result.value) return schedulerText(404, 'job versions not found', meta);
    return schedulerJson(
      req,
      {
        Diffs: diffs ? versionDiffs(result.value) : null,
        Index: result.index,
        KnownLeader: true,
        LastContact: 0,
        Versions: result.value,
      },
      meta,
    );
  }

  async allocations(req: SandboxRequest, id: string): Promise<SandboxResponse> {
    const all = parseGoBool(req.query.get('all') ?? '') === true;
    const result = await readForJob(req, this.deps.tokens, this.store.changes, (ns) => ({
      index: this.store.tableIndex('allocs'),
      value: this.store.allocsOf(ns, id, all).map(allocStub),
    }));
    return schedulerJson(req, result.value, queryMetaHeaders(result.index));
  }

  async evaluations(req: SandboxRequest, id: string): Promise<SandboxResponse> {
    const result = await readForJob(req, this.deps.tokens, this.store.changes, (ns) => ({
      index: this.store.tableIndex('evals'),
      value: this.store.evalsOf(ns, id),
    }));
    return schedulerJson(req, result.value, queryMetaHeaders(result.index));
  }

  async summary(req: SandboxRequest, id: string): Promise<SandboxResponse> {
    const result = await readForJob(req, this.deps.tokens, this.store.changes, (ns) => {
      const summary = this.store.summary(ns, id);
      return {
        index: (summary?.ModifyIndex as number | undefined) ?? this.store.tableIndex('jobs'),
        value: summary,
      };
    });
    return foundOr404(req, result, 'job not found');
  }

  // ---- writes ----

  /** Register (`/v1/jobs`, `pathId` empty) or update (`/v1/job/:id`). */
  async register(req: SandboxRequest, pathId: string): Promise<SandboxResponse> {
    const args = await decodeObject(req);
    if (args.Job === undefined || args.Job === null) throw new SchedulerError(400, 'Job must be specified');
    checkJobShape(args.Job);
    const job = args.Job;
    if (job.ID === undefined || job.ID === null) throw new SchedulerError(400, "Job ID hasn't been provided");
    if (pathId !== '' && job.ID !== pathId) throw new SchedulerError(400, 'Job ID does not match name');
    const enforceIndex = boolField(args, 'EnforceIndex');
    const policyOverride = boolField(args, 'PolicyOverride');
    const preserveCounts = boolField(args, 'PreserveCounts');
    const jobModifyIndex = args.JobModifyIndex ?? 0;
    if (!Number.isInteger(jobModifyIndex) || (jobModifyIndex as number) < 0)
      throw new SchedulerError(400, 'json: cannot unmarshal JobModifyIndex: expected unsigned integer');
    if (args.Namespace !== undefined && args.Namespace !== null && typeof args.Namespace !== 'string')
      throw new SchedulerError(400, 'json: cannot unmarshal Namespace: expected string');

    const caller = Caller.of(req, this.deps.tokens);
    // The real `namespaceForJob`: query, then the request body's Namespace, then the job's, then
    // `default`.
    const ns =
      req.query.get('namespace') ||
      (args.Namespace as string | undefined) ||
      (job.Namespace as string | undefined) ||
      caller.namespace(req);
    caller.require(ns, 'submit-job');
    if (policyOverride) caller.require(ns, 'policy-override');
    const canonical = admitJob(job, ns, REGION);
    const invalid = validateJob(canonical);
    if (invalid) throw new SchedulerError(500, invalid);
    // UNCONFIRMED: the real state store's text for a namespace that does not exist.
    if (!this.store.namespaces.has(ns))
      throw new SchedulerError(500, `job "${String(canonical.ID)}" is in nonexistent namespace "${ns}"`);
    const result = this.store.register(canonical, {
      enforceIndex,
      jobModifyIndex: jobModifyIndex as number,
      preserveCounts,
    });
    return schedulerJson(
      req,
      { ...result, Warnings: '', LastContact: 0, KnownLeader: false },
      writeIndexHeaders(result.Index),
    );
  }

  async stop(req: SandboxRequest, id: string): Promise<SandboxResponse> {
    const purge = queryBool(req, 'purge', 500);
    const ns = authorizedNamespace(req, this.deps.tokens, 'submit-job');
    const result = this.store.deregister(ns, id, purge);
    return schedulerJson(
      req,
      { ...result, LastContact: 0, KnownLeader: false },
      writeIndexHeaders(result.Index),
    );
  }

  /** `{JobID, JobVersion, Stable}`: sets a version's Stable flag (the spec's "stability" row). */
  async stable(req: SandboxRequest, id: string): Promise<SandboxResponse> {
    const args = await decodeObject(req);
    if (args.JobID !== undefined && typeof args.JobID !== 'string')
      throw new SchedulerError(400, 'json: cannot unmarshal JobID: expected string');
    const version = args.JobVersion ?? 0;
    if (!Number.isInteger(version) || (version as number) < 0)
      throw new SchedulerError(400, 'json: cannot unmarshal JobVersion: expected unsigned integer');
    if (args.Stable !== undefined && args.Stable !== null && typeof args.Stable !== 'boolean')
      throw new SchedulerError(400, 'json: cannot unmarshal Stable: expected boolean');
    if (!args.JobID) throw new SchedulerError(400, 'JobID must be specified');
    if (args.JobID !== id) throw new SchedulerError(400, 'Job ID does not match');
    const ns = authorizedNamespace(req, this.deps.tokens, 'submit-job');
    const index = this.store.setStability(ns, id, version as number, args.Stable === true);
    if (index === undefined)
      throw new SchedulerError(
        500,
        `job "${id}" in namespace "${ns}" at version ${String(version)} not found`,
      );
    // The real answer carries the write's Index; the spec names JobModifyIndex (UNCONFIRMED which the
    // real server fills), so both are sent: the job's JobModifyIndex is unchanged by this write.
    const job = this.store.job(ns, id);
    return schedulerJson(
      req,
      { Index: index, JobModifyIndex: job?.JobModifyIndex ?? 0 },
      writeIndexHeaders(index),
    );
  }

  // ---- helpers ----

  /**
   * A job list item: the job's header fields plus its summary; with `meta=true` also the job's Meta,
   * left out when empty as the real stub's `json:",omitempty"` does.
   */
  private listItem(job: Json, withMeta: boolean): Json {
    const meta = job.Meta as Record<string, unknown> | null | undefined;
    const hasMeta = withMeta && meta !== null && meta !== undefined && Object.keys(meta).length > 0;
    // A literal, not picked keys spread together: the list builds one per job per read, and the
    // spreads made a 100-job list cost about 2 ms of the sandbox's thread.
    const item: Json = {
      ID: job.ID,
      ParentID: job.ParentID,
      Name: job.Name,
      Namespace: job.Namespace,
      Datacenters: job.Datacenters,
      Type: job.Type,
      Priority: job.Priority,
      Stop: job.Stop,
      Status: job.Status,
      StatusDescription: job.StatusDescription,
      SubmitTime: job.SubmitTime,
      CreateIndex: job.CreateIndex,
      ModifyIndex: job.ModifyIndex,
      JobModifyIndex: job.JobModifyIndex,
      Periodic: job.Periodic !== null && job.Periodic !== undefined,
      // The real `IsParameterized()`: a dispatched child keeps the block but is not parameterized.
      ParameterizedJob:
        job.ParameterizedJob !== null && job.ParameterizedJob !== undefined && job.Dispatched !== true,
      JobSummary: this.store.summary(job.Namespace as string, job.ID as string),
    };
    if (hasMeta) item.Meta = meta;
    return item;
  }
}

/** An allocation as the job's allocation list shows it, without the sandbox's bookkeeping fields. */
function allocStub(alloc: AllocRecord): Json {
  const { JobCreateIndex: _c, GroupSpec: _g, ...rest } = alloc;
  return rest;
}
