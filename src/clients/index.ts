/**
 * One typed client per service over the shared HTTP layer. `ServiceClients` is what a resource kind
 * receives through its context; the composition root (the CLI) builds them from connections.
 */
import type { RegistryClient } from './registry.js';

export interface ServiceClients {
  registry: RegistryClient;
  // Filled in as each service's client lands.
  workspaces: never;
  secrets: never;
  scheduler: never;
}
