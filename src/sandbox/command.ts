/**
 * `converge sandbox`: starts the sandbox, prints the `export CONVERGE_...` lines a shell needs to use
 * it (stdout, so `eval "$(converge sandbox ...)"`-style use works), on stderr the services' startup
 * notes (the secrets service's recovery key shares when this start made the key, once, as the real
 * service's initialisation shows them) and a one-line note, and runs until SIGINT or SIGTERM, then
 * closes cleanly (state flushed) and resolves with the exit code.
 * Problems the user can fix (port in use, bad config) are one clear line on stderr and exit code 1.
 */
import { type FaultFlags, FaultFlagError, faultsFromFlags } from './config/fault-flags.js';
import type { FaultsConfig } from './core/faults.js';
import { type RunningSandbox, startSandbox } from './index.js';
import { SANDBOX_SERVICES } from './services/index.js';

export interface SandboxCommandOptions {
  port?: number;
  host?: string;
  token?: string;
  /** Data folder for persistence. */
  data?: string;
  /** Path of a YAML sandbox config file. */
  config?: string;
  /** Fault options as typed (`--latency`, `--fail-rate`, ...), laid over the config file's `faults`. */
  faults?: FaultFlags;
}

interface TextSink {
  write(text: string): unknown;
}

export interface SandboxCommandIo {
  stdout: TextSink;
  stderr: TextSink;
  /** Stops the sandbox like a signal would (for embedding and tests). */
  signal?: AbortSignal;
}

const STOP_SIGNALS = ['SIGINT', 'SIGTERM'] as const;

export async function runSandboxCommand(
  opts: SandboxCommandOptions,
  io: SandboxCommandIo = { stdout: process.stdout, stderr: process.stderr },
): Promise<number> {
  const fail = (message: string) => {
    io.stderr.write(`converge sandbox: ${message}\n`);
    return 1;
  };
  if (opts.port !== undefined && !(Number.isInteger(opts.port) && opts.port >= 0 && opts.port <= 65535)) {
    return fail(`invalid port ${opts.port}: use a number from 0 to 65535 (0 picks a free port)`);
  }

  let faults: FaultsConfig | undefined;
  try {
    faults = opts.faults
      ? faultsFromFlags(
          opts.faults,
          SANDBOX_SERVICES.map((s) => s.name),
        )
      : undefined;
  } catch (err) {
    if (err instanceof FaultFlagError) return fail(err.message);
    throw err;
  }

  let sandbox: RunningSandbox;
  try {
    sandbox = await startSandbox({
      ...(opts.port !== undefined ? { port: opts.port } : {}),
      ...(opts.host !== undefined ? { host: opts.host } : {}),
      ...(opts.token !== undefined ? { token: opts.token } : {}),
      ...(opts.data !== undefined ? { dataDir: opts.data } : {}),
      ...(opts.config !== undefined ? { config: opts.config } : {}),
      ...(faults !== undefined ? { faults } : {}),
    });
  } catch (err) {
    // Config, port and state-file errors carry complete messages; a stack trace would only hide them.
    return fail((err as Error).message);
  }

  // Handlers go in before anything is printed: a caller may signal as soon as it has read the exports.
  const stopped = waitForStop(io.signal);
  for (const [name, value] of Object.entries(sandbox.env())) {
    io.stdout.write(`export ${name}=${shellQuote(value)}\n`);
  }
  for (const note of sandbox.startupNotes) io.stderr.write(note);
  // A run that misbehaves on purpose says so, with the seed that repeats it.
  for (const line of sandbox.faultSummary) io.stderr.write(`converge sandbox: ${line}\n`);
  const storage = opts.data !== undefined ? `data in ${opts.data}` : 'in memory';
  io.stderr.write(`converge sandbox: listening on ${sandbox.url} (${storage}); stop with Ctrl-C\n`);

  await stopped;
  try {
    await sandbox.close();
  } catch (err) {
    return fail(`stopped, but the state could not be saved: ${(err as Error).message}`);
  }
  io.stderr.write(
    `converge sandbox: stopped${opts.data !== undefined ? `; state saved in ${opts.data}` : ''}\n`,
  );
  return 0;
}

/** Resolves on the first SIGINT/SIGTERM (or abort); the handlers are removed again afterwards. */
function waitForStop(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      for (const s of STOP_SIGNALS) process.off(s, stop);
      signal?.removeEventListener('abort', stop);
      resolve();
    };
    for (const s of STOP_SIGNALS) process.on(s, stop);
    if (signal?.aborted) stop();
    else signal?.addEventListener('abort', stop, { once: true });
  });
}

/** POSIX single-quoting: safe for any value, including quotes and spaces. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
