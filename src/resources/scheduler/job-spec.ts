/**
 * What a Job manifest declares, and the job it stands for.
 *
 * `spec` holds either the job inline, in the service's own field names (`Type`, `Datacenters`,
 * `TaskGroups`, …), or `specFile:` naming a `.json` job (`{"Job": {...}}` or the bare job, as the
 * service's own CLI accepts) or a text job specification (HCL; parsed by the service's parse endpoint,
 * so it reads exactly as the service would). Converge's own switches are lower-case and so never
 * collide with the service's capitalised fields: `preserveCounts`, `purgeOnDelete`.
 *
 * The job Converge sends always carries the manifest's name as `ID`, its namespace as `Namespace`, and
 * the ownership marker in `Meta`, so prune can tell jobs Converge registered from anyone else's.
 */
import path from 'node:path';
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import type { Job } from '../../clients/scheduler/client.js';
import { jsonNestsDeeperThan } from '../../common/json-depth.js';
import { jsonErrorLineColumn } from '../../common/json-error-position.js';
import { printable } from '../../common/printable.js';
import type { Desired, PlanProblem, ResourceKey } from '../contract.js';
import { readLocalFile, unreadableReason } from '../local-file.js';
import {
  GO_DURATION_PART,
  inNanoseconds,
  JOB_DURATION_FIELDS,
  subMillisecondDurations,
} from './job-durations.js';

/** Largest job specification file read: far above any real job, and bounded all the same. */
const MAX_JOB_SPEC_BYTES = 4 * 1024 * 1024;
/** A manifest's own nesting limit (manifest/limits.ts MAX_NESTING_DEPTH): real jobs stay near 10. */
const MAX_JOB_FILE_NESTING = 64;

/** The `Meta` key (and value) that marks a job as registered by Converge. */
export const OWNERSHIP_META_KEY = 'converge-managed';
export const OWNERSHIP_META_VALUE = 'true';

/**
 * A duration of the job API: nanoseconds, as the service takes them, or a Go duration (`20s`,
 * `1m30s`) as a job file writes it, which Converge turns into nanoseconds before sending
 * (`inlineJob`); the plan shows both as `20s`. Checked here because the service refuses any other
 * text only when the plan is made (`cannot unmarshal string`), and one such job refused the whole apply.
 */
const NANOSECONDS_FORMS = 'nanoseconds, or a duration such as "20s", "1m30s" or "500ms"';
const Nanoseconds = Type.Union(
  [
    Type.Integer(),
    Type.Null(),
    // The text form's own description too: a text that does not match is told the forms it may take.
    Type.String({ pattern: `^(0|(${GO_DURATION_PART})+)$`, description: NANOSECONDS_FORMS }),
  ],
  { description: NANOSECONDS_FORMS },
);

/** Fields of the service's job objects, by name; the service validates their contents. */
function fields(names: readonly string[], typed: Record<string, TSchema> = {}): Record<string, TSchema> {
  return Object.fromEntries(
    names.map((n) => [
      n,
      Type.Optional(typed[n] ?? (JOB_DURATION_FIELDS.has(n) ? Nanoseconds : Type.Unknown())),
    ]),
  );
}

const StringMap = Type.Record(Type.String(), Type.String());

/**
 * An object of the service's with a fixed set of fields (`api.Resources`, `api.UpdateStrategy`, …),
 * listed so that a misspelt one (`MemoryMegs`) is an error with a suggestion: the service ignores a
 * field it does not know, and the plan would show the typo as if it were going to be applied.
 */
function closedObject(names: readonly string[]): TSchema {
  // `null` too: the service writes an unused block as null (a batch job's `Update`), and a job
  // copied from its own read must validate.
  return Type.Union([Type.Object(fields(names), { additionalProperties: false }), Type.Null()]);
}

const ResourcesSchema = closedObject([
  'CPU',
  'Cores',
  'MemoryMB',
  'MemoryMaxMB',
  'DiskMB',
  'IOPS',
  'Networks',
  'Devices',
  'NUMA',
  'SecretsMB',
]);
const UpdateSchema = closedObject([
  'Stagger',
  'MaxParallel',
  'HealthCheck',
  'MinHealthyTime',
  'HealthyDeadline',
  'ProgressDeadline',
  'Canary',
  'AutoRevert',
  'AutoPromote',
]);
const MigrateSchema = closedObject(['MaxParallel', 'HealthCheck', 'MinHealthyTime', 'HealthyDeadline']);
const RestartPolicySchema = closedObject(['Interval', 'Attempts', 'Delay', 'Mode', 'RenderTemplates']);
const ReschedulePolicySchema = closedObject([
  'Attempts',
  'Interval',
  'Delay',
  'DelayFunction',
  'MaxDelay',
  'Unlimited',
]);
const EphemeralDiskSchema = closedObject(['Sticky', 'Migrate', 'SizeMB']);

/**
 * The inline job's fields, as the service's API names them (its job, task group and task objects).
 * Listing them makes a misspelt field an error with a suggestion, where the service would silently
 * ignore it (a `Cuont: 3` that never scales anything); contents below these levels are the service's
 * to check.
 */
const TaskSchema = Type.Object(
  {
    Name: Type.String({ minLength: 1 }),
    ...fields(
      [
        'Driver',
        'User',
        'Lifecycle',
        'Config',
        'Constraints',
        'Affinities',
        'Env',
        'Services',
        'Resources',
        'RestartPolicy',
        'Meta',
        'KillTimeout',
        'LogConfig',
        'Artifacts',
        'Vault',
        'Consul',
        'Templates',
        'DispatchPayload',
        'VolumeMounts',
        'CSIPluginConfig',
        'Leader',
        'ShutdownDelay',
        'KillSignal',
        'Kind',
        'ScalingPolicies',
        'Identity',
        'Identities',
        'Actions',
        'Schedule',
        'Secrets',
      ],
      {
        Driver: Type.String({ minLength: 1 }),
        Env: StringMap,
        Meta: StringMap,
        Leader: Type.Boolean(),
        Resources: ResourcesSchema,
        RestartPolicy: RestartPolicySchema,
      },
    ),
  },
  { additionalProperties: false },
);

const TaskGroupSchema = Type.Object(
  {
    Name: Type.String({ minLength: 1 }),
    ...fields(
      [
        'Count',
        'Constraints',
        'Affinities',
        'Tasks',
        'Spreads',
        'Volumes',
        'RestartPolicy',
        'Disconnect',
        'ReschedulePolicy',
        'EphemeralDisk',
        'Update',
        'Migrate',
        'Networks',
        'Meta',
        'Services',
        'ShutdownDelay',
        'StopAfterClientDisconnect',
        'MaxClientDisconnect',
        'Scaling',
        'Consul',
        'PreventRescheduleOnLost',
      ],
      {
        Count: Type.Integer({ minimum: 0 }),
        Tasks: Type.Array(TaskSchema, { minItems: 1 }),
        Meta: StringMap,
        Update: UpdateSchema,
        Migrate: MigrateSchema,
        RestartPolicy: RestartPolicySchema,
        ReschedulePolicy: ReschedulePolicySchema,
        EphemeralDisk: EphemeralDiskSchema,
      },
    ),
  },
  { additionalProperties: false },
);

const JOB_FIELDS = [
  'Region',
  'Namespace',
  'ID',
  'Name',
  'Type',
  'Priority',
  'AllAtOnce',
  'Datacenters',
  'NodePool',
  'Constraints',
  'Affinities',
  'TaskGroups',
  'Update',
  'Multiregion',
  'Spreads',
  'Periodic',
  'ParameterizedJob',
  'Reschedule',
  'Migrate',
  'Meta',
  'UI',
  'ConsulNamespace',
  'VaultNamespace',
  'SecretsToken',
  'RegistryToken',
  'SecretsNamespace',
  'VersionTag',
] as const;

export const JobSpecSchema = Type.Object(
  {
    specFile: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          'a job file, relative to this manifest: .json (the JSON job, or {"Job": …}) or a text job specification (HCL), parsed by the service',
      }),
    ),
    preserveCounts: Type.Optional(
      Type.Boolean({
        description:
          "keep the live task groups' counts (changed by scaling) instead of the manifest's; new groups get the manifest's",
      }),
    ),
    purgeOnDelete: Type.Optional(
      Type.Boolean({
        description: 'with ensure: absent, stop and purge the job at once instead of only stopping it',
      }),
    ),
    // The inline job, in the service's own field names.
    ...fields(JOB_FIELDS, {
      ID: Type.String({ minLength: 1 }),
      Namespace: Type.String({ minLength: 1 }),
      Name: Type.String({ minLength: 1 }),
      Type: Type.String({ minLength: 1 }),
      Priority: Type.Integer({ minimum: 1 }),
      Datacenters: Type.Array(Type.String({ minLength: 1 })),
      TaskGroups: Type.Array(TaskGroupSchema, { minItems: 1 }),
      Meta: StringMap,
      Update: UpdateSchema,
      Migrate: MigrateSchema,
      Reschedule: ReschedulePolicySchema,
    }),
  },
  { additionalProperties: false },
);
export type JobSpec = Static<typeof JobSpecSchema> & Record<string, unknown>;

/** What `resolve` and `prepare` leave for the rest of the kind: the job to send, and where it came from. */
export interface JobLocal {
  /** Absent only while a text spec still waits for the service's parser (or failed to parse). */
  job?: Job;
  /** The text job specification, until parsed. */
  text?: string;
  /** The spec file as the manifest names it, for messages. */
  file?: string;
}

const CONVERGE_FIELDS = new Set(['specFile', 'preserveCounts', 'purgeOnDelete']);

/** The inline job fields of a spec (everything but Converge's own switches). */
export function inlineJob(spec: JobSpec): Record<string, unknown> {
  return Object.fromEntries(Object.entries(spec).filter(([k]) => !CONVERGE_FIELDS.has(k)));
}

/** The inline job as the service takes it: its durations written as text (`20s`) in nanoseconds. */
export function inlineJobToSend(spec: JobSpec): Record<string, unknown> {
  return inNanoseconds(inlineJob(spec)) as Record<string, unknown>;
}

/** Rules the schema says poorly: a job comes from one place, and has groups to run. */
export function jobSpecRules(spec: JobSpec): { pointer: string; message: string }[] {
  const inline = Object.keys(inlineJob(spec));
  if (spec.specFile !== undefined && inline.length > 0)
    return [
      {
        pointer: `/${inline[0]}`,
        message: `specFile and inline job fields exclude each other (found ${inline.join(', ')} beside specFile)`,
      },
    ];
  if (spec.specFile === undefined && spec.TaskGroups === undefined)
    return [
      { pointer: '', message: 'a job needs TaskGroups (the inline job), or specFile naming a job file' },
    ];
  return [];
}

/**
 * Durations written as a bare number under a millisecond, anywhere in the inline job: a walk of
 * whatever is there, so it runs beside the schema's problems too (`validateAnySpec`).
 */
export function jobDurationRules(spec: unknown): { pointer: string; message: string }[] {
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) return [];
  return subMillisecondDurations(inlineJob(spec as JobSpec)).map(({ pointer, value }) => ({
    pointer,
    message: `${pointer.slice(pointer.lastIndexOf('/') + 1)}: ${value} is ${value} nanoseconds, as the scheduler reads a bare number: write "${value}s" for seconds (or "${value}ms"), or "${value}ns" if nanoseconds are meant`,
  }));
}

export function localOf(desired: Desired<JobSpec>): JobLocal {
  return (desired.local ?? {}) as JobLocal;
}

export function isJsonFile(file: string): boolean {
  return path.extname(file).toLowerCase() === '.json';
}

/** Reads the spec file (JSON parsed here, text kept for the service's parser) or takes the inline job. */
export async function readJobSource(
  desired: Desired<JobSpec>,
): Promise<{ local: JobLocal; problems: PlanProblem[] }> {
  const spec = desired.spec;
  const file = spec.specFile;
  if (file === undefined) return finish(desired, { job: inlineJobToSend(spec) as Job }, '');
  const problem = (message: string): { local: JobLocal; problems: PlanProblem[] } => ({
    local: { file },
    problems: [
      {
        key: desired.key,
        message: `${file}: ${message}`,
        ...(desired.resource ? { position: desired.resource.locate('/spec/specFile') } : {}),
      },
    ],
  });
  // Only inside the manifest root: a `specFile: /etc/passwd` would otherwise go to the parse endpoint.
  const read = await readLocalFile(desired, file, MAX_JOB_SPEC_BYTES);
  if (!read.ok) return problem(unreadableReason(read));
  const text = read.text;
  if (text.trim() === '') return problem('the job specification is empty');
  if (!isJsonFile(file)) return { local: { file, text }, problems: [] };
  // Held to a manifest's limit: what compares, masks and renders a job recurses per level, and a
  // pull request's job file thousands of levels deep crashed the plan before any request.
  if (jsonNestsDeeperThan(text, MAX_JOB_FILE_NESTING))
    return problem(`the job nests deeper than ${MAX_JOB_FILE_NESTING} levels, as a manifest may not either`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    // The parser quotes the text it choked on: the file's bytes, shown as one printable line.
    return problem(`not valid JSON: ${printable(withLineAndColumn(error as Error, text))}`);
  }
  const job = isObject(parsed) && isObject(parsed.Job) ? parsed.Job : parsed;
  if (!isObject(job)) return problem('expected a JSON object: the job, or {"Job": {...}}');
  return finish(desired, { job: job as Job, file }, '/spec/specFile');
}

/** JSON.parse's message with the position it names said as a line and a column. */
function withLineAndColumn(error: Error, text: string): string {
  const at = jsonErrorLineColumn(text, error);
  if (!at) return error.message;
  const where = `at line ${at.line}, column ${at.column}`;
  return at.named ? error.message.replace(at.named, where) : `${error.message} (${where})`;
}

/**
 * The job as Converge sends it: the manifest's ID and namespace (a different one written in the job
 * itself is a problem, not silently replaced) and the ownership marker.
 */
export function finish(
  desired: Desired<JobSpec>,
  local: JobLocal,
  pointer: string,
): { local: JobLocal; problems: PlanProblem[] } {
  const job = local.job!;
  const key = desired.key;
  const problems: PlanProblem[] = [];
  const at = (field: string) =>
    desired.resource ? { position: desired.resource.locate(pointer || `/spec/${field}`) } : {};
  const from = local.file ? `${local.file} says` : 'spec says';
  if (job.ID !== undefined && job.ID !== key.name)
    problems.push({
      key,
      message: printable(`${from} ID "${String(job.ID)}", but metadata.name is "${key.name}"`),
      ...at('ID'),
    });
  if (job.Namespace !== undefined && job.Namespace !== null && job.Namespace !== key.namespace)
    problems.push({
      key,
      message: printable(
        `${from} Namespace "${String(job.Namespace)}", but metadata.namespace is "${key.namespace ?? 'default'}"`,
      ),
      ...at('Namespace'),
    });
  return { local: { ...local, job: stamp(job, key) }, problems };
}

function stamp(job: Job, key: ResourceKey): Job {
  const meta = isObject(job.Meta) ? (job.Meta as Record<string, string>) : {};
  return {
    ...job,
    ID: key.name,
    ...(key.namespace !== undefined ? { Namespace: key.namespace } : {}),
    Meta: { ...meta, [OWNERSHIP_META_KEY]: OWNERSHIP_META_VALUE },
  };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The service parser's message about a spec file, naming the file: the service parses a text it was
 * sent and calls it `input.hcl` (`Failed to parse job: input.hcl:3,13-4,1: Invalid expression; …`).
 * One printable line: the parser quotes the spec's text, and the service may be hostile.
 */
export function parseMessageFor(file: string, message: string): string {
  return printable(
    message.includes('input.hcl') ? message.replaceAll('input.hcl', file) : `${file}: ${message}`,
  );
}

/** The fields an inline job may write at each level, for writing a live job back as one (export). */
export const INLINE_FIELDS = {
  job: JOB_FIELDS as readonly string[],
  group: Object.keys(TaskGroupSchema.properties),
  task: Object.keys(TaskSchema.properties),
} as const;
