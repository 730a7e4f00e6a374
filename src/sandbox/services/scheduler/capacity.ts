/**
 * The capacity model of the simulated scheduler: what a task group asks (the sum of its tasks'
 * `Resources.CPU` and `MemoryMB`, defaulted to the real 100 MHz / 300 MB by canonicalisation), what
 * the live allocations on each node use, which node takes the next placement, and the real
 * `AllocMetric` shape (`nomad/structs AllocMetric`) of a group that could not be placed.
 */
import type { AllocRecord, Json, NodeInfo } from './model.js';

export interface Ask {
  cpu: number;
  memoryMB: number;
}

/** Datacenter globs (`*`, `dc*`), as job `Datacenters` accept since the real 1.5. */
export function dcMatches(pattern: string, dc: string): boolean {
  const re = new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`);
  return re.test(dc);
}

/** The nodes in any of the job's datacenters (the real `readyNodesInDCs`). */
export function nodesInDatacenters(nodes: readonly NodeInfo[], job: Json): NodeInfo[] {
  return nodes.filter((n) => (job.Datacenters as string[]).some((p) => dcMatches(p, n.Datacenter)));
}

export function askOf(tg: Json): Ask {
  let cpu = 0;
  let memoryMB = 0;
  for (const task of (tg.Tasks as Json[] | undefined) ?? []) {
    const r = (task.Resources as Json | undefined) ?? {};
    cpu += typeof r.CPU === 'number' ? r.CPU : 0;
    memoryMB += typeof r.MemoryMB === 'number' ? r.MemoryMB : 0;
  }
  return { cpu, memoryMB };
}

/** The real `AllocatedResources` of an allocation, which is also what the usage sums read back. */
export function allocatedResources(tg: Json): Json {
  const tasks: Record<string, Json> = {};
  for (const task of (tg.Tasks as Json[] | undefined) ?? []) {
    const ask = askOf({ Tasks: [task] });
    tasks[task.Name as string] = {
      Cpu: { CpuShares: ask.cpu },
      Memory: { MemoryMB: ask.memoryMB, MemoryMaxMB: 0 },
    };
  }
  const disk = ((tg.EphemeralDisk as Json | undefined)?.SizeMB as number | undefined) ?? 0;
  return { Tasks: tasks, Shared: { DiskMB: disk } };
}

/** What an allocation holds; allocations saved before capacity was modelled hold nothing. */
function usageOf(alloc: AllocRecord): Ask {
  const tasks = ((alloc.AllocatedResources as Json | undefined)?.Tasks ?? {}) as Record<string, Json>;
  let cpu = 0;
  let memoryMB = 0;
  for (const t of Object.values(tasks)) {
    cpu += ((t.Cpu as Json | undefined)?.CpuShares as number | undefined) ?? 0;
    memoryMB += ((t.Memory as Json | undefined)?.MemoryMB as number | undefined) ?? 0;
  }
  return { cpu, memoryMB };
}

/** Used capacity per node id, from the allocations that still run. */
export class NodeUsage {
  private readonly used = new Map<string, Ask>();

  constructor(live: Iterable<AllocRecord>) {
    for (const a of live) this.add(a.NodeID as string, usageOf(a));
  }

  add(nodeId: string, ask: Ask): void {
    const u = this.used.get(nodeId) ?? { cpu: 0, memoryMB: 0 };
    this.used.set(nodeId, { cpu: u.cpu + ask.cpu, memoryMB: u.memoryMB + ask.memoryMB });
  }

  /** Frees what a live allocation holds on its node (tried as replaced; `add` puts it back). */
  release(alloc: AllocRecord): void {
    const nodeId = alloc.NodeID as string;
    const u = this.used.get(nodeId);
    if (!u) return;
    const ask = usageOf(alloc);
    this.used.set(nodeId, { cpu: u.cpu - ask.cpu, memoryMB: u.memoryMB - ask.memoryMB });
  }

  /** Holds again what `release` freed. */
  hold(alloc: AllocRecord): void {
    this.add(alloc.NodeID as string, usageOf(alloc));
  }

  /** The first dimension the ask does not fit in, in the real `ComparableResources.Superset` order. */
  exhausted(node: NodeInfo, ask: Ask): 'cpu' | 'memory' | undefined {
    const u = this.used.get(node.ID) ?? { cpu: 0, memoryMB: 0 };
    if (u.cpu + ask.cpu > node.CPU) return 'cpu';
    if (u.memoryMB + ask.memoryMB > node.MemoryMB) return 'memory';
    return undefined;
  }
}

/**
 * The node for the next placement: round robin from `cursor` over the eligible nodes, skipping those
 * without room (the real scheduler bin-packs; round robin keeps placements spread and predictable).
 */
export function pickNode(
  eligible: readonly NodeInfo[],
  usage: NodeUsage,
  ask: Ask,
  cursor: number,
): { node: NodeInfo; offset: number } | undefined {
  for (let i = 0; i < eligible.length; i++) {
    const node = eligible[(cursor + i) % eligible.length]!;
    if (!usage.exhausted(node, ask)) return { node, offset: i };
  }
  return undefined;
}

/**
 * The real AllocMetric of a group with `failures` placements that found no node: the first failure is
 * described, the others are counted in `CoalescedFailures`. `NodesEvaluated` counts the nodes in the
 * job's datacenters, each of them exhausted in its first short dimension.
 */
export function placementFailure(
  allNodes: readonly NodeInfo[],
  eligible: readonly NodeInfo[],
  usage: NodeUsage,
  ask: Ask,
  job: Json,
  failures: number,
): Json {
  const dimensions: Record<string, number> = {};
  for (const n of eligible) {
    const d = usage.exhausted(n, ask);
    if (d) dimensions[d] = (dimensions[d] ?? 0) + 1;
  }
  const available: Record<string, number> = {};
  for (const n of allNodes)
    if ((job.Datacenters as string[]).some((p) => dcMatches(p, n.Datacenter)))
      available[n.Datacenter] = (available[n.Datacenter] ?? 0) + 1;
  const exhausted = Object.values(dimensions).reduce((a, b) => a + b, 0);
  return {
    NodesEvaluated: eligible.length,
    NodesFiltered: 0,
    NodesInPool: allNodes.length,
    NodesAvailable: available,
    ClassFiltered: null,
    ConstraintFiltered: null,
    NodesExhausted: exhausted,
    // Nodes have no class here; the real map is keyed by node class and left empty without one.
    ClassExhausted: null,
    DimensionExhausted: exhausted > 0 ? dimensions : null,
    QuotaExhausted: null,
    ResourcesExhausted: null,
    Scores: null,
    AllocationTime: 0,
    CoalescedFailures: failures - 1,
  };
}
