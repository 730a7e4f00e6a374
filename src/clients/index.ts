/**
 * One typed client per service over the shared HTTP layer. `ServiceClients` is what a resource kind
 * receives through its context; the composition root (the CLI) builds them from connections.
 */
import type { RegistryClient } from './registry.js';
import type { WorkspacesClient } from './workspaces.js';

export interface ServiceClients {
  registry: RegistryClient;
  // Filled in as each service's client lands.
  workspaces: WorkspacesClient;
  secrets: never;
  scheduler: never;
}
