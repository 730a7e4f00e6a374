/**
 * Client of the scheduler's job endpoints (spec part B), over the shared HTTP layer.
 *
 * Choices where the spec says "not shown", following the real scheduler (REFERENCE-BEHAVIOUR §4):
 * - The token goes in `Authorization: Bearer` (the real agent reads it after its own header).
 * - Namespaces travel as query `namespace` on every endpoint; without it the service takes
 *   `default`.
 * - Errors are plain text. The service answers every uncoded error with 500 (a refused check-and-set,
 *   a validation failure, a dispatch rule), so 500 is not retried: sending those again cannot help.
 *   502/503/504 and 429 are retried as usual.
 * - Writes that create something each time (register, dispatch, revert, scale, force launch, evaluate)
 *   are not retried after the request may have reached the service: a second dispatch is a second
 *   job, and a second check-and-set register fails on the index the first one moved. Plan and parse
 *   change nothing, so they are retried like reads.
 * - Reads of something that may not exist (a job, its summary, versions, scale status) return
 *   undefined on 404 instead of throwing.
 */
import type { SchemaSource } from '../http/shape.js';
import { BlockingReads } from '../http/blocking-reads.js';
import { bearerAuth, HttpClient, type HttpRequest } from '../http/client.js';
import { type ClientConnection, connectionHttpOptions, type ServiceHttp } from '../http/connection.js';
import { DEFAULT_RETRY } from '../http/retry-policy.js';
import { HttpServiceClient } from '../http/service-client.js';
import {
  AllocationListShape,
  DeploymentListShape,
  DispatchShape,
  EvaluationListShape,
  JobListShape,
  JobShape,
  JobSummaryShape,
  JobVersionsShape,
  JobWriteShape,
  LatestDeploymentShape,
  ParsedJobShape,
  PeriodicForceShape,
  PlanShape,
  ScaleShape,
  ScaleStatusShape,
  StabilityShape,
} from './responses.js';
import type {
  AllOption,
  Allocation,
  BlockingOptions,
  Deployment,
  DispatchOptions,
  DispatchResponse,
  Evaluation,
  Indexed,
  Job,
  JobListItem,
  JobScaleStatus,
  JobSummary,
  JobVersions,
  JobWriteResponse,
  JobListOptions,
  NamespaceOption,
  ParseOptions,
  PeriodicForceResponse,
  PlanOptions,
  PlanResponse,
  RegisterOptions,
  RevertOptions,
  ScaleOptions,
  ScaleResponse,
  StabilityResponse,
  StopOptions,
} from './types.js';
import { MAX_DISPATCH_PAYLOAD_BYTES } from './types.js';

export type * from './types.js';
export { MAX_DISPATCH_PAYLOAD_BYTES } from './types.js';

/** The read index header under the spec's name; the real agent's `X-Nomad-Index` is read as well. */
export const SCHEDULER_INDEX_HEADERS = ['x-scheduler-index', 'x-nomad-index'] as const;

/** The service's default and maximum for a blocking query without `wait`. */
const DEFAULT_BLOCKING_WAIT_MS = 5 * 60_000;

export type SchedulerConnection = ClientConnection;

/**
 * Error bodies are plain text, which the HTTP layer's default reading takes as they are; 500 is not
 * retried (see the module comment).
 */
const SCHEDULER_HTTP: ServiceHttp = {
  service: 'scheduler',
  authHeaders: bearerAuth,
  retry: { statuses: DEFAULT_RETRY.statuses.filter((s) => s !== 500) },
};

export class SchedulerClient extends HttpServiceClient {
  private readonly reads: BlockingReads<BlockingOptions> = new BlockingReads(this.http, {
    name: 'scheduler',
    indexHeaders: SCHEDULER_INDEX_HEADERS,
    defaultWaitMs: DEFAULT_BLOCKING_WAIT_MS,
    scoped: (scope, query) => this.scoped(scope, query),
  });

  protected override scopedParts(http: HttpClient): Record<string, unknown> {
    return { reads: this.reads.withHttp(http) };
  }

  static fromConnection(connection: SchedulerConnection): SchedulerClient {
    return new SchedulerClient(new HttpClient(connectionHttpOptions(connection, SCHEDULER_HTTP)));
  }

  // ---- jobs ----

  /** `GET /v1/jobs`: list items (headers and summary, not whole jobs). Namespace `'*'` lists all. */
  async listJobs(options: JobListOptions = {}): Promise<JobListItem[]> {
    return (await this.listJobsWithIndex(options)).value;
  }

  async listJobsWithIndex(options: JobListOptions = {}): Promise<Indexed<JobListItem[]>> {
    const res = await this.http.requestJson<JobListItem[] | null>(
      {
        method: 'GET',
        path: '/v1/jobs',
        ...this.reads.request(options, {
          prefix: options.prefix || undefined,
          meta: options.meta ? 'true' : undefined,
        }),
      },
      JobListShape,
    );
    return this.reads.indexed(res.body ?? [], res.headers);
  }

  /** `GET /v1/job/:id`; undefined when there is no such job (a stopped job is still returned). */
  async readJob(id: string, options: BlockingOptions = {}): Promise<Job | undefined> {
    return (await this.readJobWithIndex(id, options)).value;
  }

  async readJobWithIndex(id: string, options: BlockingOptions = {}): Promise<Indexed<Job | undefined>> {
    return this.reads.optional<Job>(jobPath(id), options, JobShape);
  }

  /** `POST /v1/jobs`: register a new job or a new version of one. */
  async registerJob(job: Job, options: RegisterOptions = {}): Promise<JobWriteResponse> {
    return this.register('/v1/jobs', job, options);
  }

  /** `POST /v1/job/:id`: the same as register, addressed by the job's ID. */
  async updateJob(job: Job, options: RegisterOptions = {}): Promise<JobWriteResponse> {
    return this.register(jobPath(job.ID), job, options);
  }

  /**
   * Register and update send the same body; the job's secrets are scrubbed from any error. An update
   * is sent again after a 5xx or a lost answer: the job's ID is its key, so a resend registers no
   * second job (with `EnforceIndex`, one after a send that landed is refused, and the caller can read
   * whether it did). A create (`EnforceIndex` with index 0) is not: the applier reads it back before
   * sending it again (applier/create-once.ts), one register where a resend made two.
   */
  private register(path: string, job: Job, options: RegisterOptions): Promise<JobWriteResponse> {
    const create = options.enforceIndex === true && (options.jobModifyIndex ?? 0) === 0;
    return this.write<JobWriteResponse>(
      'POST',
      path,
      options,
      registerBody(job, options),
      JobWriteShape,
      jobSecrets(job),
      !create,
    );
  }

  /**
   * `POST /v1/job/:id/plan`: what registering `job` would do, changing nothing. The answer's
   * `JobModifyIndex` is the one to register with for a check-and-set.
   */
  async planJob(job: Job, options: PlanOptions = {}): Promise<PlanResponse> {
    return this.expectJson<PlanResponse>(
      {
        method: 'POST',
        path: `${jobPath(job.ID)}/plan`,
        body: { Job: job, Diff: options.diff ?? true, PolicyOverride: options.policyOverride ?? false },
        secrets: jobSecrets(job),
        // A dry run: safe to send again.
        idempotent: true,
        ...this.scoped(options),
      },
      PlanShape,
    );
  }

  /** `POST /v1/jobs/parse`: a text job specification to the JSON job. Needs no token. */
  async parseJob(text: string, options: ParseOptions = {}): Promise<Job> {
    return this.expectJson<Job>(
      {
        method: 'POST',
        path: '/v1/jobs/parse',
        body: {
          JobHCL: text,
          Canonicalize: options.canonicalize ?? false,
          ...(options.variables ? { Variables: options.variables } : {}),
          ...(options.hclv1 ? { HCLv1: true } : {}),
        },
        idempotent: true,
        ...(options.signal ? { signal: options.signal } : {}),
      },
      ParsedJobShape,
    );
  }

  /** `DELETE /v1/job/:id[?purge=true]`: stop, or stop and purge at once. */
  async stopJob(id: string, options: StopOptions = {}): Promise<JobWriteResponse> {
    return this.expectJson<JobWriteResponse>(
      {
        method: 'DELETE',
        path: jobPath(id),
        ...this.scoped(options, { purge: options.purge ? 'true' : undefined }),
      },
      JobWriteShape,
    );
  }

  /** `GET /v1/job/:id/versions[?diffs=true]`, newest first; undefined when there is no such job. */
  async jobVersions(
    id: string,
    options: BlockingOptions & { diffs?: boolean } = {},
  ): Promise<JobVersions | undefined> {
    return (await this.readJobPart(id, 'versions', options)).value;
  }

  /** `GET /v1/job/:id/allocations[?all=true]`. */
  async jobAllocations(id: string, options: AllOption = {}): Promise<Allocation[]> {
    return (await this.readJobPart(id, 'allocations', options)).value ?? [];
  }

  /** `GET /v1/job/:id/evaluations`. */
  async jobEvaluations(id: string, options: BlockingOptions = {}): Promise<Evaluation[]> {
    return (await this.readJobPart(id, 'evaluations', options)).value ?? [];
  }

  /** `GET /v1/job/:id/deployments[?all=true]`. */
  async jobDeployments(id: string, options: AllOption = {}): Promise<Deployment[]> {
    return (await this.readJobPart(id, 'deployments', options)).value ?? [];
  }

  /** `GET /v1/job/:id/deployment`: the most recent deployment, or undefined. */
  async latestDeployment(id: string, options: BlockingOptions = {}): Promise<Deployment | undefined> {
    return (await this.readJobPart(id, 'deployment', options)).value ?? undefined;
  }

  /** `GET /v1/job/:id/summary`; undefined when there is no such job. */
  async jobSummary(id: string, options: BlockingOptions = {}): Promise<JobSummary | undefined> {
    return (await this.readJobPart(id, 'summary', options)).value;
  }

  /**
   * One of a job's blocking reads with the service's index, to pass as `index` to the next read of
   * the same endpoint (each has its own index). Undefined value on 404 (no such job).
   */
  async readJobPart<P extends keyof JobParts>(
    id: string,
    part: P,
    options: BlockingOptions & { diffs?: boolean; all?: boolean } = {},
  ): Promise<Indexed<JobParts[P] | undefined>> {
    const res = await this.http.requestOptional<JobParts[P] | null>(
      {
        method: 'GET',
        path: `${jobPath(id)}/${part}`,
        ...this.reads.request(options, {
          diffs: options.diffs ? 'true' : undefined,
          all: options.all ? 'true' : undefined,
        }),
      },
      PART_SHAPES[part],
    );
    const value = res.status === 404 ? undefined : (res.body ?? (EMPTY_PART[part] as JobParts[P]));
    return this.reads.indexed(value, res.headers);
  }

  /** `POST /v1/job/:id/dispatch`: a new instance of a parameterized job. */
  async dispatchJob(id: string, options: DispatchOptions = {}): Promise<DispatchResponse> {
    const body: Record<string, unknown> = {};
    if (options.payload !== undefined) {
      const bytes =
        typeof options.payload === 'string'
          ? Buffer.from(options.payload, 'utf8')
          : Buffer.from(options.payload);
      // Checked here too so the message names the file's size rather than a server error.
      if (bytes.length > MAX_DISPATCH_PAYLOAD_BYTES)
        throw new RangeError(
          `scheduler: dispatch payload is ${bytes.length} bytes; the service accepts at most ${MAX_DISPATCH_PAYLOAD_BYTES}`,
        );
      body.Payload = bytes.toString('base64');
    }
    if (options.meta) body.Meta = options.meta;
    return this.write<DispatchResponse>('POST', `${jobPath(id)}/dispatch`, options, body, DispatchShape);
  }

  /** `POST /v1/job/:id/revert`: register `version`'s spec again as a new version. */
  async revertJob(id: string, version: number, options: RevertOptions = {}): Promise<JobWriteResponse> {
    const body: Record<string, unknown> = { JobID: id, JobVersion: version };
    if (options.enforcePriorVersion !== undefined) body.EnforcePriorVersion = options.enforcePriorVersion;
    if (options.registryToken) body.RegistryToken = options.registryToken;
    if (options.secretsToken) body.SecretsToken = options.secretsToken;
    return this.write<JobWriteResponse>(
      'POST',
      `${jobPath(id)}/revert`,
      options,
      body,
      JobWriteShape,
      [options.registryToken, options.secretsToken].filter((t): t is string => !!t),
    );
  }

  /** `POST /v1/job/:id/stable`: set or clear one version's `Stable` flag. */
  async setJobStability(
    id: string,
    version: number,
    stable: boolean,
    options: NamespaceOption = {},
  ): Promise<StabilityResponse> {
    return this.expectJson<StabilityResponse>(
      {
        method: 'POST',
        path: `${jobPath(id)}/stable`,
        body: { JobID: id, JobVersion: version, Stable: stable },
        // Setting a flag to a value: sending it twice leaves the same state.
        idempotent: true,
        ...this.scoped(options),
      },
      StabilityShape,
    );
  }

  /** `POST /v1/job/:id/evaluate`: a new evaluation of the job, optionally rescheduling failed allocations. */
  async evaluateJob(
    id: string,
    options: NamespaceOption & { forceReschedule?: boolean } = {},
  ): Promise<JobWriteResponse> {
    const body = { JobID: id, EvalOptions: { ForceReschedule: options.forceReschedule ?? false } };
    return this.write<JobWriteResponse>('POST', `${jobPath(id)}/evaluate`, options, body, JobWriteShape);
  }

  /** `POST /v1/job/:id/periodic/force`: launch a periodic job now, overlap or not. */
  async forcePeriodic(id: string, options: NamespaceOption = {}): Promise<PeriodicForceResponse> {
    const path = `${jobPath(id)}/periodic/force`;
    return this.write<PeriodicForceResponse>('POST', path, options, undefined, PeriodicForceShape);
  }

  /** `GET /v1/job/:id/scale`; undefined when there is no such job. */
  async jobScaleStatus(id: string, options: BlockingOptions = {}): Promise<JobScaleStatus | undefined> {
    return (await this.readJobPart(id, 'scale', options)).value;
  }

  /**
   * `POST /v1/job/:id/scale`: change a group's count and record a scaling event. The service wants
   * a message or an error; a count of undefined records the event alone.
   */
  async scaleJob(id: string, group: string, options: ScaleOptions): Promise<ScaleResponse> {
    const body: Record<string, unknown> = { Target: { Group: group } };
    if (options.count !== undefined) body.Count = options.count;
    if (options.message !== undefined) body.Message = options.message;
    if (options.error !== undefined) body.Error = options.error;
    if (options.meta) body.Meta = options.meta;
    if (options.policyOverride) body.PolicyOverride = true;
    return this.write<ScaleResponse>('POST', `${jobPath(id)}/scale`, options, body, ScaleShape);
  }

  // ---- helpers ----

  private write<T>(
    method: string,
    path: string,
    options: NamespaceOption,
    body: unknown,
    schema: SchemaSource,
    secrets: readonly string[] = [],
    idempotent = false,
  ): Promise<T> {
    return this.expectJson<T>(
      {
        method,
        path,
        ...(body === undefined ? {} : { body }),
        ...(secrets.length > 0 ? { secrets } : {}),
        idempotent,
        ...this.scoped(options),
      },
      schema,
    );
  }

  private expectJson<T>(req: HttpRequest, schema: SchemaSource): Promise<T> {
    return this.http.requestObject<T>(req, 'an object', schema);
  }

  private scoped(options: NamespaceOption, query: HttpRequest['query'] = {}): Partial<HttpRequest> {
    const out: Partial<HttpRequest> = { query: { ...query, namespace: options.namespace || undefined } };
    if (options.signal) out.signal = options.signal;
    return out;
  }
}

/** What each of a job's reads returns, by the last path segment. */
export interface JobParts {
  versions: JobVersions;
  allocations: Allocation[];
  evaluations: Evaluation[];
  deployments: Deployment[];
  deployment: Deployment | null;
  summary: JobSummary;
  scale: JobScaleStatus;
}

/** What each of a job's reads must look like (see `./scheduler/responses.ts`). */
const PART_SHAPES: Record<keyof JobParts, SchemaSource> = {
  versions: JobVersionsShape,
  allocations: AllocationListShape,
  evaluations: EvaluationListShape,
  deployments: DeploymentListShape,
  deployment: LatestDeploymentShape,
  summary: JobSummaryShape,
  scale: ScaleStatusShape,
};

/** A list endpoint answering `null` means an empty list. */
const EMPTY_PART: Partial<Record<keyof JobParts, unknown>> = {
  allocations: [],
  evaluations: [],
  deployments: [],
  deployment: null,
};

/** Job IDs may contain `/` (dispatched children): each segment is encoded, the slashes kept. */
function jobPath(id: string): string {
  if (!id) throw new TypeError('scheduler: job ID must not be empty');
  return `/v1/job/${id.split('/').map(encodeURIComponent).join('/')}`;
}

/**
 * The tokens a job may carry for its integrations (the spec's `SecretsToken` and `RegistryToken`, and
 * the real product's names for them): scrubbed from any error about the request that sent them.
 */
const JOB_TOKEN_FIELDS = ['SecretsToken', 'RegistryToken', 'VaultToken', 'ConsulToken'] as const;

function jobSecrets(job: Job): string[] {
  return JOB_TOKEN_FIELDS.map((f) => job[f]).filter((v): v is string => typeof v === 'string' && v !== '');
}

function registerBody(job: Job, options: RegisterOptions): Record<string, unknown> {
  return {
    Job: job,
    EnforceIndex: options.enforceIndex ?? false,
    JobModifyIndex: options.jobModifyIndex ?? 0,
    PolicyOverride: options.policyOverride ?? false,
    PreserveCounts: options.preserveCounts ?? false,
  };
}
