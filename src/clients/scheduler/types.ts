/**
 * The scheduler's job objects as its API sends them (spec part B; field names are the service's own).
 * Jobs are free-form beyond the fields Converge reads: the manifest carries the service's own job JSON
 * and the client passes it through untouched.
 */
import type { BlockingParameters } from '../http/blocking-query.js';

/** Any JSON object of the service (a job, a task group, an allocation) not modelled field by field. */
export type JsonObject = Record<string, unknown>;

export interface ParameterizedJobConfig {
  /** `optional` (default), `required` or `forbidden`. */
  Payload?: string;
  MetaRequired?: string[] | null;
  MetaOptional?: string[] | null;
}

export interface PeriodicConfig {
  Enabled?: boolean;
  Spec?: string;
  SpecType?: string;
  ProhibitOverlap?: boolean;
  TimeZone?: string;
}

export interface TaskGroup extends JsonObject {
  Name: string;
  Count?: number;
  Tasks?: JsonObject[];
  Update?: JsonObject | null;
}

export interface Job extends JsonObject {
  ID: string;
  Name?: string;
  Namespace?: string;
  Type?: string;
  Priority?: number;
  Datacenters?: string[];
  TaskGroups?: TaskGroup[];
  Update?: JsonObject | null;
  Periodic?: PeriodicConfig | null;
  ParameterizedJob?: ParameterizedJobConfig | null;
  Meta?: Record<string, string> | null;
  ParentID?: string;
  Dispatched?: boolean;
  Stop?: boolean;
  Stable?: boolean;
  Version?: number;
  Status?: string;
  StatusDescription?: string;
  SubmitTime?: number;
  CreateIndex?: number;
  ModifyIndex?: number;
  JobModifyIndex?: number;
}

export interface JobListItem extends JsonObject {
  ID: string;
  ParentID?: string;
  Name?: string;
  Namespace?: string;
  Type?: string;
  Priority?: number;
  Status?: string;
  StatusDescription?: string;
  Stop?: boolean;
  CreateIndex?: number;
  ModifyIndex?: number;
  JobModifyIndex?: number;
  JobSummary?: JobSummary;
  /** Only when the list was asked with `meta: true`, and left out for a job without Meta. */
  Meta?: Record<string, string> | null;
}

export interface TaskGroupSummary {
  Queued: number;
  Complete: number;
  Failed: number;
  Running: number;
  Starting: number;
  Lost: number;
}

export interface JobSummary {
  JobID: string;
  Namespace?: string;
  Summary: Record<string, TaskGroupSummary>;
  Children?: { Pending: number; Running: number; Dead: number };
  CreateIndex?: number;
  ModifyIndex?: number;
}

export interface TaskEvent extends JsonObject {
  Type: string;
  Time?: number;
  Message?: string;
  DisplayMessage?: string;
}

export interface TaskState {
  State: string;
  Failed: boolean;
  StartedAt?: string | null;
  FinishedAt?: string | null;
  Events?: TaskEvent[] | null;
}

export interface Allocation extends JsonObject {
  ID: string;
  EvalID?: string;
  Name?: string;
  NodeID?: string;
  NodeName?: string;
  JobID: string;
  TaskGroup: string;
  DesiredStatus?: string;
  DesiredDescription?: string;
  ClientStatus?: string;
  ClientDescription?: string;
  TaskStates?: Record<string, TaskState> | null;
  JobVersion?: number;
  CreateIndex?: number;
  ModifyIndex?: number;
  CreateTime?: number;
  ModifyTime?: number;
}

export interface Evaluation extends JsonObject {
  ID: string;
  Priority?: number;
  Type?: string;
  TriggeredBy?: string;
  JobID: string;
  JobModifyIndex?: number;
  Status: string;
  StatusDescription?: string;
  BlockedEval?: string;
  FailedTGAllocs?: Record<string, AllocMetric> | null;
  QueuedAllocations?: Record<string, number> | null;
  CreateIndex?: number;
  ModifyIndex?: number;
  CreateTime?: number;
  ModifyTime?: number;
}

/** Why placements failed (the scheduler's allocation metric); only the fields Converge shows are typed. */
export interface AllocMetric extends JsonObject {
  NodesEvaluated?: number;
  NodesFiltered?: number;
  NodesAvailable?: Record<string, number> | null;
  NodesExhausted?: number;
  ConstraintFiltered?: Record<string, number> | null;
  DimensionExhausted?: Record<string, number> | null;
  ClassExhausted?: Record<string, number> | null;
  CoalescedFailures?: number;
}

export interface DeploymentGroupState {
  AutoRevert?: boolean;
  Promoted?: boolean;
  PlacedCanaries?: string[] | null;
  DesiredCanaries?: number;
  DesiredTotal?: number;
  PlacedAllocs?: number;
  HealthyAllocs?: number;
  UnhealthyAllocs?: number;
}

export interface Deployment extends JsonObject {
  ID: string;
  JobID: string;
  JobVersion?: number;
  JobModifyIndex?: number;
  JobCreateIndex?: number;
  TaskGroups?: Record<string, DeploymentGroupState>;
  Status: string;
  StatusDescription?: string;
  CreateIndex?: number;
  ModifyIndex?: number;
}

/** One field of a job diff: `Name` is dotted or keyed (`Meta[owner]`). */
export interface FieldDiff {
  Type: DiffType;
  Name: string;
  Old: string;
  New: string;
  Annotations?: string[] | null;
}

export type DiffType = 'None' | 'Added' | 'Deleted' | 'Edited';

/** What every level of a job diff has: its change, its own fields and its nested objects. */
interface DiffLevel {
  Type: DiffType;
  Fields?: FieldDiff[] | null;
  Objects?: ObjectDiff[] | null;
}

export interface ObjectDiff extends DiffLevel {
  Name: string;
}

export interface TaskDiff extends ObjectDiff {
  Annotations?: string[] | null;
}

export interface TaskGroupDiff extends ObjectDiff {
  Tasks?: TaskDiff[] | null;
  /** Planned allocation changes by kind: `create`, `destroy`, `in-place update`, `create/destroy update`, `ignore`, … */
  Updates?: Record<string, number> | null;
}

export interface JobDiff extends DiffLevel {
  ID: string;
  TaskGroups?: TaskGroupDiff[] | null;
}

export interface DesiredUpdates {
  Ignore?: number;
  Place?: number;
  Migrate?: number;
  Stop?: number;
  InPlaceUpdate?: number;
  DestructiveUpdate?: number;
  Canary?: number;
  Preemptions?: number;
}

export interface PlanResponse {
  Annotations?: {
    DesiredTGUpdates?: Record<string, DesiredUpdates> | null;
    PreemptedAllocs?: unknown[] | null;
  } | null;
  FailedTGAllocs?: Record<string, AllocMetric> | null;
  /** The stored job's index (0 when the job is new): pass it as `JobModifyIndex` with `EnforceIndex`. */
  JobModifyIndex: number;
  CreatedEvals?: Evaluation[] | null;
  Diff?: JobDiff | null;
  /** RFC 3339; the zero time `0001-01-01T00:00:00Z` when the job is not periodic. */
  NextPeriodicLaunch?: string;
  Warnings?: string;
  Index?: number;
}

/** What register, update, stop, revert and evaluate answer. */
export interface JobWriteResponse {
  EvalID: string;
  EvalCreateIndex: number;
  JobModifyIndex: number;
  Warnings?: string;
  Index?: number;
}

export interface DispatchResponse {
  DispatchedJobID: string;
  EvalID: string;
  EvalCreateIndex: number;
  JobCreateIndex: number;
  Index?: number;
}

export interface PeriodicForceResponse {
  EvalID: string;
  EvalCreateIndex: number;
  Index?: number;
}

export interface StabilityResponse {
  JobModifyIndex?: number;
  Index?: number;
}

/** A scale call's answer: `EvalID`/`EvalCreateIndex` only when the change needed an evaluation. */
export interface ScaleResponse {
  EvalID?: string;
  EvalCreateIndex?: number;
  JobModifyIndex: number;
  Index?: number;
  Warnings?: string;
}

export interface ScalingEvent extends JsonObject {
  Time?: number;
  Count?: number | null;
  PreviousCount?: number;
  Message?: string;
  Error?: boolean | string;
  Meta?: Record<string, unknown> | null;
  EvalID?: string | null;
}

export interface TaskGroupScaleStatus {
  Desired: number;
  Placed: number;
  Running: number;
  Healthy: number;
  Unhealthy: number;
  Events?: ScalingEvent[] | null;
}

export interface JobScaleStatus {
  JobID: string;
  Namespace?: string;
  JobCreateIndex?: number;
  JobModifyIndex?: number;
  JobStopped?: boolean;
  TaskGroups: Record<string, TaskGroupScaleStatus>;
}

export interface JobVersions {
  Versions: Job[];
  /** One diff per version against the one before it; null unless asked for. */
  Diffs: JobDiff[] | null;
  Index?: number;
}

export interface NamespaceOption {
  /** Sent as query `namespace`; `'*'` lists every namespace the token may see (list only). */
  namespace?: string;
  signal?: AbortSignal;
}

/** Blocking-query parameters for reads (see `BlockingParameters`), in a namespace. */
export interface BlockingOptions extends NamespaceOption, BlockingParameters {}

/** A read's value and the service's index at the time (for the next blocking read). */
export type { Indexed } from '../http/blocking-query.js';

export interface RegisterOptions extends NamespaceOption {
  /** Check-and-set: apply only if the stored job's `JobModifyIndex` equals `jobModifyIndex` (0 = only if new). */
  enforceIndex?: boolean;
  jobModifyIndex?: number;
  policyOverride?: boolean;
  /** Keep the stored groups' counts instead of the new spec's (counts changed by scaling survive). */
  preserveCounts?: boolean;
}

export interface PlanOptions extends NamespaceOption {
  /** Ask for the structured diff (default true here: Converge always renders it). */
  diff?: boolean;
  policyOverride?: boolean;
}

export interface ParseOptions {
  /** Fill unset fields with the service's defaults. */
  canonicalize?: boolean;
  /** HCL variables, as `name=value` lines (the service's `Variables`). */
  variables?: string;
  /** Ask for the legacy (HCL 1) parser (the spec's `HCLv1`; current releases of the real scheduler parse HCL 2 only). */
  hclv1?: boolean;
  signal?: AbortSignal;
}

export interface DispatchOptions extends NamespaceOption {
  /** Raw payload bytes; sent base64 (the service allows at most 16384 bytes). */
  payload?: Uint8Array | string;
  meta?: Record<string, string>;
}

export interface ScaleOptions extends NamespaceOption {
  /** Omit to record an event without changing the count. */
  count?: number;
  message?: string;
  /**
   * Records the event as an error with this text; no count allowed with it. The spec types `Error` as
   * a string (the real scheduler's API has a boolean there); Converge sends the spec's form.
   */
  error?: string;
  meta?: Record<string, unknown>;
  policyOverride?: boolean;
}

export interface RevertOptions extends NamespaceOption {
  /** Refuse unless the job's current version is this one. */
  enforcePriorVersion?: number;
  /** Tokens the reverted job's integrations need (the spec's `RegistryToken`, `SecretsToken`). */
  registryToken?: string;
  secretsToken?: string;
}

export interface StopOptions extends NamespaceOption {
  purge?: boolean;
}

export interface ListOptions extends BlockingOptions {
  prefix?: string;
}

export interface JobListOptions extends ListOptions {
  /** `meta=true` (the service since Nomad 1.6): each item carries its job's `Meta`. */
  meta?: boolean;
}

export interface AllOption extends BlockingOptions {
  /** Include those of an earlier job with the same ID (stopped and purged, then registered again). */
  all?: boolean;
}

/** The payload size the service accepts for dispatch, in bytes. */
export const MAX_DISPATCH_PAYLOAD_BYTES = 16384;
