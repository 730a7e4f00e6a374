#!/usr/bin/env node
// `npm run bench`: Converge the way its users feel it (see docs/benchmarks.md, which this writes).
//
// 1. Against the sandbox with 10 ms added to every answer: cold plan, apply, warm plan, a drift plan
//    (5% of each kind changed behind Converge's back through the services' clients) and the apply
//    that repairs it. Per phase: requests per kind against the API minimum (bench/lib/requests.mjs),
//    and wall time against the latency bound (requests ÷ parallelism × round trip).
// 2. Start-up: `converge --version` and `converge validate` against bare `node -e 0`.
// 3. CPU and peak memory of a warm plan of 10,000 roles against parsing the same file with `yaml`.
// 4. Fault and rate-limit runs (bench/lib/faults.mjs).
//
// Sizes: BENCH_ROLES (1000), BENCH_WORKSPACES (500), BENCH_GROUPS (300), BENCH_USERS (300),
// BENCH_JOBS (100), BENCH_CPU_ROLES (10000), BENCH_FAULT_OBJECTS (500), BENCH_RATE_OBJECTS (150);
// BENCH_LATENCY_MS (10), BENCH_PARALLELISM (10), BENCH_SERVICE_RUNS (3: the service phases are run
// this many times, each in a fresh process against a fresh sandbox, and each phase's median run is
// shown; one run's wall varied by a fifth here), BENCH_SKIP (comma list of: startup, cpu, faults,
// floor: the run of the service phases with no added latency),
// BENCH_OUT (docs folder to write; default docs/), BENCH_SANDBOX_PROFILE (a folder for the sandbox
// child's `node --cpu-prof` profile).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { apply, connect, loadManifest, plan as planRun } from '../dist/engine/index.js';
import { median } from './lib/child-cpu.mjs';
import { cliPlan } from './lib/cli-plan.mjs';
import { measureCpu } from './lib/cpu.mjs';
import { drift } from './lib/drift.mjs';
import { faultRuns } from './lib/faults.mjs';
import { writeReport } from './lib/report.mjs';
import { minimumRequests, sum } from './lib/requests.mjs';
import { startSandboxProcess } from './lib/sandbox-process.mjs';
import { measureRoundTrip } from './lib/round-trip.mjs';
import { measureStartup } from './lib/startup.mjs';
import { writeWorkload } from './lib/workload.mjs';

const num = (name, fallback) => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number ≥ 0, not "${raw}"`);
  return value;
};

const settings = {
  sizes: {
    roles: num('BENCH_ROLES', 1000),
    workspaces: num('BENCH_WORKSPACES', 500),
    groups: num('BENCH_GROUPS', 300),
    users: num('BENCH_USERS', 300),
    jobs: num('BENCH_JOBS', 100),
  },
  latencyMs: num('BENCH_LATENCY_MS', 10),
  serviceRuns: Math.max(1, num('BENCH_SERVICE_RUNS', 3)),
  parallelism: num('BENCH_PARALLELISM', 10),
  cpuRoles: num('BENCH_CPU_ROLES', 10000),
  faultObjects: num('BENCH_FAULT_OBJECTS', 500),
  rateLimitObjects: num('BENCH_RATE_OBJECTS', 150),
  driftShare: 0.05,
};
/** Linux's USER_HZ, the unit of /proc's CPU times: 100 on every architecture Node runs on. */
const CLOCK_TICKS_PER_SECOND = 100;
const skip = new Set((process.env.BENCH_SKIP ?? '').split(',').filter(Boolean));
const outDir = process.env.BENCH_OUT ?? fileURLToPath(new URL('../docs/', import.meta.url));
const say = (line) => process.stderr.write(`bench: ${line}\n`);

/**
 * One phase: wall time and the requests the sandbox answered, per kind, against the minimum; and the
 * CPU Converge (this process) and the sandbox (its child) spent meanwhile. Converge's work runs on one
 * thread, so its CPU is a floor under the wall: a phase whose CPU is near or above its latency bound
 * is bound by CPU, not by round trips, and no pipelining brings it to the bound.
 */
async function phase(name, sandbox, minimum, fn) {
  await sandbox.take();
  const cpuBefore = process.cpuUsage();
  const sandboxBefore = processCpuMs(sandbox.pid);
  const started = performance.now();
  const value = await fn();
  const wallMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const convergeCpuMs = (cpu.user + cpu.system) / 1000;
  const sandboxAfter = processCpuMs(sandbox.pid);
  const sandboxCpuMs =
    sandboxBefore === undefined || sandboxAfter === undefined ? undefined : sandboxAfter - sandboxBefore;
  const counts = await sandbox.take();
  const requests = sum(counts);
  const boundMs = (requests / settings.parallelism) * settings.latencyMs;
  say(
    `${name}: ${requests} requests (minimum ${sum(minimum)}), ${wallMs.toFixed(0)} ms (bound ${boundMs.toFixed(0)} ms; this process's CPU ${convergeCpuMs.toFixed(0)} ms, sandbox CPU ${sandboxCpuMs?.toFixed(0) ?? '?'} ms)`,
  );
  return {
    value,
    row: {
      phase: name,
      wallMs,
      boundMs,
      convergeCpuMs,
      sandboxCpuMs,
      requests,
      minimum: sum(minimum),
      perKind: counts,
      minimumPerKind: minimum,
    },
  };
}

async function servicePhases() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'converge-bench-'));
  // In its own process: the sandbox's CPU would otherwise count as Converge's wall time.
  const sandbox = await startSandboxProcess({
    port: 0,
    config: {
      registry: { policies: [{ Name: 'service-read' }] },
      faults: { latencyMs: settings.latencyMs },
    },
  });
  const env = { ...process.env, ...sandbox.env(), CONVERGE_STATE_DIR: dir };
  const { parallelism } = settings;

  const rows = [];
  try {
    const n = writeWorkload(path.join(dir, 'manifest'), settings.sizes);
    const total = sum(n);
    const manifest = await loadManifest([path.join(dir, 'manifest')], { env });
    const plan = async () => {
      const run = await planRun(manifest, { env, parallelism });
      await run.connections.close();
      return run.plan;
    };
    const applyPlan = async (p) => {
      const connections = connect(manifest, { env });
      try {
        return await apply({ plan: p, connections }, { parallelism });
      } finally {
        await connections.close();
      }
    };
    const expect = (ok, what) => {
      if (!ok) throw new Error(what);
    };

    const cold = await phase('cold plan', sandbox, minimumRequests('plan', n), plan);
    expect(cold.value.summary.create === total, `cold plan: ${JSON.stringify(cold.value.summary)}`);
    rows.push(cold.row);
    const created = await phase('apply (create)', sandbox, minimumRequests('apply', n, { changed: n }), () =>
      applyPlan(cold.value),
    );
    expect(created.value.counts.applied === total, `apply: ${JSON.stringify(created.value.counts)}`);
    rows.push(created.row);
    const warm = await phase(
      'warm plan',
      sandbox,
      minimumRequests('plan', n, { existing: n.Workspace || 1 }),
      plan,
    );
    expect(warm.value.summary.noop === total, `warm plan: ${JSON.stringify(warm.value.summary)}`);
    rows.push(warm.row);

    const connections = connect(manifest, { env });
    await sandbox.take();
    const changed = await drift(connections, n, settings.driftShare).finally(() => connections.close());
    const changedTotal = sum(changed);
    const drifted = await phase(
      'drift plan',
      sandbox,
      minimumRequests('plan', n, { existing: n.Workspace || 1, drifted: changed.Job }),
      plan,
    );
    expect(
      drifted.value.summary.update === changedTotal,
      `drift plan: ${JSON.stringify(drifted.value.summary)}`,
    );
    rows.push(drifted.row);
    const repaired = await phase('apply (update)', sandbox, minimumRequests('apply', n, { changed }), () =>
      applyPlan(drifted.value),
    );
    expect(
      repaired.value.counts.applied === changedTotal,
      `repair: ${JSON.stringify(repaired.value.counts)}`,
    );
    rows.push(repaired.row);

    // The warm plan again, as a user runs it: the bin in a fresh process, start-up and the manifest's
    // loading included (the rows above run in this process, with the manifest loaded once).
    const viaCli = await phase(
      'warm plan, CLI process',
      sandbox,
      minimumRequests('plan', n, { existing: n.Workspace || 1 }),
      () => cliPlan(path.join(dir, 'manifest'), { PATH: process.env.PATH ?? '', ...env, NO_COLOR: '1' }),
    );
    expect(viaCli.value.code === 0, `CLI warm plan: exit ${viaCli.value.code}`);
    // Its CPU is the child's own, as it reports it on exit; this process only waited.
    rows.push({ ...viaCli.row, convergeCpuMs: viaCli.value.cpuMs, cli: true });
    // Last, so that the cold plan still loads and warms the HTTP client itself, as a user's does.
    const roundTripMs = await measureRoundTrip(`${env.CONVERGE_REGISTRY_ADDR}/v1/acl/policies`, {
      authorization: `Bearer ${env.CONVERGE_REGISTRY_TOKEN}`,
    });
    say(`round trip of one request alone: ${roundTripMs.toFixed(1)} ms (${settings.latencyMs} ms added)`);
    return { declared: n, drifted: changed, phases: rows, roundTripMs };
  } finally {
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * One run of the service phases in a fresh process (this file again, as `BENCH_CHILD=services`), so
 * that every run starts with cold code as the first did: runs in one process found the code warm
 * from the runs before them, and the third was a fifth faster than the first.
 */
function servicePhasesInChild(env = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url)], {
      env: { ...process.env, ...env, BENCH_CHILD: 'services' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk) => (out += chunk));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`service phases run exited with ${code}`)),
    );
  });
}

if (process.env.BENCH_CHILD === 'services') {
  process.stdout.write(JSON.stringify(await servicePhases()));
  process.exit(0);
}

const started = performance.now();
const results = { settings, machine: machine() };
say(
  `service phases (${JSON.stringify(settings.sizes)}, ${settings.latencyMs} ms, parallelism ${settings.parallelism})`,
);
const serviceRuns = [];
for (let i = 0; i < settings.serviceRuns; i += 1) {
  if (settings.serviceRuns > 1) say(`service phases, run ${i + 1} of ${settings.serviceRuns}`);
  serviceRuns.push(await servicePhasesInChild());
}
results.services = medianPhases(serviceRuns);
if (!skip.has('floor') && settings.latencyMs > 0) {
  // The same phases with nothing added to the answers: what is left is CPU (Converge's and the
  // sandbox's, sharing the machine's cores), the floor under each wall that no pipelining lowers.
  say('service phases with no added latency (the CPU floor)');
  const floor = await servicePhasesInChild({ BENCH_LATENCY_MS: '0' });
  results.floor = floor.phases.map((p) => ({
    phase: p.phase,
    wallMs: p.wallMs,
    convergeCpuMs: p.convergeCpuMs,
  }));
}
if (!skip.has('startup')) {
  say('start-up');
  results.startup = measureStartup();
}
if (!skip.has('cpu')) {
  say(`CPU and memory, ${settings.cpuRoles} roles`);
  results.cpu = await measureCpu(settings.cpuRoles);
}
if (!skip.has('faults')) {
  say('faults and rate limit');
  results.faults = await faultRuns(settings);
}
results.totalSeconds = (performance.now() - started) / 1000;
results.machine.loadAverageAtEnd = os.loadavg()[0];
const written = writeReport(outDir, results);
say(`wrote ${written.join(', ')} in ${results.totalSeconds.toFixed(0)} s`);

/**
 * Each phase's median run (by wall) of several, with every run's wall beside it; the round trip is
 * the median of the runs' too. Requests are the same in every run (the counts are checked per run).
 */
function medianPhases(runs) {
  const phases = runs[0].phases.map((_, i) => {
    const rows = runs.map((r) => r.phases[i]);
    const sorted = [...rows].sort((a, b) => a.wallMs - b.wallMs);
    return { ...sorted[Math.floor(sorted.length / 2)], wallMsRuns: rows.map((r) => r.wallMs) };
  });
  return { ...runs[0], phases, roundTripMs: median(runs.map((r) => r.roundTripMs)) };
}

/** A child's CPU so far (user + system) from /proc; undefined where there is no /proc (not Linux). */
function processCpuMs(pid) {
  try {
    // Fields after the command name (which may hold spaces and parentheses: split at the last ')'):
    // utime and stime are the 12th and 13th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

function machine() {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    // Other work on the machine (other builds, test runs) stretches every wall figure: say how much.
    loadAverage: os.loadavg()[0],
  };
}
