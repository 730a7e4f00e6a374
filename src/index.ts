/**
 * Converge as a library: the same steps the CLI takes, for programs that embed them (a custom
 * reconciler, a test harness). The CLI is the reference user of everything exported here.
 */
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
export { type RunningSandbox, type SandboxOptions, startSandbox } from './sandbox/index.js';
