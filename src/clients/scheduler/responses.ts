/**
 * What Converge reads of the scheduler's answers, as schemas the HTTP layer checks each answer
 * against (see `../http/shape.ts`). Jobs are free-form beyond the fields the client, the Job kind
 * and `converge job …` read: those are typed (IDs and names compared as strings, indexes and
 * versions as integers, lists that are mapped as arrays), everything else passes through. Objects and
 * lists the scheduler sends as null when unset (`Periodic`, `Meta`, `Diffs`, `FailedTGAllocs`, …) are
 * nullable; so is every field of a parsed job, since the parse endpoint leaves unset ones null.
 */
import { type TSchema, Type } from '@sinclair/typebox';
import { lazySchema, nullable } from '../http/shape.js';

const Optional = <T extends TSchema>(schema: T) => Type.Optional(schema);
const OptionalNullable = <T extends TSchema>(schema: T) => Type.Optional(nullable(schema));

const StringList = lazySchema(() => nullable(Type.Array(Type.String())));
const Counts = lazySchema(() => nullable(Type.Record(Type.String(), Type.Integer())));

/** The fields of a job that Converge reads; `orNull` makes each one nullable (a parsed job). */
function jobShape(orNull: boolean) {
  const field = orNull ? OptionalNullable : Optional;
  const TaskGroup = Type.Object({
    Name: Type.String(),
    Count: field(Type.Integer()),
    Tasks: OptionalNullable(Type.Array(Type.Object({}))),
  });
  return Type.Object({
    ID: Type.String(),
    Name: field(Type.String()),
    Namespace: field(Type.String()),
    Type: field(Type.String()),
    Status: field(Type.String()),
    ParentID: field(Type.String()),
    Priority: field(Type.Integer()),
    Version: field(Type.Integer()),
    SubmitTime: field(Type.Integer()),
    CreateIndex: field(Type.Integer()),
    ModifyIndex: field(Type.Integer()),
    JobModifyIndex: field(Type.Integer()),
    Stop: field(Type.Boolean()),
    Stable: field(Type.Boolean()),
    Dispatched: field(Type.Boolean()),
    Datacenters: Type.Optional(StringList()),
    TaskGroups: OptionalNullable(Type.Array(TaskGroup)),
    Meta: OptionalNullable(Type.Object({})),
    Periodic: OptionalNullable(
      Type.Object({ Enabled: OptionalNullable(Type.Boolean()), Spec: OptionalNullable(Type.String()) }),
    ),
    ParameterizedJob: OptionalNullable(Type.Object({})),
  });
}

/** `GET /v1/job/:id`, and each of `Versions`. */
export const JobShape = lazySchema(() => jobShape(false));

/** `POST /v1/jobs/parse`: the job as the parser wrote it, unset fields null. */
export const ParsedJobShape = lazySchema(() => jobShape(true));

const TaskGroupSummary = lazySchema(() =>
  Type.Object({
    Queued: Optional(Type.Integer()),
    Complete: Optional(Type.Integer()),
    Failed: Optional(Type.Integer()),
    Running: Optional(Type.Integer()),
    Starting: Optional(Type.Integer()),
    Lost: Optional(Type.Integer()),
  }),
);

/** `GET /v1/job/:id/summary`; Children's counts are added up. */
export const JobSummaryShape = lazySchema(() =>
  Type.Object({
    JobID: Optional(Type.String()),
    Summary: OptionalNullable(Type.Record(Type.String(), TaskGroupSummary())),
    Children: OptionalNullable(
      Type.Object({ Pending: Type.Integer(), Running: Type.Integer(), Dead: Type.Integer() }),
    ),
  }),
);

/**
 * `GET /v1/jobs`: list items, filtered on `Stop` and `ParentID`; with `meta=true` each carries the
 * job's `Meta` (string values only: it is the ownership marker's place, and the service's own type).
 */
export const JobListShape = lazySchema(() =>
  nullable(
    Type.Array(
      Type.Object({
        ID: Type.String(),
        Meta: OptionalNullable(Type.Record(Type.String(), Type.String())),
        ParentID: Optional(Type.String()),
        Namespace: Optional(Type.String()),
        Type: Optional(Type.String()),
        Status: Optional(Type.String()),
        Priority: Optional(Type.Integer()),
        Stop: Optional(Type.Boolean()),
        SubmitTime: Optional(Type.Integer()),
        JobModifyIndex: Optional(Type.Integer()),
        JobSummary: OptionalNullable(JobSummaryShape()),
      }),
    ),
  ),
);

const FieldDiff = lazySchema(() =>
  Type.Object({
    Type: Type.String(),
    Name: Type.String(),
    Old: Optional(Type.String()),
    New: Optional(Type.String()),
    Annotations: Type.Optional(StringList()),
  }),
);

/**
 * A job diff and everything in it (task group, task and object diffs) as one recursive node: object
 * diffs nest as deep as the job does. One node rather than four, because ajv refuses a recursive
 * schema embedded at several places of one schema.
 */
const JobDiff = lazySchema(() =>
  Type.Recursive((Node) =>
    Type.Object({
      Type: Type.String(),
      Name: Optional(Type.String()),
      Fields: OptionalNullable(Type.Array(FieldDiff())),
      Objects: OptionalNullable(Type.Array(Node)),
      TaskGroups: OptionalNullable(Type.Array(Node)),
      Tasks: OptionalNullable(Type.Array(Node)),
      Annotations: Type.Optional(StringList()),
      Updates: Type.Optional(Counts()),
    }),
  ),
);

/** Why placements failed: the counts are shown per node, datacenter, class or constraint. */
const AllocMetric = lazySchema(() =>
  Type.Object({
    NodesEvaluated: Optional(Type.Integer()),
    NodesExhausted: Optional(Type.Integer()),
    CoalescedFailures: Optional(Type.Integer()),
    NodesAvailable: Type.Optional(Counts()),
    ClassFiltered: Type.Optional(Counts()),
    ConstraintFiltered: Type.Optional(Counts()),
    ClassExhausted: Type.Optional(Counts()),
    DimensionExhausted: Type.Optional(Counts()),
  }),
);

const FailedAllocs = lazySchema(() => nullable(Type.Record(Type.String(), AllocMetric())));

const Evaluation = lazySchema(() =>
  Type.Object({
    ID: Type.String(),
    Status: Type.String(),
    Priority: Optional(Type.Integer()),
    TriggeredBy: Optional(Type.String()),
    CreateIndex: Optional(Type.Integer()),
    FailedTGAllocs: Type.Optional(FailedAllocs()),
  }),
);

/** `POST /v1/job/:id/plan`: its index is what apply registers against. */
export const PlanShape = lazySchema(() =>
  Type.Object({
    JobModifyIndex: Type.Integer(),
    Diff: OptionalNullable(JobDiff()),
    Annotations: OptionalNullable(
      // DesiredTGUpdates' counts are compared with `> 0` and printed: integers.
      Type.Object({
        DesiredTGUpdates: OptionalNullable(
          Type.Record(Type.String(), Type.Record(Type.String(), Type.Integer())),
        ),
      }),
    ),
    FailedTGAllocs: Type.Optional(FailedAllocs()),
    CreatedEvals: OptionalNullable(Type.Array(Evaluation())),
    NextPeriodicLaunch: Optional(Type.String()),
    Warnings: Optional(Type.String()),
  }),
);

/** `GET /v1/job/:id/versions`: newest first, each a job; `Diffs` null unless asked for. */
export const JobVersionsShape = lazySchema(() =>
  Type.Object({
    Versions: Type.Array(JobShape()),
    Diffs: OptionalNullable(Type.Array(JobDiff())),
  }),
);

export const AllocationListShape = lazySchema(() =>
  nullable(
    Type.Array(
      Type.Object({
        ID: Type.String(),
        TaskGroup: Type.String(),
        JobID: Optional(Type.String()),
        NodeID: Optional(Type.String()),
        NodeName: Optional(Type.String()),
        DesiredStatus: Optional(Type.String()),
        ClientStatus: Optional(Type.String()),
        JobVersion: Optional(Type.Integer()),
        CreateIndex: Optional(Type.Integer()),
        CreateTime: Optional(Type.Integer()),
        TaskStates: OptionalNullable(Type.Record(Type.String(), Type.Object({}))),
      }),
    ),
  ),
);

export const EvaluationListShape = lazySchema(() => nullable(Type.Array(Evaluation())));

const Deployment = lazySchema(() =>
  Type.Object({
    ID: Type.String(),
    Status: Type.String(),
    JobID: Optional(Type.String()),
    JobVersion: Optional(Type.Integer()),
    StatusDescription: Optional(Type.String()),
    CreateIndex: Optional(Type.Integer()),
    TaskGroups: OptionalNullable(
      Type.Record(
        Type.String(),
        Type.Object({
          DesiredTotal: Optional(Type.Integer()),
          PlacedAllocs: Optional(Type.Integer()),
          HealthyAllocs: Optional(Type.Integer()),
          UnhealthyAllocs: Optional(Type.Integer()),
        }),
      ),
    ),
  }),
);

export const DeploymentListShape = lazySchema(() => nullable(Type.Array(Deployment())));

/** `GET /v1/job/:id/deployment`: the latest one, or null. */
export const LatestDeploymentShape = lazySchema(() => nullable(Deployment()));

export const ScaleStatusShape = lazySchema(() =>
  Type.Object({
    JobID: Optional(Type.String()),
    TaskGroups: Type.Record(
      Type.String(),
      Type.Object({
        Desired: Optional(Type.Integer()),
        Placed: Optional(Type.Integer()),
        Running: Optional(Type.Integer()),
        Healthy: Optional(Type.Integer()),
        Unhealthy: Optional(Type.Integer()),
        Events: OptionalNullable(Type.Array(Type.Object({}))),
      }),
    ),
  }),
);

/** Register, update, stop, revert and evaluate: the new index is the job's next version. */
export const JobWriteShape = lazySchema(() =>
  Type.Object({
    EvalID: Optional(Type.String()),
    EvalCreateIndex: Optional(Type.Integer()),
    JobModifyIndex: Type.Integer(),
    Warnings: Optional(Type.String()),
  }),
);

export const DispatchShape = lazySchema(() =>
  Type.Object({
    DispatchedJobID: Type.String(),
    EvalID: Optional(Type.String()),
    EvalCreateIndex: Optional(Type.Integer()),
    JobCreateIndex: Optional(Type.Integer()),
  }),
);

export const PeriodicForceShape = lazySchema(() =>
  Type.Object({
    EvalID: Optional(Type.String()),
    EvalCreateIndex: Optional(Type.Integer()),
  }),
);

export const StabilityShape = lazySchema(() => Type.Object({ JobModifyIndex: Optional(Type.Integer()) }));

/** A scale answer has an evaluation only when the change needed one. */
export const ScaleShape = lazySchema(() =>
  Type.Object({
    EvalID: Optional(Type.String()),
    EvalCreateIndex: Optional(Type.Integer()),
    JobModifyIndex: Optional(Type.Integer()),
    Warnings: Optional(Type.String()),
  }),
);
