/**
 * Converge as a library: the engine every front end calls (load → plan → apply, connections, saved
 * plans, the inventory), the lower layers' entry points, and their types. The CLI is one user of it;
 * `run` starts the CLI itself in-process, loading it only then.
 */
export { applyPlan, type ApplyOptions, type ApplyResult, type ChangeResult } from './applier/applier.js';
export { type ConnectionConfig, defineService, type ServiceDefinition } from './clients/service.js';
export { run } from './command-line.js';
export * from './engine/index.js';
export { type Manifest, ManifestError } from './manifest/index.js';
export { buildPlan, type PlanOptions } from './planner/planner.js';
export { hasChanges, type Action, type Change, type Plan, type PlanSummary } from './planner/types.js';
export type { Desired, KindContext, Observed, ResourceKey, ResourceKind } from './resources/contract.js';
export { type RunningSandbox, type SandboxOptions, startSandbox } from './sandbox/index.js';
