// Starts bench/lib/sandbox-child.mjs and talks to it: its env, its request log, and close().
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const CHILD = fileURLToPath(new URL('./sandbox-child.mjs', import.meta.url));
/** A sandbox that has not started (or answered a sync) by then is broken: fail the bench, do not hang. */
const DEADLINE_MS = 30_000;

function withDeadline(promise, what) {
  let timer;
  const deadline = new Promise((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`bench sandbox: no ${what} within ${DEADLINE_MS} ms`)),
      DEADLINE_MS,
    );
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

/** @param options startSandbox's options (JSON-able: port, config, faults) */
export async function startSandboxProcess(options) {
  // BENCH_SANDBOX_PROFILE=dir writes the sandbox's CPU profile there (`node --cpu-prof`) when it exits.
  const profile = process.env.BENCH_SANDBOX_PROFILE;
  const nodeArgs = profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : [];
  const child = spawn(process.execPath, [...nodeArgs, CHILD, JSON.stringify(options)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const waiters = new Map();
  let nextTake = 0;
  let onReady;
  const ready = new Promise((resolve, reject) => {
    onReady = resolve;
    child.once('exit', (code) => reject(new Error(`bench sandbox exited with ${code} before it was ready`)));
  });
  createInterface({ input: child.stdout }).on('line', (line) => {
    const message = JSON.parse(line);
    if (message.ready !== undefined) onReady(message.ready);
    else if (message.taken !== undefined) {
      waiters.get(message.taken)?.(message.counts);
      waiters.delete(message.taken);
    }
  });
  const env = await withDeadline(ready, 'start');
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    env: () => env,
    /** The child's process id (for reading its CPU time). */
    pid: child.pid,
    /** The requests answered per kind since the last take (every answer received by now included). */
    take() {
      const n = (nextTake += 1);
      const done = new Promise((resolve) => waiters.set(n, resolve));
      child.stdin.write(`take ${n}\n`);
      return withDeadline(done, 'take answer');
    },
    async close() {
      child.stdin.end();
      await withDeadline(exited, 'exit');
    },
  };
}
