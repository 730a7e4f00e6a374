/** The registry as Converge reaches it: `CONVERGE_REGISTRY_*`, a bearer token, the role client. */
import { bearerAuth } from '../http/client.js';
import { RegistryClient } from './client.js';
import { defineClientService, type ServiceDefinition } from '../service.js';

export const registryService: ServiceDefinition<RegistryClient> = defineClientService<RegistryClient>({
  name: 'registry',
  description: 'ACL roles (/v1/acl/...)',
  // The spec leaves the header open; the real registry reads `Authorization: Bearer` among others,
  // and the bearer form is the one proxies and tracing tools already know to redact.
  authHeaders: bearerAuth,
  fromConnection: (options) => RegistryClient.fromConnection(options),
});
