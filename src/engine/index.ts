/**
 * The engine: what every front end of Converge calls (the CLI, a reconcile loop, the benchmark, a
 * program that embeds Converge). A run is
 *
 * ```ts
 * const { inventory, release } = await lockInventory({ command: 'my-tool', timeoutMs: 10_000 });
 * try {
 *   const run = await plan(['infra/'], { prune: true, writeOnly: inventory, managed: inventory.objects });
 *   try {
 *     if (hasChanges(run.plan)) await apply(run, { inventory });
 *   } finally {
 *     await run.connections.close();
 *   }
 * } finally {
 *   await release();
 * }
 * ```
 *
 * or, step by step, `loadManifest` → `connect` (the run's one `ServiceConnections`) →
 * `plan(manifest, { connections })` → `apply`. `validate` checks a manifest without contacting any
 * service. `plan` takes `targets` / `excludes` (address globs) to plan part of a manifest;
 * `exportLive` and `writeExportFiles` write live objects as manifest files; `adoptObjects` records
 * existing objects in the inventory. Saved plans (`writePlanFile`, `readPlanFile`, `verifyPlanFile`, `reconcileSavedPlan`) and
 * the local inventory with its state key and apply lock are here too.
 * Nothing here prints, prompts or exits: failures are thrown (`ManifestError`, `EngineError`, service
 * errors), and progress is reported through callbacks.
 */
export { Catalog, type ServiceModule } from './catalog.js';
export { connectionAddressProblems, ALLOW_ADDRESSES_VARIABLE } from './connection-addresses.js';
export {
  httpOptions,
  type HttpSettings,
  MAX_RESPONSE_BYTES_VAR,
  maxResponseBytesFromEnv,
  type RunOptions,
  ServiceConnections,
} from './connections.js';
export { adoptObjects, type AdoptResult } from './adopt.js';
export { EngineError } from './errors.js';
export { type ExportedObject, exportLive, type ExportOptions, type Placeholder } from './export.js';
export { exportedDocument, type ExportFileOptions, writeExportFiles } from './export-files.js';
export {
  type AppliedObject,
  FileInventoryBackend,
  type InventoryBackend,
  type InventoryIdentity,
  type InventoryLockOptions,
  LocalInventory,
  type ManagedObjects,
} from './inventory.js';
export { inventoryBackend, inventoryFromEnv, INVENTORY_VARIABLE } from './inventory-backend.js';
export { type InventoryEntry, parseInventory } from './inventory-document.js';
export { type DeletionLimits } from './deletion-guards.js';
export { LIBRARY_SETTING_NAMES, type SettingNames } from '../common/setting-names.js';
export {
  readPlanFile,
  reconcileSavedPlan,
  type SavedPlan,
  type WritePlanOptions,
  verifyPlanFile,
  writePlanFile,
} from './plan-file.js';
export { defaultCatalog, SERVICE_MODULES } from './services.js';
export { parseStateKey, type StateKey } from './state-key.js';
export { type Selection, selectTargets, type TargetPatterns } from './targeting.js';
export { acquireStateLock, type LockOptions, type StateLock } from './state-lock.js';
export {
  apply,
  type ApplyRunOptions,
  connect,
  type ConnectOptions,
  desiredObjects,
  type EngineOptions,
  type InventoryLockRunOptions,
  lockInventory,
  type LockedInventory,
  loadManifest,
  type LoadOptions,
  type ManifestAccess,
  plan,
  type PlanRun,
  type PlanRunOptions,
  type SavedDigests,
  validate,
  type ValidManifest,
} from './workflow.js';
