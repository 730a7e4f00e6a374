/**
 * The workspace service (spec: workspaces and state versions), emulating the real product's JSON:API
 * under `/api/v2/`, plus the hosted state downloads under `/_archivist/` (no token, as the real
 * archivist URLs). Errors are JSON:API error documents with the real titles.
 */
import { defineService } from '../../core/service.js';
import { refuseSeedIssues, restoredSnapshot } from '../shared/startup.js';
import {
  DEFAULT_ENGINE_VERSION,
  type WorkspacesConfig,
  WorkspacesConfigSchema,
  type WorkspacesTokenRights,
  WorkspacesTokenRightsSchema,
} from './config.js';
import { coreErrorResponse } from './jsonapi.js';
import { organizationSettings } from './permissions.js';
import { registerWorkspacesRoutes } from './routes.js';
import { checkTokenRights, seedWorkspaces } from './seed.js';
import { isWorkspacesSnapshot, WorkspacesStore } from './store.js';

export const workspacesService = defineService<WorkspacesConfig>({
  name: 'workspaces',
  pathPrefixes: ['/api/v2/', '/_archivist/'],
  configSchema: WorkspacesConfigSchema,
  tokenRightsSchema: WorkspacesTokenRightsSchema,

  checkConfig(section) {
    // A dry run on an empty store finds duplicates, unknown projects and invalid seed workspaces.
    return seedWorkspaces(new WorkspacesStore(), section, { seedWorkspaces: true });
  },

  checkTokenRights: (rights, section) => checkTokenRights(rights as WorkspacesTokenRights, section),

  // The organization Workspace objects and workspace commands use when they name none: the first
  // configured one, or the `sandbox` organization the service starts with.
  exports: (section) => ({ ORGANIZATION: section?.organizations?.[0]?.name ?? 'sandbox' }),

  errorResponse: (status, message) => coreErrorResponse(status, message),
  notFound: () => coreErrorResponse(404, 'not found'),

  create(ctx, router) {
    const store = new WorkspacesStore(() => ctx.markDirty());
    const saved = restoredSnapshot('workspaces', ctx.persisted, isWorkspacesSnapshot);
    if (saved) store.restore(saved);
    const issues = seedWorkspaces(store, ctx.config, { seedWorkspaces: !saved });
    refuseSeedIssues('workspaces', 'the workspace service', issues);
    registerWorkspacesRoutes(router, {
      store,
      tokens: ctx.tokens,
      settings: organizationSettings(ctx.config),
      engineVersion: ctx.config?.engineVersion ?? DEFAULT_ENGINE_VERSION,
    });
    return { snapshot: () => store.snapshot() };
  },
});
