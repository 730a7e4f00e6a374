/**
 * The `include` query parameter: a comma list of relationship paths. An empty value (go-tfe sends
 * `include=` on lists) includes nothing; a value the endpoint does not know is a 400 whose message says
 * "include parameter", which go-tfe maps to ErrInvalidIncludeValue.
 */
import type { SandboxRequest } from '../../core/http.js';
import { WorkspacesError } from './model.js';

/** The real workspace include options; those without sandbox resources (runs, readme…) include nothing. */
export const WORKSPACE_INCLUDES = [
  'current_configuration_version',
  'current_configuration_version.ingress_attributes',
  'current_run',
  'current_run.plan',
  'current_run.configuration_version',
  'current_run.configuration_version.ingress_attributes',
  'current_state_version',
  'effective_tag_bindings',
  'locked_by',
  'organization',
  'outputs',
  'project',
  'readme',
] as const;

export const STATE_VERSION_INCLUDES = [
  'created_by',
  'run',
  'run.created_by',
  'run.configuration_version',
  'outputs',
] as const;

export function includesOf(req: SandboxRequest, allowed: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const raw of req.query.getAll('include')) {
    for (const part of raw.split(',')) {
      const value = part.trim();
      if (value === '') continue;
      if (!allowed.includes(value)) {
        throw new WorkspacesError(
          400,
          'Invalid include parameter',
          `Invalid include parameter: '${value}' is not one of ${allowed.join(', ')}`,
        );
      }
      out.add(value);
    }
  }
  return out;
}
