/**
 * The HTTP side of plan and parse, kept apart from handlers.ts so that the endpoints grow in their
 * own file. Plan decodes, authorizes and validates in the same order as register (see
 * `SchedulerHandlers.register`): body (400), token and capabilities (403), validation (500).
 */
import type { SandboxRequest, SandboxResponse } from '../../core/http.js';
import type { TokenStore } from '../../core/tokens.js';
import { admitJob } from './admission.js';
import { checkJobShape, type Json, SchedulerError, validateJob } from './model.js';
import { parseJobRequest } from './parse.js';
import { planJob } from './plan.js';
import { boolField, Caller, schedulerJson, writeIndexHeaders } from './request.js';
import type { SchedulerStore } from './store.js';

export interface PlanDeps {
  store: SchedulerStore;
  tokens: TokenStore;
  region: string;
  decode: (req: SandboxRequest) => Promise<Json>;
}

/** `PUT|POST /v1/job/:id/plan` with `{Job, Diff, PolicyOverride}`. */
export async function planHandler(
  req: SandboxRequest,
  pathId: string,
  deps: PlanDeps,
): Promise<SandboxResponse> {
  const args = await deps.decode(req);
  if (args.Job === undefined || args.Job === null) throw new SchedulerError(400, 'Job must be specified');
  checkJobShape(args.Job);
  const job = args.Job;
  if (job.ID === undefined || job.ID === null) throw new SchedulerError(400, 'Job must have a valid ID');
  if (job.ID !== pathId) throw new SchedulerError(400, 'Job ID does not match');
  const withDiff = boolField(args, 'Diff');
  const policyOverride = boolField(args, 'PolicyOverride');

  const caller = Caller.of(req, deps.tokens);
  // As register: query, then the request's Namespace, then the job's, then the token's default.
  const ns =
    req.query.get('namespace') ||
    (typeof args.Namespace === 'string' ? args.Namespace : '') ||
    (job.Namespace as string | undefined) ||
    caller.namespace(req);
  caller.require(ns, 'submit-job');
  if (policyOverride) caller.require(ns, 'policy-override');
  const canonical = admitJob(job, ns, deps.region);
  const invalid = validateJob(canonical);
  if (invalid) throw new SchedulerError(500, invalid);
  if (!deps.store.namespaces.has(ns))
    throw new SchedulerError(500, `job "${String(canonical.ID)}" is in nonexistent namespace "${ns}"`);
  const result = planJob(deps.store, canonical, withDiff);
  return schedulerJson(req, result, writeIndexHeaders(result.Index as number));
}

/**
 * `PUT|POST /v1/jobs/parse` with `{JobHCL, Canonicalize, Variables}`. No ACL, as the spec's endpoint
 * table says (the real agent now asks for `parse-job` or `submit-job`).
 */
export async function parseHandler(req: SandboxRequest, deps: PlanDeps): Promise<SandboxResponse> {
  if (req.method !== 'PUT' && req.method !== 'POST') throw new SchedulerError(405, 'Invalid method');
  const args = await deps.decode(req);
  return schedulerJson(req, await parseJobRequest(args, deps.region));
}
