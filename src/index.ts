/**
 * Converge as a library: the engine every front end calls (load → plan → apply, connections, saved
 * plans, the inventory), the lower layers' entry points, and their types. The CLI is one user of it;
 * `run` starts the CLI itself in-process, loading it only then.
 */
import type { ReconcileLoop, ReconcileOptions } from './reconcile/loop.js';
import type { LogSink } from './reconcile/log.js';
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
export type { ReconcileLoop, ReconcileOptions, LogSink };

/**
 * Starts the sandbox (see `src/sandbox/README.md`). It is loaded on first use, never with this
 * module: it is half of Converge and brings a WebAssembly HCL parser, OpenPGP, an LDAP client and a
 * cron parser that a program that only plans and applies should not pay for at start.
 */
export async function startSandbox(opts?: SandboxOptions): Promise<RunningSandbox> {
  const sandbox = await import('./sandbox/index.js');
  return sandbox.startSandbox(opts);
}

/**
 * Starts a reconcile loop (what `converge reconcile` runs; see `src/reconcile/loop.ts`): stop it with
 * `options.signal`, and await `done` for its summary. Loaded on first use, like the sandbox, since it
 * brings prom-client and an HTTP server a program that only plans and applies does not need.
 */
export async function runReconcile(
  options: ReconcileOptions,
  io: { stdout: LogSink },
): Promise<ReconcileLoop> {
  const loop = await import('./reconcile/loop.js');
  return loop.runReconcile(options, io);
}
