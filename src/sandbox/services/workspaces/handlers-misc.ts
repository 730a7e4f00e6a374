/**
 * Endpoints of the real product that clients need besides the spec's: `ping` (go-tfe's first call,
 * for its rate limiter), the account behind a user token, an organization (to tell a missing one
 * before anything is created in it), and projects (to turn a project name into the id that workspace
 * bodies carry).
 */
import type { SandboxRequest, SandboxResponse } from '../../core/http.js';
import type { Access } from './access.js';
import { baseUrlOf, jsonApi } from './jsonapi.js';
import { notFound } from './model.js';
import { paginate } from './pagination.js';
import { actorJson, organizationJson, projectJson } from './serialize.js';

/** What `X-RateLimit-Limit` announces: the real per-user limit (requests per second). */
export const RATE_LIMIT_PER_SECOND = 30;

export class MiscHandlers {
  constructor(private readonly access: Access) {}

  /** 204 with `X-RateLimit-Limit`; answered without checking the token, as go-tfe only reads the header. */
  ping(): SandboxResponse {
    return { status: 204, headers: { 'X-RateLimit-Limit': String(RATE_LIMIT_PER_SECOND) } };
  }

  /** The user of a user token; team and organization tokens have no account (404, as the real one). */
  accountDetails(req: SandboxRequest): SandboxResponse {
    const caller = this.access.caller(req);
    if (caller.kind !== 'user') throw notFound();
    return jsonApi(200, { data: actorJson({ type: 'users', id: caller.id, name: caller.username }) });
  }

  /** `GET /organizations/:name`: 404 for a missing organization and for one the caller is not in alike. */
  showOrganization(req: SandboxRequest): SandboxResponse {
    const caller = this.access.caller(req);
    const org = this.access.organization(caller, req.params.organization!);
    return jsonApi(200, { data: organizationJson(this.access.store.organization(org)!) });
  }

  /** Projects of an organization by name (`filter[names]`: comma list of exact names), paginated. */
  listProjects(req: SandboxRequest): SandboxResponse {
    const caller = this.access.caller(req);
    const org = this.access.organization(caller, req.params.organization!);
    const names = (req.query.get('filter[names]') ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    const projects = [...this.access.store.organization(org)!.projects]
      .filter((p) => names.length === 0 || names.includes(p.name))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const page = paginate(req, baseUrlOf(req), projects);
    return jsonApi(200, { data: page.items.map(projectJson), links: page.links, meta: page.meta });
  }

  showProject(req: SandboxRequest): SandboxResponse {
    const caller = this.access.caller(req);
    const project = this.access.store.project(req.params.id!);
    if (!project || !this.access.permissions.isMember(caller, project.organization)) throw notFound();
    return jsonApi(200, { data: projectJson(project) });
  }
}
