/** The registry as Converge reaches it: `CONVERGE_REGISTRY_*`, a bearer token, the role client. */
import { bearerAuth } from '../http/bearer-auth.js';
import type { RegistryClient } from './client.js';
import { defineLazyClientService, type ServiceDefinition } from '../service.js';

export const registryService: ServiceDefinition<RegistryClient> = defineLazyClientService<RegistryClient>({
  name: 'registry',
  description: 'ACL roles (/v1/acl/...)',
  // The spec leaves the header open; the real registry reads `Authorization: Bearer` among others,
  // and the bearer form is the one proxies and tracing tools already know to redact.
  authHeaders: bearerAuth,
  // Imported on first connection: the client pulls in the whole HTTP layer, which validate never uses.
  importClient: async () => {
    const { RegistryClient } = await import('./client.js');
    return (options) => RegistryClient.fromConnection(options);
  },
});
