/**
 * The registry's HTTP endpoints: ACL roles (create, read by ID or name, update, delete, list) and the
 * policy reads a client needs to check that a policy exists. The order of checks in each handler is
 * the real registry's: request parsing (400) before authorization (403) before validation (500).
 */
import { blockingQuery } from '../../core/blocking.js';
import type { SandboxRequest, SandboxResponse } from '../../core/http.js';
import type { Router } from '../../core/router.js';
import type { TokenStore } from '../../core/tokens.js';
import { answeringErrors } from '../shared/answer-errors.js';
import { type DecodedRole, decodeRoleBody } from './decode.js';
import {
  ALL_NAMESPACES,
  DEFAULT_NAMESPACE,
  type PolicyRecord,
  policyToJson,
  RegistryError,
  type RoleRecord,
  roleToJson,
} from './model.js';
import {
  authorize,
  namespaceOf,
  queryMetaHeaders,
  readOptionsOf,
  registryJson,
  registryText,
  tokenOf,
} from './request.js';
import { upsertRole } from './roles.js';
import type { RegistryStore } from './store.js';

export interface RegistryDeps {
  store: RegistryStore;
  tokens: TokenStore;
}

export function registerRegistryRoutes(router: Router, deps: RegistryDeps): void {
  const h = new RegistryHandlers(deps);
  const wrap = answeringErrors(RegistryError, (err) => registryText(err.status, err.message));
  // Specific patterns first: the first pattern that matches a path owns it (and answers 405 for other methods).
  router.add('/v1/acl/role', { PUT: wrap((r) => h.writeRole(r, '')) });
  router.add('/v1/acl/role/name/*name', { GET: wrap((r) => h.readRoleByName(r)) });
  router.add('/v1/acl/role/*id', {
    GET: wrap((r) => h.readRoleById(r)),
    PUT: wrap((r) => h.writeRole(r, r.params.id ?? '')),
    DELETE: wrap((r) => h.deleteRole(r)),
  });
  router.add('/v1/acl/roles', { GET: wrap((r) => h.listRoles(r)) });
  router.add('/v1/acl/policies', { GET: wrap((r) => h.listPolicies(r)) });
  router.add('/v1/acl/policy/name/*name', { GET: wrap((r) => h.readPolicyByName(r)) });
  router.add('/v1/acl/policy/*id', { GET: wrap((r) => h.readPolicyById(r)) });
}

/** What a read by ID or name needs of one table (roles, policies). */
interface ReadableTable<R> {
  what: 'role' | 'policy';
  tableIndex(namespace: string): number;
  byId(id: string): R | undefined;
  byName(name: string, namespace: string): R | undefined;
  toJson(record: R): unknown;
}

class RegistryHandlers {
  constructor(private readonly deps: RegistryDeps) {}

  private get store(): RegistryStore {
    return this.deps.store;
  }

  /** Create (`pathId` empty) or replace a role. */
  async writeRole(req: SandboxRequest, pathId: string): Promise<SandboxResponse> {
    let role: DecodedRole;
    try {
      role = decodeRoleBody(await req.text());
    } catch (err) {
      throw new RegistryError(400, `Role decoding failed: ${(err as Error).message}`);
    }
    // As in the real registry, a create (`PUT /v1/acl/role`) with an ID in the body also lands here.
    if (role.ID !== '' && role.ID !== pathId)
      throw new RegistryError(400, 'Role ID in URL and payload do not match');
    role.ID = pathId || role.ID;

    const namespace = writeNamespace(namespaceOf(req, tokenOf(req, this.deps.tokens), role.Namespace));
    authorize(req, this.deps.tokens, 'write');
    const stored = upsertRole(this.store, role, namespace);
    return registryJson(req, this.roleJson(stored));
  }

  readRoleById(req: SandboxRequest): Promise<SandboxResponse> {
    return this.readById(req, this.roleTable);
  }

  readRoleByName(req: SandboxRequest): Promise<SandboxResponse> {
    return this.readByName(req, this.roleTable);
  }

  async deleteRole(req: SandboxRequest): Promise<SandboxResponse> {
    const id = req.params.id ?? '';
    if (id === '') throw new RegistryError(400, 'Missing role ID');
    const token = authorize(req, this.deps.tokens, 'write');
    const ns = writeNamespace(namespaceOf(req, token));
    const role = this.store.roleById(id);
    // Deleting a missing role succeeds (body `true`), as in the real registry.
    if (role && role.Namespace === ns) this.store.deleteRole(id);
    return registryJson(req, true);
  }

  async listRoles(req: SandboxRequest): Promise<SandboxResponse> {
    const policy = req.query.get('policy') || undefined;
    const { value, meta } = await this.blockingRead(
      req,
      (ns) => this.store.rolesIndex(ns),
      (ns) => this.store.listRoles(ns, policy),
    );
    return registryJson(
      req,
      value.map((r) => this.roleJson(r)),
      meta,
    );
  }

  readPolicyById(req: SandboxRequest): Promise<SandboxResponse> {
    return this.readById(req, this.policyTable);
  }

  readPolicyByName(req: SandboxRequest): Promise<SandboxResponse> {
    return this.readByName(req, this.policyTable);
  }

  async listPolicies(req: SandboxRequest): Promise<SandboxResponse> {
    const { value, meta } = await this.blockingRead(
      req,
      (ns) => this.store.policiesIndex(ns),
      (ns) => this.store.listPolicies(ns),
    );
    return registryJson(
      req,
      value.map((p) => policyToJson(p, { stub: true })),
      meta,
    );
  }

  /**
   * Every read: the blocking options (400), the token's `read` right (403), then `read` in the
   * request's namespace, held until that namespace's table index passes `?index`.
   */
  private async blockingRead<T>(
    req: SandboxRequest,
    tableIndex: (namespace: string) => number,
    read: (namespace: string) => T,
  ): Promise<{ ns: string; value: T; meta: Record<string, string> }> {
    const opts = readOptionsOf(req);
    const token = authorize(req, this.deps.tokens, 'read');
    const ns = namespaceOf(req, token);
    const result = await blockingQuery(() => ({ index: tableIndex(ns), value: read(ns) }), {
      ...opts,
      feed: this.store.changes,
      signal: () => req.signal,
    });
    return { ns, value: result.value, meta: queryMetaHeaders(result.index, opts.consistency) };
  }

  private readonly roleTable: ReadableTable<RoleRecord> = {
    what: 'role',
    tableIndex: (ns) => this.store.rolesIndex(ns),
    byId: (id) => this.store.roleById(id),
    byName: (name, ns) => this.store.roleByName(name, ns),
    toJson: (role) => this.roleJson(role),
  };

  private readonly policyTable: ReadableTable<PolicyRecord> = {
    what: 'policy',
    tableIndex: (ns) => this.store.policiesIndex(ns),
    byId: (id) => this.store.policyById(id),
    byName: (name, ns) => this.store.policyByName(name, ns),
    toJson: (policy) => policyToJson(policy),
  };

  /** `GET …/<what>/:id`: seen in its own namespace, or in any with `ns=*`. */
  private readById<R extends { Namespace: string }>(
    req: SandboxRequest,
    table: ReadableTable<R>,
  ): Promise<SandboxResponse> {
    const id = req.params.id ?? '';
    if (id === '') throw new RegistryError(400, `Missing ${table.what} ID`);
    return this.readOne(req, table, (ns) => {
      const record = table.byId(id);
      return record && (ns === ALL_NAMESPACES || record.Namespace === ns) ? record : undefined;
    });
  }

  /** `GET …/<what>/name/:name` in the request's namespace. */
  private readByName<R>(req: SandboxRequest, table: ReadableTable<R>): Promise<SandboxResponse> {
    const name = req.params.name ?? '';
    if (name === '') throw new RegistryError(400, `Missing ${table.what} Name`);
    return this.readOne(req, table, (ns) => {
      // UNCONFIRMED: names are unique per namespace only, so a wildcard cannot pick one record.
      if (ns === ALL_NAMESPACES)
        throw new RegistryError(400, `Cannot read a ${table.what} by name in the wildcard namespace "*"`);
      return table.byName(name, ns);
    });
  }

  /** One role or policy by `find`, or the real 404 text naming it and the namespace. */
  private async readOne<R>(
    req: SandboxRequest,
    table: ReadableTable<R>,
    find: (namespace: string) => R | undefined,
  ): Promise<SandboxResponse> {
    const { ns, value, meta } = await this.blockingRead(req, table.tableIndex, find);
    // The real registry sends no query-meta headers with this 404; they are kept here so a client can
    // block on a record that does not exist yet.
    if (!value) return registryText(404, notFoundText(table.what, ns), meta);
    return registryJson(req, table.toJson(value), meta);
  }

  private roleJson(role: RoleRecord) {
    return roleToJson(role, (id) => this.store.policyById(id)?.Name);
  }
}

/** Writes need one concrete namespace. UNCONFIRMED: the real enterprise text for a wildcard write. */
function writeNamespace(ns: string): string {
  if (ns === ALL_NAMESPACES)
    throw new RegistryError(400, 'Invalid namespace "*": wildcards are not allowed for writes');
  return ns;
}

/**
 * The real registry's `ACLResourceNotExistError`. UNCONFIRMED: which namespaces the enterprise edition
 * names in the text; here every namespace but `default` is named.
 */
function notFoundText(resource: 'role' | 'policy', ns: string): string {
  if (ns === DEFAULT_NAMESPACE || ns === ALL_NAMESPACES)
    return `Requested ${resource} does not exist: ACL not found`;
  return `Requested ${resource} not found in namespace ${ns}: ACL not found`;
}
