/**
 * desired + observed → Plan. Knows resource kinds only through the contract: it reads live state
 * (with a kind's `list` when the manifest holds several objects of one scope, so a whole kind costs a
 * few requests instead of one per object), compares, and orders the changes.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import pLimit from 'p-limit';
import { type SettingNames, settingNames } from '../common/setting-names.js';
import { formatPosition } from '../common/types.js';
import {
  type AnyResourceKind,
  addressOf,
  type Desired,
  deletionRefused,
  hasChangeImpact,
  desiredAttributes,
  listAttributesOf,
  hasDependencies,
  hasDetailReads,
  hasLocalFiles,
  hasServerSidePlan,
  hasServiceChecks,
  hasWriteOnlyAttributes,
  inPruneScope,
  isListable,
  secretMapsOf,
  isNamespaced,
  isPrunable,
  type KindContext,
  liveAttributes,
  type Observed,
  type PlanProblem,
  type Listable,
  type ListScope,
  type PlanReads,
  type Prunable,
  type PruneScope,
  type ResourceKey,
  type ServerSidePlan,
} from '../resources/contract.js';
import { jsonEqual } from '../common/json-equal.js';
import { credentialForms } from '../common/scrub.js';
import { markListItems } from './list-items.js';
import { topologicalOrder } from './order.js';
import { inFileOrder } from '../common/file-order.js';
import {
  copiedSecrets,
  holdsSecret,
  secretCounts,
  maskAttributes,
  maskCopies,
  maskDiffs,
  maskMessage,
  maskText,
  type SecretCopies,
  secretPaths,
} from './masking.js';
import { SENSITIVE } from './render/format.js';
import { type Change, type Plan, summarise } from './types.js';
import {
  compareWriteOnly,
  heldWriteOnly,
  isWriteOnlyDiff,
  untrackedWriteOnlyNotes,
  type WriteOnlyDigests,
  writeOnlyBasis,
} from './write-only.js';
import { groupBy } from '../common/group-by.js';
import { sensitiveEnvFrom } from '../common/allow-list.js';
import { maskSecretsByName, secretValuesByName, type SecretName } from './secret-names.js';

/** The sensitive-name rule's default patterns (`*PASSWORD*`, `*TOKEN*`, …). */
const defaultSecretName: SecretName = sensitiveEnvFrom(undefined).allows;

export interface PlanOptions {
  /** How many reads may be in flight at once (terraform's -parallelism; default 10). */
  parallelism?: number;
  /** Scopes in which objects that Converge owns but the manifest no longer has are deleted. */
  prune?: PruneScope[];
  /** Called as reads finish, for progress output. */
  onProgress?: (done: number, total: number) => void;
  /** What Converge last applied to write-only attributes; without it every such value counts as changed. */
  writeOnly?: WriteOnlyDigests;
  /**
   * Every object the manifest declares, when only some are planned (`--target`): prune must not take
   * a declared object for an undeclared one because it was not selected. Default: the planned ones.
   */
  declared?: readonly Desired[];
  /** Only prune candidates at addresses it accepts (the targeted ones). Default: every candidate. */
  pruneOnly?: (address: string) => boolean;
  /**
   * Addresses Converge owns, from its inventory, each with how it came to (created by an apply, or
   * imported). When given, kinds whose service carries no ownership marker prune only these: an
   * object Converge neither created nor was given is never deleted.
   */
  managed?: ReadonlyMap<string, 'created' | 'imported'>;
  /**
   * The live id the inventory recorded for an address it owns, where it recorded one. An object at
   * that address with another id is not the one Converge created or adopted: someone deleted that
   * one and made another of the same name (another team's role), and the inventory is no licence to
   * delete it. Only an ownership marker, where the kind has one, still proves a create.
   */
  managedIds?: ReadonlyMap<string, string>;
  /**
   * Addresses the inventory records as objects Converge only updated (never created nor adopted).
   * Its update added the ownership marker where the kind has one, so the marker is no proof there.
   */
  notOwned?: ReadonlySet<string>;
  /** How the caller names its options in problems (the CLI: `--prune`); default: the library's. */
  settingNames?: Partial<SettingNames>;
  /** Secrets outside the kinds' secret attributes (the manifest's sensitive variables): masked too. */
  sensitiveValues?: readonly string[];
  /**
   * The run's tokens that a service echoed in an answer (asked once the reads are done): masked in
   * what the plan shows as sent, in hex and in base64. Usually none, and then nothing is walked.
   */
  credentials?: () => readonly string[];
  /**
   * Whether an entry's name says secret, for the kinds' maps of user-named entries (a job's `Env`):
   * `CONVERGE_SENSITIVE_ENV`'s rule; default, that rule's default patterns.
   */
  secretName?: SecretName;
}

export type KindLookup = (kind: string) => AnyResourceKind | undefined;

/** Objects of one kind that one `list` call can read together. */
function scopeKey(key: ResourceKey): string {
  return `${key.kind}\u0000${key.connection ?? ''}\u0000${key.namespace ?? ''}`;
}

type CreatePreview = Awaited<ReturnType<ServerSidePlan['previewCreate']>>;
type ListOnce = ((kind: AnyResourceKind & Listable, scope: ListScope) => Promise<Observed[]>) & {
  /** The list of a kind in a scope if one was made or queued; never starts one. */
  made(kind: string, scope: ListScope): Promise<Observed[]> | undefined;
  /** Queues the list in a slot of `limit`; `made` finds it from now on, also while it waits for a slot. */
  queue(kind: AnyResourceKind & Listable, scope: ListScope, limit: ReturnType<typeof pLimit>): void;
};

/**
 * The run's context with its parallelism, so that a kind fanning out reads inside `list` keeps as
 * many in flight as the user allowed. A view on the same object: clients and signal are shared.
 */
function withParallelism(ctx: KindContext, parallelism: number): KindContext {
  return Object.create(ctx, { parallelism: { value: parallelism, enumerable: true } }) as KindContext;
}

/** One `list` per kind and scope per plan: the reads of declared objects and a prune share it. */
function listOnce(ctx: KindContext): ListOnce {
  const lists = new Map<string, Promise<Observed[]>>();
  const idOf = (kind: string, scope: ListScope) =>
    JSON.stringify([kind, scope.connection ?? null, scope.namespace ?? null]);
  const list = (kind: AnyResourceKind & Listable, scope: ListScope) => {
    const id = idOf(kind.kind, scope);
    let listed = lists.get(id);
    if (!listed) lists.set(id, (listed = kind.list(ctx, scope)));
    return listed;
  };
  return Object.assign(list, {
    made: (kind: string, scope: ListScope) => lists.get(idOf(kind, scope)),
    queue: (kind: AnyResourceKind & Listable, scope: ListScope, limit: ReturnType<typeof pLimit>) => {
      const id = idOf(kind.kind, scope);
      if (lists.has(id)) return;
      const queued = limit(() => kind.list(ctx, scope));
      // Handled here, awaited by whoever reads it: a failure surfaces there, never as unhandled.
      queued.catch(() => {});
      lists.set(id, queued);
    },
  });
}

/** The scope a list of `first`'s kind covers: its namespace and connection. */
function listScopeOf(first: Desired): ListScope {
  return {
    ...(first.key.namespace === undefined ? {} : { namespace: first.key.namespace }),
    ...(first.key.connection === undefined ? {} : { connection: first.key.connection }),
  };
}

/**
 * Starts, each in its slot, the list of every scope that declares more than one object of a listable
 * kind (fewer requests than a read each), before anything else of the plan: they need only the keys,
 * and the plan-time steps before the reads (local files, a kind's preparation, the checks) took tens
 * of milliseconds during which no request was out. `observeAll` then finds them made.
 */
function startLists(
  desired: readonly Desired[],
  lookup: KindLookup,
  limit: ReturnType<typeof pLimit>,
  list: ListOnce,
): void {
  for (const group of groupBy(desired, (d) => scopeKey(d.key)).values()) {
    const kind = mustKind(lookup, group[0]!.key.kind);
    if (group.length < 2 || !isListable(kind)) continue;
    list.queue(kind, listScopeOf(group[0]!), limit);
  }
}

/** What `impact` may reuse: the plan's lists and its reads of declared objects, by address. */
function planReads(list: ListOnce, observed: ReadonlyMap<string, Observed | undefined>): PlanReads {
  return {
    listed: (kind, scope) => list.made(kind, scope),
    observed: (key) => {
      const address = addressOf(key);
      return observed.has(address) ? (observed.get(address) ?? null) : undefined;
    },
  };
}

/**
 * How long one list's objects are compared before the event loop gets a turn (for answers and new
 * requests). A time, not a count: an object costs from tens of microseconds (a role) to a few
 * hundred (a workspace, the first time through), and 100 workspaces at a time held the loop for
 * 70 ms while every connection of another service sat idle with its answer unread.
 */
const TURN_BUDGET_MS = 4;

/**
 * A share of the event loop for CPU work that runs in many small steps: `pause()` gives the loop a
 * turn once the steps since the last one took `TURN_BUDGET_MS`. Shared by the list loops and the
 * follow-ups of one plan: follow-ups that need no request (a workspace with nothing more to read)
 * settle back to back in the microtask queue, which no timer or socket can interrupt.
 */
class TurnBudget {
  private since = performance.now();
  /** The turn everyone paused waits for: one per turn, however many steps are waiting. */
  private turn: Promise<void> | undefined;

  async pause(): Promise<void> {
    // A loop, not one wait: the steps woken in the same turn must each find the budget again, or
    // all of them ran back to back in that turn (a hundred workspaces, 90 ms, every socket idle).
    while (performance.now() - this.since >= TURN_BUDGET_MS) {
      this.turn ??= nextTurn().then(() => {
        this.turn = undefined;
        this.since = performance.now();
      });
      await this.turn;
    }
  }
}

/** Work started per object as soon as its read landed; awaited together at the end (never unhandled). */
class FollowUps {
  private readonly pending: Promise<void>[] = [];
  add(work: Promise<void>): void {
    work.catch(() => {});
    this.pending.push(work);
  }
  async done(): Promise<void> {
    await Promise.all(this.pending);
  }
}

function mustKind(lookup: KindLookup, kind: string): AnyResourceKind {
  const k = lookup(kind);
  if (!k) throw new Error(`unknown kind ${kind}`);
  return k;
}

/**
 * Reads every desired object (a list per scope where it saves requests). `then` starts each object's
 * next step (details, a create's preview) as soon as that object's read landed, so one kind's plans
 * overlap another kind's lists instead of waiting for the slowest list of the run. `settled` gets
 * each object once its observation is final (read, and detailed if it needed that), so that the
 * comparison runs while other reads are still in flight rather than all at once after the last.
 */
async function observeAll(
  desired: readonly Desired[],
  lookup: KindLookup,
  ctx: KindContext,
  limit: ReturnType<typeof pLimit>,
  list: ListOnce,
  then: (d: Desired, observed: Observed | undefined) => (() => Promise<Observed>) | undefined,
  settled: (d: Desired, observed: Observed | undefined) => void,
  onProgress?: (done: number, total: number) => void,
): Promise<Map<string, Observed | undefined>> {
  const observed = new Map<string, Observed | undefined>();
  const groups = [...groupBy(desired, (d) => scopeKey(d.key)).values()];
  const followUps = new FollowUps();
  const budget = new TurnBudget();
  let done = 0;
  const finish = (n: number) => {
    done += n;
    onProgress?.(done, desired.length);
  };
  // Queued, not awaited, inside a read's slot: a slot never waits for another slot.
  const landed = (d: Desired, o: Observed | undefined) => {
    observed.set(addressOf(d.key), o);
    const next = then(d, o);
    if (!next) return settled(d, o);
    followUps.add(
      limit(async () => {
        const detailed = await next();
        observed.set(addressOf(d.key), detailed);
        await budget.pause();
        settled(d, detailed);
      }),
    );
  };
  await Promise.all(
    groups.flatMap((group) => {
      const first = group[0]!;
      const kind = mustKind(lookup, first.key.kind);
      if (group.length > 1 && isListable(kind)) {
        const scope = listScopeOf(first);
        return [
          (async () => {
            // The slot is the list's; what follows is CPU, and leaves it to the next request. Usually
            // started already (startLists): awaiting it then takes no second slot.
            const live = await (list.made(kind.kind, scope) ?? limit(() => list(kind, scope)));
            const byName = new Map(live.map((o) => [o.key.name, o]));
            for (const d of group) {
              const o = byName.get(d.key.name);
              landed(d, o ? { ...o, key: d.key } : undefined);
              // Comparing a list of thousands in one go held the event loop for tens of ms: answers
              // waited unread and no request left, so the service sat idle. A turn now and then
              // keeps the pipe full.
              await budget.pause();
            }
            finish(group.length);
          })(),
        ];
      }
      return group.map((d) =>
        limit(async () => {
          landed(d, await kind.observe(ctx, d.key));
          finish(1);
        }),
      );
    }),
  );
  await followUps.done();
  return observed;
}

/** What the kind's service calls its namespace, for headings, when it says. */
function namespaceLabelOf(kind: AnyResourceKind): string | undefined {
  return isNamespaced(kind) && kind.namespaceLabel ? kind.namespaceLabel : undefined;
}

/**
 * What every change about a live object carries: the object, its id, version and attributes. A
 * deletion's also lists the write-only attributes the object most likely holds, values never shown.
 */
function setLiveFields(
  change: Change,
  kind: AnyResourceKind,
  observed: Observed,
  digests?: WriteOnlyDigests,
): void {
  change.observed = observed;
  const before = maskAttributes(secretPaths(kind), liveAttributes(kind, observed));
  const held = change.action === 'delete' ? heldWriteOnly(kind, change.address, observed, digests) : [];
  change.before =
    held.length === 0 ? before : { ...before, ...Object.fromEntries(held.map((p) => [p, SENSITIVE])) };
  if (observed.id) change.id = observed.id;
  if (observed.version !== undefined) change.observedVersion = observed.version;
  const label = namespaceLabelOf(kind);
  if (label !== undefined) change.namespaceLabel = label;
}

/**
 * One desired object's change. Built by assignment rather than by spreading partial objects into
 * each other: every plan makes one per object (10,000 for a large manifest), and the spreads were a
 * twentieth of a warm plan's CPU.
 */
function changeFor(
  d: Desired,
  kind: AnyResourceKind,
  observed: Observed | undefined,
  serverPlan: unknown,
  digests: WriteOnlyDigests | undefined,
  run: Pick<KindContext, 'option'>,
): { change: Change; problems: PlanProblem[] } {
  const address = addressOf(d.key);
  const change: Change = {
    address,
    key: d.key,
    action: 'noop',
    dependsOn: [],
    desired: d,
    diffs: [],
    before: null,
    after: null,
  };
  const label = namespaceLabelOf(kind);
  if (label !== undefined) change.namespaceLabel = label;
  if (d.resource) change.source = formatPosition(d.resource.source);
  if (d.ensure === 'absent') {
    change.reason = 'declared absent in the manifest';
    if (!observed) return { change, problems: [] };
    change.action = 'delete';
    setLiveFields(change, kind, observed, digests);
    const refused = deletionRefused(kind, observed);
    return {
      change,
      problems: refused
        ? [{ key: d.key, message: refused, ...(d.resource ? { position: d.resource.locate('') } : {}) }]
        : [],
    };
  }
  const secrets = secretPaths(kind);
  change.after = maskAttributes(secrets, desiredAttributes(kind, d));
  const withWriteOnly = hasWriteOnlyAttributes(kind);
  if (!observed) {
    if (withWriteOnly) change.desired = { ...d, changedWriteOnly: [...kind.writeOnly] };
    change.action = 'create';
    return { change, problems: [] };
  }
  const comparison = kind.compare(d, observed, serverPlan, run);
  // Write-only values are never read back: whether they changed is told by their digests alone.
  const writeOnly = withWriteOnly ? compareWriteOnly(kind, address, d, digests) : undefined;
  const read = comparison.diffs.filter((diff) => !isWriteOnlyDiff(kind, diff));
  const diffs = writeOnly ? [...read, ...writeOnly.diffs] : read;
  const action = diffs.length === 0 ? 'noop' : comparison.replace ? 'replace' : 'update';
  setLiveFields(change, kind, observed);
  if (writeOnly) {
    change.desired = { ...d, changedWriteOnly: writeOnly.changed };
    if (digests) change.writeOnlyBasis = writeOnlyBasis(kind, address, digests);
  }
  if (serverPlan !== undefined) change.serverPlan = serverPlan;
  change.action = action;
  if (diffs.length > 0) change.diffs = maskDiffs(secrets, markListItems(listAttributesOf(kind), diffs));
  const untracked = withWriteOnly ? untrackedWriteOnlyNotes(kind, address, d, observed, digests) : [];
  if (comparison.notes?.length || untracked.length)
    change.notes = [...(comparison.notes ?? []), ...untracked];
  if (action !== 'noop' && comparison.impact?.length) change.impact = [...comparison.impact];
  if (comparison.notCompared) change.notCompared = comparison.notCompared;
  if (comparison.heldBack?.length) change.heldBack = [...comparison.heldBack];
  const differs = [
    ...(comparison.heldBack?.filter((a) => !comparison.movedPast?.includes(a)) ?? []),
    ...(comparison.keptLive ?? []),
  ];
  if (differs.length) change.differs = differs;
  const problems = (comparison.problems ?? []).map((p): PlanProblem => ({
    key: d.key,
    message: p.message,
    ...(d.resource ? { position: d.resource.locate(p.pointer ?? '') } : {}),
  }));
  return { change, problems };
}

/**
 * A kind's step over one desired object (`resolve`, `prepare`), to run: the object it returns, and
 * problems. Undefined when the kind has no such step.
 */
type DesiredStep = (
  kind: AnyResourceKind,
  d: Desired,
) => (() => Promise<{ desired: Desired; problems: PlanProblem[] }>) | undefined;

/**
 * Runs a kind step over every desired object of a kind that has it (`step` gives it) and is not
 * declared absent, collecting problems. Used twice: local inputs first (`resolve`: files the manifest names,
 * whose problems need no service), then what only the service can make of the manifest (`prepare`:
 * a text job spec parsed). Objects without the step pass through as they are, not through `limit`:
 * queueing each of 10,000 roles twice for nothing cost a tenth of a warm plan's CPU.
 */
async function refineAll(
  desired: readonly Desired[],
  lookup: KindLookup,
  limit: ReturnType<typeof pLimit>,
  problems: PlanProblem[],
  step: DesiredStep,
): Promise<Desired[]> {
  return Promise.all(
    desired.map((d) => {
      const run = d.ensure === 'absent' ? undefined : step(mustKind(lookup, d.key.kind), d);
      // Only objects with a step to run take a slot: most kinds have none, and thousands of empty
      // slots cost a plan tens of milliseconds before its first request.
      if (!run) return d;
      return limit(async () => {
        const refined = await run();
        problems.push(...refined.problems);
        return refined.desired;
      });
    }),
  );
}

/** The service's own account of what each create would do, for kinds that can ask it. */
async function previewCreates(
  changes: readonly Change[],
  lookup: KindLookup,
  ctx: KindContext,
  limit: ReturnType<typeof pLimit>,
  problems: PlanProblem[],
  ready: ReadonlyMap<string, Promise<CreatePreview>>,
  /** Objects the manifest already gets wrong: no preview is asked for them. */
  refused: ReadonlySet<string>,
): Promise<void> {
  // Only creates of kinds that can ask take a slot: thousands of empty slots (a cold plan's roles)
  // cost tens of milliseconds of queueing.
  const asking = changes.filter(
    (c) =>
      c.action === 'create' &&
      c.desired &&
      !refused.has(c.address) &&
      hasServerSidePlan(mustKind(lookup, c.key.kind)),
  );
  await Promise.all(
    asking.map((c) =>
      limit(async () => {
        const kind = mustKind(lookup, c.key.kind);
        const d = c.desired;
        if (!d || !hasServerSidePlan(kind)) return;
        // Usually asked already, as soon as the read found nothing (see buildPlan).
        const preview = await (ready.get(c.address) ?? kind.previewCreate(ctx, d));
        if (preview.notes?.length) c.notes = [...(c.notes ?? []), ...preview.notes];
        if (preview.impact?.length) c.impact = [...(c.impact ?? []), ...preview.impact];
        for (const p of preview.problems ?? [])
          problems.push({
            key: c.key,
            message: p.message,
            ...(d.resource ? { position: d.resource.locate(p.pointer ?? '') } : {}),
          });
      }),
    ),
  );
}

/** Whole reads of prune candidates (see `readWhole`) run at most this many at once per scope. */
const WHOLE_READ_CONCURRENCY = 8;

/**
 * Where a prune looked, in the kind's own words: `PruneScope "web" (AclRole, namespace default)`,
 * or for a scope the manifest implies, `the manifest's Workspace objects in organization acme`.
 */
function describeScope(scope: PruneScope, namespaceLabel = 'namespace'): string {
  const parts = [
    scope.namespace !== undefined ? `${namespaceLabel} ${scope.namespace}` : '',
    scope.namePrefix !== undefined ? `names starting "${scope.namePrefix}"` : '',
    scope.connection !== undefined ? `connection ${scope.connection}` : '',
  ].filter(Boolean);
  if (scope.name) return `PruneScope "${scope.name}" (${[scope.kind, ...parts].join(', ')})`;
  return `the manifest's ${scope.kind} objects${parts.length ? ` in ${parts.join(', ')}` : ''}`;
}

/** What a prune saw and left besides its deletions, for the plan's leftover lists. */
interface PruneFindings {
  /** Every object the scopes listed, by address, with its id ("Not found" is what is not here). */
  listed: Map<string, string | undefined>;
  /** Marked as a Converge's, but not recorded by this inventory. */
  markedNotRecorded: Set<string>;
  /** Candidates whose kind refuses their deletion (`DeletionRefusal`). */
  refused: Set<string>;
}

/**
 * Objects Converge owns in the prune scopes that the manifest no longer declares. A scope in which
 * the manifest declares nothing would lose every object: that is refused as a plan problem unless the
 * scope says `allowEmpty` (kubectl and Argo CD users lost whole namespaces that way).
 */
async function pruneCandidates(
  scopes: readonly PruneScope[],
  desired: readonly Desired[],
  lookup: KindLookup,
  ctx: KindContext,
  limit: ReturnType<typeof pLimit>,
  problems: PlanProblem[],
  managed: ReadonlyMap<string, 'created' | 'imported'> | undefined,
  managedIds: ReadonlyMap<string, string> | undefined,
  notOwned: ReadonlySet<string> | undefined,
  list: ListOnce,
  /** The prune option as the caller names it, for the emptied-scope refusal. */
  pruneSetting: string,
  /** Gets what the prune saw and left besides its deletions. */
  found: PruneFindings,
  /** The write-only values Converge recorded setting, which a deletion lists. */
  digests: WriteOnlyDigests | undefined,
): Promise<Change[]> {
  // Without a marker, only the inventory (when there is one) says Converge created an object.
  // With a marker, the marker says so, or the inventory (an object adopted by import, which only a
  // create marks).
  const inInventory = (o: Observed, origin?: 'imported') => {
    const address = addressOf(o.key);
    const recorded = managedIds?.get(address);
    if (recorded !== undefined && o.id !== undefined && o.id !== recorded) return false;
    return origin ? managed?.get(address) === origin : managed === undefined || managed.has(address);
  };
  // The marker says some Converge made the object, not that this manifest did: another manifest in
  // the same organization or namespace, with its own inventory, marks its objects alike, and an
  // object made by hand takes the marker when any Converge updates it. Where there is an inventory,
  // it must record the object as well (created, with the live id, or adopted by import). A caller
  // with no inventory at all (a library user passing no `managed`) has only the marker to go by.
  const recordedHere = (o: Observed) => inInventory(o);
  const owned = (kind: AnyResourceKind & Prunable, o: Observed, scope: PruneScope) =>
    scope.importedOnly
      ? inInventory(o, 'imported')
      : kind.ownership !== 'declared-scope'
        ? (kind.owns(o, scope) && !notOwned?.has(addressOf(o.key)) && recordedHere(o)) ||
          inInventory(o, 'imported')
        : kind.owns(o, scope) && inInventory(o);
  /** Marked as Converge's, but not this inventory's: left, and listed, where a prune would reach it. */
  const markedElsewhere = (kind: AnyResourceKind & Prunable, o: Observed, scope: PruneScope) =>
    managed !== undefined &&
    !scope.importedOnly &&
    kind.ownership !== 'declared-scope' &&
    kind.owns(o, scope) &&
    !notOwned?.has(addressOf(o.key)) &&
    !recordedHere(o);
  const lists = await Promise.all(
    scopes.map((scope) =>
      limit(async () => {
        const kind = mustKind(lookup, scope.kind);
        if (!isPrunable(kind)) {
          throw new Error(`kind ${scope.kind} cannot be pruned: it has no way to list or to tell ownership`);
        }
        const live = await list(kind, {
          ...(scope.namespace === undefined ? {} : { namespace: scope.namespace }),
          ...(scope.connection === undefined ? {} : { connection: scope.connection }),
        });
        const declared = desired.filter((d) => inPruneScope(d.key, scope));
        const wanted = new Set(declared.map((d) => d.key.name));
        for (const o of live) if (inPruneScope(o.key, scope)) found.listed.set(addressOf(o.key), o.id);
        const undeclared = live.filter((o) => inPruneScope(o.key, scope) && !wanted.has(o.key.name));
        const orphans = undeclared.filter((o) => {
          if (!owned(kind, o, scope)) return false;
          // Listed, not a problem: a plan problem refused every other change and deletion with it,
          // and no --target or --exclude could get round it.
          const refused = deletionRefused(kind, o) !== undefined;
          if (refused) found.refused.add(addressOf(o.key));
          return !refused;
        });
        for (const o of undeclared)
          if (markedElsewhere(kind, o, scope)) found.markedNotRecorded.add(addressOf(o.key));
        // Refused before anything more is read: a scope emptied by mistake costs no further request.
        if (orphans.length > 0 && declared.length === 0 && !scope.allowEmpty) {
          problems.push({
            key: { kind: 'PruneScope', name: scope.name ?? scope.kind },
            // A guard of the whole plan, not an object that could not be planned.
            scope: 'plan',
            message: `${describeScope(scope, namespaceLabelOf(kind))}: the manifest declares no object in it, so ${pruneSetting} would delete ${orphans.length === 1 ? 'the 1 object' : `all ${orphans.length}`} in it; refusing (set allowEmpty: true in the scope to allow it)`,
            ...(scope.position ? { position: scope.position } : {}),
          });
          return [];
        }
        // A deletion is shown with the object as a read gives it, where the list gives less.
        const readWhole = kind.readWhole?.bind(kind);
        const wholeLimit = pLimit(WHOLE_READ_CONCURRENCY);
        const doomed = readWhole
          ? await Promise.all(orphans.map((o) => wholeLimit(() => readWhole(ctx, o))))
          : orphans;
        // Where the prune looked, in the kind's words: the same for every candidate of the scope.
        const where = describeScope(scope, namespaceLabelOf(kind));
        return doomed.map((o): Change => {
          const change: Change = {
            address: addressOf(o.key),
            key: o.key,
            action: 'delete',
            diffs: [],
            before: null,
            after: null,
            dependsOn: [],
            prune: true,
            // A marker or the inventory proves Converge created the object; a declared scope says just where it is.
            // An adopted object that has since taken the marker (a job's first apply adds it) is
            // still the import's: its scope is the inventory's, not the manifest's namespace.
            reason:
              kind.ownership !== 'declared-scope' && kind.owns(o, scope) && !scope.importedOnly
                ? managed?.get(addressOf(o.key)) === 'imported'
                  ? `adopted by import (inventory), among ${where}, and no longer in the manifest`
                  : managed
                    ? `created by Converge (inventory and ownership marker), among ${where}, and no longer in the manifest`
                    : `created by Converge (ownership marker), among ${where}, and no longer in the manifest`
                : managed
                  ? `${managed.get(addressOf(o.key)) === 'imported' ? 'adopted by import (inventory)' : 'created by Converge (inventory)'}${scope.name ? `, among ${where},` : ''} and no longer in the manifest`
                  : `among ${where} and not in the manifest`,
          };
          setLiveFields(change, kind, o, digests);
          return change;
        });
      }),
    ),
  );
  // Two scopes may overlap: delete each object once. In address order, as a reader scans them (the
  // service lists them in its own order, which is no order to a reader).
  const seen = new Set<string>();
  return lists
    .flat()
    .filter((c) => !seen.has(c.address) && seen.add(c.address))
    .sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
}

/**
 * A declared object whose live id is not the one the inventory recorded: Converge's was deleted and
 * someone made another under its name. The plan changes that one all the same (the manifest names
 * it), but says whose it is, and the apply does not count it as Converge's (see `recordApplied`).
 */
function noteReplacedByOthers(changes: readonly Change[], managedIds: ReadonlyMap<string, string>): void {
  for (const change of changes) {
    const recorded = managedIds.get(change.address);
    const live = change.observed?.id;
    if (recorded === undefined || live === undefined || live === recorded) continue;
    change.notes = [
      ...(change.notes ?? []),
      `not the object the inventory records as Converge's (id ${recorded}, gone): this one (id ${live}) was made outside Converge under the same name; an apply changes it as the manifest says but does not make it Converge's (converge import ${change.address} -f PATH adopts it)`,
    ];
  }
}

/**
 * The blast radius the kinds can only tell from other objects (the users a group reaches), from what
 * the plan read where it read it: only what it did not read costs requests.
 */
async function addImpact(
  changes: readonly Change[],
  manifest: readonly Desired[],
  lookup: KindLookup,
  ctx: KindContext,
  limit: ReturnType<typeof pLimit>,
  reads: PlanReads,
): Promise<void> {
  const byKind = groupBy(
    changes.filter((c) => c.action !== 'noop' && hasChangeImpact(mustKind(lookup, c.key.kind))),
    (c) => c.key.kind,
  );
  if (byKind.size === 0) return;
  const deleted = new Set(changes.filter((c) => c.action === 'delete').map((c) => c.address));
  const withDeletions: PlanReads = { ...reads, deleting: (key) => deleted.has(addressOf(key)) };
  await Promise.all(
    [...byKind].map(([kindName, group]) =>
      limit(async () => {
        const subjects = group.map((c) => ({
          key: c.key,
          action: c.action as Exclude<Change['action'], 'noop'>,
          diffs: c.diffs,
          ...(c.desired ? { desired: c.desired } : {}),
          ...(c.observed ? { observed: c.observed } : {}),
        }));
        const kind = mustKind(lookup, kindName);
        const lines = hasChangeImpact(kind) ? await kind.impact(ctx, subjects, manifest, withDeletions) : [];
        for (const [i, c] of group.entries())
          if (lines[i]?.length) c.impact = [...(c.impact ?? []), ...lines[i]!];
      }),
    ),
  );
}

/**
 * Dependencies between changes, from what each kind says an object needs. Built once from an index
 * of addresses, so linking costs time linear in the objects and their edges. Creates and updates wait
 * for what they need; a deletion waits for the deletion of everything that needed the deleted object
 * (a group is deleted after its users). Keys outside the plan are ignored.
 */
export function linkDependencies(changes: readonly Change[], lookup: KindLookup): void {
  const byAddress = new Map(changes.map((c) => [c.address, c]));
  // Made on a change's first edge: most changes have none, and a set each for 10,000 roles was
  // a tenth of the linking's time.
  const edges = new Map<Change, Set<string>>();
  const link = (from: Change, to: string) => {
    const set = edges.get(from);
    if (set) set.add(to);
    else edges.set(from, new Set([to]));
  };
  for (const c of changes) {
    const kind = mustKind(lookup, c.key.kind);
    if (!hasDependencies(kind)) continue;
    const needs = kind.dependencies({
      key: c.key,
      ...(c.desired ? { desired: c.desired } : {}),
      ...(c.observed ? { observed: c.observed } : {}),
    });
    for (const key of needs) {
      const needed = byAddress.get(addressOf(key));
      if (!needed || needed === c) continue;
      const deleting = c.action === 'delete';
      if (!deleting && needed.action !== 'delete') link(c, needed.address);
      else if (deleting && needed.action === 'delete') link(needed, c.address);
    }
  }
  for (const c of changes) {
    const deps = edges.get(c);
    if (deps) c.dependsOn = [...deps];
    else if (c.dependsOn.length > 0) c.dependsOn = [];
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether a value holds any text (keys included): only text can hold a secret's old value. */
function holdsText(value: unknown): boolean {
  if (typeof value === 'string') return true;
  if (Array.isArray(value)) return value.some(holdsText);
  return isPlainObject(value) && Object.keys(value).length > 0;
}

/**
 * Every secret value of the manifest, masked wherever else it shows: a copy in a plain attribute of
 * the same or another object (its desired or its live value), a diff, a note, a problem (a service
 * naming the value it refused). Its own attribute is masked already, by path. Where a new value
 * carries a copy and the old value it replaces does not, the old value is masked whole: it most
 * likely carried the secret before it was rotated, which the manifest no longer knows.
 */
function maskSecretCopies(
  changes: Change[],
  problems: PlanProblem[],
  secrets: SecretCopies | undefined,
): { changes: Change[]; problems: PlanProblem[] } {
  if (!secrets) return { changes, problems };
  const masked = <T>(value: T) => maskCopies(value, secrets);
  // The new value carries a copy of a secret the old one does not: the old one most likely carried
  // that secret's previous value, unknown here, so it is hidden whole. Where the old value carries
  // every copy the new one does, only the copies are hidden and the rest of the change stays
  // readable. Secret by secret, not "any copy on both sides": a connection string holding two
  // secrets, one of them rotated, kept the other and showed the rotated one's old value. In text of
  // several lines (a job's template, a policy), only the old lines the new text does not keep are
  // hidden: a line kept as it was cannot have held the old secret (the new text would hold it too),
  // and the rest of the diff stays readable around the one line that changed.
  const rotated = (before: unknown, after: unknown) => {
    // An unchanged value hides nothing it does not show with its copies masked (and most are).
    if (before === after || !holdsSecret(after, secrets) || jsonEqual(before, after)) return false;
    // Copy by copy: a spot that now holds a secret the old value held fewer times of (a second
    // copy of a secret already there, say) held something else, most likely the old credential.
    const old = secretCounts(before, secrets);
    for (const [secret, n] of secretCounts(after, secrets)) if ((old.get(secret) ?? 0) < n) return true;
    return false;
  };
  const carried = (before: unknown, after: unknown): unknown => {
    if (!rotated(before, after)) return masked(before);
    // Objects and lists part by part, so that the part that now holds a secret is hidden, not the
    // whole attribute: a job's `before` is a summary of the live job (no task's Env), and one secret
    // in one task's Env hid every task group. A part that is the same on both sides stays shown; one
    // that changed is hidden when it could have held the old value (any text), or followed further
    // when the new part holds the secret.
    const part = (b: unknown, a: unknown): unknown =>
      jsonEqual(b, a) ? masked(b) : holdsSecret(a, secrets) ? carried(b, a) : holdsText(b) ? SENSITIVE : b;
    if (isPlainObject(before) && isPlainObject(after))
      return Object.fromEntries(
        Object.entries(before).map(([k, v]) => [maskText(k, secrets), part(v, after[k])]),
      );
    if (Array.isArray(before) && Array.isArray(after) && before.length === after.length)
      return before.map((v, i) => part(v, after[i]));
    if (typeof before !== 'string' || typeof after !== 'string' || !before.includes('\n')) return SENSITIVE;
    const kept = new Set(after.split('\n'));
    // A kept line is still masked: it may hold a line of a secret of several lines (a key).
    return before
      .split('\n')
      .map((line) => (kept.has(line) ? maskText(line, secrets) : SENSITIVE))
      .join('\n');
  };
  // What is shown of a change, and only that: its address, key and ids are what the applier acts on.
  const shown = changes.map((c) => ({
    ...c,
    after: masked(c.after),
    before:
      c.before && Object.fromEntries(Object.entries(c.before).map(([k, v]) => [k, carried(v, c.after?.[k])])),
    diffs: c.diffs.map((d) => {
      const { before: _maskedBefore, after, ...rest } = masked(d);
      const before = d.before !== undefined ? carried(d.before, d.after) : undefined;
      return {
        ...rest,
        // A whole value that was a secret and is another: said as a secret's change is said, by
        // path or by copy alike, not as `(sensitive value) -> (sensitive value)`.
        ...(before === SENSITIVE && after === SENSITIVE ? { sensitive: true } : {}),
        ...(after !== undefined ? { after } : {}),
        ...(before !== undefined ? { before } : {}),
      };
    }),
    ...(c.notes ? { notes: masked(c.notes) } : {}),
    ...(c.impact ? { impact: masked(c.impact) } : {}),
    ...(c.reason !== undefined ? { reason: masked(c.reason) } : {}),
    ...(c.notCompared !== undefined ? { notCompared: masked(c.notCompared) } : {}),
  }));
  return {
    changes: shown,
    problems: problems.map((p) => ({ ...p, message: maskMessage(p.message, secrets) })),
  };
}

export async function buildPlan(
  desiredInput: readonly Desired[],
  lookup: KindLookup,
  ctx: KindContext,
  options: PlanOptions = {},
): Promise<Plan> {
  const parallelism = Math.max(1, options.parallelism ?? 10);
  const limit = pLimit(parallelism);
  ctx = withParallelism(ctx, parallelism);

  // Plan-time checks first: they point at the manifest, so report them even when reads would work.
  // Keys arrive complete: the caller filled in effective namespaces (and refused duplicates).
  const problems: PlanProblem[] = [];
  const list = listOnce(ctx);
  startLists(desiredInput, lookup, limit, list);
  const resolved = await refineAll(desiredInput, lookup, limit, problems, (kind, d) =>
    hasLocalFiles(kind) ? () => kind.resolve(d) : undefined,
  );
  const desired = await refineAll(resolved, lookup, limit, problems, (kind, d) =>
    hasServerSidePlan(kind) ? () => kind.prepare(ctx, d) : undefined,
  );
  const byKind = groupBy(
    desired.filter((d) => d.ensure !== 'absent'),
    (d) => d.key.kind,
  );
  const checks = Promise.all(
    [...byKind].map(([kindName, group]) =>
      limit(async () => {
        const kind = mustKind(lookup, kindName);
        return hasServiceChecks(kind) ? kind.check(ctx, group) : [];
      }),
    ),
  );

  /** Objects whose local files or preparation had a problem (a job spec naming another job). */
  const refused = new Set(problems.map((p) => addressOf(p.key)));
  // The checks and the reads overlap (neither needs the other); each object's details and the
  // service's plan of it, or a new object's preview, follow its own read at once.
  const previews = new Map<string, Promise<CreatePreview>>();
  const plans = new Map<string, unknown>();
  /** Each object's change, compared as soon as its observation was final (see observeAll). */
  const compared = new Map<string, ReturnType<typeof changeFor>>();
  const observing = observeAll(
    desired,
    lookup,
    ctx,
    limit,
    list,
    (d, o) => {
      const kind = mustKind(lookup, d.key.kind);
      // An object its manifest already gets wrong is not planned: the service's plan of it (or its
      // preview) would be of something else, and would read as what it would do.
      if (d.ensure === 'absent' || refused.has(addressOf(d.key))) return undefined;
      if (o && (hasDetailReads(kind) || hasServerSidePlan(kind))) {
        return async () => {
          const detailed = hasDetailReads(kind) ? await kind.readDetails(ctx, d, o) : o;
          if (hasServerSidePlan(kind)) {
            const plan = await kind.serverPlan(ctx, d, detailed);
            if (plan !== undefined) plans.set(addressOf(d.key), plan);
          }
          return detailed;
        };
      }
      if (!o && hasServerSidePlan(kind)) {
        const preview = limit(() => kind.previewCreate(ctx, d));
        preview.catch(() => {});
        previews.set(addressOf(d.key), preview);
      }
      return undefined;
    },
    (d, o) => {
      const address = addressOf(d.key);
      compared.set(
        address,
        changeFor(d, mustKind(lookup, d.key.kind), o, plans.get(address), options.writeOnly, ctx),
      );
    },
    options.onProgress,
  );
  const [checked, observed] = await Promise.all([checks, observing]);
  // Plan-time checks are reported first: they point at the manifest.
  problems.push(...checked.flat());
  const changes = desired.map((d) => {
    const address = addressOf(d.key);
    const { change, problems: found } =
      compared.get(address) ??
      changeFor(
        d,
        mustKind(lookup, d.key.kind),
        observed.get(address),
        plans.get(address),
        options.writeOnly,
        ctx,
      );
    problems.push(...found);
    return change;
  });
  await previewCreates(changes, lookup, ctx, limit, problems, previews, refused);
  if (options.managedIds) noteReplacedByOthers(changes, options.managedIds);
  const found: PruneFindings | undefined = options.prune?.length
    ? { listed: new Map(), markedNotRecorded: new Set(), refused: new Set() }
    : undefined;
  if (found && options.prune?.length) {
    const scopes = new Map<string, PruneScope>();
    for (const scope of options.prune) {
      // `importedOnly` is part of what a scope is: keyed without it, the scope an import adds for
      // its objects replaced the namespace's own, and the jobs Converge created there were no longer
      // pruned, nor listed anywhere.
      const id = JSON.stringify([
        scope.kind,
        scope.connection,
        scope.namespace,
        scope.namePrefix,
        scope.name,
        scope.importedOnly === true,
      ]);
      scopes.set(id, scope);
    }
    const declared = options.declared ?? desired;
    const candidates = await pruneCandidates(
      [...scopes.values()],
      declared,
      lookup,
      ctx,
      limit,
      problems,
      options.managed,
      options.managedIds,
      options.notOwned,
      list,
      settingNames(options.settingNames).prune,
      found,
      options.writeOnly,
    );
    changes.push(...candidates.filter((c) => options.pruneOnly?.(c.address) ?? true));
  }

  await addImpact(changes, desired, lookup, ctx, limit, planReads(list, observed));

  linkDependencies(changes, lookup);
  const forward = topologicalOrder(changes.filter((c) => c.action !== 'delete'));
  const deletions = topologicalOrder(changes.filter((c) => c.action === 'delete'));
  // The whole manifest's secrets, not only the planned objects': `--target` may leave out the
  // object that holds a secret a planned object copies.
  const secretName = options.secretName ?? defaultSecretName;
  // Entries secret by their names, live ones too: their values are secrets wherever they are copied.
  const byNameValues = [...forward, ...deletions].flatMap((c) =>
    secretValuesByName(c, secretMapsOf(lookup(c.key.kind)), secretName),
  );
  const secrets = copiedSecrets([...desired, ...(options.declared ?? [])], lookup, [
    ...(options.sensitiveValues ?? []),
    ...byNameValues,
    ...(options.credentials?.() ?? []).flatMap(credentialForms),
  ]);
  const byName = [...forward, ...deletions].map((c) =>
    maskSecretsByName(c, secretMapsOf(lookup(c.key.kind)), secretName),
  );
  const masked = maskSecretCopies(byName, problems, secrets);
  const ordered = masked.changes;
  return {
    ...(secrets ? { secretCopies: secrets } : {}),
    ...(found?.markedNotRecorded.size ? { markedNotRecorded: [...found.markedNotRecorded].sort() } : {}),
    ...(found ? { listedForPrune: found.listed } : {}),
    ...(found?.refused.size ? { pruneRefused: [...found.refused].sort() } : {}),
    changes: ordered,
    summary: summarise(ordered),
    problems:
      masked.problems.length < 2
        ? masked.problems
        : inFileOrder(
            masked.problems,
            (p) => p.position,
            desiredInput.flatMap((d) => (d.resource ? [d.resource.source.file] : [])),
          ),
    requests: {},
  };
}
