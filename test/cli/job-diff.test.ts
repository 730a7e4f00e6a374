/**
 * The scheduler diff renderer and the plan's dry-run section as pure functions: the service's diff
 * shape in, the lines an operator reads out (signs, `old => new`, nesting, colour only on request).
 */
import { describe, expect, it } from 'vitest';
import type { JobDiff, PlanResponse } from '../../src/clients/scheduler/client.js';
import { jobDiffHasChanges, renderJobDiff } from '../../src/cli/commands/job-diff.js';
import {
  desiredUpdatesLines,
  dryRunSection,
  planChangesAllocations,
} from '../../src/cli/commands/job-render.js';

const diff: JobDiff = {
  Type: 'Edited',
  ID: 'web',
  Fields: [
    { Type: 'Edited', Name: 'Priority', Old: '50', New: '70', Annotations: null },
    { Type: 'None', Name: 'Type', Old: 'service', New: 'service' },
    { Type: 'Added', Name: 'Meta[owner]', Old: '', New: 'ops' },
  ],
  Objects: [
    {
      Type: 'Deleted',
      Name: 'Periodic',
      Fields: [{ Type: 'Deleted', Name: 'Spec', Old: '0 3 * * *', New: '' }],
      Objects: null,
    },
  ],
  TaskGroups: [
    {
      Type: 'Edited',
      Name: 'api',
      Fields: [{ Type: 'Edited', Name: 'Count', Old: '2', New: '4', Annotations: null }],
      Objects: null,
      Tasks: [
        {
          Type: 'Edited',
          Name: 'server',
          Annotations: ['forces create/destroy update'],
          Fields: null,
          Objects: [
            {
              Type: 'Edited',
              Name: 'Config',
              Fields: [{ Type: 'Edited', Name: 'image', Old: 'nginx:1.25', New: 'nginx:1.26' }],
              Objects: null,
            },
          ],
        },
        {
          Type: 'Added',
          Name: 'sidecar',
          Fields: [{ Type: 'Added', Name: 'Driver', Old: '', New: 'docker' }],
        },
        { Type: 'None', Name: 'logger' },
      ],
      Updates: { 'create/destroy update': 2, create: 2, ignore: 0 },
    },
    { Type: 'Deleted', Name: 'old', Fields: null, Objects: null, Tasks: null, Updates: { destroy: 1 } },
    { Type: 'None', Name: 'steady', Updates: { ignore: 3 } },
  ],
};

describe('renderJobDiff', () => {
  it('signs each change, shows edits as old => new, and nests objects, groups and tasks', () => {
    expect(renderJobDiff(diff)).toBe(
      [
        '~ Job: "web"',
        '  ~ Priority:    "50" => "70"',
        '  + Meta[owner]: "ops"',
        '  - Periodic {',
        '    - Spec: "0 3 * * *"',
        '    }',
        '  ~ Task Group: "api" (2 create, 2 create/destroy update)',
        '    ~ Count: "2" => "4"',
        '    ~ Task: "server" (forces create/destroy update)',
        '      ~ Config {',
        '        ~ image: "nginx:1.25" => "nginx:1.26"',
        '        }',
        '    + Task: "sidecar"',
        '      + Driver: "docker"',
        '  - Task Group: "old" (1 destroy)',
      ].join('\n'),
    );
  });

  it('verbose also lists what did not change', () => {
    const text = renderJobDiff(diff, { verbose: true });
    expect(text).toContain('    Type:        "service"');
    expect(text).toContain('    Task: "logger"');
    expect(text).toContain('    Task Group: "steady" (3 ignore)');
  });

  it('colours only when asked to, by kind of change', () => {
    expect(renderJobDiff(diff, { color: false })).not.toContain('\u001b[');
    const coloured = renderJobDiff(diff, { color: true });
    expect(coloured).toContain('\u001b[33m~ Job: "web"'); // yellow: edited
    expect(coloured).toContain('\u001b[32m+ Meta[owner]'); // green: added
    expect(coloured).toContain('\u001b[31m- Periodic {'); // red: deleted
  });

  it('nothing to render without a diff; a None diff has no changes', () => {
    expect(renderJobDiff(undefined)).toBe('');
    expect(renderJobDiff(null)).toBe('');
    expect(jobDiffHasChanges({ Type: 'None', ID: 'web' })).toBe(false);
    expect(renderJobDiff({ Type: 'None', ID: 'web' })).toBe('');
    expect(renderJobDiff({ Type: 'None', ID: 'web' }, { verbose: true })).toBe('  Job: "web"');
    expect(jobDiffHasChanges(diff)).toBe(true);
  });
});

describe('the plan dry-run section', () => {
  const plan: PlanResponse = {
    JobModifyIndex: 12,
    Annotations: {
      DesiredTGUpdates: {
        web: { Place: 1, InPlaceUpdate: 2, Stop: 1, Ignore: 0 },
        db: { Ignore: 3 },
      },
    },
    FailedTGAllocs: {
      web: {
        CoalescedFailures: 1,
        NodesEvaluated: 3,
        DimensionExhausted: { memory: 3 },
        NodesAvailable: { dc1: 3 },
      },
    },
    NextPeriodicLaunch: '2026-11-24T03:00:00Z',
  };

  it('per-group updates in words, failed placements as warnings, the next periodic launch', () => {
    expect(desiredUpdatesLines(plan.Annotations!.DesiredTGUpdates)).toEqual([
      'db: 3 ignore',
      'web: 1 create, 1 destroy, 2 in-place update',
    ]);
    expect(dryRunSection(plan, false).split('\n')).toEqual([
      'Scheduler dry-run:',
      '- WARNING: Failed to place all allocations.',
      '  Task Group "web" (failed to place 2 allocations):',
      '    * Dimension "memory" exhausted on 3 nodes',
      '- db: 3 ignore',
      '- web: 1 create, 1 destroy, 2 in-place update',
      '- If submitted now, the next periodic launch would be at 2026-11-24T03:00:00Z.',
    ]);
    expect(planChangesAllocations(plan)).toBe(true);
  });

  it('all placed, nothing but ignores, not periodic: no changes', () => {
    const quiet: PlanResponse = {
      JobModifyIndex: 3,
      Annotations: { DesiredTGUpdates: { db: { Ignore: 3 } } },
      NextPeriodicLaunch: '0001-01-01T00:00:00Z',
    };
    expect(dryRunSection(quiet, false)).toBe(
      'Scheduler dry-run:\n- All tasks successfully allocated.\n- db: 3 ignore',
    );
    expect(planChangesAllocations(quiet)).toBe(false);
  });
});
