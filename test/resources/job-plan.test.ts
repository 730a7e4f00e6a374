/**
 * The service's plan of a job in Converge's terms: diff paths as a manifest writes them, the service's
 * annotations kept beside the diffs they explain, and allocation changes as notes.
 */
import { describe, expect, it } from 'vitest';
import type { PlanResponse } from '../../src/clients/scheduler/client.js';
import {
  allocationNotes,
  periodicNote,
  placementFailureNotes,
  planDiffs,
} from '../../src/resources/scheduler/job-plan.js';

const ZERO_TIME = '0001-01-01T00:00:00Z';

function plan(extra: Partial<PlanResponse>): PlanResponse {
  return { JobModifyIndex: 7, NextPeriodicLaunch: ZERO_TIME, ...extra };
}

/** The plan of a job `web` whose diff shows nothing, with the allocation annotations given. */
function unchangedWeb(annotations?: PlanResponse['Annotations']) {
  return plan({
    Diff: {
      Type: 'None',
      ID: 'web',
      Fields: null,
      Objects: null,
      TaskGroups: [{ Type: 'None', Name: 'web' }],
    },
    ...(annotations ? { Annotations: annotations } : {}),
  });
}

describe('planDiffs', () => {
  it("leaves out a task the service marks edited for its group's change when the task's own diff shows nothing", () => {
    const p = plan({
      Diff: {
        Type: 'Edited',
        ID: 'web',
        Fields: null,
        Objects: null,
        TaskGroups: [
          {
            Type: 'Edited',
            Name: 'web',
            Objects: [
              {
                Type: 'Edited',
                Name: 'RestartPolicy',
                Fields: [{ Type: 'Edited', Name: 'Delay', Old: '15000000000', New: '25000000000' }],
              },
            ],
            Tasks: [
              {
                Type: 'Edited',
                Name: 'worker',
                Fields: [{ Type: 'None', Name: 'Driver', Old: 'docker', New: 'docker' }],
                Annotations: ['forces in-place update'],
              },
            ],
          },
        ],
      },
    });
    const diffs = planDiffs(p);
    // Not `Tasks["worker"] = null -> null`, which read as the task emptied.
    expect(diffs.map((d) => d.path)).toEqual(['TaskGroups[web].RestartPolicy.Delay']);
  });

  it("writes a template or service at the manifest's list, picked by its DestPath or Name", () => {
    const p = plan({
      Diff: {
        Type: 'Edited',
        ID: 'web',
        Fields: null,
        Objects: null,
        TaskGroups: [
          {
            Type: 'Edited',
            Name: 'web',
            Tasks: [
              {
                Type: 'Edited',
                Name: 'app',
                Objects: [
                  {
                    Type: 'Edited',
                    Name: 'Template',
                    Fields: [
                      { Type: 'None', Name: 'DestPath', Old: 'local/a.env', New: 'local/a.env' },
                      { Type: 'Edited', Name: 'EmbeddedTmpl', Old: 'A=1', New: 'A=2' },
                    ],
                  },
                  {
                    Type: 'Edited',
                    Name: 'Template',
                    Fields: [
                      { Type: 'None', Name: 'DestPath', Old: 'local/b.env', New: 'local/b.env' },
                      { Type: 'Edited', Name: 'EmbeddedTmpl', Old: 'B=1', New: 'B=2' },
                    ],
                  },
                  {
                    Type: 'Edited',
                    Name: 'Service',
                    Fields: [
                      { Type: 'None', Name: 'Name', Old: 'web', New: 'web' },
                      { Type: 'Edited', Name: 'PortLabel', Old: 'http', New: 'https' },
                    ],
                  },
                ],
              },
            ],
          },
        ],
      },
    });
    // Two templates' changes had one path (`…Template.EmbeddedTmpl`), and a tool keyed on it lost one.
    expect(planDiffs(p).map((d) => d.path)).toEqual([
      'TaskGroups[web].Tasks[app].Templates[local/a.env].EmbeddedTmpl',
      'TaskGroups[web].Tasks[app].Templates[local/b.env].EmbeddedTmpl',
      'TaskGroups[web].Tasks[app].Services[web].PortLabel',
    ]);
  });

  it('plans a group the annotations would update under a None diff: what differs, else the group with a note', () => {
    const p = unchangedWeb({ DesiredTGUpdates: { web: { InPlaceUpdate: 2 } } });
    const live = { ID: 'web', TaskGroups: [{ Name: 'web', Count: 2, Odd: { Knob: 1 } }] };
    const sent = { ID: 'web', TaskGroups: [{ Name: 'web', Count: 2, Odd: { Knob: 2 } }] };
    expect(planDiffs(p, { before: live, after: sent })).toEqual([
      { path: 'TaskGroups[web].Odd.Knob', op: 'change', before: 1, after: 2 },
    ]);
    // Against the list's item of the job nothing is compared: the group alone, never null -> null.
    expect(planDiffs(p, { before: { ID: 'web' }, after: sent, partialBefore: true })).toEqual([
      {
        path: 'TaskGroups[web]',
        op: 'change',
        note: "changed in a way the scheduler's diff does not itemise",
      },
    ]);
  });

  it("compares of a job's own Update only Stagger, all a real scheduler keeps of it at job level", () => {
    const none = unchangedWeb();
    const update = {
      Stagger: 30e9,
      MaxParallel: 1,
      MinHealthyTime: 10e9,
      HealthyDeadline: 180e9,
      AutoRevert: true,
    };
    const sent = { ID: 'web', Update: update, TaskGroups: [{ Name: 'web', Count: 2 }] };
    // As Nomad stores a job read whole: Stagger and MaxParallel, the rest zero (moved to the groups).
    const live = {
      ID: 'web',
      Update: { Stagger: 30e9, MaxParallel: 1, MinHealthyTime: 0, HealthyDeadline: 0, AutoRevert: false },
      TaskGroups: [{ Name: 'web', Count: 2 }],
    };
    expect(planDiffs(none, { before: live, after: sent })).toEqual([]);
    const staggered = { ...sent, Update: { ...update, Stagger: 45e9 } };
    expect(planDiffs(none, { before: live, after: staggered }).map((d) => d.path)).toEqual([
      'Update.Stagger',
    ]);
    // With MaxParallel 0 the service keeps no job-level Update at all: its zero Stagger is no change.
    const serial = { ...sent, Update: { Stagger: 45e9, MaxParallel: 0 } };
    const kept = { ...live, Update: { Stagger: 0, MaxParallel: 0 } };
    expect(planDiffs(none, { before: kept, after: serial })).toEqual([]);
  });

  it('is empty for an unchanged job, whatever the allocation annotations say', () => {
    const p = unchangedWeb({ DesiredTGUpdates: { web: { Ignore: 3 } } });
    expect(planDiffs(p)).toEqual([]);
    expect(allocationNotes(p)).toEqual([]);
  });

  it('names job fields, map entries, groups and tasks as the manifest writes them', () => {
    const p = plan({
      Diff: {
        Type: 'Edited',
        ID: 'web',
        Fields: [
          { Type: 'Edited', Name: 'Priority', Old: '50', New: '70' },
          { Type: 'Added', Name: 'Meta[owner]', Old: '', New: 'team-a' },
          { Type: 'None', Name: 'Type', Old: 'service', New: 'service' },
        ],
        Objects: [
          {
            Type: 'Deleted',
            Name: 'Periodic',
            Fields: [{ Type: 'Deleted', Name: 'Spec', Old: '@daily', New: '' }],
          },
        ],
        TaskGroups: [
          {
            Type: 'Edited',
            Name: 'web',
            Fields: [{ Type: 'Edited', Name: 'Count', Old: '2', New: '3' }],
            Tasks: [
              {
                Type: 'Edited',
                Name: 'server',
                Annotations: ['forces create/destroy update'],
                Objects: [
                  {
                    Type: 'Edited',
                    Name: 'Config',
                    Fields: [{ Type: 'Edited', Name: 'image', Old: 'nginx:1.26', New: 'nginx:1.27' }],
                  },
                ],
              },
            ],
          },
          { Type: 'Added', Name: 'api' },
        ],
      },
    });
    expect(planDiffs(p)).toEqual([
      { path: 'Priority', op: 'change', before: '50', after: '70' },
      { path: 'Meta.owner', op: 'add', after: 'team-a' },
      { path: 'Periodic.Spec', op: 'remove', before: '@daily' },
      { path: 'TaskGroups[web].Count', op: 'change', before: '2', after: '3' },
      {
        path: 'TaskGroups[web].Tasks[server].Config.image',
        op: 'change',
        before: 'nginx:1.26',
        after: 'nginx:1.27',
        note: 'forces create/destroy update',
      },
      { path: 'TaskGroups[api]', op: 'add' },
    ]);
  });
});

describe('a group or task that a change adds or removes', () => {
  const fields = (names: string[]) =>
    names.map((Name) => ({ Type: 'Added' as const, Name, Old: '', New: '0' }));

  it('is one diff carrying the part as the text spec wrote it, not a line per default', () => {
    const sidecar = {
      Name: 'sidecar',
      Count: 1,
      RestartPolicy: { Attempts: 0, Interval: 86_400_000_000_000 },
      Tasks: [{ Name: 'proxy', Driver: 'docker', User: '', Leader: false, Config: { image: 'envoy:1' } }],
    };
    const p = plan({
      Diff: {
        Type: 'Edited',
        ID: 'web',
        TaskGroups: [
          {
            Type: 'Added',
            Name: 'sidecar',
            Fields: fields(['Count']),
            Objects: [
              { Type: 'Added', Name: 'RestartPolicy', Fields: fields(['Attempts', 'RenderTemplates']) },
            ],
            Tasks: [
              { Type: 'Added', Name: 'proxy', Annotations: ['forces create'], Fields: fields(['Leader']) },
            ],
          },
          {
            Type: 'Edited',
            Name: 'web',
            Tasks: [{ Type: 'Deleted', Name: 'old', Fields: fields(['KillTimeout']) }],
          },
        ],
      },
    });
    const before = {
      TaskGroups: [{ Name: 'web', Tasks: [{ Name: 'old', Driver: 'exec', KillTimeout: 5 }] }],
    };
    const after = { TaskGroups: [{ Name: 'web', Tasks: [] }, sidecar] };
    expect(planDiffs(p, { before, after, fromText: true })).toEqual([
      {
        path: 'TaskGroups[sidecar]',
        op: 'add',
        after: {
          Name: 'sidecar',
          Count: 1,
          RestartPolicy: { Interval: '24h' },
          Tasks: [{ Name: 'proxy', Driver: 'docker', Config: { image: 'envoy:1' } }],
        },
      },
      { path: 'TaskGroups[web].Tasks[old]', op: 'remove', before: { Name: 'old', Driver: 'exec' } },
    ]);
  });
});

describe('durations in a plan', () => {
  it('shows the nanoseconds the service diffs as the durations a job file writes', () => {
    const p = plan({
      Diff: {
        Type: 'Edited',
        ID: 'web',
        Fields: null,
        Objects: [
          {
            Type: 'Edited',
            Name: 'Update',
            Fields: [{ Type: 'Edited', Name: 'Stagger', Old: '30000000000', New: '45000000000' }],
          },
        ],
        TaskGroups: [
          {
            Type: 'Edited',
            Name: 'web',
            Objects: [
              {
                Type: 'Edited',
                Name: 'Update',
                Fields: [
                  { Type: 'Edited', Name: 'HealthyDeadline', Old: '60000000000', New: '300000000000' },
                ],
              },
              {
                Type: 'Added',
                Name: 'RestartPolicy',
                Fields: [{ Type: 'Added', Name: 'Interval', Old: '', New: '86400000000000' }],
              },
            ],
            Tasks: [
              {
                Type: 'Edited',
                Name: 'server',
                Fields: [{ Type: 'Edited', Name: 'KillTimeout', Old: '5000000000', New: '1500000000' }],
                Objects: [
                  {
                    Type: 'Edited',
                    Name: 'Config',
                    Fields: [{ Type: 'Edited', Name: 'Timeout', Old: '10', New: '20' }],
                  },
                ],
              },
            ],
          },
        ],
      },
    });
    const after = { TaskGroups: [{ Name: 'web', Tasks: [{ Name: 'server', Config: { Timeout: 20 } }] }] };
    expect(planDiffs(p, { after }).map((d) => [d.path, d.before, d.after])).toEqual([
      ['Update.Stagger', '30s', '45s'],
      ['TaskGroups[web].Update.HealthyDeadline', '1m', '5m'],
      ['TaskGroups[web].RestartPolicy.Interval', undefined, '24h'],
      ['TaskGroups[web].Tasks[server].KillTimeout', '5s', '1.5s'],
      // A driver's own setting that happens to be called Timeout is the user's number.
      ['TaskGroups[web].Tasks[server].Config.Timeout', 10, 20],
    ]);
  });
});

describe('notes', () => {
  it('says per group what the scheduler would place, replace, update and stop', () => {
    const p = plan({
      Annotations: {
        DesiredTGUpdates: {
          web: { Place: 1, DestructiveUpdate: 2, Ignore: 0 },
          api: { Stop: 1, InPlaceUpdate: 1 },
          idle: { Ignore: 4 },
        },
      },
    });
    expect(allocationNotes(p)).toEqual([
      'group api: 1 to update in place, 1 to stop',
      'group web: 1 to place, 2 to replace (create/destroy update)',
    ]);
  });

  it('counts the allocations a rolling update or a canary promotion replaces later, not only the first', () => {
    const p = plan({
      Annotations: {
        DesiredTGUpdates: {
          web: { DestructiveUpdate: 1, Ignore: 3 },
          api: { Canary: 1, Ignore: 2 },
        },
      },
    });
    expect(allocationNotes(p)).toEqual([
      'group api: 1 canaries to place, 2 to replace once the canaries are promoted',
      'group web: 1 to replace (create/destroy update), 3 more to replace as the rolling update goes on',
    ]);
  });

  it('explains a capacity shortfall by the exhausted dimension', () => {
    const p = plan({
      FailedTGAllocs: { web: { NodesEvaluated: 3, DimensionExhausted: { memory: 3 }, CoalescedFailures: 1 } },
    });
    expect(placementFailureNotes(p)).toEqual([
      'group web: cannot place every allocation (exhausted memory on 3 nodes; 1 more like it); the evaluation will wait for capacity',
    ]);
    expect(placementFailureNotes(plan({ FailedTGAllocs: { web: { NodesEvaluated: 0 } } }))[0]).toContain(
      "no node in the job's datacenters",
    );
  });

  it('gives the next periodic launch only for periodic jobs', () => {
    expect(periodicNote(plan({}))).toEqual([]);
    expect(periodicNote(plan({ NextPeriodicLaunch: '2026-11-24T00:00:00Z' }))).toEqual([
      'next periodic launch 2026-11-24T00:00:00Z',
    ]);
  });
});
