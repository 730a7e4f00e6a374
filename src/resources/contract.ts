/**
 * The contract every resource kind implements, after the observe / create / update / delete shape of
 * Crossplane's external clients and Terraform providers. The planner and the applier know only this
 * interface: a new kind is one new module registered in `./index.ts`.
 */
import type { TSchema } from '@sinclair/typebox';
import type { ServiceClients } from '../clients/index.js';
import type { ManifestResource, ServiceName, SourcePosition } from '../manifest/types.js';

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
}

/** A problem found while planning (a referenced object missing, say), tied to the manifest. */
export interface PlanProblem {
  key: ResourceKey;
  message: string;
  position?: SourcePosition;
}

/** What the composition root hands each kind: its service's client, the run's flags, a stop signal. */
export interface KindContext {
  client<S extends ServiceName>(service: S, connection?: string): ServiceClients[S];
  /** Aborted when the user interrupts (Ctrl-C): kinds stop, release what they hold, and throw. */
  readonly signal?: AbortSignal;
  /** Command-line switches a kind may honour (`forceUnlock`). */
  readonly flags?: Readonly<{ forceUnlock?: boolean }>;
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
  /** Whether `metadata.namespace` means something for this kind. */
  readonly namespaced: boolean;
  /** What the service calls a namespace, for messages (`organization`); default `namespace`. */
  readonly namespaceLabel?: string;
  /**
   * The namespace an object without `metadata.namespace` lives in (a workspace: the connection's
   * organization; a role: `default`). The planner fills it in before anything else, so the same
   * object always has the same key and prune scopes compare like with like.
   */
  effectiveNamespace?(ctx: KindContext, key: ResourceKey): string | undefined;
  /** Schema of `metadata.name` (pattern, length), a TypeBox string schema. */
  readonly nameSchema: TSchema;
  /** Schema of `spec`, a TypeBox object schema. Field names are the service's own. */
  readonly specSchema: TSchema;
  /**
   * Kinds whose objects must be created before this kind's (and deleted after). Object-level
   * dependencies come from `dependencies`.
   */
  readonly after?: readonly string[];
  /**
   * Top-level spec attributes that hold secrets. The planner masks them in every rendering and the
   * plan file never holds them.
   */
  readonly sensitive?: readonly string[];

  /**
   * Manifest rules JSON Schema says poorly (fields that exclude each other), checked by `validate`
   * after the schema passed. Pointers are relative to `spec` (`/operations`).
   */
  validateSpec?(spec: Spec): { pointer: string; message: string }[];
  /** Keys of other manifest objects this one needs to exist first. */
  dependencies?(desired: Desired<Spec>): ResourceKey[];
  /**
   * Reads local inputs the spec names (files), before any service is contacted; returns the desired
   * object with `local` set, or problems pointing into the manifest.
   */
  resolve?(desired: Desired<Spec>): Promise<{ desired: Desired<Spec>; problems: PlanProblem[] }>;
  /**
   * Plan-time checks that need the service (a referenced policy exists). Called once per kind
   * with every desired object of that kind, so a kind can read what it needs once.
   */
  check?(ctx: KindContext, desired: Desired<Spec>[]): Promise<PlanProblem[]>;

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
