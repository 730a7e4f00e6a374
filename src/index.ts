/**
 * Converge as a library: the same steps the CLI takes, for programs that embed them (a custom
 * reconciler, a test harness). The CLI is the reference user of everything exported here.
 */
import type { RunningSandbox, SandboxOptions } from './sandbox/index.js';

export { applyPlan, type ApplyOptions, type ApplyResult, type ChangeResult } from './applier/applier.js';
export { Catalog, type CommandContext, type ServiceModule } from './cli/catalog.js';
export { ServiceConnections } from './cli/connections.js';
export { run } from './cli/program.js';
export { defaultCatalog, SERVICE_MODULES } from './cli/services.js';
export { loadDesired, planManifest } from './cli/workflow.js';
export { type ConnectionConfig, defineService, type ServiceDefinition } from './clients/service.js';
export { type Manifest, ManifestError, loadManifest } from './manifest/index.js';
export { buildPlan, type PlanOptions } from './planner/planner.js';
export type { Action, Change, Plan, PlanSummary } from './planner/types.js';
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
