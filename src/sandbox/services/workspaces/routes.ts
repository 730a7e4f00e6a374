/**
 * The routes of the workspace service. Specific patterns come first: the first pattern matching a path
 * owns it (and answers 405 for other methods).
 */
import type { Router } from '../../core/router.js';
import { Access, type ServiceDeps } from './access.js';
import { answeringErrors } from '../shared/answer-errors.js';
import { WorkspaceHandlers } from './handlers-workspaces.js';
import { StateHandlers } from './handlers-state.js';
import { MiscHandlers } from './handlers-misc.js';
import { errorFromWorkspacesError } from './jsonapi.js';
import { WorkspacesError } from './model.js';
import { API, ARCHIVIST_PATH } from './serialize.js';

export function registerWorkspacesRoutes(router: Router, deps: ServiceDeps): void {
  const access = new Access(deps);
  const ws = new WorkspaceHandlers(access);
  const state = new StateHandlers(access);
  const misc = new MiscHandlers(access);
  const wrap = answeringErrors(WorkspacesError, errorFromWorkspacesError);

  router.add(`${API}/ping`, { GET: wrap(() => misc.ping()) });
  router.add(`${API}/account/details`, { GET: wrap((r) => misc.accountDetails(r)) });
  router.add(`${API}/organizations/:organization`, { GET: wrap((r) => misc.showOrganization(r)) });
  router.add(`${API}/organizations/:organization/projects`, { GET: wrap((r) => misc.listProjects(r)) });
  router.add(`${API}/projects/:id`, { GET: wrap((r) => misc.showProject(r)) });

  router.add(`${API}/organizations/:organization/workspaces`, {
    GET: wrap((r) => ws.list(r)),
    POST: wrap((r) => ws.create(r)),
  });
  router.add(`${API}/organizations/:organization/workspaces/:name/actions/safe-delete`, {
    POST: wrap((r) => ws.safeDelete(r)),
  });
  router.add(`${API}/organizations/:organization/workspaces/:name`, {
    GET: wrap((r) => ws.show(r)),
    PATCH: wrap((r) => ws.update(r)),
    DELETE: wrap((r) => ws.forceDelete(r)),
  });
  router.add(`${API}/workspaces/:id/actions/lock`, { POST: wrap((r) => ws.lock(r)) });
  router.add(`${API}/workspaces/:id/actions/unlock`, { POST: wrap((r) => ws.unlock(r)) });
  router.add(`${API}/workspaces/:id/actions/force-unlock`, { POST: wrap((r) => ws.forceUnlock(r)) });
  router.add(`${API}/workspaces/:id/actions/safe-delete`, { POST: wrap((r) => ws.safeDelete(r)) });
  router.add(`${API}/workspaces/:id/state-versions`, { POST: wrap((r) => state.create(r)) });
  router.add(`${API}/workspaces/:id/current-state-version`, { GET: wrap((r) => state.current(r)) });
  router.add(`${API}/workspaces/:id`, {
    GET: wrap((r) => ws.show(r)),
    PATCH: wrap((r) => ws.update(r)),
    DELETE: wrap((r) => ws.forceDelete(r)),
  });

  router.add(`${API}/state-versions`, { GET: wrap((r) => state.list(r)) });
  router.add(`${API}/state-versions/:id`, { GET: wrap((r) => state.show(r)) });
  router.add(`${API}/state-version-outputs/:id`, { GET: wrap((r) => state.output(r)) });
  router.add(`${ARCHIVIST_PATH}/:secret`, { GET: wrap((r) => state.download(r)) });
}
