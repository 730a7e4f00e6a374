/**
 * Converge as a library: the engine every front end calls (load → plan → apply, connections, saved
 * plans, the inventory), the lower layers' entry points, and their types. The CLI is one user of it;
 * `run` starts the CLI itself in-process, loading it only then.
 */
import type { RunningSandbox, SandboxOptions } from './sandbox/index.js';

export { applyPlan, type ApplyOptions, type ApplyResult, type ChangeResult } from './applier/applier.js';
export { type ConnectionConfig, defineService, type ServiceDefinition } from './clients/service.js';
export { run } from './command-line.js';
export * from './engine/index.js';
export { type Manifest, ManifestError } from './manifest/index.js';
export { buildPlan, type PlanOptions } from './planner/planner.js';
export { hasChanges, type Action, type Change, type Plan, type PlanSummary } from './planner/types.js';
export type { Desired, KindContext, Observed, ResourceKey, ResourceKind } from './resources/contract.js';
export type { RunningSandbox, SandboxOptions };

/**
 * Starts the sandbox (see `src/sandbox/README.md`). It is loaded on first use, never with this
 * module: it is half of Converge and brings a WebAssembly HCL parser, OpenPGP, an LDAP client and a
 * cron parser that a program that only plans and applies should not pay for at start.
 */
export async function startSandbox(opts?: SandboxOptions): Promise<RunningSandbox> {
  const sandbox = await import('./sandbox/index.js');
  return sandbox.startSandbox(opts);
}
