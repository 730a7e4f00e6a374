/**
 * `POST /v1/jobs/parse`: an HCL job specification to the API's JSON job, as the real agent's
 * `JobsParseRequest` (the file is called `input.hcl` there too, and positions in errors name it).
 * The real agent dropped HCL 1: its request has no `HCLv1` field any more, so the flag is ignored
 * and the text is read as HCL 2, as the real agent does (only the real CLI refuses `-hcl1`).
 * `Variables` is accepted but unused: the sandbox does not evaluate expressions (see jobspec.ts).
 */
import { HclSyntaxError, parseHcl } from './hcl.js';
import { jobFromHcl, JobSpecError } from './jobspec.js';
import { canonicalizeJob } from './canonicalize.js';
import { type Json, SchedulerError } from './model.js';

const FILENAME = 'input.hcl';

export async function parseJobRequest(args: Json, region: string): Promise<Json> {
  if (args.JobHCL !== undefined && args.JobHCL !== null && typeof args.JobHCL !== 'string')
    throw new SchedulerError(400, 'json: cannot unmarshal JobHCL: expected string');
  if (args.Canonicalize !== undefined && args.Canonicalize !== null && typeof args.Canonicalize !== 'boolean')
    throw new SchedulerError(400, 'json: cannot unmarshal Canonicalize: expected boolean');
  const source = (args.JobHCL as string | undefined) ?? '';
  if (source === '') throw new SchedulerError(400, 'Job spec is empty');
  let job: Json;
  try {
    job = jobFromHcl(await parseHcl(FILENAME, source), FILENAME, source);
  } catch (err) {
    if (err instanceof HclSyntaxError || err instanceof JobSpecError)
      throw new SchedulerError(400, `Failed to parse job: ${err.message}`);
    throw err;
  }
  if (args.Canonicalize !== true) return job;
  // The real `api.Job.Canonicalize`: the namespace defaults to `default`, the region to `global`.
  const ns = typeof job.Namespace === 'string' && job.Namespace !== '' ? job.Namespace : 'default';
  return canonicalizeJob(job, ns, region);
}
