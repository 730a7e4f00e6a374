/**
 * AclRole: a registry ACL role (spec part A). metadata.name is the role's Name, metadata.namespace its
 * namespace; spec holds the Role fields under the registry's own names.
 */
import { type Static, Type } from '@sinclair/typebox';
import { registryService } from '../clients/registry/definition.js';
import type { RegistryClient, Role } from '../clients/registry/client.js';
import { compact, diffValues, sortBy } from './compare.js';
import type {
  Comparison,
  Desired,
  Exportable,
  KindContext,
  ListScope,
  Namespaced,
  Observed,
  PlanProblem,
  Prunable,
  PruneScope,
  RenderDetails,
  ResourceKey,
  ResourceKind,
  ServiceChecks,
  SpecRules,
} from './contract.js';
import { listedKey } from './contract.js';

/** The registry's rule for ServiceName and NodeName: lowercase alphanumerics, `-`, `_`, alphanumeric ends. */
const IDENTITY_NAME = '^[a-z0-9]([a-z0-9_-]{0,254}[a-z0-9])?$';

const PolicyLink = Type.Union(
  [
    Type.Object(
      { ID: Type.String({ format: 'uuid', description: 'Policy ID' }), Name: Type.Optional(Type.String()) },
      { additionalProperties: false },
    ),
    Type.Object(
      { Name: Type.String({ minLength: 1, description: 'Policy name' }) },
      { additionalProperties: false },
    ),
  ],
  {
    description: 'A policy, by Name or by ID. The registry resolves names to IDs, so renames keep the link.',
  },
);

const ServiceIdentity = Type.Object(
  {
    ServiceName: Type.String({ pattern: IDENTITY_NAME, maxLength: 256 }),
    Datacenters: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        description: 'Empty: valid in all datacenters, future ones too.',
      }),
    ),
  },
  { additionalProperties: false },
);

const NodeIdentity = Type.Object(
  {
    NodeName: Type.String({ pattern: IDENTITY_NAME, maxLength: 256 }),
    Datacenter: Type.String({ minLength: 1, description: 'The effective policy is valid only there.' }),
  },
  { additionalProperties: false },
);

const AclRoleSpec = Type.Object(
  {
    Description: Type.Optional(Type.String()),
    Policies: Type.Optional(Type.Array(PolicyLink)),
    ServiceIdentities: Type.Optional(Type.Array(ServiceIdentity)),
    NodeIdentities: Type.Optional(Type.Array(NodeIdentity)),
  },
  { additionalProperties: false },
);
export type AclRoleSpec = Static<typeof AclRoleSpec>;
type PolicyLinkSpec = Static<typeof PolicyLink>;

function client(ctx: KindContext, key: ResourceKey): RegistryClient {
  return ctx.client(registryService, key.connection);
}

/**
 * Where a listed role lives: the namespace it names (enterprise), else the one listed. A list of every
 * namespace (`*`, which `converge export --namespace '*'` asks for) is no place to write a role back
 * to: a role that names none there is in the default one.
 */
function roleScope(scope: ListScope, role: Role): ListScope {
  const namespace = role.Namespace || (scope.namespace === '*' ? 'default' : scope.namespace);
  return { ...scope, ...(namespace !== undefined ? { namespace } : {}) };
}

function nsOption(key: ResourceKey): { namespace?: string } {
  return key.namespace === undefined ? {} : { namespace: key.namespace };
}

function observedOf(key: ResourceKey, role: Role): Observed<Role> {
  return { key, id: role.ID, live: role, version: role.ModifyIndex };
}

/**
 * The canonical shape both sides are compared in. Policies are projected onto the form the manifest
 * uses for each link (by Name or by ID), so a link written by ID does not differ from the Name the
 * registry fills in; lists whose order means nothing are sorted; empty lists equal absent ones.
 */
function canonical(spec: AclRoleSpec, policyForm: (link: AnyLink) => PolicyLinkSpec) {
  return compact({
    Description: spec.Description ?? '',
    Policies: sortBy(
      (spec.Policies ?? []).map((l) => policyForm(l as AnyLink)),
      (p) => ('ID' in p && p.ID ? `id:${p.ID}` : `name:${p.Name}`),
    ),
    ServiceIdentities: sortBy(
      (spec.ServiceIdentities ?? []).map((s) =>
        compact({ ServiceName: s.ServiceName, Datacenters: [...(s.Datacenters ?? [])].sort() }),
      ),
      (s) => s.ServiceName,
    ),
    NodeIdentities: sortBy(spec.NodeIdentities ?? [], (n) => `${n.NodeName}\u0000${n.Datacenter}`),
  });
}

type AnyLink = { ID?: string; Name?: string };

/**
 * A plan asks for each desired spec's canonical form twice (`render`, then `compare`) and for each
 * live role's spec twice (`describe`, then `compare`): each is made once. Specs and live roles are
 * not changed after loading and reading, and the forms are only read, so sharing them is safe.
 */
const desiredCanonicals = new WeakMap<AclRoleSpec, ReturnType<typeof canonical>>();
const liveSpecs = new WeakMap<Role, AclRoleSpec>();

function desiredCanonical(spec: AclRoleSpec): ReturnType<typeof canonical> {
  let form = desiredCanonicals.get(spec);
  if (!form) desiredCanonicals.set(spec, (form = canonical(spec, desiredForm)));
  return form;
}

function liveSpecOf(role: Role): AclRoleSpec {
  let spec = liveSpecs.get(role);
  if (!spec) liveSpecs.set(role, (spec = specOf(role)));
  return spec;
}

function desiredForm(link: AnyLink): PolicyLinkSpec {
  return link.ID ? { ID: link.ID } : { Name: link.Name ?? '' };
}

function specOf(role: Role): AclRoleSpec {
  return compact({
    Description: role.Description ?? '',
    Policies: (role.Policies ?? []).map((p) => compact({ ID: p.ID, Name: p.Name })) as PolicyLinkSpec[],
    ServiceIdentities: role.ServiceIdentities,
    NodeIdentities: role.NodeIdentities,
  });
}

function body(desired: Desired<AclRoleSpec>): Omit<Role, 'ID'> {
  return {
    Name: desired.key.name,
    Description: desired.spec.Description ?? '',
    Policies: (desired.spec.Policies ?? []).map(desiredForm),
    ServiceIdentities: desired.spec.ServiceIdentities ?? [],
    NodeIdentities: desired.spec.NodeIdentities ?? [],
    ...(desired.key.namespace === undefined ? {} : { Namespace: desired.key.namespace }),
  };
}

/** Indexes of items whose key was already seen: the registry merges such duplicates into one. */
function duplicates<T>(items: readonly T[] | undefined, key: (item: T) => string): number[] {
  // Most lists hold one item: no set to build (validation runs this three times per role).
  if (!items || items.length < 2) return [];
  const seen = new Set<string>();
  const found: number[] = [];
  (items ?? []).forEach((item, i) => {
    const k = key(item);
    if (seen.has(k)) found.push(i);
    seen.add(k);
  });
  return found;
}

/** Lists the registry would merge never match the manifest again: refuse them up front. */
function roleRules(spec: AclRoleSpec): { pointer: string; message: string }[] {
  return [
    ...duplicates(spec.Policies, (p) => ('ID' in p && p.ID ? `id:${p.ID}` : `name:${p.Name}`)).map((i) => ({
      pointer: `/Policies/${i}`,
      message: 'this policy is listed twice; the registry keeps one link per policy',
    })),
    ...duplicates(spec.ServiceIdentities, (s) => s.ServiceName).map((i) => ({
      pointer: `/ServiceIdentities/${i}/ServiceName`,
      message: 'this service is listed twice; give it one entry with all its Datacenters',
    })),
    ...duplicates(spec.NodeIdentities, (n) => `${n.NodeName}\u0000${n.Datacenter}`).map((i) => ({
      pointer: `/NodeIdentities/${i}`,
      message: 'this node identity (NodeName and Datacenter) is listed twice',
    })),
  ];
}

export const aclRoleKind: ResourceKind<AclRoleSpec, Role> &
  Namespaced &
  SpecRules<AclRoleSpec> &
  ServiceChecks<AclRoleSpec> &
  RenderDetails<AclRoleSpec, Role> &
  Exportable<AclRoleSpec, Role> &
  Prunable<Role> = {
  kind: 'AclRole',
  service: registryService.name,
  description: 'A registry ACL role: policies, service identities and node identities under one name.',
  nameSchema: Type.String({
    pattern: '^[A-Za-z0-9_-]{1,256}$',
    description: '1 to 256 letters, digits, "-" or "_"; unique in its namespace',
  }),
  // The real product's namespace names are DNS hostname labels (its namespace API says so); `*`,
  // which reads every namespace in a list, is refused for writes, so it is refused here, at its line,
  // rather than by the first apply (`export --namespace '*'` once wrote it into every document).
  namespaceSchema: Type.String({
    pattern: '^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$',
    description: 'a registry namespace: a DNS hostname label, letters, digits and "-" (default: default)',
  }),
  specSchema: AclRoleSpec,
  // Without metadata.namespace a role is sent with ns=default explicitly, so it never lands in
  // whatever namespace the token happens to default to, and prune scopes compare like with like.
  effectiveNamespace: () => 'default',
  validateSpec: roleRules,

  async check(ctx, desired) {
    // Read each (connection, namespace)'s policies once, then check every link against them.
    const problems: PlanProblem[] = [];
    const byScope = new Map<string, Desired<AclRoleSpec>[]>();
    for (const d of desired) {
      const scope = `${d.key.connection ?? ''}\u0000${d.key.namespace ?? ''}`;
      // Appended in place: copying the group per object made 10,000 roles cost 50 million copies.
      const group = byScope.get(scope);
      if (group) group.push(d);
      else byScope.set(scope, [d]);
    }
    for (const group of byScope.values()) {
      const first = group[0]!;
      const own = await client(ctx, first.key).listPolicies(nsOption(first.key));
      // A link resolves in the role's namespace, then in the default one, whose policies roles of
      // every namespace may link (the sandbox resolves so, as the registry does): that one is read
      // only where a link is not found in the role's own namespace.
      const ownIds = new Set(own.map((p) => p.ID));
      const ownNames = new Set(own.map((p) => p.Name));
      const foundHere = (l: PolicyLinkSpec) =>
        'ID' in l && l.ID ? ownIds.has(l.ID) : ownNames.has(l.Name as string);
      const needsDefault =
        first.key.namespace !== undefined &&
        first.key.namespace !== 'default' &&
        group.some((d) => (d.spec.Policies ?? []).some((l) => !foundHere(l)));
      const fromDefault = needsDefault
        ? await client(ctx, first.key).listPolicies({ namespace: 'default' })
        : [];
      // Every policy of both may be linked by ID; a name resolves to the role's own namespace first.
      const policies = [...own, ...fromDefault];
      const ids = new Set(policies.map((p) => p.ID));
      const names = new Set(policies.map((p) => p.Name));
      const idOfName = new Map([...fromDefault, ...own].map((p) => [p.Name, p.ID]));
      for (const d of group) {
        // One policy linked once by Name and once by ID: the registry keeps one link.
        duplicates(d.spec.Policies, (l) =>
          'ID' in l && l.ID ? l.ID : (idOfName.get(l.Name as string) ?? `?${l.Name}`),
        )
          .filter((i) => d.spec.Policies?.[i] !== undefined)
          .forEach((i) =>
            problems.push({
              key: d.key,
              message:
                'this policy is already linked (once by Name, once by ID); the registry keeps one link per policy',
              ...(d.resource ? { position: d.resource.locate(`/spec/Policies/${i}`) } : {}),
            }),
          );
        (d.spec.Policies ?? []).forEach((link, i) => {
          const byId = 'ID' in link && link.ID;
          const missing = byId ? !ids.has(link.ID) : !names.has(link.Name as string);
          // Both given: the registry links by ID and ignores the Name, so a reviewer reading the
          // Name would approve another policy (an entry copied from `role get --json`, renamed).
          const actual = byId ? policies.find((p) => p.ID === link.ID)?.Name : undefined;
          // The ID's own name is what counts: one the role's namespace also has is no mismatch.
          if (byId && !missing && link.Name !== undefined && actual !== link.Name) {
            problems.push({
              key: d.key,
              message: `policy ID ${link.ID} is "${actual}", not "${link.Name}": the registry links by ID and ignores the Name; give one of them`,
              ...(d.resource ? { position: d.resource.locate(`/spec/Policies/${i}/Name`) } : {}),
            });
            return;
          }
          if (!missing) return;
          const field = byId ? 'ID' : 'Name';
          problems.push({
            key: d.key,
            message: `policy ${byId ? `with ID ${link.ID}` : `"${link.Name}"`} does not exist in the registry${
              d.key.namespace && d.key.namespace !== 'default'
                ? ` (namespace ${d.key.namespace}, nor default)`
                : d.key.namespace
                  ? ` (namespace ${d.key.namespace})`
                  : ''
            }`,
            ...(d.resource ? { position: d.resource.locate(`/spec/Policies/${i}/${field}`) } : {}),
          });
        });
      }
    }
    return problems;
  },

  async observe(ctx, key) {
    const role = await client(ctx, key).readRoleByName(key.name, nsOption(key));
    return role ? observedOf(key, role) : undefined;
  },

  async list(ctx, scope) {
    const roles = await ctx
      .client(registryService, scope.connection)
      .listRoles(scope.namespace === undefined ? {} : { namespace: scope.namespace });
    return roles.map((role) => observedOf(listedKey('AclRole', role.Name, roleScope(scope, role)), role));
  },

  compare(desired, observed): Comparison {
    const wanted = desiredCanonical(desired.spec);
    // Project each live link onto the form the manifest uses for the same policy.
    const links = desired.spec.Policies ?? [];
    const liveForm = (link: AnyLink): PolicyLinkSpec => {
      const byId = links.some((l) => 'ID' in l && l.ID && l.ID === link.ID);
      return byId && link.ID ? { ID: link.ID } : { Name: link.Name ?? link.ID ?? '' };
    };
    const live = canonical(liveSpecOf(observed.live), liveForm);
    return { diffs: diffValues(wanted, live) };
  },

  // Sets, compared item by item (diffValues): a policy linked is one item coming, not the list set to it.
  listAttributes: ['Policies', 'ServiceIdentities', 'NodeIdentities'],

  render(desired) {
    return desiredCanonical(desired.spec);
  },

  describe(observed) {
    return liveSpecOf(observed.live);
  },

  async create(ctx, desired) {
    const role = await client(ctx, desired.key).createRole(body(desired), nsOption(desired.key));
    return observedOf(desired.key, role);
  },

  async update(ctx, desired, observed) {
    const id = observed.id ?? observed.live.ID;
    const role = await client(ctx, desired.key).updateRole(
      id,
      { ...body(desired), ID: id },
      nsOption(desired.key),
    );
    return observedOf(desired.key, role);
  },

  async delete(ctx, observed) {
    await client(ctx, observed.key).deleteRole(observed.id ?? observed.live.ID, nsOption(observed.key));
  },

  // A role as a user writes it: policies by name (the registry resolves names, so renames keep the
  // link), nothing empty.
  exporter: {
    spec: (observed) =>
      compact({
        Description: observed.live.Description || undefined,
        Policies: (observed.live.Policies ?? []).map((p) => (p.Name ? { Name: p.Name } : { ID: p.ID })),
        ServiceIdentities: (observed.live.ServiceIdentities ?? []).map((s) =>
          compact({ ServiceName: s.ServiceName, Datacenters: s.Datacenters }),
        ),
        NodeIdentities: (observed.live.NodeIdentities ?? []).map((n) => ({
          NodeName: n.NodeName,
          Datacenter: n.Datacenter,
        })),
      }) as AclRoleSpec,
  },

  // The registry stores no marker on roles, so only scopes the manifest declares are pruned.
  ownership: 'declared-scope',
  owns(observed, scope: PruneScope) {
    return scope.namePrefix === undefined || observed.live.Name.startsWith(scope.namePrefix);
  },
};
