/**
 * The workspace service as Converge reaches it: `CONVERGE_WORKSPACES_*`, a bearer token (spec §
 * "Every request carries header Authorization: Bearer"), and a default organization for objects
 * and commands that name none.
 */
import { bearerAuth } from '../http/bearer-auth.js';
import { defineLazyClientService, type ServiceDefinition } from '../service.js';
import type { WorkspacesClient } from './client.js';

export const workspacesService: ServiceDefinition<WorkspacesClient> =
  defineLazyClientService<WorkspacesClient>({
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
    // Imported on first connection: the client pulls in the whole HTTP layer, which validate never uses.
    importClient: async () => {
      const { WorkspacesClient } = await import('./client.js');
      return (options, connection) => {
        const organization = connection.settings.organization;
        return WorkspacesClient.fromConnection({
          ...options,
          ...(organization !== undefined ? { defaultOrganization: organization } : {}),
        });
      };
    },
  });
