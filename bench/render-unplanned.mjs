#!/usr/bin/env node
// The renderers over a plan of many changes, half of them not planned (a problem or not compared):
// CPU time (user + system) of the text, Markdown and JSON renderings at N and 2N changes. Each
// rendering asks of every change whether it was planned; that must stay a lookup, so doubling the
// plan should about double the time (a ratio near 2), where a scan per change would make it ~4.
// Usage: npm run build && node bench/render-unplanned.mjs   (BENCH_CHANGES=N, BENCH_RUNS=R to change)
import { renderHuman } from '../dist/planner/render/human.js';
import { renderJson } from '../dist/planner/render/json.js';
import { renderMarkdown } from '../dist/planner/render/markdown.js';
import { summarise } from '../dist/planner/types.js';

const n = Number(process.env.BENCH_CHANGES ?? 10_000);
const runs = Number(process.env.BENCH_RUNS ?? 5);

/** `count` changes: every other one not planned, alternately by a problem and by the kind. */
function planOf(count) {
  const changes = [];
  const problems = [];
  for (let i = 0; i < count; i++) {
    const key = { kind: 'AclRole', name: `role-${i}`, namespace: 'default' };
    const change = {
      address: `AclRole/default/role-${i}`,
      key,
      action: i % 3 === 0 ? 'noop' : 'update',
      diffs: [{ path: 'Description', op: 'change', before: 'old', after: `new ${i}` }],
      before: { Description: 'old' },
      after: { Description: `new ${i}` },
      dependsOn: [],
    };
    if (i % 4 === 1) change.notCompared = 'its specification has a problem';
    if (i % 4 === 3)
      problems.push({ key, message: 'refused', position: { file: 'roles.yaml', line: i + 1, col: 1 } });
    changes.push(change);
  }
  return { changes, summary: summarise(changes), problems, requests: {} };
}

function cpuMs(fn) {
  const best = [];
  for (let r = 0; r < runs; r++) {
    const start = process.cpuUsage();
    fn();
    const used = process.cpuUsage(start);
    best.push((used.user + used.system) / 1000);
  }
  return [...best].sort((a, b) => a - b)[Math.floor(best.length / 2)];
}

const renderers = {
  text: (plan) => renderHuman(plan, { color: false, showNoop: true }),
  markdown: (plan) => renderMarkdown(plan),
  json: (plan) => renderJson(plan, '0.0.0'),
};
const small = planOf(n);
const big = planOf(2 * n);
console.log(`changes: ${n} and ${2 * n}, half not planned; median CPU of ${runs} runs`);
for (const [name, render] of Object.entries(renderers)) {
  render(small); // warm up
  const a = cpuMs(() => render(small));
  const b = cpuMs(() => render(big));
  console.log(`${name.padEnd(8)} ${a.toFixed(1)} ms  ${b.toFixed(1)} ms  ratio ${(b / a).toFixed(2)}`);
}
