/**
 * Client of the workspace service (workspaces, projects, state versions; JSON:API under `/api/v2`),
 * over the shared HTTP layer.
 *
 * Choices where the spec says "not shown", following the real service and go-tfe
 * (REFERENCE-BEHAVIOUR §1, §5):
 * - Every request carries `Content-Type` and `Accept: application/vnd.api+json` and the token as
 *   `Authorization: Bearer`; the lock body is the plain `{"reason": …}` go-tfe sends.
 * - Retries are the HTTP layer's: 429 is always retried (POST and PATCH included, as go-tfe does),
 *   honouring `Retry-After`/`X-RateLimit-Reset`; 5xx only for GET/PUT/DELETE, so a create, update,
 *   lock or state upload is never sent twice. `X-RateLimit-Limit` throttles the client on any answer.
 * - Error answers are the HTTP layer's `HttpStatusError`; this client gives it the JSON:API reading:
 *   4xx (but 429) carry `details` (title, detail, `source.pointer` of each JSON:API error), and the
 *   message is one line, `title: detail (at /pointer)`. 5xx messages are read the same way, without
 *   `details`.
 * - Reads answer `undefined` for 404 (the service also says 404 when the caller may not see it).
 * - The download of a hosted state file never carries the token (it goes to a storage URL that holds
 *   its own secret) and comes back as the exact text that was uploaded.
 */
import type { QueryValue } from '../http/body.js';
import { createAgent } from '../http/agent.js';
import { HttpClient, type HttpResponse, type RequestContext } from '../http/client.js';
import { type ClientConnection, connectionHttpOptions, type ServiceHttp } from '../http/connection.js';
import { errorDetails, parseErrorDocument } from '../http/error-details.js';
import { HttpServiceClient } from '../http/service-client.js';
import {
  asDocument,
  DocumentError,
  JSON_API,
  paginationOf,
  resourceList,
  singleResource,
  stateVersionBody,
  toProject,
  toStateVersion,
  toWorkspace,
  workspaceBody,
} from './json-api.js';
import { type Page, type PageRequest, walkPages } from './pages.js';
import { JsonApiDocumentShape } from './responses.js';
import { includeQuery, pageQuery, workspaceListQuery } from './query.js';
import { textBodies } from './text-bodies.js';
import type {
  JsonApiDocument,
  JsonApiResource,
  Organization,
  Project,
  RequestOptions,
  StateVersion,
  StateVersionInput,
  Workspace,
  WorkspaceListQuery,
  WorkspaceRef,
} from './types.js';

// Every type of the client's vocabulary (workspaces, state versions, pages, JSON:API documents).
export type * from './types.js';
export { errorDetails, formatErrorDetails } from '../http/error-details.js';
/** The workspace service's error bodies are `{"errors":[…]}` documents (JSON:API objects or strings). */
export const parseWorkspacesError = parseErrorDocument;
export { parseStateFile, type StateFileInfo, StateFileError } from './state-file.js';
export {
  pushState,
  type PushStateOptions,
  WorkspaceLockedError,
  WorkspaceUnlockError,
} from './state-push.js';

/** The service's API prefix; `address` is the service root, as `CONVERGE_WORKSPACES_ADDR` holds it. */
export const WORKSPACES_API_PREFIX = '/api/v2';

/** `address` is the service root (`https://app.example.com`); `/api/v2` is added unless it is there. */
export interface WorkspacesConnection extends ClientConnection {
  /** Used when a call names no organization (`CONVERGE_WORKSPACES_ORGANIZATION`, a Connection's). */
  defaultOrganization?: string;
}

export interface WorkspacesClientOptions {
  defaultOrganization?: string;
  /** Builds the token-less client for hosted downloads, on first use. */
  openDownloads?: () => { http: HttpClient; close(): Promise<void> };
}

/** Lock: `resend` for callers that read a 409 back (see `lockWorkspace`). */
export interface LockCallOptions {
  resend?: boolean;
}

interface Call {
  method: string;
  path: string;
  query?: Record<string, QueryValue>;
  body?: unknown;
  signal?: AbortSignal;
  /** False for lock and unlock: once sent, only the answer tells who holds the lock (see state-push). */
  interruptible?: false;
  /** Sent again after a lost answer (lock with `resend`). */
  idempotent?: true;
  /** Answer 404 with undefined instead of throwing. */
  notFound?: 'undefined';
}

/** `https://host/` → `https://host/api/v2`; an address that already ends in `/api/v2` is kept. */
export function workspacesBaseUrl(address: string): string {
  const trimmed = address.replace(/\/+$/, '');
  return trimmed.endsWith(WORKSPACES_API_PREFIX) ? trimmed : `${trimmed}${WORKSPACES_API_PREFIX}`;
}

export class WorkspacesClient extends HttpServiceClient {
  readonly defaultOrganization: string | undefined;
  private readonly openDownloads?: WorkspacesClientOptions['openDownloads'];
  private downloads?: { http: HttpClient; close(): Promise<void> };

  constructor(http: HttpClient, options: WorkspacesClientOptions = {}) {
    super(http);
    this.defaultOrganization = options.defaultOrganization || undefined;
    if (options.openDownloads) this.openDownloads = options.openDownloads;
  }

  static fromConnection(connection: WorkspacesConnection): WorkspacesClient {
    const { http: extra, ...c } = connection;
    const where: ServiceHttp = { service: 'workspaces', baseUrl: workspacesBaseUrl(c.address) };
    const http = new HttpClient(
      connectionHttpOptions(connection, { ...where, parseError: parseErrorDocument, errorDetails }),
    );
    // A second HttpClient without any token, so a download can never send it, whatever the URL.
    const openDownloads = () => {
      const injected = c.dispatcher ?? extra?.dispatcher;
      const owned = injected
        ? undefined
        : createAgent({
            caCertificate: c.caCertificate,
            insecureSkipTlsVerify: c.insecureSkipTlsVerify,
            connectTimeoutMs: extra?.connectTimeoutMs ?? 10_000,
            maxConnections: extra?.maxConnections ?? 10,
            keepAliveTimeoutMs: extra?.keepAliveTimeoutMs ?? 4_000,
          });
      const downloads = new HttpClient({
        ...connectionHttpOptions({ ...connection, token: undefined }, where),
        dispatcher: (injected ?? owned!).compose(textBodies),
      });
      return { http: downloads, close: async () => owned?.close() };
    };
    return new WorkspacesClient(http, {
      ...(c.defaultOrganization ? { defaultOrganization: c.defaultOrganization } : {}),
      openDownloads,
    });
  }

  /** Attempts sent so far, retries and downloads included. */
  override get requestCount(): number {
    return super.requestCount + (this.downloads?.http.requestCount ?? 0);
  }

  override async close(): Promise<void> {
    await Promise.all([this.http.close(), this.downloads?.close()]);
  }

  /** `GET /ping`: checks address and token, and reads the announced `X-RateLimit-Limit`. */
  async ping(): Promise<{ rateLimit?: number }> {
    const res = await this.call({ method: 'GET', path: '/ping' });
    const limit = Number(res!.headers['x-ratelimit-limit']);
    return Number.isFinite(limit) && limit > 0 ? { rateLimit: limit } : {};
  }

  /** `GET /account/details`: the user behind the token; undefined for team and organization tokens (404). */
  async whoAmI(): Promise<{ id: string; type: 'users'; username?: string } | undefined> {
    const found = await this.resource(
      { method: 'GET', path: '/account/details', notFound: 'undefined' },
      'users',
    );
    if (!found) return undefined;
    const user = found.resource;
    const username = user.attributes?.username;
    return { id: user.id, type: 'users', ...(typeof username === 'string' ? { username } : {}) };
  }

  // Workspaces

  /** `POST /organizations/:organization/workspaces`; without `projectId` the default project is used. */
  async createWorkspace(
    organization: string | undefined,
    attributes: Record<string, unknown>,
    opts: { projectId?: string } = {},
  ): Promise<Workspace> {
    const org = this.organization(organization);
    return this.workspaceCall(
      { method: 'POST', path: `${orgPath(org)}/workspaces`, body: workspaceBody(attributes, opts.projectId) },
      org,
    );
  }

  /** `GET /workspaces/:id` or `/organizations/:org/workspaces/:name`; undefined when missing (404). */
  async readWorkspace(ref: WorkspaceRef, opts: { include?: string[] } = {}): Promise<Workspace | undefined> {
    return (await this.readWorkspaceDocument(ref, opts))?.workspace;
  }

  /** Like `readWorkspace`, with the `included` resources (the `locked_by` user's name, say). */
  async readWorkspaceDocument(
    ref: WorkspaceRef,
    opts: { include?: string[] } = {},
  ): Promise<{ workspace: Workspace; included: JsonApiResource[] } | undefined> {
    const path = this.workspacePath(ref);
    const query = includeQuery(opts.include);
    const found = await this.resource({ method: 'GET', path, query, notFound: 'undefined' }, 'workspaces');
    if (!found) return undefined;
    const { resource, included } = found;
    return { workspace: toWorkspace(resource, included, this.refOrganization(ref)), included };
  }

  /** `PATCH` by id or name; attributes left out keep their value. A `projectId` moves the workspace. */
  async updateWorkspace(
    ref: WorkspaceRef,
    attributes: Record<string, unknown>,
    opts: { projectId?: string } = {},
  ): Promise<Workspace> {
    return this.workspaceCall(
      {
        method: 'PATCH',
        path: this.workspacePath(ref),
        body: workspaceBody(attributes, opts.projectId),
        // Sets the attributes it names to the values it carries: sending it again after a 5xx or a
        // lost answer changes nothing more.
        idempotent: true,
      },
      this.refOrganization(ref),
    );
  }

  /** Every workspace matching `query`, walking all pages at the maximum page size (100). */
  async listWorkspaces(
    organization: string | undefined,
    query: WorkspaceListQuery = {},
  ): Promise<Workspace[]> {
    return walkPages((page) => this.listWorkspacesPage(organization, query, page));
  }

  /** One page of `GET /organizations/:org/workspaces`; without `size` the service's default (20). */
  async listWorkspacesPage(
    organization: string | undefined,
    query: WorkspaceListQuery,
    page: PageRequest,
  ): Promise<Page<Workspace>> {
    const org = this.organization(organization);
    return this.listPage(
      `${orgPath(org)}/workspaces`,
      workspaceListQuery(query),
      page,
      'workspaces',
      (resource, included) => toWorkspace(resource, included, org),
    );
  }

  /**
   * `POST …/actions/safe-delete`: refused with 409 while the workspace manages resources. By id it is
   * sent again after a lost answer (a 5xx, a dropped connection), as a DELETE is: an id names one
   * workspace for good, so a second send deletes that one or, if the first landed, is answered 404,
   * which the caller reads as done. By name it is sent once: a workspace made meanwhile under the
   * same name is another one.
   */
  async safeDeleteWorkspace(ref: WorkspaceRef): Promise<void> {
    await this.call({
      method: 'POST',
      path: `${this.workspacePath(ref)}/actions/safe-delete`,
      ...('id' in ref ? { idempotent: true as const } : {}),
    });
  }

  /** `DELETE` by id or name: deletes even a workspace that manages resources. */
  async forceDeleteWorkspace(ref: WorkspaceRef): Promise<void> {
    await this.call({ method: 'DELETE', path: this.workspacePath(ref) });
  }

  /**
   * `POST /workspaces/:id/actions/lock`; 409 when it is locked already (by anyone, the caller too).
   * With `resend`, sent again after a lost answer (a 5xx, a broken connection): a second send
   * changes nothing, it is only answered 409, which the caller must then tell apart (state-push.ts).
   */
  async lockWorkspace(id: string, reason?: string, opts: LockCallOptions = {}): Promise<Workspace> {
    return this.workspaceCall({
      method: 'POST',
      path: `/workspaces/${segment(id, 'workspace id')}/actions/lock`,
      body: { reason: reason ?? '' },
      interruptible: false,
      ...(opts.resend ? { idempotent: true as const } : {}),
    });
  }

  /**
   * `POST /workspaces/:id/actions/unlock`; 409 when unlocked or locked by someone else. Never resent
   * by the HTTP layer: had a lost send landed, another run may have locked the workspace since, and
   * a second send would release its lock (`unlockOwnLock` reads back instead).
   */
  async unlockWorkspace(id: string): Promise<Workspace> {
    return this.workspaceCall({
      method: 'POST',
      path: `/workspaces/${segment(id, 'workspace id')}/actions/unlock`,
      interruptible: false,
    });
  }

  /** `POST /workspaces/:id/actions/force-unlock` (admin); 409 when it is not locked. */
  async forceUnlockWorkspace(id: string): Promise<Workspace> {
    return this.workspaceCall({
      method: 'POST',
      path: `/workspaces/${segment(id, 'workspace id')}/actions/force-unlock`,
    });
  }

  // Organizations

  /**
   * `GET /organizations/:name`; undefined when it does not exist or the token may not see it (404 for
   * both, as the real service answers).
   */
  async readOrganization(name: string): Promise<Organization | undefined> {
    const call: Call = { method: 'GET', path: orgPath(name), notFound: 'undefined' };
    const resource = (await this.resource(call, 'organizations'))?.resource;
    return resource && { name: resource.id, attributes: resource.attributes ?? {} };
  }

  // Projects

  /** `GET /organizations/:org/projects`, all pages. */
  async listProjects(organization: string | undefined): Promise<Project[]> {
    const org = this.organization(organization);
    return walkPages((page) =>
      this.listPage(`${orgPath(org)}/projects`, {}, page, 'projects', (resource) => toProject(resource, org)),
    );
  }

  // State versions

  /** `POST /workspaces/:id/state-versions`; the caller must hold the workspace's lock (see `pushState`). */
  async createStateVersion(
    workspaceId: string,
    input: StateVersionInput,
    opts: RequestOptions = {},
  ): Promise<StateVersion> {
    const found = await this.resource(
      {
        method: 'POST',
        path: `/workspaces/${segment(workspaceId, 'workspace id')}/state-versions`,
        body: stateVersionBody(input),
        ...(opts.signal ? { signal: opts.signal } : {}),
      },
      'state-versions',
    );
    return toStateVersion(found!.resource);
  }

  /** Every state version of a workspace, all pages (the service lists newest first). */
  async listStateVersions(organization: string | undefined, workspaceName: string): Promise<StateVersion[]> {
    return walkPages((page) => this.listStateVersionsPage(organization, workspaceName, page));
  }

  /** One page of `GET /state-versions?filter[workspace][name]=…&filter[organization][name]=…`. */
  async listStateVersionsPage(
    organization: string | undefined,
    workspaceName: string,
    page: PageRequest,
  ): Promise<Page<StateVersion>> {
    const org = this.organization(organization);
    if (!workspaceName) throw new TypeError('workspaces: workspace name must not be empty');
    return this.listPage(
      '/state-versions',
      { 'filter[workspace][name]': workspaceName, 'filter[organization][name]': org },
      page,
      'state-versions',
      (resource) => toStateVersion(resource),
    );
  }

  /** `GET /workspaces/:id/current-state-version`; undefined when there is none (or no workspace). */
  async currentStateVersion(
    workspaceId: string,
    opts: { include?: string[] } = {},
  ): Promise<StateVersion | undefined> {
    const found = await this.readStateVersionAt(
      `/workspaces/${segment(workspaceId, 'workspace id')}/current-state-version`,
      opts.include,
    );
    return found?.stateVersion;
  }

  /** `GET /state-versions/:id`, with the `included` resources; undefined when missing. */
  async readStateVersion(
    id: string,
    opts: { include?: string[] } = {},
  ): Promise<{ stateVersion: StateVersion; included: JsonApiResource[] } | undefined> {
    return this.readStateVersionAt(`/state-versions/${segment(id, 'state version id')}`, opts.include);
  }

  /**
   * Downloads a hosted state file (`hosted-state-download-url`) and returns its exact text. The URL
   * carries its own secret, so no token is sent (go-tfe does the same); a relative URL is read against
   * the service's address.
   */
  async downloadState(url: string, opts: RequestOptions = {}): Promise<string> {
    if (!url) throw new TypeError('workspaces: download URL must not be empty');
    if (!this.openDownloads) throw new Error('workspaces: this client was built without a download client');
    // One download connection per client, opened on the client itself (a change's view of it would
    // open a pool of its own, never closed), with the view's scope on the request.
    const owner = this.root as WorkspacesClient;
    owner.downloads ??= this.openDownloads();
    const res = await owner.downloads.http.request({
      method: 'GET',
      path: new URL(url, this.http.baseUrl).href,
      accept: 'application/json',
      authenticate: false,
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(this.requestScope ? { scope: this.requestScope } : {}),
    });
    return typeof res.body === 'string' ? res.body : '';
  }

  // Helpers

  /**
   * Sends one request the JSON:API way; an error status is the HTTP layer's `HttpStatusError` (with the
   * `details` of the JSON:API errors). A 404 answers undefined where the call says so.
   */
  private async call(call: Call): Promise<HttpResponse | undefined> {
    const res = await this.http.request({
      method: call.method,
      path: call.path,
      ...(call.query ? { query: call.query } : {}),
      ...(call.body !== undefined ? { body: call.body } : {}),
      ...(call.signal ? { signal: call.signal } : {}),
      ...(call.interruptible === false ? { interruptible: false } : {}),
      ...(call.idempotent ? { idempotent: true } : {}),
      contentType: JSON_API,
      accept: JSON_API,
      // The spec asks for the media type on every request, bodiless ones included.
      headers: { 'content-type': JSON_API },
      ...(call.notFound ? { okStatuses: [404] } : {}),
    });
    return res.status === 404 ? undefined : res;
  }

  /** The single `type` resource a call answers, with the document's `included`; undefined as `call`. */
  private async resource(
    call: Call,
    type: string,
  ): Promise<{ resource: JsonApiResource; included: JsonApiResource[] } | undefined> {
    const res = await this.call(call);
    if (!res) return undefined;
    const doc = this.document(res, call);
    const resource = this.read(() => singleResource(doc, type), res, call);
    return { resource, included: doc.included ?? [] };
  }

  private async workspaceCall(call: Call, organization?: string): Promise<Workspace> {
    const { resource, included } = (await this.resource(call, 'workspaces'))!;
    return toWorkspace(resource, included, organization);
  }

  /** One page of a list endpoint: `filters` plus the page's parameters, each resource through `map`. */
  private async listPage<T>(
    path: string,
    filters: Record<string, QueryValue>,
    page: PageRequest,
    type: string,
    map: (resource: JsonApiResource, included: JsonApiResource[]) => T,
  ): Promise<Page<T>> {
    const call: Call = { method: 'GET', path, query: { ...filters, ...pageQuery(page) } };
    const res = (await this.call(call))!;
    const doc = this.document(res, call);
    const resources = this.read(() => resourceList(doc, type), res, call);
    const included = doc.included ?? [];
    return {
      items: resources.map((r) => map(r, included)),
      pagination: paginationOf(doc, page, resources.length),
    };
  }

  private async readStateVersionAt(
    path: string,
    include: string[] | undefined,
  ): Promise<{ stateVersion: StateVersion; included: JsonApiResource[] } | undefined> {
    const call: Call = { method: 'GET', path, query: includeQuery(include), notFound: 'undefined' };
    const found = await this.resource(call, 'state-versions');
    return found && { stateVersion: toStateVersion(found.resource), included: found.included };
  }

  /**
   * The body of a 2xx answer as a JSON:API document whose parts have the types the client reads, or
   * an `UnexpectedResponseError`.
   */
  private document(res: HttpResponse, call: Call): JsonApiDocument {
    const doc = this.read(() => asDocument(res.body), res, call);
    return this.http.checkBody<JsonApiDocument>(endpoint(call), res.status, JsonApiDocumentShape, doc);
  }

  /** `read()` of a document, its `DocumentError` an `UnexpectedResponseError` about the call. */
  private read<T>(read: () => T, res: HttpResponse, call: Call): T {
    try {
      return read();
    } catch (err) {
      if (!(err instanceof DocumentError)) throw err;
      throw this.http.unexpected(endpoint(call), res.status, err.message);
    }
  }

  private organization(organization: string | undefined): string {
    const org = organization || this.defaultOrganization;
    if (!org) {
      throw new TypeError(
        "workspaces: no organization given; set CONVERGE_WORKSPACES_ORGANIZATION or the connection's organization",
      );
    }
    return org;
  }

  private refOrganization(ref: WorkspaceRef): string | undefined {
    return 'id' in ref ? undefined : this.organization(ref.organization);
  }

  private workspacePath(ref: WorkspaceRef): string {
    if ('id' in ref) return `/workspaces/${segment(ref.id, 'workspace id')}`;
    return `${orgPath(this.organization(ref.organization))}/workspaces/${segment(ref.name, 'workspace name')}`;
  }
}

/** A call as a document's errors name it: the endpoint, without its page or include query. */
function endpoint(call: Call): RequestContext {
  return { method: call.method, path: call.path };
}

function orgPath(organization: string): string {
  return `/organizations/${segment(organization, 'organization')}`;
}

/** An id or name as one path segment; an empty one would silently hit another endpoint. */
function segment(value: string, what: string): string {
  if (!value) throw new TypeError(`workspaces: ${what} must not be empty`);
  return encodeURIComponent(value);
}
