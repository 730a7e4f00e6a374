/**
 * The words every kind and its callers share: keys, the desired and observed object, differences,
 * problems and the context a kind is handed. The kind contract itself is in ./kind.ts.
 */
import type { ServiceClient, ServiceDefinition } from '../../clients/service.js';
import type { SourcePosition } from '../../common/types.js';
import type { ManifestResource } from './manifest-resource.js';

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
  /**
   * The diff adds or removes one item of the list at `path` (an LDAP user's `groups`), which keeps
   * its other items: `before`/`after` is the item, not the attribute's value. Set by the planner for
   * the attributes a kind names in `RenderDetails.listAttributes`.
   */
  item?: boolean;
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
   * Attributes the manifest sets that the plan leaves as they are on purpose, because the live object
   * has moved past them (a seed state file the workspace's state has moved on from). The object then
   * needs no change, yet is not as the manifest says: a saved plan that was to change them is stale,
   * not "already in effect".
   */
  heldBack?: string[];
  /**
   * Of `heldBack`, those the live object has moved past as the kind intends (a seed the workspace's
   * own runs continued): in step with the manifest, unlike the rest of `heldBack` (someone else's
   * lock, a push waiting for it), which still differ and are said so in the plan's headline.
   */
  movedPast?: string[];
  /**
   * Attributes the manifest sets that another owner keeps on purpose (a task group's count under
   * `preserveCounts`, which an autoscaler owns): the object needs no change, yet does not match the
   * manifest, and the plan's headline says so. Unlike `heldBack`, a saved plan's staleness does not
   * look at them: the live value is the one meant to stay, whatever the saved plan changed beside it.
   */
  keptLive?: string[];
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
  /**
   * 'plan': a refusal of the whole plan (a deletion guard), whose `key` names the guard rather than
   * an object; such a problem is never counted as an object that could not be planned.
   */
  scope?: 'plan';
}

/** What the composition root hands each kind: its service's client, the run's options, a stop signal. */
export interface KindContext {
  /** The client of a service on the environment's connection, or on a manifest `Connection`. */
  client<C extends ServiceClient>(service: ServiceDefinition<C>, connection?: string): C;
  /** Aborted when the user interrupts (Ctrl-C): kinds stop, release what they hold, and throw. */
  readonly signal?: AbortSignal;
  /** Whether the user switched on one of the kinds' own `options` (`force-unlock`). */
  option(flag: string): boolean;
  /**
   * How many requests the run allows at once (`--parallelism`), for kinds that fan out reads inside
   * one verb (a list followed by one read per name); absent outside a plan.
   */
  readonly parallelism?: number;
}

/**
 * Where a change's own context (its clients scoped to it, see applier/scoped-context.ts) keeps the
 * run's context it was made from: what caches per run key by, so that changes share them.
 */
export const RUN_CONTEXT: unique symbol = Symbol('the run context');

/** The run's context of `ctx`: itself, or the one a change's context was made from. */
export function runContextOf(ctx: KindContext): KindContext {
  return (ctx as KindContext & { readonly [RUN_CONTEXT]?: KindContext })[RUN_CONTEXT] ?? ctx;
}

/** The settings of a service's connection (`organization`), known without contacting the service. */
export type ConnectionSettings = Readonly<Record<string, string>>;

/** Which live objects a prune may consider, as declared by the manifest. */
export interface PruneScope {
  kind: string;
  namespace?: string;
  connection?: string;
  /** Only names with this prefix (for kinds whose services carry no ownership marker). */
  namePrefix?: string;
  /** Prune even when the manifest declares no object in the scope (refused otherwise). */
  allowEmpty?: boolean;
  /**
   * Only objects the inventory records as adopted by `converge import`: the scope is there for them
   * alone (a kind with an ownership marker, where the manifest may declare none of the kind), and
   * the marker on anything else in it, made by another manifest with its own inventory, is no
   * licence to delete that.
   */
  importedOnly?: boolean;
  /** Where the manifest declares the scope, when it does. */
  name?: string;
  position?: SourcePosition;
}
