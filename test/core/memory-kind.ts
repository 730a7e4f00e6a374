/**
 * An in-memory resource kind for testing the planner and the applier without a service: it records
 * calls, can delay and fail on demand, and tracks how many calls run at once.
 */
import { Type } from '@sinclair/typebox';
import { diffValues } from '../../src/resources/compare.js';
import type {
  AnyResourceKind,
  Dependencies,
  Desired,
  DetailReads,
  LocalFiles,
  Observed,
  Prunable,
  ResourceKey,
  ServiceChecks,
} from '../../src/resources/contract.js';

/** A memory kind, whose tests add capability groups as they need them. */
export type MemoryKind = AnyResourceKind &
  Partial<Prunable & Dependencies & ServiceChecks & LocalFiles & DetailReads>;

export interface MemoryStore {
  objects: Map<string, { value: Record<string, unknown>; version: number }>;
  calls: string[];
  inFlight: number;
  maxInFlight: number;
  failOn: Set<string>;
  delayMs: number;
}

export function memoryStore(): MemoryStore {
  return { objects: new Map(), calls: [], inFlight: 0, maxInFlight: 0, failOn: new Set(), delayMs: 0 };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function memoryKind(
  store: MemoryStore,
  options: {
    kind?: string;
    /** What an object needs, from its spec (or, for a live object about to be deleted, its live value). */
    deps?: (d: Pick<Desired, 'key' | 'spec'>) => ResourceKey[];
    withList?: boolean;
  } = {},
): MemoryKind {
  const kindName = options.kind ?? 'Thing';
  const id = (key: ResourceKey) => `${kindName}/${key.name}`;
  const track = async <T>(label: string, fn: () => T): Promise<T> => {
    store.calls.push(label);
    store.inFlight += 1;
    store.maxInFlight = Math.max(store.maxInFlight, store.inFlight);
    try {
      if (store.delayMs) await sleep(store.delayMs);
      if (store.failOn.has(label)) throw new Error(`injected failure on ${label}`);
      return fn();
    } finally {
      store.inFlight -= 1;
    }
  };
  const observed = (key: ResourceKey): Observed | undefined => {
    const o = store.objects.get(id(key));
    return o ? { key, id: id(key), live: o.value, version: o.version } : undefined;
  };
  const kind: MemoryKind = {
    kind: kindName,
    service: 'registry',
    description: 'test kind',
    nameSchema: Type.String(),
    specSchema: Type.Object({}),
    ...(options.deps
      ? {
          dependencies: (subject) =>
            options.deps!({
              key: subject.key,
              spec: (subject.desired?.spec ?? subject.observed?.live ?? {}) as Record<string, unknown>,
            }),
        }
      : {}),
    observe: (_ctx, key) => track(`observe ${id(key)}`, () => observed(key)),
    compare: (desired, obs) => ({ diffs: diffValues(desired.spec, obs.live) }),
    create: (_ctx, desired) =>
      track(`create ${id(desired.key)}`, () => {
        store.objects.set(id(desired.key), { value: desired.spec, version: 1 });
        return observed(desired.key)!;
      }),
    update: (_ctx, desired) =>
      track(`update ${id(desired.key)}`, () => {
        const prev = store.objects.get(id(desired.key))!;
        store.objects.set(id(desired.key), { value: desired.spec, version: prev.version + 1 });
        return observed(desired.key)!;
      }),
    delete: (_ctx, obs) =>
      track(`delete ${id(obs.key)}`, () => {
        store.objects.delete(id(obs.key));
      }),
    ownership: 'marker',
    owns: (obs) => (obs.live as { owner?: string }).owner === 'converge',
  };
  if (options.withList !== false) {
    kind.list = (_ctx, _scope) =>
      track(`list ${kindName}`, () =>
        [...store.objects.entries()]
          .filter(([k]) => k.startsWith(`${kindName}/`))
          .map(([k, o]) => ({
            key: { kind: kindName, name: k.slice(kindName.length + 1) },
            id: k,
            live: o.value,
            version: o.version,
          })),
      );
  }
  return kind;
}

export function desired(kind: string, name: string, spec: Record<string, unknown>): Desired {
  return { key: { kind, name }, spec };
}

/** The planner and applier never call the context themselves; kinds do. */
export const noContext = {
  client(): never {
    throw new Error('memory kinds use no client');
  },
  option: () => false,
};
