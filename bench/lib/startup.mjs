// Start-up: `converge --version` and `converge validate` of a small manifest against bare `node -e 0`,
// each the median of several runs of a fresh process, wall and CPU. The three commands alternate run by
// run, so that a burst of load from elsewhere on the machine hits all of them alike.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { CLI, CPU_HOOK, median, reportedCpuMs } from './child-cpu.mjs';

function once(args, env) {
  const started = performance.now();
  const r = spawnSync(process.execPath, ['--import', CPU_HOOK, ...args], { env, timeout: 60_000 });
  const wallMs = performance.now() - started;
  if (r.status !== 0) throw new Error(`start-up run ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return { wallMs, cpuMs: reportedCpuMs(r.stderr) ?? NaN };
}

export function measureStartup(runs = 10) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'converge-bench-startup-'));
  writeFileSync(
    path.join(dir, 'role.yaml'),
    'apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: web }\nspec: { Description: web }\n',
  );
  const env = { PATH: process.env.PATH ?? '', CONVERGE_STATE_DIR: dir, NO_COLOR: '1' };
  const commands = { node: ['-e', '0'], version: [CLI, '--version'], validate: [CLI, 'validate', '-f', dir] };
  const seen = Object.fromEntries(Object.keys(commands).map((k) => [k, []]));
  for (let i = 0; i < runs; i += 1)
    for (const [k, args] of Object.entries(commands)) seen[k].push(once(args, env));
  const wall = (k) => median(seen[k].map((s) => s.wallMs));
  const cpu = (k) => median(seen[k].map((s) => s.cpuMs));
  return {
    runs,
    nodeMs: wall('node'),
    versionMs: wall('version'),
    validateMs: wall('validate'),
    nodeCpuMs: cpu('node'),
    versionCpuMs: cpu('version'),
    validateCpuMs: cpu('validate'),
  };
}
