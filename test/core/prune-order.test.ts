/** Prune deletions come in address order, whatever order the service listed them in. */
import { describe, expect, it } from 'vitest';
import { buildPlan } from '../../src/planner/planner.js';
import { desired, memoryKind, memoryStore, noContext } from './memory-kind.js';

describe('prune deletions', () => {
  it('are listed in address order, not the listing order', async () => {
    const store = memoryStore();
    for (const name of ['role-002', 'role-000', 'role-001'])
      store.objects.set(`Thing/${name}`, { value: { owner: 'converge' }, version: 1 });
    const kind = memoryKind(store);
    const plan = await buildPlan(
      [desired('Thing', 'kept', {})],
      (k) => (k === 'Thing' ? kind : undefined),
      noContext,
      {
        prune: [{ kind: 'Thing' }],
      },
    );
    expect(plan.changes.filter((c) => c.action === 'delete').map((c) => c.address)).toEqual([
      'Thing/role-000',
      'Thing/role-001',
      'Thing/role-002',
    ]);
  });
});
