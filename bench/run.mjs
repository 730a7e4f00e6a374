#!/usr/bin/env node
// `npm run bench`: time and count the requests of validate, plan and apply for many roles and
// workspaces against the sandbox, with and without added latency. A plan should read each kind with
// the fewest requests the API allows: for roles, one policy list (for the plan-time check) and one
// role list; for workspaces, one organization read (the plan-time check that it exists) and one list
// request per 100 workspaces; for jobs, one list, one read per job (list items carry no Meta, where
// the ownership marker is) and one plan request per job (the service's plan is the comparison, and
// it has no bulk form); a new job costs one plan request (what it would place) and no read.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { apply, connect, desiredObjects, loadManifest, plan as planRun } from '../dist/engine/index.js';
import { startSandbox } from '../dist/sandbox/index.js';

const sizes = (process.env.BENCH_SIZES ?? '50,500').split(',').map(Number);
const latencies = (process.env.BENCH_LATENCY_MS ?? '0,5').split(',').map(Number);
const parallelism = Number(process.env.BENCH_PARALLELISM ?? 10);

function manifest(n) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'converge-bench-'));
  const docs = Array.from(
    { length: n },
    (_, i) => `apiVersion: converge/v1
kind: AclRole
metadata: { name: bench-${i}, namespace: default }
spec:
  Description: role ${i}
  Policies: [{ Name: service-read }]
  ServiceIdentities: [{ ServiceName: svc-${i}, Datacenters: [dc1, dc2] }]
`,
  );
  writeFileSync(path.join(dir, 'roles.yaml'), docs.join('---\n'));
  const workspaces = Array.from(
    { length: n },
    (_, i) => `apiVersion: converge/v1
kind: Workspace
metadata: { name: bench-${i}, namespace: sandbox }
spec:
  description: workspace ${i}
  tag-names: [bench, t${i % 7}]
`,
  );
  writeFileSync(path.join(dir, 'workspaces.yaml'), workspaces.join('---\n'));
  const directory = [
    `apiVersion: converge/v1
kind: LdapConfig
metadata: { name: ldap }
spec: { url: 'ldap://ldap.bench.test', userdn: 'ou=people,dc=bench', groupdn: 'ou=groups,dc=bench' }
`,
    ...Array.from(
      { length: n },
      (_, i) => `apiVersion: converge/v1
kind: LdapGroup
metadata: { name: group-${i} }
spec: { policies: [p${i}, shared] }
---
apiVersion: converge/v1
kind: LdapUser
metadata: { name: user-${i} }
spec: { policies: [u${i}], groups: [group-${i}] }
`,
    ),
  ];
  writeFileSync(path.join(dir, 'directory.yaml'), directory.join('---\n'));
  const jobs = Array.from(
    { length: n },
    (_, i) => `apiVersion: converge/v1
kind: Job
metadata: { name: bench-${i} }
spec:
  Type: service
  Datacenters: [dc1]
  Meta: { index: "${i}" }
  TaskGroups:
    - Name: app
      Count: 1
      Tasks:
        - { Name: app, Driver: docker, Config: { image: "app:${i}" }, Resources: { CPU: 10, MemoryMB: 10 } }
`,
  );
  writeFileSync(path.join(dir, 'jobs.yaml'), jobs.join('---\n'));
  return dir;
}

async function step(label, fn) {
  const started = performance.now();
  const value = await fn();
  return { label, ms: performance.now() - started, value };
}

const rows = [];
for (const latencyMs of latencies) {
  for (const n of sizes) {
    const sandbox = await startSandbox({
      port: 0,
      config: { registry: { policies: [{ Name: 'service-read' }] }, faults: { latencyMs } },
    });
    const env = { ...process.env, ...sandbox.env() };
    const dir = manifest(n);
    const total = 5 * n + 1;
    try {
      const load = await step('validate', async () => {
        const loaded = await loadManifest([dir], { env });
        // What `converge validate` does after loading: complete keys, from settings alone.
        desiredObjects(loaded, connect(loaded, { env }));
        return loaded;
      });
      const manifest = load.value;
      rows.push({ n, latencyMs, step: 'validate', ms: load.ms, requests: {} });
      // Each step gets connections of its own, so its request counts are its own.
      const measure = async (label, fn) => {
        const connections = connect(manifest, { env });
        try {
          const r = await step(label, () => fn(connections));
          rows.push({ n, latencyMs, step: label, ms: r.ms, requests: connections.requestCounts() });
          return r.value;
        } finally {
          await connections.close();
        }
      };
      const plan = await measure('plan (all new)', async (c) => {
        const run = await planRun(manifest, { env, parallelism, connections: c });
        return run.plan;
      });
      await measure('apply', async (c) => {
        const r = await apply({ plan, connections: c }, { parallelism });
        if (r.counts.applied !== total) throw new Error(`applied ${r.counts.applied} of ${total}`);
      });
      await measure('plan (no changes)', async (c) => {
        const { plan: p } = await planRun(manifest, { env, parallelism, connections: c });
        if (p.summary.noop !== total)
          throw new Error(`expected ${total} unchanged: ${JSON.stringify(p.summary)}`);
      });
    } finally {
      await sandbox.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

const header = [
  'each of roles, workspaces, groups, users, jobs',
  'latency',
  'step',
  'time',
  'registry requests',
  'workspaces requests',
  'secrets requests',
  'scheduler requests',
];
const lines = rows.map((r) => [
  `${r.n}`,
  `${r.latencyMs} ms`,
  r.step,
  `${r.ms.toFixed(0)} ms`,
  String(r.requests.registry ?? 0),
  String(r.requests.workspaces ?? 0),
  String(r.requests.secrets ?? 0),
  String(r.requests.scheduler ?? 0),
]);
const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
const fmt = (cells) => cells.map((c, i) => c.padEnd(widths[i])).join('  ');
console.log(`parallelism ${parallelism}\n`);
console.log(fmt(header));
for (const l of lines) console.log(fmt(l));
