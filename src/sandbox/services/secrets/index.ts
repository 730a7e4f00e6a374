/**
 * The secrets service (spec: "Directory Login Method"), emulating HashiCorp Vault's LDAP auth method
 * under `/v1/auth/<mount>/` with Vault's error bodies and response envelope. The method is mounted at
 * `auth/ldap` from the start; the config section adds mounts at any path. `/v1/sys/` is owned here too
 * (the rekey endpoints land there with their own issue; until then it answers Vault's 404s).
 */
import { defineService } from '../../core/service.js';
import { SecretsAccess } from './access.js';
import { type SecretsConfig, SecretsConfigSchema, SecretsTokenRightsSchema } from './config.js';
import { registerAuthRoutes, registerSysFallback } from './handlers.js';
import { seedSecrets } from './seed.js';
import { isSecretsSnapshot, SecretsStore } from './store.js';
import { errorResponse, noHandler, SecretsError } from './vault.js';

export const secretsService = defineService<SecretsConfig>({
  name: 'secrets',
  pathPrefixes: ['/v1/auth/', '/v1/sys/'],
  // The real service lists with the LIST method; the core lets it past node's parser.
  extensionMethods: ['LIST'],
  configSchema: SecretsConfigSchema,
  tokenRightsSchema: SecretsTokenRightsSchema,

  checkConfig(section) {
    // A dry run on an empty store finds bad paths and seeds with their positions.
    return seedSecrets(new SecretsStore(), section, { restored: new Set() });
  },

  errorResponse: (status, message) => errorResponse(status, [message]),
  // A method the real HTTP layer does not turn into an operation: 405 with no message.
  methodNotAllowed: () => errorResponse(405, []),
  notFound: (req) => errorResponse(404, noHandler(req.path.replace(/^\/v1\//, '')).errors),

  create(ctx, router) {
    const store = new SecretsStore(() => ctx.markDirty());
    const restored = new Set<string>();
    if (ctx.persisted !== undefined) {
      if (!isSecretsSnapshot(ctx.persisted)) throw new Error('secrets state file has an unexpected shape');
      store.restore(ctx.persisted);
      for (const mount of ctx.persisted.mounts) restored.add(mount.path);
    }
    const issues = seedSecrets(store, ctx.config, { restored });
    if (issues.length > 0) {
      const lines = issues.map((i) => `  secrets.${i.path.join('.')}: ${i.message}`);
      throw new Error(`cannot seed the secrets service from the config:\n${lines.join('\n')}`);
    }
    const deps = { store, access: new SecretsAccess(ctx.tokens) };
    registerAuthRoutes(router, deps);
    // Specific /v1/sys/ routes (rekey) must be registered before this catch-all.
    registerSysFallback(router, deps);
    return { snapshot: () => store.snapshot() };
  },
});

export { SecretsError };
