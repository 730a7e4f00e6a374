/**
 * The services Converge ships with: the one list that names them. A new service is its client
 * folder (`../clients/<service>/`), its kinds (`../resources/`), one module and one line here, its
 * commands in `../cli/commands/<service name>.ts` (found by the name, exporting `cli`) and its
 * sandbox module in `../sandbox/services/`.
 */
import { registryService } from '../clients/registry/definition.js';
import { schedulerService } from '../clients/scheduler/definition.js';
import { secretsService } from '../clients/secrets/definition.js';
import { workspacesService } from '../clients/workspaces/definition.js';
import { aclRoleKind } from '../resources/acl-role.js';
import { jobKind } from '../resources/scheduler/job.js';
import { ldapConfigKind } from '../resources/secrets/ldap-config.js';
import { ldapGroupKind } from '../resources/secrets/ldap-group.js';
import { ldapUserKind } from '../resources/secrets/ldap-user.js';
import { workspaceKind } from '../resources/workspace/index.js';
import { Catalog, type ServiceModule } from './catalog.js';

export const registryModule: ServiceModule = { definition: registryService, kinds: [aclRoleKind] };

export const workspacesModule: ServiceModule = { definition: workspacesService, kinds: [workspaceKind] };

export const secretsModule: ServiceModule = {
  definition: secretsService,
  // Listed in apply order: a mount's configuration, then its groups, then the users naming them.
  kinds: [ldapConfigKind, ldapGroupKind, ldapUserKind],
};

export const schedulerModule: ServiceModule = { definition: schedulerService, kinds: [jobKind] };

export const SERVICE_MODULES = [registryModule, workspacesModule, secretsModule, schedulerModule] as const;

/** The catalog of the services above: what every front end uses unless it adds a service. */
export const defaultCatalog = new Catalog(SERVICE_MODULES);
