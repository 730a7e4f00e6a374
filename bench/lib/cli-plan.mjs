// `converge plan` as a user runs it: a fresh process of the bin (start-up, loading the manifest,
// planning and printing included), timed from outside, with its own CPU as it reports it on exit.
// The sandbox runs in its own child process, so the wait is asynchronous: a synchronous spawn would
// stop the bench reading the sandbox's request log, whose pipe would then fill and stall the sandbox.
import { execFile } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const CPU_HOOK =
  'data:text/javascript,process.on("exit",()=>{const u=process.cpuUsage();process.stderr.write("\\nbench-cpu-us "+(u.user+u.system)+"\\n")})';

/** Runs `converge plan -f dir` once; resolves with wall and CPU in ms, the exit code and stdout. */
export function cliPlan(dir, env) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    execFile(
      process.execPath,
      ['--import', CPU_HOOK, CLI, 'plan', '-f', dir, '--detailed-exitcode'],
      { env, timeout: 300_000, maxBuffer: 64 << 20 },
      (error, stdout, stderr) => {
        const wallMs = performance.now() - started;
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        // --detailed-exitcode: 0 no changes, 2 changes; anything else failed.
        if (code !== 0 && code !== 2) return reject(new Error(`converge plan exited ${code}: ${stderr}`));
        const cpu = /bench-cpu-us (\d+)/.exec(stderr);
        resolve({ wallMs, cpuMs: cpu ? Number(cpu[1]) / 1000 : undefined, code, stdout });
      },
    );
  });
}
