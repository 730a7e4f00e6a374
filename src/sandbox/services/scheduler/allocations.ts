/**
 * Allocations as the simulated scheduler places and stops them, with the task states a simulated
 * client reports: every task is received, its directory built, its driver prepares it and it starts,
 * as the real client's `TaskStates` show for a healthy placement (`nomad/structs TaskEvent`). Tasks
 * keep running; batch work is not run to completion.
 */
import { randomUUID } from 'node:crypto';
import { allocatedResources } from './capacity.js';
import { type AllocRecord, type Json, type NodeInfo, specOf } from './model.js';

/** What decides whether a running allocation still matches its group: the group without its count. */
export function groupSpec(tg: Json): string {
  return specOf({ ...tg, Count: undefined });
}

export interface Placement {
  evalId: string;
  job: Json;
  tg: Json;
  /** The index in the allocation's name, `<job>.<group>[<i>]`. */
  nameIdx: number;
  node: NodeInfo;
  /** The deployment the allocation is part of, or empty. */
  deploymentId: string;
  index: number;
  now: number;
}

/** A running allocation of the real shape, plus the sandbox's bookkeeping fields. */
export function newAllocation(p: Placement): AllocRecord {
  const { job, tg } = p;
  return {
    ID: randomUUID(),
    Namespace: job.Namespace as string,
    EvalID: p.evalId,
    Name: `${String(job.ID)}.${String(tg.Name)}[${p.nameIdx}]`,
    NodeID: p.node.ID,
    NodeName: p.node.Name,
    JobID: job.ID as string,
    JobType: job.Type,
    JobVersion: job.Version,
    TaskGroup: tg.Name as string,
    AllocatedResources: allocatedResources(tg),
    DesiredStatus: 'run',
    DesiredDescription: '',
    ClientStatus: 'running',
    ClientDescription: 'Tasks are running',
    TaskStates: startedTaskStates(tg, p.now),
    DeploymentID: p.deploymentId,
    DeploymentStatus: null,
    PreviousAllocation: '',
    NextAllocation: '',
    RescheduleTracker: null,
    FollowupEvalID: '',
    CreateIndex: p.index,
    ModifyIndex: p.index,
    CreateTime: p.now,
    ModifyTime: p.now,
    JobCreateIndex: job.CreateIndex as number,
    GroupSpec: groupSpec(tg),
  };
}

/** Stops an allocation: desired `stop`, its tasks killed, the client done with it. */
export function stopAllocation(a: AllocRecord, why: string, index: number, now: number): void {
  killTaskStates(a.TaskStates as Record<string, Json>, now);
  Object.assign(a, {
    DesiredStatus: 'stop',
    DesiredDescription: why,
    ClientStatus: 'complete',
    ClientDescription: 'All tasks have completed',
    ModifyIndex: index,
    ModifyTime: now,
  });
}

/** A task event with every field of the real `TaskEvent`, zero-valued unless given. */
export function taskEvent(type: string, display: string, time: number, extra: Json = {}): Json {
  return {
    Type: type,
    Time: time,
    Message: '',
    DisplayMessage: display,
    Details: {},
    FailsTask: false,
    RestartReason: '',
    SetupError: '',
    DriverError: '',
    ExitCode: 0,
    Signal: 0,
    KillTimeout: 0,
    KillError: '',
    KillReason: '',
    StartDelay: 0,
    DownloadError: '',
    ValidationError: '',
    DiskLimit: 0,
    FailedSibling: '',
    SecretsError: '',
    TaskSignalReason: '',
    TaskSignal: '',
    DriverMessage: '',
    ...extra,
  };
}

/** The `TaskStates` of a freshly placed allocation: each task `running` after the usual four events. */
export function startedTaskStates(tg: Json, now: number): Record<string, Json> {
  const started = new Date(now / 1_000_000).toISOString();
  const states: Record<string, Json> = {};
  for (const task of tg.Tasks as Json[]) {
    const driver = (task.Driver as string | undefined) ?? '';
    states[task.Name as string] = {
      State: 'running',
      Failed: false,
      Restarts: 0,
      LastRestart: null,
      StartedAt: started,
      FinishedAt: null,
      Events: [
        taskEvent('Received', 'Task received by client', now),
        taskEvent('Task Setup', 'Building Task Directory', now, { Message: 'Building Task Directory' }),
        // The real docker driver reports its image pull this way; other drivers say nothing here.
        taskEvent('Driver', driver === 'docker' ? 'Downloading image' : `Preparing ${driver} task`, now, {
          DriverMessage: driver === 'docker' ? 'Downloading image' : `Preparing ${driver} task`,
        }),
        taskEvent('Started', 'Task started by client', now),
      ],
    };
  }
  return states;
}

/** Marks every task of a stopped allocation dead with the real kill events. */
function killTaskStates(states: Record<string, Json>, now: number): void {
  const finished = new Date(now / 1_000_000).toISOString();
  for (const state of Object.values(states)) {
    state.State = 'dead';
    state.FinishedAt = finished;
    (state.Events as Json[]).push(
      taskEvent('Killing', 'Sent interrupt. Waiting 5s before force killing', now),
      taskEvent('Killed', 'Task successfully killed', now),
    );
  }
}
