/**
 * The services Converge ships with: the one list that names them. A new service is one module (its
 * client definition, kinds and commands, in `./commands/<service>.ts`) and one line here, plus its
 * sandbox module in `../sandbox/services/`.
 */
import { Catalog } from './catalog.js';
import { registryModule } from './commands/registry.js';
import { schedulerModule } from './commands/scheduler.js';
import { secretsModule } from './commands/secrets.js';
import { workspacesModule } from './commands/workspaces.js';

export const SERVICE_MODULES = [registryModule, workspacesModule, secretsModule, schedulerModule] as const;

export const defaultCatalog = new Catalog(SERVICE_MODULES);
