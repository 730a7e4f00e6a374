/**
 * A job to create shows what its manifest wrote, durations as durations; one to delete shows what
 * identifies it and what it runs, not every default the service filled in.
 */
import { describe, expect, it } from 'vitest';
import type { Job } from '../../src/clients/scheduler/client.js';
import type { Desired, Observed } from '../../src/resources/contract.js';
import { type JobLive, jobKind } from '../../src/resources/scheduler/job.js';
import { serviceDefaultNotes } from '../../src/resources/scheduler/job-view.js';
import type { JobLocal, JobSpec } from '../../src/resources/scheduler/job-spec.js';

const key = { kind: 'Job', name: 'web', namespace: 'default' };

/** What the service's parser answers for a small text job: every field, unset ones zero or null. */
const PARSED: Job = {
  ID: 'web',
  Name: 'web',
  Namespace: 'default',
  Type: 'service',
  Priority: null as unknown as number,
  Datacenters: ['dc1'],
  Dispatched: false,
  Meta: { 'converge-managed': 'true' },
  Update: { HealthyDeadline: 60_000_000_000, AutoRevert: false },
  TaskGroups: [
    {
      Name: 'web',
      Count: 0,
      RestartPolicy: { Interval: 86_400_000_000_000, Delay: 15_000_000_000, Attempts: 0 },
      Tasks: [
        {
          Name: 'server',
          Driver: 'docker',
          User: '',
          Leader: false,
          ShutdownDelay: 0,
          KillSignal: '',
          Kind: '',
          KillTimeout: null,
          Config: { image: 'nginx:1.27', privileged: false },
          Env: { DEBUG: '' },
          Resources: { CPU: 100, MemoryMB: 128, DiskMB: 0 },
        },
      ],
    },
  ],
};

function desired(local: JobLocal, spec: JobSpec = { specFile: 'web.nomad.hcl' }): Desired<JobSpec> {
  return { key, spec, local };
}

describe('a job to create', () => {
  it('from a text spec, shows what the file set: no parser zeros, durations as durations', () => {
    expect(jobKind.render(desired({ job: PARSED, file: 'web.nomad.hcl' }))).toEqual({
      ID: 'web',
      Namespace: 'default',
      Type: 'service',
      Datacenters: ['dc1'],
      // Converge's ownership marker is not what the file wrote: not shown.
      Update: { HealthyDeadline: '1m' },
      TaskGroups: [
        {
          Name: 'web',
          // A group scaled to nothing says so.
          Count: 0,
          RestartPolicy: { Interval: '24h', Delay: '15s' },
          Tasks: [
            {
              Name: 'server',
              Driver: 'docker',
              // The user's own maps keep their zero values.
              Config: { image: 'nginx:1.27', privileged: false },
              Env: { DEBUG: '' },
              Resources: { CPU: 100, MemoryMB: 128 },
            },
          ],
        },
      ],
    });
  });

  it('from a text spec, keeps a Name the file set apart from the ID', () => {
    const job = { ...PARSED, Name: 'Web frontend' };
    expect(jobKind.render(desired({ job, file: 'web.hcl' }))).toMatchObject({ Name: 'Web frontend' });
  });

  it('inline or from JSON, shows what the manifest wrote, zeros included, durations in the units it wrote', () => {
    const job: Job = {
      ID: 'web',
      Type: 'batch',
      AllAtOnce: false,
      TaskGroups: [{ Name: 'web', Count: 1, ShutdownDelay: 5_000_000_000, Tasks: [] }],
    };
    expect(jobKind.render(desired({ job, file: 'web.json' }))).toEqual({
      ID: 'web',
      Type: 'batch',
      AllAtOnce: false,
      TaskGroups: [{ Name: 'web', Count: 1, ShutdownDelay: 5_000_000_000 }],
    });
  });
});

describe('what the service adds to a job to create', () => {
  it('tells the count a group without one runs, and nothing for groups that set theirs', () => {
    const job: Job = {
      ID: 'web',
      TaskGroups: [
        { Name: 'web', Count: null as unknown as number },
        { Name: 'api', Scaling: { Min: 2, Max: 5 } },
        { Name: 'idle', Count: 0 },
      ],
    };
    expect(serviceDefaultNotes(job)).toEqual([
      'group web: Count not set: the scheduler runs 1 (its default)',
      'group api: Count not set: the scheduler runs 2 (its scaling minimum)',
    ]);
  });
});

describe('a job to delete', () => {
  it('shows its identity, type, datacenters, schedule, groups with their counts and what each task runs', () => {
    const live: Job = {
      ...PARSED,
      Status: 'running',
      JobModifyIndex: 42,
      Periodic: { Enabled: true, Spec: '@daily', SpecType: 'cron', ProhibitOverlap: false },
      TaskGroups: [
        { ...PARSED.TaskGroups![0]!, Count: 3 },
        {
          Name: 'worker',
          Count: 1,
          Tasks: [{ Name: 'cron', Driver: 'exec', Config: { command: '/bin/sweep', args: ['--all'] } }],
        },
      ],
    };
    const observed: Observed<JobLive> = { key, id: 'web', live: { job: live } };
    expect(jobKind.describe(observed)).toEqual({
      ID: 'web',
      Namespace: 'default',
      Type: 'service',
      Datacenters: ['dc1'],
      Periodic: { Spec: '@daily' },
      TaskGroups: [
        {
          Name: 'web',
          Count: 3,
          Tasks: [{ Name: 'server', Driver: 'docker', Config: { image: 'nginx:1.27' } }],
        },
        {
          Name: 'worker',
          Count: 1,
          Tasks: [{ Name: 'cron', Driver: 'exec', Config: { command: '/bin/sweep' } }],
        },
      ],
    });
  });
});
