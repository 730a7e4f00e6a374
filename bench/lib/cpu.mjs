// CPU and peak memory of a warm plan of many roles against parsing the same file with `yaml` alone.
// The plan measured against the target is `converge plan` as a user runs it (the bin, a fresh
// process); the same plan through the engine's API (its unbundled modules, bench/lib/cpu-child.mjs)
// is shown beside it for reference.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startSandbox } from '../../dist/sandbox/index.js';
import { CLI, CPU_HOOK, reportedCpuMs, reportedPeakRssMb } from './child-cpu.mjs';
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

/**
 * `converge plan -f dir` in a fresh process: its CPU and peak memory as it reports them on exit. With
 * --detailed-exitcode, exit 0 says the plan found nothing to change, as a warm plan must.
 */
async function cliPlan(dir, env) {
  const { stderr } = await run(
    process.execPath,
    ['--import', CPU_HOOK, CLI, 'plan', '-f', dir, '--detailed-exitcode'],
    { env: { ...env, NO_COLOR: '1' }, timeout: 300_000, maxBuffer: 64 << 20 },
  ).catch((error) => {
    throw new Error(`the warm plan should find nothing to change (exit ${error.code}): ${error.stderr}`);
  });
  return { cpuMs: reportedCpuMs(stderr), peakRssMb: reportedPeakRssMb(stderr), summary: 'no changes' };
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
    const cliRuns = [];
    const engineRuns = [];
    for (let i = 0; i < runs; i += 1) {
      yamlRuns.push(await child(['yaml', file], env));
      cliRuns.push(await cliPlan(path.dirname(file), env));
      engineRuns.push(await child(['plan', path.dirname(file)], env));
    }
    return {
      roles,
      runs,
      yaml: medianRun(yamlRuns),
      plan: medianRun(cliRuns),
      engine: medianRun(engineRuns),
    };
  } finally {
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
