#!/usr/bin/env node
// A warm plan of many roles (default 10,000) against the sandbox, measured as a user runs it: the
// built CLI in a child process, its CPU time (user + system) and peak memory (max RSS) from
// /usr/bin/time, beside parsing the same file with the `yaml` package alone (issue 20's yardstick:
// a warm plan should cost no more CPU than that parse and stay under 200 MB).
// Usage: npm run build && node bench/plan-10k.mjs   (BENCH_ROLES=N, BENCH_RUNS=R to change)
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { apply, connect, loadManifest, plan } from '../dist/engine/index.js';
import { startSandbox } from '../dist/sandbox/index.js';
import { median } from './lib/child-cpu.mjs';

const n = Number(process.env.BENCH_ROLES ?? 10_000);
const runs = Number(process.env.BENCH_RUNS ?? 3);
const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const cli = path.join(root, 'dist/cli/main.js');

const dir = mkdtempSync(path.join(os.tmpdir(), 'converge-plan-10k-'));
const file = path.join(dir, 'roles.yaml');
writeFileSync(
  file,
  Array.from(
    { length: n },
    (_, i) => `apiVersion: converge/v1
kind: AclRole
metadata: { name: bench-${i}, namespace: default }
spec:
  Description: role ${i}
  Policies: [{ Name: service-read }]
  ServiceIdentities: [{ ServiceName: svc-${i}, Datacenters: [dc1, dc2] }]
`,
  ).join('---\n'),
);

/**
 * Runs `node args…` under /usr/bin/time: CPU seconds, peak RSS in MB, wall seconds, exit code.
 * Asynchronously: the sandbox answering the child runs in this process's event loop.
 */
function measured(args, env) {
  const started = performance.now();
  const child = spawn('/usr/bin/time', ['-f', '%U %S %M', process.execPath, ...args], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      const wall = (performance.now() - started) / 1000;
      const [user, system, maxKb] = stderr.trim().split('\n').at(-1).split(' ').map(Number);
      resolve({ cpu: user + system, rssMb: maxKb / 1024, wall, code, stderr });
    });
  });
}

const summary = (label, results) => ({
  label,
  cpuSeconds: Number(median(results.map((r) => r.cpu)).toFixed(2)),
  peakMb: Math.round(median(results.map((r) => r.rssMb))),
  wallSeconds: Number(median(results.map((r) => r.wall)).toFixed(2)),
});

const sandbox = await startSandbox({
  port: 0,
  config: { registry: { policies: [{ Name: 'service-read' }] } },
});
try {
  const env = { PATH: process.env.PATH, ...sandbox.env(), CONVERGE_STATE_DIR: path.join(dir, 'state') };
  // Create the roles once, in-process, so that every measured plan finds nothing to change.
  const manifest = await loadManifest([file], { env });
  const connections = connect(manifest, { env });
  try {
    const { plan: created } = await plan(manifest, { env, connections, parallelism: 20 });
    await apply({ plan: created, connections }, { parallelism: 20 });
  } finally {
    await connections.close();
  }

  const yamlAlone = [];
  const warmPlan = [];
  const parse = `const { parseAllDocuments } = await import(${JSON.stringify(path.join(root, 'node_modules/yaml/dist/index.js'))}); const { readFileSync } = await import('node:fs'); for (const d of parseAllDocuments(readFileSync(${JSON.stringify(file)}, 'utf8'))) d.toJS();`;
  for (let i = 0; i < runs; i++) {
    yamlAlone.push(await measured(['--input-type=module', '-e', parse], env));
    const r = await measured([cli, 'plan', '-f', file, '--detailed-exitcode'], env);
    if (r.code !== 0)
      throw new Error(`the warm plan should find no change (exit ${r.code}): ${r.stderr.slice(0, 2000)}`);
    warmPlan.push(r);
  }
  const result = {
    roles: n,
    runs,
    node: process.version,
    cpus: os.cpus().length,
    loadAverage: os.loadavg().map((l) => Number(l.toFixed(2))),
    yamlAlone: summary('yaml parseAllDocuments + toJS', yamlAlone),
    warmPlan: summary('converge plan (no changes)', warmPlan),
    targets: { cpu: 'warm plan CPU <= yaml-alone CPU', peakMb: 200 },
  };
  console.log(JSON.stringify(result, null, 2));
} finally {
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
}
