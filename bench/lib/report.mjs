// docs/benchmarks.md (every figure beside its target, met or not) and docs/benchmarks.json (raw).
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const ms = (v) => `${Math.round(v)} ms`;
const ratio = (a, b) => (b > 0 ? `${(a / b).toFixed(2)}×` : 'n/a');
const mark = (ok) => (ok ? 'met' : '**missed**');
// CPU figures are absent from reports written before they were measured.
const cpuMs = (v) => (v === undefined ? 'n/a' : ms(v));
const cpuRatio = (a, b) => (a === undefined || b === undefined ? 'n/a' : ratio(a, b));

function phaseTable(services, startupMs) {
  const lines = [
    '| phase | requests | minimum | over minimum | wall | latency bound | wall ÷ bound (target ≤ 1.5×) | Converge CPU | ÷ bound | sandbox CPU |',
    '| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |',
  ];
  for (const p of services.phases) {
    const over = p.minimum ? ((p.requests - p.minimum) / p.minimum) * 100 : 0;
    // A CLI process is allowed its start-up on top (`converge --version`, from the start-up runs).
    const startup = p.cli ? startupMs : 0;
    const allowed = 1.5 * p.boundMs + (startup ?? 0);
    const verdict = p.cli && startup === undefined ? '' : ` ${mark(p.wallMs <= allowed)}`;
    const shown = p.cli
      ? `${ratio(p.wallMs, p.boundMs)} (allowed: 1.5× + ${startup === undefined ? 'start-up' : ms(startup)})${verdict}`
      : `${ratio(p.wallMs, p.boundMs)}${verdict}`;
    const runs =
      p.wallMsRuns?.length > 1 ? ` (runs: ${p.wallMsRuns.map((v) => Math.round(v)).join(', ')})` : '';
    lines.push(
      `| ${p.phase} | ${p.requests} | ${p.minimum} | ${over.toFixed(1)}% | ${ms(p.wallMs)}${runs} | ${ms(p.boundMs)} | ${shown} | ${cpuMs(p.convergeCpuMs)} | ${cpuRatio(p.convergeCpuMs, p.boundMs)} | ${cpuMs(p.sandboxCpuMs)} |`,
    );
  }
  return lines.join('\n');
}

/**
 * What one request alone takes against this sandbox, and the phases' walls against the bound at
 * that round trip: the target is against the added latency alone, as the issue sets it, and this
 * line tells the loopback HTTP exchange and the sandbox's own work apart from Converge's.
 */
function roundTripNote(services, settings) {
  const rt = services.roundTripMs;
  const phases = services.phases
    .filter((p) => !p.cli)
    .map((p) => `${p.phase} ${ratio(p.wallMs, (p.requests / settings.parallelism) * rt)}`)
    .join(', ');
  return `Round trip: one small read alone, one at a time with the bare HTTP client, takes ${rt.toFixed(1)} ms (median of 50) against this sandbox with ${settings.latencyMs} ms added: the rest is the loopback HTTP exchange and the sandbox's own work, the same for any client. At that round trip the walls are: ${phases} (requests ÷ parallelism × ${rt.toFixed(1)} ms). ${criticalPath(services)}`;
}

/**
 * Each phase's wall with nothing added to the answers beside its wall with the latency: the first is
 * CPU alone (Converge's and the sandbox's on the machine's cores), a floor no pipelining lowers; what
 * the latency adds on top of it, against the bound, tells how much of the waiting the work hid.
 */
function floorTable(services, floor, settings) {
  const lines = [
    `| phase | wall, no latency added (CPU floor) | Converge CPU there | wall, ${settings.latencyMs} ms added | added by the latency | latency bound | floor + bound ÷ bound |`,
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const f of floor) {
    const p = services.phases.find((q) => q.phase === f.phase);
    if (!p) continue;
    lines.push(
      `| ${f.phase} | ${ms(f.wallMs)} | ${cpuMs(f.convergeCpuMs)} | ${ms(p.wallMs)} | ${ms(p.wallMs - f.wallMs)} | ${ms(p.boundMs)} | ${ratio(f.wallMs + p.boundMs, p.boundMs)} |`,
    );
  }
  return lines.join('\n');
}

/** The warm plan's requests to the secrets service: its longest queue, over that host's own connections. */
function criticalPath(services) {
  const warm = services.phases.find((p) => p.phase === 'warm plan');
  if (!warm) return '';
  const secrets = ['LdapConfig', 'LdapGroup', 'LdapUser'].reduce((n, k) => n + (warm.perKind[k] ?? 0), 0);
  return `The secrets service alone takes ${secrets} of the warm plan's ${warm.requests} requests (a read per directory entry: its list gives names only), over its own connections, so its queue is the warm plan's critical path.`;
}

function kindTable(services) {
  const kinds = [
    ...new Set(services.phases.flatMap((p) => [...Object.keys(p.perKind), ...Object.keys(p.minimumPerKind)])),
  ].sort();
  const lines = [
    `| kind | ${services.phases.map((p) => p.phase).join(' | ')} |`,
    `| --- | ${services.phases.map(() => '---:').join(' | ')} |`,
  ];
  for (const k of kinds) {
    const cells = services.phases.map((p) => {
      const got = p.perKind[k] ?? 0;
      const min = p.minimumPerKind[k] ?? 0;
      const within = p.phase !== 'warm plan' || got <= Math.ceil(min * 1.02);
      return `${got} / ${min}${within ? '' : ' **over 2%**'}`;
    });
    lines.push(`| ${k} | ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

function startupTable(s) {
  return [
    '| command | median wall | × `node -e 0` | median CPU | × `node -e 0` | target (wall) |',
    '| --- | ---: | ---: | ---: | ---: | --- |',
    `| \`node -e 0\` | ${ms(s.nodeMs)} | 1.00× | ${cpuMs(s.nodeCpuMs)} | 1.00× | |`,
    `| \`converge --version\` | ${ms(s.versionMs)} | ${ratio(s.versionMs, s.nodeMs)} | ${cpuMs(s.versionCpuMs)} | ${cpuRatio(s.versionCpuMs, s.nodeCpuMs)} | ≤ 3× ${mark(s.versionMs <= 3 * s.nodeMs)} |`,
    `| \`converge validate\` (one role) | ${ms(s.validateMs)} | ${ratio(s.validateMs, s.nodeMs)} | ${cpuMs(s.validateCpuMs)} | ${cpuRatio(s.validateCpuMs, s.nodeCpuMs)} | ≤ 4× ${mark(s.validateMs <= 4 * s.nodeMs)} |`,
  ].join('\n');
}

/** ` (runs: 2.4, 2.7, 3.1 s)` where several runs were made, the median being shown. */
const runsOf = (r) =>
  r.cpuMsRuns?.length > 1 ? ` (runs: ${r.cpuMsRuns.map((v) => (v / 1000).toFixed(2)).join(', ')} s)` : '';

function cpuTable(c) {
  return [
    '| run | CPU | peak RSS | target |',
    '| --- | ---: | ---: | --- |',
    `| \`yaml\` parse of the file alone | ${ms(c.yaml.cpuMs)}${runsOf(c.yaml)} | ${c.yaml.peakRssMb.toFixed(0)} MB | |`,
    `| warm plan, \`converge plan -f DIR\` (${c.plan.summary}) | ${ms(c.plan.cpuMs)}${runsOf(c.plan)} | ${c.plan.peakRssMb.toFixed(0)} MB | CPU ≤ the parse ${mark(c.plan.cpuMs <= c.yaml.cpuMs)}; memory < 200 MB ${mark(c.plan.peakRssMb < 200)} |`,
    ...(c.engine
      ? [
          `| the same plan through the engine's API, unbundled modules (${JSON.stringify(c.engine.summary)}) | ${ms(c.engine.cpuMs)}${runsOf(c.engine)} | ${c.engine.peakRssMb.toFixed(0)} MB | for reference |`,
        ]
      : []),
  ].join('\n');
}

function faultLines(f) {
  const run = (r, target) =>
    r.error
      ? `error: ${r.error} (target: ${target}) **missed**`
      : `${r.applied}/${r.objects} applied, ${r.failed} failed, ${r.skipped} skipped, ${r.duplicateRoles} duplicate roles, ${r.changesLeft} changes left after, ${r.createsPerSecond.toFixed(1)} creates/s over ${ms(r.wallMs)}`;
  const faultsOk =
    !f.faults.error && f.faults.failed === 0 && f.faults.duplicateRoles === 0 && f.faults.changesLeft === 0;
  const rateOk =
    !f.rateLimit.error &&
    f.rateLimit.failed === 0 &&
    f.rateLimit.createsPerSecond >= 0.9 * f.rateLimit.limitPerSecond;
  const why = (r) =>
    r.failures?.length
      ? ` Failed: ${r.failures.map((m) => `\`${m.replaceAll('`', "'")}\``).join('; ')}.`
      : '';
  return [
    `- ${f.faults.objects ?? 500} objects of every kind (the default sizes' mix) under 10% 5xx and 5% dropped connections, half of them after the service acted (sandbox \`faults: { failRate: 0.1, resetRate: 0.05, seed: 20 }\`): ${run(f.faults, 'no failed object, no duplicate, empty plan after')}. Target: no failed object, no duplicate, an empty plan after: ${mark(faultsOk)}.${why(f.faults)}`,
    `- Roles under a 30 requests/s limit per token (\`faults: { rateLimit: 30 }\`): ${run(f.rateLimit, '≥ 27 creates/s')} (the sandbox's first-second burst included, so a short run can exceed the limit). Target: at least 90% of the limit (27/s) with no request failing: ${mark(rateOk)}.${why(f.rateLimit)}`,
  ].join('\n');
}

export function writeReport(dir, results) {
  mkdirSync(dir, { recursive: true });
  const { machine, settings, services } = results;
  const md = [
    '# Benchmarks',
    '',
    'Written by `npm run bench` (bench/run.mjs); the raw figures are in [benchmarks.json](benchmarks.json). Every figure stands beside its target from issue 20, including those still missed.',
    '',
    `Machine: ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, ${machine.platform}${machine.loadAverage === undefined ? '' : `; 1-minute load average ${machine.loadAverage.toFixed(1)} at the start and ${machine.loadAverageAtEnd?.toFixed(1) ?? '?'} at the end (other work on the machine stretches every wall figure)`}.`,
    `Settings: ${JSON.stringify(settings.sizes)} (plus one LdapConfig), sandbox in a child process with ${settings.latencyMs} ms added to every answer, parallelism ${settings.parallelism}, drift ${settings.driftShare * 100}% of each kind${settings.serviceRuns > 1 ? `; the service phases run ${settings.serviceRuns} times, each in a fresh process against a fresh sandbox, and each phase shows its median run (by wall; every run's wall in ms beside it)` : ''}. The run took ${results.totalSeconds.toFixed(0)} s.`,
    '',
    '## Requests and wall time per phase',
    '',
    'The latency bound is requests ÷ parallelism × round trip; the plans and applies run in-process, so no start-up is added. The sandbox runs in a child process (bench/lib/sandbox-child.mjs), so its own work (a job plan, a JSON:API page) no longer shares the event loop of Converge; on a 2-core machine it still competes for CPU, as does whatever else the machine runs.',
    '',
    'The last row runs the bin in a fresh process (`converge plan -f DIR`), as a user does: its wall includes start-up and loading the manifest, and it is allowed 1.5× the bound plus the start-up of `converge --version` (below).',
    '',
    "Converge CPU is what this process spent in the phase (reading and checking answers, comparing, rendering each object's change). Its work runs on one thread, so that CPU is a floor under the wall: where it comes near the latency bound (÷ bound near or above 1), the phase is bound by CPU, not by round trips, and keeping more requests in flight cannot bring the wall to the bound; only less work per object can.",
    '',
    phaseTable(services, results.startup?.versionMs),
    '',
    ...(services.roundTripMs === undefined ? [] : [roundTripNote(services, settings), '']),
    ...(results.floor
      ? [
          `The same phases with no latency added (one run, a fresh process): the wall is then CPU alone, Converge's and the sandbox's on ${machine.cores} cores, a floor no request pipelining lowers. Were that work done wholly while waiting for answers, a phase would take the larger of the two; done wholly apart, their sum (last column). Where the last column is above 1.5×, the target needs less CPU per object, not more requests in flight.`,
          '',
          floorTable(services, results.floor, settings),
          '',
        ]
      : []),
    'Requests per kind, counted by the sandbox, as `sent / minimum` (the minimum per kind is in the README; target: the warm plan within 2% of it for each kind):',
    '',
    kindTable(services),
    '',
    ...(results.startup
      ? [
          '## Start-up',
          '',
          `Median of ${results.startup.runs} runs of a fresh process each, the three commands alternating; CPU is user + system as the process itself reports it on exit.`,
          '',
          startupTable(results.startup),
          '',
        ]
      : []),
    ...(results.cpu
      ? [
          `## CPU and memory: warm plan of ${results.cpu.roles} roles`,
          '',
          `Each in a child process of its own (whole process: loading included), the sandbox in the parent; ${results.cpu.runs ?? 1} runs of each, alternating, the median shown (peak memory: the highest of the runs). The target row is the bin as a user runs it (the bundled command line, printing its plan); the engine's API loads each of its modules from its own file, and that loading is most of the difference between the two rows.`,
          '',
          cpuTable(results.cpu),
          '',
        ]
      : []),
    ...(results.faults ? ['## Faults and rate limits', '', faultLines(results.faults), ''] : []),
  ].join('\n');
  const mdFile = path.join(dir, 'benchmarks.md');
  const jsonFile = path.join(dir, 'benchmarks.json');
  writeFileSync(mdFile, md);
  writeFileSync(jsonFile, `${JSON.stringify(results, null, 2)}\n`);
  return [mdFile, jsonFile];
}
