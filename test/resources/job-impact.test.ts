/**
 * A job deletion's blast radius, from the job list's counts: the allocations it stops per task group,
 * nothing for a job that runs none, and group names from the service made inert (a hostile service
 * may name a group with escape codes or a line break).
 */
import { describe, expect, it } from 'vitest';
import { jobKind } from '../../src/resources/scheduler/job.js';
import type { ImpactSubject, KindContext } from '../../src/resources/contract.js';

const ctx = {} as KindContext;

function deleted(summary: Record<string, Record<string, number>>): ImpactSubject<never, never> {
  return {
    key: { kind: 'Job', name: 'web', namespace: 'default' },
    action: 'delete',
    diffs: [],
    observed: {
      key: { kind: 'Job', name: 'web', namespace: 'default' },
      live: { job: { ID: 'web' }, fromList: true, summary: { JobID: 'web', Summary: summary } },
    },
  } as unknown as ImpactSubject<never, never>;
}

describe('a job deletion', () => {
  it('names the running and starting allocations it stops, per group', async () => {
    const lines = await jobKind.impact(
      ctx,
      [
        deleted({
          web: { Running: 2, Starting: 1 },
          batch: { Running: 0, Complete: 4 },
          api: { Running: 1 },
        }),
      ] as never,
      [],
      { listed: () => undefined, observed: () => undefined },
    );
    expect(lines).toEqual([['stops 4 running allocations (api: 1, web: 3)']]);
  });

  it('says nothing for a job that runs nothing, or a change that is no deletion', async () => {
    const idle = deleted({ web: { Running: 0, Complete: 2 } });
    const update = { ...deleted({ web: { Running: 3 } }), action: 'update' };
    expect(
      await jobKind.impact(ctx, [idle, update] as never, [], {
        listed: () => undefined,
        observed: () => undefined,
      }),
    ).toEqual([[], []]);
  });

  it('shows a hostile group name inert', async () => {
    const [lines] = await jobKind.impact(
      ctx,
      [deleted({ 'evil\u001b[31m\nx': { Running: 1 } })] as never,
      [],
      {
        listed: () => undefined,
        observed: () => undefined,
      },
    );
    expect(lines![0]).not.toMatch(/[\u001b\n]/);
    expect(lines![0]).toContain('evil\\u001b[31m\\nx: 1');
  });
});
