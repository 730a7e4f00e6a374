/** The secrets service as Converge reaches it: `CONVERGE_SECRETS_*`, `X-Secrets-Token`, the LDAP client. */
import { SecretsClient, secretsAuth } from './client.js';
import { defineClientService, type ServiceDefinition } from '../service.js';

export const secretsService: ServiceDefinition<SecretsClient> = defineClientService<SecretsClient>({
  name: 'secrets',
  description: 'directory (LDAP) auth method: config, groups, users (/v1/auth/...)',
  authHeaders: secretsAuth,
  fromConnection: (options) => SecretsClient.fromConnection(options),
});
