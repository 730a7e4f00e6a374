/**
 * The contract every resource kind implements, after the observe / create / update / delete shape of
 * Crossplane's external clients: who the kind is, what its manifest documents look like, and the
 * verbs that read, compare and write one object. Everything else a kind may do is an optional
 * capability group (./capabilities.ts), one small interface each, which the planner and the applier
 * test for with its type guard. A new kind is one module, listed by its service's module in the
 * engine's catalog.
 */
import type { TSchema } from '@sinclair/typebox';
import type { ServiceName } from '../../common/types.js';
import type { Comparison, Desired, KindContext, Observed, ResourceKey } from './core.js';

export interface ResourceKind<Spec = Record<string, unknown>, Live = unknown, ServerPlan = never> {
  /** The manifest `kind:` value. */
  readonly kind: string;
  readonly service: ServiceName;
  /** One line for `--help` and the schema's description. */
  readonly description: string;
  /** Schema of `metadata.name` (pattern, length), a TypeBox string schema. */
  readonly nameSchema: TSchema;
  /** Schema of `spec`, a TypeBox object schema. Field names are the service's own. */
  readonly specSchema: TSchema;

  /** Read one object; `undefined` when it does not exist. */
  observe(ctx: KindContext, key: ResourceKey): Promise<Observed<Live> | undefined>;
  /**
   * Compare what the manifest wants with what is live, after normalising server-filled fields and
   * order-insensitive lists, so an unchanged manifest compares equal. `serverPlan` is what the
   * kind's `ServerSidePlan.serverPlan` answered for this object; kinds without one never get it.
   * `run` tells the run's switches (`--force-unlock`): what a kind refuses by default it then plans,
   * so that the plan shows what the apply of the same switches does.
   */
  compare(
    desired: Desired<Spec>,
    observed: Observed<Live>,
    serverPlan?: ServerPlan,
    run?: Pick<KindContext, 'option'>,
  ): Comparison;
  create(ctx: KindContext, desired: Desired<Spec>): Promise<Observed<Live>>;
  update(ctx: KindContext, desired: Desired<Spec>, observed: Observed<Live>): Promise<Observed<Live>>;
  /** `desired` is there when the manifest declares the object `ensure: absent`; absent for prune. */
  delete(ctx: KindContext, observed: Observed<Live>, desired?: Desired<Spec>): Promise<void>;
}

/** Erases the kind's own types for the generic planner and applier. */
// The registry holds kinds of every spec and live type.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyResourceKind = ResourceKind<any, any, any>;
