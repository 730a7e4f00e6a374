// `converge plan` as a user runs it: a fresh process of the bin (start-up, loading the manifest,
// planning and printing included), timed from outside, with its own CPU as it reports it on exit.
// The sandbox runs in its own child process, so the wait is asynchronous: a synchronous spawn would
// stop the bench answering the sandbox child's requests for its counts.
import { execFile } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { CLI, CPU_HOOK, reportedCpuMs } from './child-cpu.mjs';

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
        resolve({ wallMs, cpuMs: reportedCpuMs(stderr), code, stdout });
      },
    );
  });
}
