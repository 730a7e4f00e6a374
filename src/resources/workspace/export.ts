/**
 * A live workspace written back as a manifest spec (`converge export`): the service attributes a
 * user sets, each only where it differs from what the service fills in on create (the body key
 * table's defaults, remote execution, empty lists and texts), the linked repository by the members
 * a manifest writes, and the project by name. The lock is left out: a lock held at export time (a
 * run's) is not a setting, and `locked:` would make Converge hold it for good.
 */
import type { Workspace } from '../../clients/workspaces/client.js';
import { compact, deepEqual } from '../compare.js';
import { liveAttribute } from './compare.js';
import { CREATE_DEFAULTS, type WorkspaceSpec } from './schema.js';

/** The project every organization has, where the service puts a workspace created without one. */
const DEFAULT_PROJECT_NAME = 'Default Project';

/** Settings a manifest writes, in the service's names; `operations` (deprecated) and create-only ones aside. */
const EXPORTED = [
  'description',
  'agent-pool-id',
  'allow-destroy-plan',
  'assessments-enabled',
  'auto-apply',
  'execution-mode',
  'file-triggers-enabled',
  'global-remote-state',
  'queue-all-runs',
  'speculative-enabled',
  'engine-version',
  'trigger-patterns',
  'trigger-prefixes',
  'tag-names',
  'working-directory',
] as const;

const SERVICE_FILLED: Readonly<Record<string, unknown>> = { ...CREATE_DEFAULTS, 'execution-mode': 'remote' };

function vcsRepo(live: unknown): Record<string, unknown> | undefined {
  if (typeof live !== 'object' || live === null) return undefined;
  const r = live as Record<string, unknown>;
  return compact({
    identifier: r.identifier,
    'oauth-token-id': r['oauth-token-id'],
    branch: r.branch || undefined,
    'ingress-submodules': r['ingress-submodules'] === true ? true : undefined,
    'tags-regex': r['tags-regex'] || undefined,
  });
}

export function exportWorkspace(w: Workspace): WorkspaceSpec {
  const spec: Record<string, unknown> = {};
  for (const field of EXPORTED) {
    const value = liveAttribute(w, field);
    if (value === undefined || value === null || value === '') continue;
    if (Array.isArray(value) && value.length === 0) continue;
    if (field in SERVICE_FILLED && deepEqual(value, SERVICE_FILLED[field])) continue;
    spec[field] = value;
  }
  const repo = vcsRepo(w.attributes['vcs-repo']);
  if (repo) spec['vcs-repo'] = repo;
  // The organization's default project is where a workspace without one goes: not written.
  if (w.projectName === DEFAULT_PROJECT_NAME) return spec as WorkspaceSpec;
  if (w.projectName) spec.project = { name: w.projectName };
  else if (w.projectId) spec.project = { id: w.projectId };
  return spec as WorkspaceSpec;
}
