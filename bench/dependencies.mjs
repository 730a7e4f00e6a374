// Dependency linking and ordering at scale, without a service: an in-memory kind whose objects each
// need another object (a user → its group, as directory users need their groups). Measures what the
// planner spends on linking 20,000 objects plus 20,000 deletions, and a prune of 2,000 objects.
import { performance } from 'node:perf_hooks';
import { linkDependencies, buildPlan } from '../dist/planner/planner.js';
import { topologicalOrder } from '../dist/planner/order.js';

const kindName = 'Member';
const groupOf = (name) => `group-${Number(name.split('-')[1]) % 100}`;
const live = new Map();
const memberKind = {
  kind: kindName,
  service: 'memory',
  description: 'bench kind',
  namespaced: false,
  nameSchema: {},
  specSchema: {},
  ownership: 'marker',
  owns: () => true,
  // Every member needs its group; groups need nothing.
  dependencies: ({ key }) =>
    key.name.startsWith('member-') ? [{ kind: kindName, name: groupOf(key.name) }] : [],
  observe: async (_ctx, key) => (live.has(key.name) ? { key, live: live.get(key.name) } : undefined),
  list: async () =>
    [...live.entries()].map(([name, value]) => ({ key: { kind: kindName, name }, live: value })),
  compare: () => ({ diffs: [] }),
  render: (d) => d.spec,
  describe: (o) => o.live,
  create: async () => {},
  update: async () => {},
  delete: async () => {},
};
const lookup = () => memberKind;
const ctx = {
  client: () => {
    throw new Error('no client');
  },
  option: () => false,
};

function change(name, action) {
  const key = { kind: kindName, name };
  return { address: `${kindName}/${name}`, key, action, diffs: [], after: null, before: null, dependsOn: [] };
}

function time(label, fn) {
  const started = performance.now();
  const value = fn();
  const ms = performance.now() - started;
  console.log(`${label.padEnd(58)} ${ms.toFixed(0).padStart(6)} ms`);
  return value;
}

const n = Number(process.env.BENCH_DEP_OBJECTS ?? 20_000);
const changes = [
  ...Array.from({ length: 100 }, (_, i) => change(`group-${i}`, 'create')),
  ...Array.from({ length: n }, (_, i) => change(`member-${i}`, 'create')),
  ...Array.from({ length: 100 }, (_, i) => change(`old-group-${i}`, 'delete')),
  ...Array.from({ length: n }, (_, i) => change(`old-member-${i}`, 'delete')),
];
console.log(`\ndependency linking (${n} creates + ${n} deletions, each member needing its group)`);
time(`link ${changes.length} changes`, () => linkDependencies(changes, lookup));
const forward = time('order creates', () => topologicalOrder(changes.filter((c) => c.action !== 'delete')));
if (forward[0].key.name !== 'group-0') throw new Error('groups must come first');
time('order deletions', () => topologicalOrder(changes.filter((c) => c.action === 'delete')));

const pruned = Number(process.env.BENCH_PRUNE_OBJECTS ?? 2_000);
for (let i = 0; i < 20; i++) live.set(`group-${i}`, { owner: 'converge' });
for (let i = 0; i < pruned; i++) live.set(`member-${i}`, { owner: 'converge' });
const keep = [{ key: { kind: kindName, name: 'group-0' }, spec: {} }];
const started = performance.now();
const plan = await buildPlan(keep, lookup, ctx, { prune: [{ kind: kindName, allowEmpty: true }] });
const ms = performance.now() - started;
console.log(
  `${`plan a prune of ${plan.summary.delete} objects (list, compare, link, order)`.padEnd(58)} ${ms.toFixed(0).padStart(6)} ms`,
);
