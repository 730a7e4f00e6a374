/**
 * A saved change the fresh plan holds back in part (a lock this run may not release, a state push
 * while someone else holds the lock) is stale, not made: applied, the kind's write would leave that
 * part quietly. A saved create sets every attribute it has, so anything held back was in it.
 */
import { describe, expect, it } from 'vitest';
import { heldBackSincePlan, type SavedPlan } from '../../src/engine/plan-file.js';
import type { Change, Plan } from '../../src/planner/types.js';

const key = { kind: 'Workspace', name: 'web', namespace: 'acme' };
const address = 'Workspace/acme/web';

function saved(change: Partial<Change>): SavedPlan {
  return {
    changes: [
      { address, key, action: 'update', diffs: [], before: null, after: null, dependsOn: [], ...change },
    ],
  } as unknown as SavedPlan;
}

function fresh(heldBack: string[]): Plan {
  const change: Change = {
    address,
    key,
    action: 'noop',
    diffs: [],
    before: null,
    after: null,
    dependsOn: [],
    ...(heldBack.length > 0 ? { heldBack } : {}),
  };
  return {
    changes: [change],
    summary: { create: 0, update: 0, replace: 0, delete: 0, noop: 1 },
    problems: [],
    requests: {},
  };
}

describe('a saved change the fresh plan holds back', () => {
  it('is stale where the saved diffs touch what is held back (nested paths by their attribute)', () => {
    const plan = saved({ diffs: [{ path: 'locked', op: 'change', before: true, after: false }] });
    expect(heldBackSincePlan(plan, fresh(['locked']))).toEqual([
      {
        address,
        why: "the plan was to change locked, which this run leaves as it is (`converge plan` with this run's token says why)",
      },
    ]);
    const nested = saved({ diffs: [{ path: 'vcs-repo.branch', op: 'change', before: 'a', after: 'b' }] });
    expect(heldBackSincePlan(nested, fresh(['vcs-repo']))).toHaveLength(1);
  });

  it('is not stale for what is held back beside it (a description changed next to someone else lock)', () => {
    const plan = saved({ diffs: [{ path: 'description', op: 'change', before: 'a', after: 'b' }] });
    expect(heldBackSincePlan(plan, fresh(['locked']))).toEqual([]);
    expect(heldBackSincePlan(plan, fresh([]))).toEqual([]);
  });

  it('is stale for a saved create, whose diffs are empty, whatever is held back', () => {
    const plan = saved({ action: 'create', after: { state: 's.tfstate (serial 1)' } });
    expect(heldBackSincePlan(plan, fresh(['state']))[0]?.why).toContain('the plan was to change state');
  });
});
