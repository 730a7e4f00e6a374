/** The secrets service as Converge reaches it: `CONVERGE_SECRETS_*`, `X-Secrets-Token`, the LDAP client. */
import { secretsAuth } from './auth.js';
import type { SecretsClient } from './client.js';
import { defineLazyClientService, type ServiceDefinition } from '../service.js';

export const secretsService: ServiceDefinition<SecretsClient> = defineLazyClientService<SecretsClient>({
  name: 'secrets',
  description: 'directory (LDAP) auth method: config, groups, users (/v1/auth/...)',
  authHeaders: secretsAuth,
  // Imported on first connection: the client pulls in the whole HTTP layer, which validate never uses.
  importClient: async () => {
    const { SecretsClient } = await import('./client.js');
    return (options) => SecretsClient.fromConnection(options);
  },
});
