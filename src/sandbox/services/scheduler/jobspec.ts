/**
 * HCL job specifications to the API's JSON job, as the real `jobspec2` package decodes them into
 * `api.Job`: snake_case attributes and blocks become the API's field names (`memory` → `MemoryMB`,
 * `cron` → `Spec`, `port` → `DynamicPorts`...), durations (`"30s"`) become nanoseconds, block labels
 * become names, `meta`/`env` become string maps (as blocks or as attributes), a task's `config` is
 * kept as the driver's free-form map (its nested blocks as lists of maps, as the real parser keeps
 * them).
 *
 * Behaviour the sandbox chose, stated so callers can rely on it:
 * - an argument or block the real schema does not know is refused as the real parser refuses it,
 *   `Unsupported argument` / `Unsupported block type`, with the position of the name's first
 *   occurrence in the source (the underlying parser reports none; the position is looked up);
 * - blocks this slice does not map (connect, task-level scaling, job-level vault and secret blocks,
 *   CSI plugins, actions, schedules, multiregion contents) are refused the same way, with the detail
 *   saying the sandbox does not map them, rather than silently dropped;
 * - expressions are not evaluated: a string field keeps its `${...}` text (right for runtime
 *   interpolation such as `${NOMAD_META_x}` or `${attr.kernel.name}`, which the real parser keeps too);
 *   a number, boolean or duration field given an expression is refused; `variable` and `locals` blocks
 *   are refused.
 */
import { parseGoDuration } from '../../core/duration.js';
import type { Json } from './model.js';

/** A job spec the sandbox refuses; the message is HCL-style (`input.hcl:3,5-8: Summary; Detail`). */
export class JobSpecError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JobSpecError';
  }
}

type Kind = 'string' | 'int' | 'bool' | 'duration' | 'strings' | 'any';
type Mode = 'one' | 'list' | 'labeled' | 'labeledMap';
interface Schema {
  attrs: Record<string, readonly [string, Kind]>;
  blocks?: Record<string, readonly [string, Schema | 'map' | 'raw', Mode]>;
  /** The API field a block's label goes to. */
  label?: string;
  /** Fields the API struct always has, with their zero values (pointers: null), in the API's order. */
  zero?: Json;
  /** A post-decoding step the real parser makes. */
  finish?: (out: Json, body: Json) => void;
}

const s = (field: string) => [field, 'string'] as const;
const i = (field: string) => [field, 'int'] as const;
const b = (field: string) => [field, 'bool'] as const;
const d = (field: string) => [field, 'duration'] as const;
const l = (field: string) => [field, 'strings'] as const;

const CONSTRAINT: Schema = {
  attrs: {
    attribute: s('LTarget'),
    value: s('RTarget'),
    operator: s('Operand'),
    version: s('version'),
    semver: s('semver'),
    regexp: s('regexp'),
    set_contains: s('set_contains'),
    set_contains_any: s('set_contains_any'),
    set_contains_all: s('set_contains_all'),
    distinct_hosts: b('distinct_hosts'),
    distinct_property: s('distinct_property'),
  },
  zero: { LTarget: '', RTarget: '', Operand: '' },
  // The real `decodeConstraint`: operator shorthands set Operand and the target, `=` by default.
  finish(out) {
    for (const op of ['version', 'semver', 'regexp', 'set_contains', 'set_contains_any', 'set_contains_all'])
      if (out[op] !== undefined) {
        out.Operand = op;
        out.RTarget = out[op];
        delete out[op];
      }
    if (out.distinct_hosts !== undefined) {
      out.Operand = 'distinct_hosts';
      out.RTarget = String(out.distinct_hosts);
      delete out.distinct_hosts;
    }
    if (out.distinct_property !== undefined) {
      out.Operand = 'distinct_property';
      out.LTarget = out.distinct_property;
      delete out.distinct_property;
    }
    if (out.Operand === '') out.Operand = '=';
  },
};
const AFFINITY: Schema = {
  attrs: { ...CONSTRAINT.attrs, weight: i('Weight') },
  zero: { LTarget: '', RTarget: '', Operand: '', Weight: null },
  finish: CONSTRAINT.finish,
};
const SPREAD: Schema = {
  attrs: { attribute: s('Attribute'), weight: i('Weight') },
  blocks: { target: ['SpreadTarget', { attrs: { percent: i('Percent') }, label: 'Value' }, 'labeled'] },
};
const UPDATE: Schema = {
  attrs: {
    stagger: d('Stagger'),
    max_parallel: i('MaxParallel'),
    health_check: s('HealthCheck'),
    min_healthy_time: d('MinHealthyTime'),
    healthy_deadline: d('HealthyDeadline'),
    progress_deadline: d('ProgressDeadline'),
    canary: i('Canary'),
    auto_revert: b('AutoRevert'),
    auto_promote: b('AutoPromote'),
  },
};
const MIGRATE: Schema = {
  attrs: {
    max_parallel: i('MaxParallel'),
    health_check: s('HealthCheck'),
    min_healthy_time: d('MinHealthyTime'),
    healthy_deadline: d('HealthyDeadline'),
  },
};
const RESCHEDULE: Schema = {
  attrs: {
    attempts: i('Attempts'),
    interval: d('Interval'),
    delay: d('Delay'),
    delay_function: s('DelayFunction'),
    max_delay: d('MaxDelay'),
    unlimited: b('Unlimited'),
  },
};
const RESTART: Schema = {
  attrs: {
    interval: d('Interval'),
    attempts: i('Attempts'),
    delay: d('Delay'),
    mode: s('Mode'),
    render_templates: b('RenderTemplates'),
  },
};
const PERIODIC: Schema = {
  attrs: {
    enabled: b('Enabled'),
    cron: s('Spec'),
    crons: l('Specs'),
    prohibit_overlap: b('ProhibitOverlap'),
    time_zone: s('TimeZone'),
  },
  // The real `normalizeJob`: a cron spec makes the spec type `cron`.
  finish(out) {
    if (out.Spec !== undefined || out.Specs !== undefined) out.SpecType = 'cron';
  },
};
const PARAMETERIZED: Schema = {
  attrs: { payload: s('Payload'), meta_required: l('MetaRequired'), meta_optional: l('MetaOptional') },
};
const PORT: Schema = {
  attrs: {
    static: i('Value'),
    to: i('To'),
    host_network: s('HostNetwork'),
    ignore_collision: b('IgnoreCollision'),
  },
  label: 'Label',
  zero: { Label: '', Value: 0, To: 0, HostNetwork: '' },
};
const NETWORK: Schema = {
  attrs: {
    mode: s('Mode'),
    device: s('Device'),
    cidr: s('CIDR'),
    ip: s('IP'),
    hostname: s('Hostname'),
    mbits: i('MBits'),
  },
  blocks: {
    port: ['DynamicPorts', PORT, 'labeled'],
    reserved_ports: ['ReservedPorts', PORT, 'labeled'],
    dns: ['DNS', { attrs: { servers: l('Servers'), searches: l('Searches'), options: l('Options') } }, 'one'],
  },
  // The real `normalizeNetworkPorts`: a `port` block with a static value is a reserved port.
  finish(out) {
    const dynamic = (out.DynamicPorts as Json[] | undefined) ?? [];
    const reserved = dynamic.filter((p) => (p.Value as number) > 0);
    if (reserved.length === 0) return;
    out.DynamicPorts = dynamic.filter((p) => !reserved.includes(p));
    if ((out.DynamicPorts as Json[]).length === 0) delete out.DynamicPorts;
    out.ReservedPorts = [...((out.ReservedPorts as Json[] | undefined) ?? []), ...reserved];
  },
};
const CHECK_RESTART: Schema = {
  attrs: { limit: i('Limit'), grace: d('Grace'), ignore_warnings: b('IgnoreWarnings') },
};
const CHECK: Schema = {
  attrs: {
    name: s('Name'),
    type: s('Type'),
    command: s('Command'),
    args: l('Args'),
    path: s('Path'),
    protocol: s('Protocol'),
    port: s('PortLabel'),
    expose: b('Expose'),
    address_mode: s('AddressMode'),
    advertise: s('Advertise'),
    interval: d('Interval'),
    timeout: d('Timeout'),
    initial_status: s('InitialStatus'),
    notes: s('Notes'),
    tls_server_name: s('TLSServerName'),
    tls_skip_verify: b('TLSSkipVerify'),
    method: s('Method'),
    grpc_service: s('GRPCService'),
    grpc_use_tls: b('GRPCUseTLS'),
    task: s('TaskName'),
    success_before_passing: i('SuccessBeforePassing'),
    failures_before_critical: i('FailuresBeforeCritical'),
    failures_before_warning: i('FailuresBeforeWarning'),
    body: s('Body'),
    on_update: s('OnUpdate'),
  },
  blocks: { header: ['Header', 'raw', 'one'], check_restart: ['CheckRestart', CHECK_RESTART, 'one'] },
};
const SERVICE: Schema = {
  attrs: {
    name: s('Name'),
    tags: l('Tags'),
    canary_tags: l('CanaryTags'),
    enable_tag_override: b('EnableTagOverride'),
    port: s('PortLabel'),
    address_mode: s('AddressMode'),
    address: s('Address'),
    task: s('TaskName'),
    on_update: s('OnUpdate'),
    provider: s('Provider'),
    cluster: s('Cluster'),
    kind: s('Kind'),
  },
  blocks: {
    check: ['Checks', CHECK, 'list'],
    check_restart: ['CheckRestart', CHECK_RESTART, 'one'],
    meta: ['Meta', 'map', 'one'],
    canary_meta: ['CanaryMeta', 'map', 'one'],
    tagged_addresses: ['TaggedAddresses', 'map', 'one'],
  },
};
const EPHEMERAL_DISK: Schema = { attrs: { sticky: b('Sticky'), migrate: b('Migrate'), size: i('SizeMB') } };
const CONSUL: Schema = {
  attrs: { namespace: s('Namespace'), cluster: s('Cluster'), partition: s('Partition') },
};
const VOLUME: Schema = {
  attrs: {
    type: s('Type'),
    source: s('Source'),
    read_only: b('ReadOnly'),
    sticky: b('Sticky'),
    access_mode: s('AccessMode'),
    attachment_mode: s('AttachmentMode'),
    per_alloc: b('PerAlloc'),
  },
  blocks: {
    mount_options: ['MountOptions', { attrs: { fs_type: s('FSType'), mount_flags: l('MountFlags') } }, 'one'],
  },
  label: 'Name',
};
const SCALING: Schema = {
  attrs: { min: i('Min'), max: i('Max'), enabled: b('Enabled') },
  blocks: { policy: ['Policy', 'raw', 'one'] },
};
const DEVICE: Schema = {
  attrs: { count: i('Count') },
  blocks: { constraint: ['Constraints', CONSTRAINT, 'list'], affinity: ['Affinities', AFFINITY, 'list'] },
  label: 'Name',
};
const RESOURCES: Schema = {
  attrs: {
    cpu: i('CPU'),
    cores: i('Cores'),
    memory: i('MemoryMB'),
    memory_max: i('MemoryMaxMB'),
    disk: i('DiskMB'),
    iops: i('IOPS'),
    secrets: i('SecretsMB'),
  },
  blocks: { network: ['Networks', NETWORK, 'list'], device: ['Devices', DEVICE, 'labeled'] },
};
const ARTIFACT: Schema = {
  attrs: {
    source: s('GetterSource'),
    destination: s('RelativeDest'),
    mode: s('GetterMode'),
    insecure: b('GetterInsecure'),
    chown: b('Chown'),
  },
  blocks: { options: ['GetterOptions', 'map', 'one'], headers: ['GetterHeaders', 'map', 'one'] },
};
const TEMPLATE: Schema = {
  attrs: {
    source: s('SourcePath'),
    destination: s('DestPath'),
    data: s('EmbeddedTmpl'),
    change_mode: s('ChangeMode'),
    change_signal: s('ChangeSignal'),
    once: b('Once'),
    splay: d('Splay'),
    perms: s('Perms'),
    uid: i('Uid'),
    gid: i('Gid'),
    left_delimiter: s('LeftDelim'),
    right_delimiter: s('RightDelim'),
    env: b('Envvars'),
    vault_grace: d('VaultGrace'),
    error_on_missing_key: b('ErrMissingKey'),
  },
  blocks: {
    wait: ['Wait', { attrs: { min: d('Min'), max: d('Max') } }, 'one'],
    change_script: [
      'ChangeScript',
      {
        attrs: {
          command: s('Command'),
          args: l('Args'),
          timeout: d('Timeout'),
          fail_on_error: b('FailOnError'),
        },
      },
      'one',
    ],
  },
};
const VAULT: Schema = {
  attrs: {
    policies: l('Policies'),
    role: s('Role'),
    namespace: s('Namespace'),
    cluster: s('Cluster'),
    env: b('Env'),
    disable_file: b('DisableFile'),
    change_mode: s('ChangeMode'),
    change_signal: s('ChangeSignal'),
    allow_token_expiration: b('AllowTokenExpiration'),
  },
  // The real `normalizeVault` defaults.
  finish(out) {
    out.Env ??= true;
    out.DisableFile ??= false;
    out.ChangeMode ??= 'restart';
  },
};
const IDENTITY: Schema = {
  attrs: {
    name: s('Name'),
    aud: l('Audience'),
    env: b('Env'),
    file: b('File'),
    filepath: s('Filepath'),
    service_name: s('ServiceName'),
    change_mode: s('ChangeMode'),
    change_signal: s('ChangeSignal'),
    ttl: d('TTL'),
  },
};
const TASK: Schema = {
  attrs: {
    driver: s('Driver'),
    user: s('User'),
    leader: b('Leader'),
    shutdown_delay: d('ShutdownDelay'),
    kill_timeout: d('KillTimeout'),
    kill_signal: s('KillSignal'),
    kind: s('Kind'),
  },
  blocks: {
    lifecycle: ['Lifecycle', { attrs: { hook: s('Hook'), sidecar: b('Sidecar') } }, 'one'],
    config: ['Config', 'raw', 'one'],
    constraint: ['Constraints', CONSTRAINT, 'list'],
    affinity: ['Affinities', AFFINITY, 'list'],
    env: ['Env', 'map', 'one'],
    service: ['Services', SERVICE, 'list'],
    resources: ['Resources', RESOURCES, 'one'],
    restart: ['RestartPolicy', RESTART, 'one'],
    meta: ['Meta', 'map', 'one'],
    logs: [
      'LogConfig',
      {
        attrs: {
          max_files: i('MaxFiles'),
          max_file_size: i('MaxFileSizeMB'),
          enabled: b('Enabled'),
          disabled: b('Disabled'),
        },
      },
      'one',
    ],
    artifact: ['Artifacts', ARTIFACT, 'list'],
    vault: ['Vault', VAULT, 'one'],
    consul: ['Consul', CONSUL, 'one'],
    template: ['Templates', TEMPLATE, 'list'],
    dispatch_payload: ['DispatchPayload', { attrs: { file: s('File') } }, 'one'],
    volume_mount: [
      'VolumeMounts',
      {
        attrs: {
          volume: s('Volume'),
          destination: s('Destination'),
          read_only: b('ReadOnly'),
          propagation_mode: s('PropagationMode'),
          selinux_label: s('SELinuxLabel'),
        },
      },
      'list',
    ],
    identity: ['Identities', IDENTITY, 'list'],
  },
  label: 'Name',
  zero: {
    Name: '',
    Driver: '',
    User: '',
    Lifecycle: null,
    Config: null,
    Constraints: null,
    Affinities: null,
    Env: null,
    Services: null,
    Resources: null,
    RestartPolicy: null,
    Meta: null,
    KillTimeout: null,
    LogConfig: null,
    Artifacts: null,
    Vault: null,
    Consul: null,
    Templates: null,
    DispatchPayload: null,
    VolumeMounts: null,
    Leader: false,
    ShutdownDelay: 0,
    KillSignal: '',
    Kind: '',
    ScalingPolicies: null,
    Secrets: null,
    Identity: null,
    Identities: null,
    Actions: null,
    Schedule: null,
  },
  // The real `normalizeJob`: the default (unnamed or `default`) identity is the task's `Identity`.
  finish(out) {
    const ids = out.Identities as Json[] | null;
    const idx = ids?.findIndex((w) => !w.Name || w.Name === 'default') ?? -1;
    if (ids && idx >= 0) {
      out.Identity = ids[idx];
      ids.splice(idx, 1);
      if (ids.length === 0) out.Identities = null;
    }
  },
};
const GROUP: Schema = {
  attrs: {
    count: i('Count'),
    shutdown_delay: d('ShutdownDelay'),
    max_run_duration: d('MaxRunDuration'),
    stop_after_client_disconnect: d('StopAfterClientDisconnect'),
    max_client_disconnect: d('MaxClientDisconnect'),
    prevent_reschedule_on_lost: b('PreventRescheduleOnLost'),
  },
  blocks: {
    constraint: ['Constraints', CONSTRAINT, 'list'],
    affinity: ['Affinities', AFFINITY, 'list'],
    task: ['Tasks', TASK, 'labeled'],
    spread: ['Spreads', SPREAD, 'list'],
    volume: ['Volumes', VOLUME, 'labeledMap'],
    restart: ['RestartPolicy', RESTART, 'one'],
    disconnect: [
      'Disconnect',
      {
        attrs: {
          lost_after: d('LostAfter'),
          replace: b('Replace'),
          reconcile: s('Reconcile'),
          stop_on_client_after: d('StopOnClientAfter'),
        },
      },
      'one',
    ],
    reschedule: ['ReschedulePolicy', RESCHEDULE, 'one'],
    ephemeral_disk: ['EphemeralDisk', EPHEMERAL_DISK, 'one'],
    update: ['Update', UPDATE, 'one'],
    migrate: ['Migrate', MIGRATE, 'one'],
    network: ['Networks', NETWORK, 'list'],
    meta: ['Meta', 'map', 'one'],
    service: ['Services', SERVICE, 'list'],
    scaling: ['Scaling', SCALING, 'one'],
    consul: ['Consul', CONSUL, 'one'],
  },
  label: 'Name',
  zero: {
    Name: null,
    Count: null,
    Constraints: null,
    Affinities: null,
    Tasks: null,
    Spreads: null,
    Volumes: null,
    RestartPolicy: null,
    Disconnect: null,
    ReschedulePolicy: null,
    EphemeralDisk: null,
    Update: null,
    Migrate: null,
    Networks: null,
    Meta: null,
    Services: null,
    ShutdownDelay: null,
    StopAfterClientDisconnect: null,
    MaxClientDisconnect: null,
    Scaling: null,
    Consul: null,
    PreventRescheduleOnLost: null,
  },
};
const JOB: Schema = {
  attrs: {
    region: s('Region'),
    namespace: s('Namespace'),
    id: s('ID'),
    name: s('Name'),
    type: s('Type'),
    priority: i('Priority'),
    all_at_once: b('AllAtOnce'),
    datacenters: l('Datacenters'),
    node_pool: s('NodePool'),
  },
  blocks: {
    constraint: ['Constraints', CONSTRAINT, 'list'],
    affinity: ['Affinities', AFFINITY, 'list'],
    group: ['TaskGroups', GROUP, 'labeled'],
    update: ['Update', UPDATE, 'one'],
    spread: ['Spreads', SPREAD, 'list'],
    periodic: ['Periodic', PERIODIC, 'one'],
    parameterized: ['ParameterizedJob', PARAMETERIZED, 'one'],
    reschedule: ['Reschedule', RESCHEDULE, 'one'],
    migrate: ['Migrate', MIGRATE, 'one'],
    meta: ['Meta', 'map', 'one'],
    ui: ['UI', 'raw', 'one'],
  },
  zero: {
    Region: null,
    Namespace: null,
    ID: null,
    Name: null,
    Type: null,
    Priority: null,
    AllAtOnce: null,
    Datacenters: null,
    NodePool: null,
    Constraints: null,
    Affinities: null,
    TaskGroups: null,
    Update: null,
    Multiregion: null,
    Spreads: null,
    Periodic: null,
    ParameterizedJob: null,
    Reschedule: null,
    Migrate: null,
    Meta: null,
    UI: null,
    Stop: null,
    ParentID: null,
    Dispatched: false,
    DispatchIdempotencyToken: null,
    Payload: null,
    ConsulNamespace: null,
    VaultNamespace: null,
    NomadTokenID: null,
    Status: null,
    StatusDescription: null,
    Stable: null,
    Version: null,
    SubmitTime: null,
    CreateIndex: null,
    ModifyIndex: null,
    JobModifyIndex: null,
    VersionTag: null,
  },
};

/** Where names occur in the source, for positions the underlying parser does not report. */
class Locator {
  constructor(
    private readonly filename: string,
    private readonly source: string,
  ) {}

  /** `file:line,col-endcol` of the first line that starts with `name` as an argument or block. */
  of(name: string): string {
    const lines = this.source.split('\n');
    const re = new RegExp(`^(\\s*)${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*(=|\\{|")`);
    for (let n = 0; n < lines.length; n++) {
      const m = re.exec(lines[n]!);
      if (m) {
        const col = m[1]!.length + 1;
        return `${this.filename}:${n + 1},${col}-${col + name.length}`;
      }
    }
    return `${this.filename}:1,1-1`;
  }
}

/** The API job (`api.Job` JSON, not canonicalized) of a parsed HCL document. */
export function jobFromHcl(doc: Record<string, unknown>, filename: string, source: string): Json {
  const at = new Locator(filename, source);
  for (const key of Object.keys(doc)) {
    if (key === 'job') continue;
    const detail =
      key === 'variable' || key === 'locals'
        ? `The sandbox does not evaluate HCL ${key === 'variable' ? 'variables' : 'locals'}.`
        : `Blocks of type "${key}" are not expected here.`;
    throw new JobSpecError(`${at.of(key)}: Unsupported block type; ${detail}`);
  }
  const jobs = doc.job as Record<string, unknown> | undefined;
  const labels = isObject(jobs) ? Object.keys(jobs) : [];
  if (labels.length === 0)
    throw new JobSpecError(`${filename}:1,1-1: Missing job block; A job block is required.`);
  const bodies = labels.flatMap((label) => list(jobs![label]).map((body) => [label, body] as const));
  if (bodies.length > 1)
    throw new JobSpecError(
      `${at.of('job')}: Duplicate job block; Only one job block is allowed. Another was defined earlier.`,
    );
  const [id, body] = bodies[0]!;
  const job = decode(JOB, body, at, 'job');
  // The real `normalizeJob`: the label is the ID and the default name.
  job.ID ??= id;
  job.Name ??= id;
  return job;
}

function decode(schema: Schema, body: unknown, at: Locator, where: string): Json {
  if (!isObject(body)) throw new JobSpecError(`${at.of(where)}: Invalid block; "${where}" must be a block.`);
  const out: Json = { ...structuredClone(schema.zero ?? {}) };
  for (const [key, value] of Object.entries(body)) {
    const attr = schema.attrs[key];
    const block = schema.blocks?.[key];
    if (attr) out[attr[0]] = convert(attr[1], value, key, at);
    else if (block) out[block[0]] = decodeBlock(block[1], block[2], value, key, at);
    else if (looksLikeBlock(value))
      throw new JobSpecError(
        `${at.of(key)}: Unsupported block type; Blocks of type "${key}" are not expected here.`,
      );
    else
      throw new JobSpecError(
        `${at.of(key)}: Unsupported argument; An argument named "${key}" is not expected here.`,
      );
  }
  schema.finish?.(out, body);
  return out;
}

function decodeBlock(
  schema: Schema | 'map' | 'raw',
  mode: Mode,
  value: unknown,
  key: string,
  at: Locator,
): unknown {
  const one = (body: unknown, label?: string): unknown => {
    if (schema === 'map') return stringMap(body, key, at);
    if (schema === 'raw') return body;
    const out = decode(schema, body, at, key);
    if (label !== undefined && schema.label) out[schema.label] = label;
    return out;
  };
  if (mode === 'one') {
    // `meta = { ... }` (an attribute) is accepted as well as `meta { ... }`, as the real parser does.
    if (isObject(value)) return one(value);
    const bodies = list(value);
    if (bodies.length > 1)
      throw new JobSpecError(
        `${at.of(key)}: Duplicate ${key} block; Only one ${key} block is allowed. Another was defined earlier.`,
      );
    return one(bodies[0]);
  }
  if (mode === 'list') return list(value).map((body) => one(body));
  // Labeled blocks: `{label: [body, ...]}`.
  if (!isObject(value))
    throw new JobSpecError(
      `${at.of(key)}: Missing name for ${key}; All ${key} blocks must have 1 labels (name).`,
    );
  const entries = Object.entries(value).flatMap(([label, bodies]) =>
    list(bodies).map((body) => [label, one(body, label)] as const),
  );
  return mode === 'labeled' ? entries.map(([, v]) => v) : Object.fromEntries(entries);
}

function convert(kind: Kind, value: unknown, key: string, at: Locator): unknown {
  const bad = (want: string): never => {
    throw new JobSpecError(
      `${at.of(key)}: Incorrect attribute value type; Inappropriate value for attribute "${key}": ${want} required.`,
    );
  };
  const expression = (v: unknown) => typeof v === 'string' && v.includes('${');
  const unevaluated = (): never => {
    throw new JobSpecError(
      `${at.of(key)}: Unsupported expression; The sandbox does not evaluate HCL expressions: ${key} = ${JSON.stringify(value)}.`,
    );
  };
  switch (kind) {
    case 'any':
      return value;
    case 'string':
      if (typeof value === 'string') return value;
      if (typeof value === 'number' || typeof value === 'boolean') return String(value);
      return bad('string');
    case 'strings':
      if (!Array.isArray(value)) return bad('list of string');
      return value.map((v) =>
        typeof v === 'string' || typeof v === 'number' ? String(v) : bad('list of string'),
      );
    case 'int':
      if (expression(value)) return unevaluated();
      if (typeof value === 'number' && Number.isInteger(value)) return value;
      if (typeof value === 'string' && /^-?\d+$/.test(value)) return Number(value);
      return bad('number');
    case 'bool':
      if (expression(value)) return unevaluated();
      if (typeof value === 'boolean') return value;
      if (value === 'true' || value === 'false') return value === 'true';
      return bad('bool');
    case 'duration': {
      if (expression(value)) return unevaluated();
      if (typeof value === 'number') return value;
      if (typeof value !== 'string') return bad('duration');
      const ms = parseGoDuration(value);
      if (ms === undefined)
        throw new JobSpecError(
          `${at.of(key)}: Unsuitable value type; Unsuitable duration value: time: invalid duration "${value}"`,
        );
      return Math.round(ms * 1_000_000);
    }
  }
}

/** `meta`/`env`-style maps: every value a string. */
function stringMap(body: unknown, key: string, at: Locator): Record<string, string> {
  if (!isObject(body)) throw new JobSpecError(`${at.of(key)}: Invalid ${key}; a map of strings is required.`);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(body)) {
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[k] = String(v);
    else
      throw new JobSpecError(
        `${at.of(k)}: Incorrect attribute value type; Inappropriate value for attribute "${k}": string required.`,
      );
  }
  return out;
}

function looksLikeBlock(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0 && value.every(isObject);
  return isObject(value) && Object.values(value).every((v) => Array.isArray(v) && v.every(isObject));
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function list(v: unknown): unknown[] {
  return Array.isArray(v) ? v : v === undefined || v === null ? [] : [v];
}
