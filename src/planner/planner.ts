/**
 * desired + observed → Plan. Knows resource kinds only through the contract: it reads live state
 * (with a kind's `list` when the manifest holds several objects of one scope, so a whole kind costs a
 * few requests instead of one per object), compares, and orders the changes.
 */
import pLimit from 'p-limit';
import { formatPosition } from '../manifest/types.js';
import {
  type AnyResourceKind,
  type AttributeDiff,
  addressOf,
  type Desired,
  type KindContext,
  type Observed,
  type PlanProblem,
  type PruneScope,
  type ResourceKey,
} from '../resources/contract.js';
import { topologicalOrder } from './order.js';
import { maskAttributes, maskDiffs, secretPaths } from './masking.js';
import { type Change, type Plan, summarise } from './types.js';
import { compareWriteOnly, isWriteOnlyDiff, type WriteOnlyDigests } from './write-only.js';

export interface PlanOptions {
  /** How many reads may be in flight at once (terraform's -parallelism; default 10). */
  parallelism?: number;
  /** Scopes in which objects that Converge owns but the manifest no longer has are deleted. */
  prune?: PruneScope[];
  /** Called as reads finish, for progress output. */
  onProgress?: (done: number, total: number) => void;
  /** What Converge last applied to write-only attributes; without it every such value counts as changed. */
  writeOnly?: WriteOnlyDigests;
}

export type KindLookup = (kind: string) => AnyResourceKind | undefined;

/** Objects of one kind that one `list` call can read together. */
function scopeKey(key: ResourceKey): string {
  return `${key.kind}\u0000${key.connection ?? ''}\u0000${key.namespace ?? ''}`;
}

function groupBy<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}

function mustKind(lookup: KindLookup, kind: string): AnyResourceKind {
  const k = lookup(kind);
  if (!k) throw new Error(`unknown kind ${kind}`);
  return k;
}

/** Reads live state for every desired object; returns a map from address to observation. */
async function observeAll(
  desired: readonly Desired[],
  lookup: KindLookup,
  ctx: KindContext,
  limit: ReturnType<typeof pLimit>,
  onProgress?: (done: number, total: number) => void,
): Promise<Map<string, Observed | undefined>> {
  const observed = new Map<string, Observed | undefined>();
  const groups = [...groupBy(desired, (d) => scopeKey(d.key)).values()];
  let done = 0;
  const finish = (n: number) => {
    done += n;
    onProgress?.(done, desired.length);
  };
  await Promise.all(
    groups.flatMap((group) => {
      const first = group[0]!;
      const kind = mustKind(lookup, first.key.kind);
      if (group.length > 1 && kind.list) {
        return [
          limit(async () => {
            const scope = {
              ...(first.key.namespace === undefined ? {} : { namespace: first.key.namespace }),
              ...(first.key.connection === undefined ? {} : { connection: first.key.connection }),
            };
            const live = await kind.list!(ctx, scope);
            const byName = new Map(live.map((o) => [o.key.name, o]));
            for (const d of group) {
              const o = byName.get(d.key.name);
              observed.set(addressOf(d.key), o ? { ...o, key: d.key } : undefined);
            }
            finish(group.length);
          }),
        ];
      }
      return group.map((d) =>
        limit(async () => {
          observed.set(addressOf(d.key), await kind.observe(ctx, d.key));
          finish(1);
        }),
      );
    }),
  );
  return observed;
}

function sourceOf(d: Desired): string | undefined {
  return d.resource ? formatPosition(d.resource.source) : undefined;
}

/** What every change about a live object carries: the object, its id, version and attributes. */
function liveFields(kind: AnyResourceKind, observed: Observed) {
  return {
    observed,
    before: maskAttributes(secretPaths(kind), kind.describe(observed)),
    ...(observed.id ? { id: observed.id } : {}),
    ...(observed.version !== undefined ? { observedVersion: observed.version } : {}),
    ...(kind.namespaceLabel ? { namespaceLabel: kind.namespaceLabel } : {}),
  };
}

function changeFor(
  d: Desired,
  kind: AnyResourceKind,
  observed: Observed | undefined,
  digests: WriteOnlyDigests | undefined,
): { change: Change; problems: PlanProblem[] } {
  const base = {
    address: addressOf(d.key),
    key: d.key,
    ...(kind.namespaceLabel ? { namespaceLabel: kind.namespaceLabel } : {}),
    dependsOn: [] as string[],
    desired: d,
    diffs: [] as AttributeDiff[],
    before: null,
    ...(sourceOf(d) ? { source: sourceOf(d) } : {}),
  };
  if (d.ensure === 'absent') {
    const reason = 'declared absent in the manifest';
    const change: Change = observed
      ? { ...base, ...liveFields(kind, observed), action: 'delete', after: null, reason }
      : { ...base, action: 'noop', after: null, reason };
    return { change, problems: [] };
  }
  const secrets = secretPaths(kind);
  const after = maskAttributes(secrets, kind.render(d));
  if (!observed) {
    const created = kind.writeOnly?.length ? { ...d, changedWriteOnly: [...kind.writeOnly] } : d;
    return { change: { ...base, desired: created, action: 'create', after }, problems: [] };
  }
  const comparison = kind.compare(d, observed);
  // Write-only values are never read back: whether they changed is told by their digests alone.
  const writeOnly = kind.writeOnly?.length
    ? compareWriteOnly(kind, addressOf(d.key), d, digests)
    : { diffs: [], changed: [] };
  const diffs = [...comparison.diffs.filter((diff) => !isWriteOnlyDiff(kind, diff)), ...writeOnly.diffs];
  const action = diffs.length === 0 ? 'noop' : comparison.replace ? 'replace' : 'update';
  const problems = (comparison.problems ?? []).map((p): PlanProblem => ({
    key: d.key,
    message: p.message,
    ...(d.resource ? { position: d.resource.locate(p.pointer ?? '') } : {}),
  }));
  return {
    change: {
      ...base,
      ...liveFields(kind, observed),
      ...(kind.writeOnly?.length ? { desired: { ...d, changedWriteOnly: writeOnly.changed } } : {}),
      action,
      after,
      diffs: maskDiffs(secrets, diffs),
      ...(comparison.notes?.length ? { notes: [...comparison.notes] } : {}),
      ...(action !== 'noop' && comparison.impact?.length ? { impact: [...comparison.impact] } : {}),
      ...(comparison.notCompared ? { notCompared: comparison.notCompared } : {}),
    },
    problems,
  };
}

/** A kind's step over one desired object (`resolve`, `prepare`): the object it returns, and problems. */
type DesiredStep = (
  kind: AnyResourceKind,
  d: Desired,
) => Promise<{ desired: Desired; problems: PlanProblem[] }> | undefined;

/**
 * Runs a kind step over every desired object that is not declared absent, collecting problems.
 * Used twice: local inputs first (`resolve`: files the manifest names, whose problems need no
 * service), then what only the service can make of the manifest (`prepare`: a text job spec parsed).
 */
async function refineAll(
  desired: readonly Desired[],
  lookup: KindLookup,
  limit: ReturnType<typeof pLimit>,
  problems: PlanProblem[],
  step: DesiredStep,
): Promise<Desired[]> {
  return Promise.all(
    desired.map((d) =>
      limit(async () => {
        const pending = d.ensure === 'absent' ? undefined : step(mustKind(lookup, d.key.kind), d);
        if (!pending) return d;
        const refined = await pending;
        problems.push(...refined.problems);
        return refined.desired;
      }),
    ),
  );
}

/** The service's own account of what each create would do, for kinds that can ask it. */
async function previewCreates(
  changes: readonly Change[],
  lookup: KindLookup,
  ctx: KindContext,
  limit: ReturnType<typeof pLimit>,
  problems: PlanProblem[],
): Promise<void> {
  await Promise.all(
    changes.map((c) =>
      limit(async () => {
        const kind = mustKind(lookup, c.key.kind);
        if (c.action !== 'create' || !kind.previewCreate || !c.desired) return;
        const d = c.desired;
        const preview = await kind.previewCreate(ctx, d);
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

/** Reads a kind needs only for some objects, once the objects themselves were read. */
async function readAllDetails(
  desired: readonly Desired[],
  observed: Map<string, Observed | undefined>,
  lookup: KindLookup,
  ctx: KindContext,
  limit: ReturnType<typeof pLimit>,
): Promise<void> {
  await Promise.all(
    desired.map((d) =>
      limit(async () => {
        const kind = mustKind(lookup, d.key.kind);
        const o = observed.get(addressOf(d.key));
        if (!kind.readDetails || !o || d.ensure === 'absent') return;
        observed.set(addressOf(d.key), await kind.readDetails(ctx, d, o));
      }),
    ),
  );
}

/** Keys and scopes are compared after `effectiveNamespace` filled in what the manifest left out. */
function inScope(key: ResourceKey, scope: PruneScope): boolean {
  return (
    key.kind === scope.kind &&
    (key.connection ?? '') === (scope.connection ?? '') &&
    key.namespace === scope.namespace &&
    (scope.namePrefix === undefined || key.name.startsWith(scope.namePrefix))
  );
}

function describeScope(scope: PruneScope): string {
  const parts = [
    scope.namespace !== undefined ? `namespace ${scope.namespace}` : '',
    scope.namePrefix !== undefined ? `names starting "${scope.namePrefix}"` : '',
    scope.connection !== undefined ? `connection ${scope.connection}` : '',
  ].filter(Boolean);
  return `${scope.name ? `PruneScope "${scope.name}" (` : '('}${scope.kind}${parts.length ? `, ${parts.join(', ')}` : ''})`;
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
): Promise<Change[]> {
  const lists = await Promise.all(
    scopes.map((scope) =>
      limit(async () => {
        const kind = mustKind(lookup, scope.kind);
        if (!kind.list || !kind.owns) {
          throw new Error(`kind ${scope.kind} cannot be pruned: it has no way to list or to tell ownership`);
        }
        const live = await kind.list(ctx, {
          ...(scope.namespace === undefined ? {} : { namespace: scope.namespace }),
          ...(scope.connection === undefined ? {} : { connection: scope.connection }),
        });
        const declared = desired.filter((d) => inScope(d.key, scope));
        const wanted = new Set(declared.map((d) => d.key.name));
        const doomed = live.filter(
          (o) => kind.owns!(o, scope) && inScope(o.key, scope) && !wanted.has(o.key.name),
        );
        if (doomed.length > 0 && declared.length === 0 && !scope.allowEmpty) {
          problems.push({
            key: { kind: 'PruneScope', name: scope.name ?? scope.kind },
            message: `${describeScope(scope)}: the manifest declares no object in it, so --prune would delete all ${doomed.length}; refusing (set allowEmpty: true in the scope to allow it)`,
            ...(scope.position ? { position: scope.position } : {}),
          });
          return [];
        }
        return doomed.map((o): Change => ({
          address: addressOf(o.key),
          key: o.key,
          ...liveFields(kind, o),
          action: 'delete',
          diffs: [],
          after: null,
          dependsOn: [],
          // Only a marker proves Converge created the object; a declared scope says just where it is.
          reason:
            kind.ownership === 'declared-scope'
              ? `in ${describeScope(scope)} and not in the manifest`
              : `created by Converge (ownership marker) in ${describeScope(scope)} and no longer in the manifest`,
        }));
      }),
    ),
  );
  // Two scopes may overlap: delete each object once.
  const seen = new Set<string>();
  return lists.flat().filter((c) => !seen.has(c.address) && seen.add(c.address));
}

/** The blast radius the kinds can only tell from other objects (the users a group reaches). */
async function addImpact(
  changes: readonly Change[],
  manifest: readonly Desired[],
  lookup: KindLookup,
  ctx: KindContext,
  limit: ReturnType<typeof pLimit>,
): Promise<void> {
  const byKind = groupBy(
    changes.filter((c) => c.action !== 'noop' && mustKind(lookup, c.key.kind).impact),
    (c) => c.key.kind,
  );
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
        const lines = await mustKind(lookup, kindName).impact!(ctx, subjects, manifest);
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
  const edges = new Map<Change, Set<string>>(changes.map((c) => [c, new Set<string>()]));
  for (const c of changes) {
    const kind = mustKind(lookup, c.key.kind);
    if (!kind.dependencies) continue;
    const needs = kind.dependencies({
      key: c.key,
      ...(c.desired ? { desired: c.desired } : {}),
      ...(c.observed ? { observed: c.observed } : {}),
    });
    for (const key of needs) {
      const needed = byAddress.get(addressOf(key));
      if (!needed || needed === c) continue;
      const deleting = c.action === 'delete';
      if (!deleting && needed.action !== 'delete') edges.get(c)!.add(needed.address);
      else if (deleting && needed.action === 'delete') edges.get(needed)!.add(c.address);
    }
  }
  for (const [c, deps] of edges) c.dependsOn = [...deps];
}

export async function buildPlan(
  desiredInput: readonly Desired[],
  lookup: KindLookup,
  ctx: KindContext,
  options: PlanOptions = {},
): Promise<Plan> {
  const limit = pLimit(Math.max(1, options.parallelism ?? 10));

  // Plan-time checks first: they point at the manifest, so report them even when reads would work.
  // Keys arrive complete: the caller filled in effective namespaces (and refused duplicates).
  const problems: PlanProblem[] = [];
  const resolved = await refineAll(desiredInput, lookup, limit, problems, (kind, d) => kind.resolve?.(d));
  const desired = await refineAll(resolved, lookup, limit, problems, (kind, d) => kind.prepare?.(ctx, d));
  const byKind = groupBy(
    desired.filter((d) => d.ensure !== 'absent'),
    (d) => d.key.kind,
  );
  await Promise.all(
    [...byKind].map(([kindName, group]) =>
      limit(async () => {
        const kind = mustKind(lookup, kindName);
        if (kind.check) problems.push(...(await kind.check(ctx, group)));
      }),
    ),
  );

  const observed = await observeAll(desired, lookup, ctx, limit, options.onProgress);
  await readAllDetails(desired, observed, lookup, ctx, limit);
  const changes = desired.map((d) => {
    const { change, problems: found } = changeFor(
      d,
      mustKind(lookup, d.key.kind),
      observed.get(addressOf(d.key)),
      options.writeOnly,
    );
    problems.push(...found);
    return change;
  });
  await previewCreates(changes, lookup, ctx, limit, problems);
  if (options.prune?.length) {
    const scopes = new Map<string, PruneScope>();
    for (const scope of options.prune) {
      const id = JSON.stringify([
        scope.kind,
        scope.connection,
        scope.namespace,
        scope.namePrefix,
        scope.name,
      ]);
      scopes.set(id, scope);
    }
    changes.push(...(await pruneCandidates([...scopes.values()], desired, lookup, ctx, limit, problems)));
  }

  await addImpact(changes, desired, lookup, ctx, limit);

  linkDependencies(changes, lookup);
  const forward = topologicalOrder(changes.filter((c) => c.action !== 'delete'));
  const deletions = topologicalOrder(changes.filter((c) => c.action === 'delete'));
  const ordered = [...forward, ...deletions];
  return { changes: ordered, summary: summarise(ordered), problems, requests: {} };
}
