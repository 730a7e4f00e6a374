/**
 * The tokens a submitter sends with a job so the service can check the job's use of the secrets and
 * registry integrations: the spec's `SecretsToken` and `RegistryToken`, and the real product's names
 * for them, `VaultToken` and `ConsulToken`. The real server uses them during `Job.Register` and then
 * clears them before it stores the job (`nomad/job_endpoint.go`: `args.Job.VaultToken = ""`,
 * `args.Job.ConsulToken = ""`), so no read, list, version or plan ever returns them. The sandbox has
 * no integration checks to use them for, so it clears them as soon as a job is admitted (see
 * admission.ts): they are never stored, and a plan never sees them either.
 */
import type { Json } from './model.js';

/** The spec's names: fields of every stored job, always empty. */
const SPEC_TOKEN_FIELDS = ['SecretsToken', 'RegistryToken'] as const;
/** The real product's names, which the spec renames: dropped, so they never show under either name. */
const NATIVE_TOKEN_FIELDS = ['VaultToken', 'ConsulToken'] as const;

/** A copy of the job with its submit tokens cleared. */
export function withoutSubmitTokens(job: Json): Json {
  const out: Json = { ...job };
  for (const f of SPEC_TOKEN_FIELDS) out[f] = '';
  for (const f of NATIVE_TOKEN_FIELDS) delete out[f];
  return out;
}
