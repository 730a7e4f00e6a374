/**
 * Client of the registry's ACL role and policy endpoints (spec part A), over the shared HTTP layer.
 *
 * Choices where the spec says "not shown", following the real registry (REFERENCE-BEHAVIOUR §3):
 * - The token goes in `Authorization: Bearer`.
 * - Namespaces: a per-call `namespace` is sent as query `ns`, which outranks the header. A client-wide
 *   `defaultNamespace` is sent as header `X-Registry-Namespace` on every request, so one call can
 *   still pick another namespace with `ns`, and a body `Namespace` (create, update) outranks both.
 *   The body is sent as the caller built it: the client does not copy `namespace` into it.
 * - 500 is not retried: the registry answers validation failures ("Invalid Role: ...") with 500 and a
 *   text body, and sending those again cannot help. 502/503/504 and 429 are retried as usual.
 * - Create is a PUT that is not idempotent (a second create fails with "already exists"), so it is
 *   marked non-idempotent: a 5xx or a broken connection after sending is not retried.
 */
import type { SchemaSource } from '../http/shape.js';
import { BlockingReads } from '../http/blocking-reads.js';
import { HttpClient, type HttpRequest } from '../http/client.js';
import { type ClientConnection, connectionHttpOptions, type ServiceHttp } from '../http/connection.js';
import { DEFAULT_RETRY } from '../http/retry-policy.js';
import { HttpServiceClient } from '../http/service-client.js';
import { DeleteResultShape, PolicyListShape, PolicyShape, RoleListShape, RoleShape } from './responses.js';
import type { BlockingOptions, Indexed, NamespaceOption, Policy, Role, RoleInput } from './types.js';

export type {
  BlockingOptions,
  Indexed,
  NamespaceOption,
  NodeIdentity,
  Policy,
  PolicyLink,
  Role,
  RoleInput,
  ServiceIdentity,
} from './types.js';

export const REGISTRY_NAMESPACE_HEADER = 'x-registry-namespace';
export const REGISTRY_INDEX_HEADER = 'x-registry-index';

/** The registry's server-side default for a blocking query without `wait`. */
const DEFAULT_BLOCKING_WAIT_MS = 5 * 60_000;

export interface RegistryConnection extends ClientConnection {
  /** Sent as `X-Registry-Namespace` on every request (see the module comment). */
  defaultNamespace?: string;
}

export interface RegistryClientOptions {
  defaultNamespace?: string;
}

export interface ListRolesOptions extends BlockingOptions {
  /** Only roles linked to this policy ID. */
  policy?: string;
}

/**
 * Error bodies are plain text, which the HTTP layer's default reading takes as they are; 500 is not
 * retried (see the module comment).
 */
const REGISTRY_HTTP: ServiceHttp = {
  service: 'registry',
  retry: { statuses: DEFAULT_RETRY.statuses.filter((s) => s !== 500) },
};

export class RegistryClient extends HttpServiceClient {
  private readonly defaultNamespace?: string;
  private readonly reads: BlockingReads<BlockingOptions>;

  constructor(http: HttpClient, options: RegistryClientOptions = {}) {
    super(http);
    if (options.defaultNamespace) this.defaultNamespace = options.defaultNamespace;
    this.reads = new BlockingReads(http, {
      name: 'registry',
      indexHeaders: [REGISTRY_INDEX_HEADER],
      defaultWaitMs: DEFAULT_BLOCKING_WAIT_MS,
      scoped: (scope, query) => this.scoped(scope, query),
    });
  }

  protected override scopedParts(http: HttpClient): Record<string, unknown> {
    return { reads: this.reads.withHttp(http) };
  }

  static fromConnection(connection: RegistryConnection): RegistryClient {
    const http = new HttpClient(connectionHttpOptions(connection, REGISTRY_HTTP));
    const { defaultNamespace } = connection;
    return new RegistryClient(http, defaultNamespace ? { defaultNamespace } : {});
  }

  // Roles

  /** `PUT /v1/acl/role`. */
  async createRole(role: RoleInput, options: NamespaceOption = {}): Promise<Role> {
    return this.expectJson<Role>(
      { method: 'PUT', path: '/v1/acl/role', body: role, idempotent: false, ...this.scoped(options) },
      RoleShape,
    );
  }

  /** `GET /v1/acl/role/:id`; undefined when there is no such role. */
  async readRole(id: string, options: BlockingOptions = {}): Promise<Role | undefined> {
    return (await this.readRoleWithIndex(id, options)).value;
  }

  async readRoleWithIndex(id: string, options: BlockingOptions = {}): Promise<Indexed<Role | undefined>> {
    return this.reads.optional<Role>(`/v1/acl/role/${segment(id, 'role ID')}`, options, RoleShape);
  }

  /** `GET /v1/acl/role/name/:name`; undefined when there is no such role. */
  async readRoleByName(name: string, options: BlockingOptions = {}): Promise<Role | undefined> {
    return (await this.readRoleByNameWithIndex(name, options)).value;
  }

  async readRoleByNameWithIndex(
    name: string,
    options: BlockingOptions = {},
  ): Promise<Indexed<Role | undefined>> {
    return this.reads.optional<Role>(`/v1/acl/role/name/${segment(name, 'role name')}`, options, RoleShape);
  }

  /** `PUT /v1/acl/role/:id`. A body `ID` other than `id` is refused by the registry (400). */
  async updateRole(id: string, role: RoleInput, options: NamespaceOption = {}): Promise<Role> {
    return this.expectJson<Role>(
      { method: 'PUT', path: `/v1/acl/role/${segment(id, 'role ID')}`, body: role, ...this.scoped(options) },
      RoleShape,
    );
  }

  /** `DELETE /v1/acl/role/:id`: the registry's `true`/`false` (it says true for a missing role too). */
  async deleteRole(id: string, options: NamespaceOption = {}): Promise<boolean> {
    const res = await this.http.requestJson<boolean>(
      { method: 'DELETE', path: `/v1/acl/role/${segment(id, 'role ID')}`, ...this.scoped(options) },
      DeleteResultShape,
    );
    return res.body === true;
  }

  /** `GET /v1/acl/roles[?policy=]`; namespace `'*'` lists every namespace. */
  async listRoles(options: ListRolesOptions = {}): Promise<Role[]> {
    return (await this.listRolesWithIndex(options)).value;
  }

  async listRolesWithIndex(options: ListRolesOptions = {}): Promise<Indexed<Role[]>> {
    const res = await this.http.requestJson<Role[] | null>(
      {
        method: 'GET',
        path: '/v1/acl/roles',
        ...this.reads.request(options, { policy: options.policy || undefined }),
      },
      RoleListShape,
    );
    return this.reads.indexed(res.body ?? [], res.headers);
  }

  // Policies (read-only: roles link to them, Converge does not manage them)

  /** `GET /v1/acl/policies`. List entries leave out `Rules`. */
  async listPolicies(options: BlockingOptions = {}): Promise<Policy[]> {
    const res = await this.http.requestJson<Policy[] | null>(
      { method: 'GET', path: '/v1/acl/policies', ...this.reads.request(options) },
      PolicyListShape,
    );
    return res.body ?? [];
  }

  /** `GET /v1/acl/policy/:id`; undefined when there is no such policy. */
  async readPolicy(id: string, options: BlockingOptions = {}): Promise<Policy | undefined> {
    return (
      await this.reads.optional<Policy>(`/v1/acl/policy/${segment(id, 'policy ID')}`, options, PolicyShape)
    ).value;
  }

  /** `GET /v1/acl/policy/name/:name`; undefined when there is no such policy. */
  async readPolicyByName(name: string, options: BlockingOptions = {}): Promise<Policy | undefined> {
    const path = `/v1/acl/policy/name/${segment(name, 'policy name')}`;
    return (await this.reads.optional<Policy>(path, options, PolicyShape)).value;
  }

  // Helpers

  private expectJson<T>(req: HttpRequest, schema: SchemaSource): Promise<T> {
    return this.http.requestObject<T>(req, 'the object', schema);
  }

  /** Query `ns`, the default-namespace header and the caller's signal. */
  private scoped(options: NamespaceOption, query: HttpRequest['query'] = {}): Partial<HttpRequest> {
    const out: Partial<HttpRequest> = { query: { ...query, ns: options.namespace || undefined } };
    if (this.defaultNamespace) out.headers = { [REGISTRY_NAMESPACE_HEADER]: this.defaultNamespace };
    if (options.signal) out.signal = options.signal;
    return out;
  }
}

/** An id or name as one path segment; an empty one would silently hit the list or create endpoint. */
function segment(value: string, what: string): string {
  if (!value) throw new TypeError(`registry: ${what} must not be empty`);
  return encodeURIComponent(value);
}
