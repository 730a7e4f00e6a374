/**
 * Which inventory a run uses, chosen outside the manifest (a manifest must not say where its own
 * records are kept, or which credentials keep them): `CONVERGE_INVENTORY=file:PATH` or
 * `workspace:ORG/NAME`; by default the local file under CONVERGE_STATE_DIR (`.converge/`).
 */
import path from 'node:path';
import { workspacesService } from '../clients/workspaces/definition.js';
import { ServiceConnections } from './connections.js';
import { EngineError } from './errors.js';
import { FileInventoryBackend, type InventoryBackend, LocalInventory } from './inventory.js';
import { parseWorkspaceTarget, WorkspaceInventoryBackend } from './inventory-workspace.js';
import type { RunHttpOptions } from '../clients/service.js';

export const INVENTORY_VARIABLE = 'CONVERGE_INVENTORY';

/**
 * The backend `spec` names (`file:PATH`, `workspace:ORG/NAME`). A workspace is reached with the
 * environment's CONVERGE_WORKSPACES_ADDR and _TOKEN, never with a manifest's Connection.
 */
export function inventoryBackend(
  spec: string,
  env: NodeJS.ProcessEnv,
  http?: RunHttpOptions,
  source = INVENTORY_VARIABLE,
): InventoryBackend {
  if (spec.startsWith('file:') && spec.length > 5)
    return new FileInventoryBackend(path.resolve(spec.slice(5)));
  const workspace = parseWorkspaceTarget(spec);
  if (!workspace)
    throw new EngineError(
      `${source} must be file:PATH or workspace:ORG/NAME, not ${JSON.stringify(spec.slice(0, 100))}`,
    );
  const connections = new ServiceConnections(env, [workspacesService], [], http ? { http } : {});
  const client = connections.client(workspacesService);
  return new WorkspaceInventoryBackend(
    client,
    workspace.organization,
    workspace.name,
    env,
    () => connections.close(),
    connections.addresses()[workspacesService.name]?.address,
  );
}

/** The run's inventory, as CONVERGE_INVENTORY says; call `open()` before reading a non-file one. */
export function inventoryFromEnv(env: NodeJS.ProcessEnv, http?: RunHttpOptions): LocalInventory {
  const spec = env[INVENTORY_VARIABLE];
  return new LocalInventory(env, spec ? inventoryBackend(spec, env, http) : undefined);
}
