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

/**
 * @param options startSandbox's options (JSON-able: port, config, faults)
 * @param log called with each request line the sandbox answered
 */
export async function startSandboxProcess(options, log = () => {}) {
  // BENCH_SANDBOX_PROFILE=dir writes the sandbox's CPU profile there (`node --cpu-prof`) when it exits.
  const profile = process.env.BENCH_SANDBOX_PROFILE;
  const nodeArgs = profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : [];
  const child = spawn(process.execPath, [...nodeArgs, CHILD, JSON.stringify(options)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const waiters = new Map();
  let nextSync = 0;
  let onReady;
  const ready = new Promise((resolve, reject) => {
    onReady = resolve;
    child.once('exit', (code) => reject(new Error(`bench sandbox exited with ${code} before it was ready`)));
  });
  createInterface({ input: child.stdout }).on('line', (line) => {
    const message = JSON.parse(line);
    if (message.log !== undefined) log(message.log);
    else if (message.ready !== undefined) onReady(message.ready);
    else if (message.synced !== undefined) {
      waiters.get(message.synced)?.();
      waiters.delete(message.synced);
    }
  });
  const env = await withDeadline(ready, 'start');
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    env: () => env,
    /** The child's process id (for reading its CPU time). */
    pid: child.pid,
    /** Resolves once every request answered so far has been passed to `log`. */
    sync() {
      const n = (nextSync += 1);
      const done = new Promise((resolve) => waiters.set(n, resolve));
      child.stdin.write(`sync ${n}\n`);
      return withDeadline(done, 'sync answer');
    },
    async close() {
      child.stdin.end();
      await withDeadline(exited, 'exit');
    },
  };
}
