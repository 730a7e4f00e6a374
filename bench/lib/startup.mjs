// Start-up: `converge --version` and `converge validate` of a small manifest against bare `node -e 0`,
// each the median of several runs of a fresh process.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function timeRuns(args, runs, env) {
  const times = [];
  for (let i = 0; i < runs; i += 1) {
    const started = performance.now();
    execFileSync(process.execPath, args, { stdio: 'ignore', env, timeout: 60_000 });
    times.push(performance.now() - started);
  }
  return median(times);
}

export function measureStartup(runs = 5) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'converge-bench-startup-'));
  writeFileSync(
    path.join(dir, 'role.yaml'),
    'apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: web }\nspec: { Description: web }\n',
  );
  const env = { PATH: process.env.PATH ?? '', CONVERGE_STATE_DIR: dir, NO_COLOR: '1' };
  const node = timeRuns(['-e', '0'], runs, env);
  const version = timeRuns([CLI, '--version'], runs, env);
  const validate = timeRuns([CLI, 'validate', '-f', dir], runs, env);
  return { runs, nodeMs: node, versionMs: version, validateMs: validate };
}
