/**
 * The workspace service as Converge reaches it: `CONVERGE_WORKSPACES_*`, a bearer token (spec §
 * "Every request carries header Authorization: Bearer"), and a default organization for objects
 * and commands that name none.
 */
import { bearerAuth } from '../http/client.js';
import { defineClientService, type ServiceDefinition } from '../service.js';
import { WorkspacesClient } from './client.js';

export const workspacesService: ServiceDefinition<WorkspacesClient> = defineClientService<WorkspacesClient>({
  name: 'workspaces',
  description: 'workspaces, locks and state versions (/api/v2)',
  settings: [
    {
      key: 'organization',
      env: 'ORGANIZATION',
      description: 'the organization of Workspace objects and workspace commands that name none',
    },
  ],
  authHeaders: bearerAuth,
  fromConnection(options, connection) {
    const organization = connection.settings.organization;
    return WorkspacesClient.fromConnection({
      ...options,
      ...(organization !== undefined ? { defaultOrganization: organization } : {}),
    });
  },
});
