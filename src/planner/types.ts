/**
 * The plan: what the planner computed and the applier executes. It is plain data (apart from the
 * desired specs, which are kept for the applier) so that it can be rendered, saved and reloaded.
 */
import type { AttributeDiff, Desired, Observed, PlanProblem, ResourceKey } from '../resources/contract.js';
import type { SecretCopies } from './masking.js';

export type Action = 'create' | 'update' | 'delete' | 'replace' | 'noop';

export interface Change {
  /** `AclRole/default/web-readers`: unique in a plan. */
  address: string;
  key: ResourceKey;
  action: Action;
  /** Attribute-level differences (empty for noop). */
  diffs: AttributeDiff[];
  /** The desired object in attribute form (null for delete). Sensitive values are masked. */
  after: Record<string, unknown> | null;
  /** The live object in attribute form (null for create). */
  before: Record<string, unknown> | null;
  /** The service's id of the live object, when there is one. */
  id?: string;
  /** The check-and-set token observed when planning; a saved plan refuses to apply when it moved. */
  observedVersion?: string | number;
  /**
   * For kinds with write-only attributes (a bind password the service never returns, so no version
   * moves when someone sets it): the digest Converge had recorded for each such attribute when
   * planning, `null` for none. A saved plan refuses to apply once the record moved (another apply set
   * the value since, or this plan was applied already), as it does when `observedVersion` moved.
   */
  writeOnlyBasis?: Record<string, string | null>;
  /** Addresses of changes that must succeed first. */
  dependsOn: string[];
  /** `file:line` of the manifest document, for messages. */
  source?: string;
  /** Why a delete happens (prune) or a replace is needed. */
  reason?: string;
  /** A deletion `--prune` planned: Converge created the object and the manifest no longer declares it. */
  prune?: boolean;
  /** The kind's remarks on the object (`Comparison.notes`), shown even when the action is noop. */
  notes?: string[];
  /** The change's blast radius as the kind tells it (`Comparison.impact`, `ResourceKind.impact`). */
  impact?: string[];
  /** Why the kind could not compare the object (`Comparison.notCompared`): its action is unknown. */
  notCompared?: string;
  /** What the kind leaves as it is on purpose though the manifest sets it (`Comparison.heldBack`). */
  heldBack?: string[];
  /**
   * Of `heldBack`, what still differs from the manifest (not what the live object moved past), and
   * what another owner keeps on purpose (`Comparison.keptLive`).
   */
  differs?: string[];
  /** What the kind's service calls its namespace (`organization`), for headings. */
  namespaceLabel?: string;
  /** For the applier: what the manifest wants, and what was observed. Not part of the JSON output. */
  desired?: Desired;
  observed?: Observed;
  /**
   * What the kind's service planned for the object (`ServerSidePlan.serverPlan`), kept beside the
   * observation it was made against. Not part of the JSON output nor of saved plans.
   */
  serverPlan?: unknown;
}

export interface PlanSummary {
  create: number;
  update: number;
  replace: number;
  delete: number;
  noop: number;
}

/** A plan of part of the manifest (`--target`, `--exclude`): what was asked, and how much it covers. */
export interface Targeting {
  targets: string[];
  excludes: string[];
  /** Declared objects planned, of `total` declared; the rest were not compared. */
  selected: number;
  total: number;
  /** Objects the patterns would have taken and why they were left out. */
  notes: string[];
  /**
   * With `--prune`: deletions prune would have made that the patterns left out. Neither planned nor
   * compared, and said so: "No changes" must not read as nothing left to delete.
   */
  pruneLeftOut?: string[];
  /**
   * With `--prune`: kinds no target names, whose objects were not even listed (fewer requests), so
   * what prune would delete of them is not known. Said, for the same reason as `pruneLeftOut`.
   */
  pruneKindsNotListed?: string[];
}

export interface Plan {
  /** Changes in apply order: dependencies first, deletions last and in reverse dependency order. */
  changes: Change[];
  summary: PlanSummary;
  /** Problems found while planning; a plan with problems is not applied. */
  problems: PlanProblem[];
  /** How many requests each service answered while planning (for benchmarks and `--json`). */
  requests: Record<string, number>;
  /** Set when only part of the manifest was planned. */
  targeting?: Targeting;
  /**
   * With `--prune`: addresses the inventory records as Converge's own that the listing did not find
   * live (deleted outside Converge). Nothing to delete; the record is stale.
   */
  missingOwned?: string[];
  /**
   * With `--prune`: addresses Converge created, of kinds its marker owns, in scopes (organizations,
   * namespaces) the manifest no longer manages, where no prune reaches. Left as they are.
   */
  ownedOutOfScope?: string[];
  /**
   * Without `--prune`: addresses the inventory records as Converge's (created or imported) that the
   * manifest no longer declares. They stay; `--prune` would delete those its scopes reach.
   */
  ownedNotDeclared?: string[];
  /**
   * Of the same, those of a kind `--prune` never deletes (a directory configuration): said apart, as
   * the hint to plan with `--prune` would not delete them.
   */
  ownedNotDeclaredNeverPruned?: string[];
  /**
   * With `--prune`, when no inventory was read (`workspace acme/inv: it does not exist, or this token
   * may not see it`): the prune knew of no object Converge made, so it found nothing to delete.
   */
  inventoryAbsent?: string;
  /**
   * With `--prune`: addresses the inventory records as Converge's (created or imported), of a kind
   * the manifest declares PruneScopes for, outside all of them and no longer declared: the declared
   * scopes limit the kind's prune, so no prune reaches them. Left as they are.
   */
  ownedOutsidePruneScopes?: string[];
  /**
   * With `--prune`: objects the inventory records as Converge's (created or imported) on a named
   * connection the manifest no longer declares, with that connection. Nothing can read or delete
   * them without its address and token; left as they are.
   */
  ownedOnUndeclaredConnection?: { address: string; connection: string }[];
  /**
   * With `--prune`: objects in a prune's reach that carry Converge's ownership marker but that the
   * inventory does not record as Converge's (created or imported) and the manifest does not declare:
   * another manifest's, made before this inventory, or made by hand and then updated by a Converge.
   * The marker says a Converge made or changed them, not this one: left as they are.
   */
  markedNotRecorded?: string[];
  /**
   * With `--prune`: objects the prune would delete whose kind refuses it (`DeletionRefusal`: a
   * workspace that holds a Converge inventory). Left as they are.
   */
  pruneRefused?: string[];
  /**
   * Every secret the whole manifest carries, compiled to mask its copies (`maskCopies`): the applier
   * masks its errors with it. Of the whole manifest, not of the changes: a targeted plan leaves out
   * the object that holds a secret another object copies. In memory only, never rendered or saved.
   */
  secretCopies?: SecretCopies;
  /**
   * With `--prune`: every live object the prune scopes listed, by address, with its id when the
   * service gives one: what tells an inventory record deleted by hand ("Not found") from an object
   * the prune saw and left. In memory only, never rendered or saved.
   */
  listedForPrune?: ReadonlyMap<string, string | undefined>;
}

export function summarise(changes: readonly Change[]): PlanSummary {
  const summary: PlanSummary = { create: 0, update: 0, replace: 0, delete: 0, noop: 0 };
  for (const c of changes) summary[c.action] += 1;
  return summary;
}

export function hasChanges(plan: Plan): boolean {
  return plan.changes.some((c) => c.action !== 'noop');
}
