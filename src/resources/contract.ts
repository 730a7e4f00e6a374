/**
 * The contract every resource kind implements, after the observe / create / update / delete shape of
 * Crossplane's external clients and Terraform providers. The planner and the applier know only this
 * interface: a new kind is one new module, listed by its service's module in the CLI's catalog.
 */
import type { TSchema } from '@sinclair/typebox';
import type { ServiceClient, ServiceDefinition } from '../clients/service.js';
import type { ServiceName, SourcePosition } from '../common/types.js';
import type { ManifestResource } from '../manifest/types.js';

/** Identifies one object across Converge: kind + namespace + name (+ which connection it lives on). */
export interface ResourceKey {
  kind: string;
  name: string;
  namespace?: string;
  connection?: string;
}

/** `AclRole/default/web-readers`, or `AclRole/web-readers` for kinds without namespaces. */
export function addressOf(key: ResourceKey): string {
  const conn = key.connection ? `@${key.connection}` : '';
  return key.namespace !== undefined
    ? `${key.kind}${conn}/${key.namespace}/${key.name}`
    : `${key.kind}${conn}/${key.name}`;
}

/** What the manifest wants for one object, as handed to a kind. */
export interface Desired<Spec = Record<string, unknown>> {
  key: ResourceKey;
  spec: Spec;
  /**
   * `absent`: the manifest asks for the object to be deleted (explicit deletion, reviewed like any
   * other change). Default `present`.
   */
  ensure?: 'present' | 'absent';
  /** Local inputs the kind read for this object in `resolve` (a state file, say). */
  local?: unknown;
  /** The manifest document, for positions and sensitivity; absent for objects loaded from a saved plan. */
  resource?: ManifestResource;
  /**
   * Set by the planner for kinds with `writeOnly` attributes: those whose value differs from what
   * Converge last applied (or that it never recorded). The others are unchanged: `update` must not
   * send them again. A listed path the spec leaves out was set by Converge before and dropped from
   * the manifest since: `update` clears it (sends the service's empty value).
   */
  changedWriteOnly?: readonly string[];
}

/** The live object as the service reports it. */
export interface Observed<Live = unknown> {
  key: ResourceKey;
  /** The service's own id for the object (role UUID, workspace id). */
  id?: string;
  live: Live;
  /**
   * The service's check-and-set token (ModifyIndex, JobModifyIndex, updated-at). A saved plan
   * records it and refuses to apply when it moved.
   */
  version?: string | number;
}

/** One attribute-level difference. Paths are dotted with [index] or [key] for list items. */
export interface AttributeDiff {
  path: string;
  op: 'add' | 'remove' | 'change';
  before?: unknown;
  after?: unknown;
  /** The value is secret: renderers show `(sensitive value)`, plan files never hold it. */
  sensitive?: boolean;
  /** Only the service can tell the value: `(known after apply)`. */
  computed?: boolean;
  /** Changing this attribute needs the object to be deleted and created again. */
  forcesReplacement?: boolean;
  /** A remark shown beside the diff (`# locked by user-x: applied only with --force-unlock`). */
  note?: string;
}

export interface Comparison {
  diffs: AttributeDiff[];
  /** Set when one of the diffs cannot be applied in place. */
  replace?: boolean;
  /**
   * What makes the object impossible to converge safely (a state file older than the live state):
   * the plan reports them and cannot be applied. `pointer` is relative to the manifest document.
   */
  problems?: { message: string; pointer?: string }[];
  /**
   * What the user should know about the object although it needs no change (a seed state file the
   * workspace has moved on from): shown with the object in every rendering, noop included.
   */
  notes?: string[];
  /**
   * The blast radius of the change, where the kind can tell it: what else it reaches (the
   * allocations the scheduler would place or stop per task group). One self-explaining line each;
   * renderers print them under the change without knowing the kind. Ignored for unchanged objects.
   */
  impact?: string[];
  /**
   * Why the object could not be compared at all (its specification could not be read): the plan
   * then cannot say whether it changes, and says so instead of calling it up to date.
   */
  notCompared?: string;
}

/** A problem found while planning (a referenced object missing, say), tied to the manifest. */
export interface PlanProblem {
  key: ResourceKey;
  message: string;
  position?: SourcePosition;
}

/** What the composition root hands each kind: its service's client, the run's options, a stop signal. */
export interface KindContext {
  /** The client of a service on the environment's connection, or on a manifest `Connection`. */
  client<C extends ServiceClient>(service: ServiceDefinition<C>, connection?: string): C;
  /** Aborted when the user interrupts (Ctrl-C): kinds stop, release what they hold, and throw. */
  readonly signal?: AbortSignal;
  /** Whether the user switched on one of the kinds' own `options` (`force-unlock`). */
  option(flag: string): boolean;
}

/** The settings of a service's connection (`organization`), known without contacting the service. */
export type ConnectionSettings = Readonly<Record<string, string>>;

/** A command-line switch a kind offers on `apply` (`--force-unlock`). */
export interface KindOption {
  /** Without dashes: `force-unlock`. */
  readonly flag: string;
  readonly description: string;
}

/**
 * An object a kind is asked about for dependencies: one the manifest declares (`desired`), or a live
 * one about to be deleted (`observed`), or both.
 */
export interface DependencySubject<Spec = Record<string, unknown>, Live = unknown> {
  key: ResourceKey;
  desired?: Desired<Spec>;
  observed?: Observed<Live>;
}

/** A planned change as a kind's `impact` sees it. */
export interface ImpactSubject<Spec = Record<string, unknown>, Live = unknown> {
  key: ResourceKey;
  action: 'create' | 'update' | 'replace' | 'delete';
  diffs: readonly AttributeDiff[];
  desired?: Desired<Spec>;
  observed?: Observed<Live>;
}

/** Which live objects a prune may consider, as declared by the manifest. */
export interface PruneScope {
  kind: string;
  namespace?: string;
  connection?: string;
  /** Only names with this prefix (for kinds whose services carry no ownership marker). */
  namePrefix?: string;
  /** Prune even when the manifest declares no object in the scope (refused otherwise). */
  allowEmpty?: boolean;
  /** Where the manifest declares the scope, when it does. */
  name?: string;
  position?: SourcePosition;
}

export interface ResourceKind<Spec = Record<string, unknown>, Live = unknown> {
  /** The manifest `kind:` value. */
  readonly kind: string;
  readonly service: ServiceName;
  /** One line for `--help` and the schema's description. */
  readonly description: string;
  /** What the service calls the check-and-set token `Observed.version` holds, for messages; default `version`. */
  readonly versionLabel?: string;
  /** Whether `metadata.namespace` means something for this kind. */
  readonly namespaced: boolean;
  /** What the service calls a namespace, for messages (`organization`); default `namespace`. */
  readonly namespaceLabel?: string;
  /**
   * The `metadata` field that holds the namespace, when the service's word for it reads better in
   * a manifest than `namespace` (a directory group's `mount`); default `namespace`.
   */
  readonly namespaceField?: string;
  /** Schema of the namespace (a mount path's form), a TypeBox string schema; default any non-empty string. */
  readonly namespaceSchema?: TSchema;
  /**
   * The namespace an object without `metadata.namespace` lives in (a workspace: the connection's
   * organization; a role: `default`), from the connection's settings alone. It is filled in right
   * after loading, before validation's duplicate check, so the same object always has the same key
   * and prune scopes compare like with like. Throws with a message when there is none to be had.
   */
  effectiveNamespace?(key: ResourceKey, settings: ConnectionSettings): string;
  /** Schema of `metadata.name` (pattern, length), a TypeBox string schema. */
  readonly nameSchema: TSchema;
  /** Schema of `spec`, a TypeBox object schema. Field names are the service's own. */
  readonly specSchema: TSchema;
  /** Switches the kind honours on `apply` (`--force-unlock`); read with `ctx.option(flag)`. */
  readonly options?: readonly KindOption[];
  /**
   * Spec attributes that hold secrets, as dotted paths (`bindpass`, `tls.key`; lists are passed
   * through, so `users.password` is every user's password; `*` is any key, as in `env.*`). The
   * planner masks them at any depth in every rendering, saved plans never hold them, and the
   * applier scrubs their values from error messages.
   */
  readonly sensitive?: readonly string[];
  /**
   * Secret attributes the service accepts but never returns (a bind password, a client key), in the
   * same path form; they are sensitive too. The kind's `compare` need not look at them: the planner
   * tells a change from a keyed digest of what Converge last applied, never re-sends an unchanged
   * value, and shows a changed one as `(sensitive value changed)`.
   */
  readonly writeOnly?: readonly string[];
  /**
   * Spec fields that name a local file, relative to the manifest (`specFile`, `state`), as top-level
   * field names. The manifest layer refuses, at load and at the value's line, any that lies outside
   * the manifest root or in Converge's state folder, so no service is contacted for such a manifest;
   * the kind reads them later through `resource.readFile`, under the same rules.
   */
  readonly localFiles?: readonly string[];

  /**
   * Manifest rules JSON Schema says poorly (fields that exclude each other), checked by `validate`
   * after the schema passed. Pointers are relative to `spec` (`/operations`).
   */
  validateSpec?(spec: Spec): { pointer: string; message: string }[];
  /**
   * The objects this one needs (a directory user: its groups and its mount's config), as complete
   * keys (namespace and connection filled in). The planner orders creates and updates after what
   * they need, and deletions the other way round; keys that are not in the plan are ignored.
   */
  dependencies?(subject: DependencySubject<Spec, Live>): ResourceKey[];
  /**
   * Reads local inputs the spec names (files), before any service is contacted; returns the desired
   * object with `local` set, or problems pointing into the manifest.
   */
  resolve?(desired: Desired<Spec>): Promise<{ desired: Desired<Spec>; problems: PlanProblem[] }>;
  /**
   * Service-side preparation of the desired object, after `resolve` and before the live object is
   * read: what only the service can turn into the object it stores (a text job specification, parsed
   * by the service's own parser). The result must depend on the manifest alone, so a saved plan can
   * tell whether the manifest changed; problems point into the manifest.
   */
  prepare?(
    ctx: KindContext,
    desired: Desired<Spec>,
  ): Promise<{ desired: Desired<Spec>; problems: PlanProblem[] }>;
  /**
   * What the service says creating the object would do (allocations placed, capacity shortfalls),
   * shown with a `create` as `Comparison.notes` are with an update, and what it would refuse
   * (`problems`, pointers relative to the manifest document). Called for objects to be created.
   */
  previewCreate?(
    ctx: KindContext,
    desired: Desired<Spec>,
  ): Promise<Pick<Comparison, 'notes' | 'problems' | 'impact'>>;
  /**
   * Plan-time checks that need the service (a referenced policy exists). Called once per kind
   * with every desired object of that kind, so a kind can read what it needs once.
   */
  check?(ctx: KindContext, desired: Desired<Spec>[]): Promise<PlanProblem[]>;

  /**
   * The blast radius that needs more than the object itself (the users a directory group's policies
   * reach, from the manifest and the service): lines as `Comparison.impact`'s, one list per subject
   * in the same order. Called once per kind with every changed object of it, after every object was
   * compared, so what it reads it reads once; `manifest` is every desired object.
   */
  impact?(
    ctx: KindContext,
    subjects: readonly ImpactSubject<Spec, Live>[],
    manifest: readonly Desired[],
  ): Promise<string[][]>;

  /** Read one object; `undefined` when it does not exist. */
  observe(ctx: KindContext, key: ResourceKey): Promise<Observed<Live> | undefined>;
  /**
   * Read every object of the kind in a scope with as few requests as the API allows. The planner
   * uses it when the manifest holds several objects of the kind, and for prune.
   */
  list?(ctx: KindContext, scope: { namespace?: string; connection?: string }): Promise<Observed<Live>[]>;
  /**
   * Further reads that only some desired objects need (a workspace's current state, when the
   * manifest seeds one), after `observe`/`list`. Returns the observation to compare against.
   */
  readDetails?(ctx: KindContext, desired: Desired<Spec>, observed: Observed<Live>): Promise<Observed<Live>>;
  /**
   * Compare what the manifest wants with what is live, after normalising server-filled fields and
   * order-insensitive lists, so an unchanged manifest compares equal.
   */
  compare(desired: Desired<Spec>, observed: Observed<Live>): Comparison;
  /** The desired object as attribute values, for the `create` rendering (`+ Name = "x"`). */
  render(desired: Desired<Spec>): Record<string, unknown>;
  /** The live object as attribute values in manifest shape, for `delete` rendering and `--json`. */
  describe(observed: Observed<Live>): Record<string, unknown>;

  create(ctx: KindContext, desired: Desired<Spec>): Promise<Observed<Live>>;
  update(ctx: KindContext, desired: Desired<Spec>, observed: Observed<Live>): Promise<Observed<Live>>;
  /** `desired` is there when the manifest declares the object `ensure: absent`; absent for prune. */
  delete(ctx: KindContext, observed: Observed<Live>, desired?: Desired<Spec>): Promise<void>;

  /**
   * How Converge knows it owns a live object, for prune: `marker` when the service stores a marker
   * Converge sets on create (a workspace's source-name, a job's Meta), so every scope the manifest
   * manages may be pruned; `declared-scope` when it stores none (roles), so only scopes the manifest
   * declares explicitly are. Kinds without it are never pruned.
   */
  readonly ownership?: 'marker' | 'declared-scope';
  /** Whether prune may delete this live object inside the given scope. */
  owns?(observed: Observed<Live>, scope: PruneScope): boolean;
}

/** Erases the kind's own types for the generic planner and applier. */
// The registry holds kinds of every spec and live type.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyResourceKind = ResourceKind<any, any>;
