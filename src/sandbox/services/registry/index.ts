/**
 * The registry service (spec part A: ACL roles), emulating the real registry's `/v1/acl/...` API.
 * Errors are plain-text bodies with the real status codes; headers carry the spec's `X-Registry-*`
 * names where the real product says `X-Consul-*`.
 */
import { defineService } from '../../core/service.js';
import { refuseSeedIssues, restoredSnapshot } from '../shared/startup.js';
import { type RegistryConfig, RegistryConfigSchema, RegistryTokenRightsSchema } from './config.js';
import { registerRegistryRoutes } from './handlers.js';
import { registryText } from './request.js';
import { seedRegistry } from './seed.js';
import { isRegistrySnapshot, RegistryStore } from './store.js';

export const registryService = defineService<RegistryConfig>({
  name: 'registry',
  pathPrefixes: ['/v1/acl/'],
  configSchema: RegistryConfigSchema,
  tokenRightsSchema: RegistryTokenRightsSchema,

  checkConfig(section) {
    // A dry run on an empty store finds bad names, unknown policy links and duplicates with their position.
    return seedRegistry(new RegistryStore(), section, { seedRoles: true });
  },

  errorResponse: (status, message) => registryText(status, message),
  methodNotAllowed: (method) => registryText(405, `method ${method} not allowed`),
  // The real registry's text for an unknown path under /v1/ (written with a trailing newline).
  notFound: () => registryText(404, 'Invalid URL path: not a recognized HTTP API endpoint\n'),

  create(ctx, router) {
    const store = new RegistryStore(() => ctx.markDirty());
    const saved = restoredSnapshot('registry', ctx.persisted, isRegistrySnapshot);
    if (saved) store.restore(saved);
    refuseSeedIssues('registry', 'the registry', seedRegistry(store, ctx.config, { seedRoles: !saved }));
    registerRegistryRoutes(router, { store, tokens: ctx.tokens });
    return { snapshot: () => store.snapshot() };
  },
});
