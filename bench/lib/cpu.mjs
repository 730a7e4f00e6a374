// CPU and peak memory of a warm plan of many roles against parsing the same file with `yaml` alone.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startSandbox } from '../../dist/sandbox/index.js';
import { seededRoles, writeRoles } from './workload.mjs';

const CHILD = fileURLToPath(new URL('./cpu-child.mjs', import.meta.url));
const run = promisify(execFile);

async function child(args, env) {
  const { stdout } = await run(process.execPath, [CHILD, ...args], {
    env,
    timeout: 300_000,
    maxBuffer: 1 << 20,
  });
  return JSON.parse(stdout.trim().split('\n').pop());
}

/** The run with the median CPU of several; its peak memory is the highest any run reached. */
function medianRun(runs) {
  const sorted = [...runs].sort((a, b) => a.cpuMs - b.cpuMs);
  const median = sorted[Math.floor(sorted.length / 2)];
  return {
    ...median,
    peakRssMb: Math.max(...runs.map((r) => r.peakRssMb)),
    cpuMsRuns: runs.map((r) => r.cpuMs),
  };
}

/**
 * `runs` of each, alternating, so that a burst of load from elsewhere on the machine hits both alike:
 * one run of each varied by a fifth from run to run here, as much as the two differ.
 */
export async function measureCpu(roles, runs = 3) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'converge-bench-cpu-'));
  const file = writeRoles(path.join(dir, 'manifest'), roles);
  const sandbox = await startSandbox({
    port: 0,
    config: { registry: { policies: [{ Name: 'service-read' }], roles: seededRoles(roles) } },
  });
  try {
    const env = { PATH: process.env.PATH ?? '', ...sandbox.env(), CONVERGE_STATE_DIR: dir };
    const yamlRuns = [];
    const planRuns = [];
    for (let i = 0; i < runs; i += 1) {
      yamlRuns.push(await child(['yaml', file], env));
      planRuns.push(await child(['plan', path.dirname(file)], env));
    }
    return { roles, runs, yaml: medianRun(yamlRuns), plan: medianRun(planRuns) };
  } finally {
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
