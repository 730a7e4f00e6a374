/**
 * The sandbox scheduler's capacity model and allocation details: node CPU and memory from the config,
 * task resources (and their 100 MHz / 300 MB defaults) consuming them, placement only in the job's
 * datacenters, a shortfall as a blocked evaluation with the real FailedTGAllocs metric, placement once
 * a stop frees capacity, and the task states and events of placed and stopped allocations.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, SandboxConfigError, startSandbox } from '../../src/sandbox/index.js';
import { type Api, apiFor } from './helpers.js';
import { getJson, type Json, jobSpec, register } from './scheduler-helpers.js';

let sandbox: RunningSandbox;
let api: Api;

beforeAll(async () => {
  sandbox = await startSandbox({
    config: {
      scheduler: {
        nodes: [
          // dc "a": two nodes with room for three default tasks (300 MB) each.
          { name: 'a1', datacenter: 'a', memoryMB: 1000 },
          { name: 'a2', datacenter: 'a', memoryMB: 1000 },
          // dc "c": one node short of CPU.
          { name: 'c1', datacenter: 'c', cpu: 1000 },
          // dc "w": default capacity (4000 MHz, 8192 MB).
          { name: 'w1', datacenter: 'w' },
          // dc "r": one node with room for three default tasks, for replacements.
          { name: 'r1', datacenter: 'r', memoryMB: 1000 },
        ],
      },
    },
  });
  api = apiFor(sandbox);
});

afterAll(async () => {
  await sandbox.close();
});

type Alloc = Json & {
  ID: string;
  NodeName: string;
  DesiredStatus: string;
  ClientStatus: string;
  TaskStates: Record<string, Json & { Events: Json[] }>;
};
type Eval = Json & { ID: string; Status: string; TriggeredBy: string; FailedTGAllocs: Json | null };

const allocsOf = (id: string) => getJson<Alloc[]>(api, `/v1/job/${id}/allocations`);
const evalsOf = (id: string) => getJson<Eval[]>(api, `/v1/job/${id}/evaluations`);
const running = (allocs: Alloc[]) => allocs.filter((a) => a.DesiredStatus === 'run');
/** No update strategy: no deployment, so the job status only follows allocations and evaluations. */
const plain = (dcs: string[]) => ({ Datacenters: dcs, Update: { MaxParallel: 0 } });

describe('capacity', () => {
  it('places as many allocations as node memory allows, then blocks with the real AllocMetric', async () => {
    await register(api, jobSpec('cap-fill', { web: 6 }, plain(['a'])));
    const filled = running(await allocsOf('cap-fill'));
    expect(filled).toHaveLength(6);
    expect(filled.filter((a) => a.NodeName === 'a1')).toHaveLength(3);

    await register(api, jobSpec('cap-over', { web: 2 }, plain(['a'])));
    expect(await allocsOf('cap-over')).toEqual([]);
    const evals = await evalsOf('cap-over');
    const first = evals.find((e) => e.TriggeredBy === 'job-register')!;
    const blocked = evals.find((e) => e.Status === 'blocked')!;
    expect(first).toMatchObject({
      Status: 'complete',
      BlockedEval: blocked.ID,
      QueuedAllocations: { web: 2 },
    });
    expect(first.FailedTGAllocs).toEqual({
      web: expect.objectContaining({
        NodesEvaluated: 2,
        NodesInPool: 5,
        NodesAvailable: { a: 2 },
        NodesExhausted: 2,
        DimensionExhausted: { memory: 2 },
        ClassExhausted: null,
        ConstraintFiltered: null,
        CoalescedFailures: 1,
      }),
    });
    expect((await getJson(api, '/v1/job/cap-over')).Status).toBe('pending');
    expect(((await getJson(api, '/v1/job/cap-over/summary')).Summary as Json).web).toMatchObject({
      Queued: 2,
      Running: 0,
    });
  });

  it('places the blocked allocations once a stop frees capacity', async () => {
    await api('DELETE', '/v1/job/cap-fill');
    const placed = running(await allocsOf('cap-over'));
    expect(placed).toHaveLength(2);
    const evals = await evalsOf('cap-over');
    expect(evals.filter((e) => e.Status === 'blocked')).toEqual([]);
    // The blocked evaluation itself was processed and placed them.
    const unblocked = evals.find((e) => e.TriggeredBy === 'queued-allocs')!;
    expect(unblocked).toMatchObject({ Status: 'complete', QueuedAllocations: { web: 0 } });
    expect(placed.every((a) => a.EvalID === unblocked.ID)).toBe(true);
    expect((await getJson(api, '/v1/job/cap-over')).Status).toBe('running');
  });

  it('a partial shortfall places what fits and queues the rest', async () => {
    // a1 and a2 each hold one cap-over allocation: two more fit per node.
    await register(api, jobSpec('cap-part', { web: 5 }, plain(['a'])));
    expect(running(await allocsOf('cap-part'))).toHaveLength(4);
    const blocked = (await evalsOf('cap-part')).find((e) => e.Status === 'blocked');
    expect(blocked).toBeDefined();
    const first = (await evalsOf('cap-part')).find((e) => e.TriggeredBy === 'job-register')!;
    expect((first.FailedTGAllocs as Record<string, Json>).web).toMatchObject({ CoalescedFailures: 0 });
    // Lowering the count to what runs supersedes the blocked evaluation.
    await register(api, jobSpec('cap-part', { web: 4 }, plain(['a'])));
    expect((await evalsOf('cap-part')).filter((e) => e.Status === 'blocked')).toEqual([]);
    await api('DELETE', '/v1/job/cap-part?purge=true');
  });

  it('task Resources consume CPU too: a 1500 MHz task does not fit a 1000 MHz node', async () => {
    const job = jobSpec('cap-cpu', { web: 1 }, plain(['c']));
    ((job.TaskGroups as Json[])[0]!.Tasks as Json[])[0]!.Resources = { CPU: 1500, MemoryMB: 64 };
    await register(api, job);
    const first = (await evalsOf('cap-cpu')).find((e) => e.TriggeredBy === 'job-register')!;
    expect((first.FailedTGAllocs as Record<string, Json>).web).toMatchObject({
      NodesEvaluated: 1,
      NodesExhausted: 1,
      DimensionExhausted: { cpu: 1 },
    });
    // A smaller ask fits the same node.
    ((job.TaskGroups as Json[])[0]!.Tasks as Json[])[0]!.Resources = { CPU: 900, MemoryMB: 64 };
    await register(api, job);
    const allocs = running(await allocsOf('cap-cpu'));
    expect(allocs).toHaveLength(1);
    expect(allocs[0]!.NodeName).toBe('c1');
    expect(allocs[0]!.AllocatedResources).toMatchObject({
      Tasks: { app: { Cpu: { CpuShares: 900 }, Memory: { MemoryMB: 64 } } },
    });
  });

  it('an update that fits nowhere leaves the old allocations running, not stopped for nothing', async () => {
    const job = jobSpec('cap-swap', { web: 2 }, plain(['r']));
    await register(api, job);
    const before = running(await allocsOf('cap-swap'));
    expect(before).toHaveLength(2);
    // A new image (destructive) asking more memory than the node has.
    const task = ((job.TaskGroups as Json[])[0]!.Tasks as Json[])[0]!;
    task.Config = { image: 'nginx:1.28' };
    task.Resources = { CPU: 100, MemoryMB: 5000 };
    await register(api, job);
    const after = running(await allocsOf('cap-swap'));
    expect(after.map((a) => a.ID).sort()).toEqual(before.map((a) => a.ID).sort());
    expect(after.every((a) => a.JobVersion === 0 && a.ClientStatus === 'running')).toBe(true);
    const failed = (await evalsOf('cap-swap')).find(
      (e) => e.TriggeredBy === 'job-register' && e.FailedTGAllocs,
    );
    expect(failed?.FailedTGAllocs).toHaveProperty('web');
    expect((await getJson(api, '/v1/job/cap-swap')).Status).toBe('running');
  });

  it('links a replacement and the allocation it replaced (PreviousAllocation, NextAllocation)', async () => {
    const job = jobSpec('cap-swap', { web: 2 }, plain(['r']));
    ((job.TaskGroups as Json[])[0]!.Tasks as Json[])[0]!.Config = { image: 'nginx:1.29' };
    const old = running(await allocsOf('cap-swap'));
    await register(api, job);
    const all = await allocsOf('cap-swap');
    const now = running(all);
    expect(now).toHaveLength(2);
    for (const replacement of now) {
      const previous = all.find((a) => a.ID === replacement.PreviousAllocation);
      expect(previous, JSON.stringify(replacement)).toBeDefined();
      expect(old.map((a) => a.ID)).toContain(previous!.ID);
      expect(previous).toMatchObject({ DesiredStatus: 'stop', NextAllocation: replacement.ID });
      expect(previous!.Name).toBe(replacement.Name);
    }
    await api('DELETE', '/v1/job/cap-swap?purge=true');
  });

  it('the default Datacenters ["*"] reaches every datacenter', async () => {
    const reply = await register(api, jobSpec('cap-any', { web: 4 }, { Update: { MaxParallel: 0 } }));
    expect(reply.EvalID).toBeTruthy();
    const job = await getJson(api, '/v1/job/cap-any');
    expect(job.Datacenters).toEqual(['*']);
    // Round robin over all four nodes, as far as room allows.
    const nodes = new Set(running(await allocsOf('cap-any')).map((a) => a.NodeName));
    expect(nodes.size).toBeGreaterThan(1);
    expect(nodes.has('w1')).toBe(true);
  });
});

describe('allocation task states', () => {
  it('a placed allocation reports each task running after Received, Task Setup, Driver and Started', async () => {
    await register(api, jobSpec('ts-run', { web: 1 }, plain(['w'])));
    const [alloc] = await allocsOf('ts-run');
    expect(alloc).toMatchObject({ ClientStatus: 'running', DesiredStatus: 'run', NodeName: 'w1' });
    const state = alloc!.TaskStates.app!;
    expect(state).toMatchObject({ State: 'running', Failed: false, FinishedAt: null });
    expect(typeof state.StartedAt).toBe('string');
    expect(state.Events.map((e) => e.Type)).toEqual(['Received', 'Task Setup', 'Driver', 'Started']);
    for (const e of state.Events) {
      expect(e).toMatchObject({ FailsTask: false, ExitCode: 0, DriverError: '', SetupError: '' });
      expect(typeof e.Time).toBe('number');
    }
    expect(state.Events[2]).toMatchObject({ DriverMessage: 'Downloading image' });
    for (const f of ['PreviousAllocation', 'NextAllocation', 'RescheduleTracker', 'CreateTime', 'ModifyTime'])
      expect(alloc).toHaveProperty(f);
  });

  it('a stopped allocation reports its tasks dead with a finish time and the kill events', async () => {
    await api('DELETE', '/v1/job/ts-run');
    const [alloc] = await allocsOf('ts-run');
    expect(alloc).toMatchObject({ ClientStatus: 'complete', DesiredStatus: 'stop' });
    const state = alloc!.TaskStates.app!;
    expect(state.State).toBe('dead');
    expect(typeof state.FinishedAt).toBe('string');
    expect(state.Events.map((e) => e.Type).slice(-2)).toEqual(['Killing', 'Killed']);
  });
});

describe('config', () => {
  it.each([
    [{ nodes: [{ name: 'n', cpu: 0 }] }],
    [{ nodes: [{ name: 'n', memoryMB: 1.5 }] }],
    [{ deploymentSeconds: -1 }],
  ])('refuses bad capacity or timing settings: %j', async (scheduler) => {
    await expect(startSandbox({ config: { scheduler } })).rejects.toBeInstanceOf(SandboxConfigError);
  });
});
