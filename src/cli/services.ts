/**
 * The CLI's services: each of the engine's service modules with its operator commands. The engine's
 * list (`../engine/services.ts`) names the services; this one only pairs each with its commands.
 */
import { Catalog } from '../engine/catalog.js';
import { registryModule } from './commands/registry.js';
import { schedulerModule } from './commands/scheduler.js';
import { secretsModule } from './commands/secrets.js';
import { workspacesModule } from './commands/workspaces.js';
import type { CliCatalog } from './service-module.js';

export const SERVICE_MODULES = [registryModule, workspacesModule, secretsModule, schedulerModule] as const;

export const defaultCatalog: CliCatalog = new Catalog(SERVICE_MODULES);
