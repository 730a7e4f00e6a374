/**
 * How CLI commands reach services: the engine's ServiceConnections, with every retry reported on
 * standard error as it happens, so a slow service is never silent.
 */
import type { RunHttpOptions, ServiceClient, ServiceDefinition } from '../clients/service.js';
import { currentRequestLabel } from '../common/request-label.js';
import { httpOptions, ServiceConnections } from '../engine/connections.js';
import { answerLost } from '../clients/http/retry-policy.js';
import { CliError } from './exit-codes.js';
import { type Interrupt, onInterrupt } from './interrupt.js';
import type { Io } from './io.js';
import { retryReporter } from './retry-log.js';
import { CLI_SETTING_NAMES } from './setting-flags.js';

/** HTTP options for a run of `plan`, `apply` or an operator command: retries go to stderr. */
export function runHttpOptions(
  io: Pick<Io, 'stderr' | 'env'>,
  timeoutSeconds?: number,
  parallelism?: number,
): RunHttpOptions {
  const report = retryReporter((line) => io.stderr.write(`${line}\n`), currentRequestLabel);
  return httpOptions(io.env, {
    onRetry: report.onRetry,
    onRateLimitPause: report.onRateLimitPause,
    ...(timeoutSeconds !== undefined ? { timeoutSeconds } : {}),
    ...(parallelism !== undefined ? { parallelism } : {}),
    settingNames: CLI_SETTING_NAMES,
  });
}

/**
 * A one-shot write of an operator command (a scale, a dispatch, a rekey start): not sent again after
 * a failure that may have acted, since a second would act twice. `what` names it (`the scale of
 * group web`), `check` is the command that tells whether it took effect.
 */
export interface OneShotWrite {
  what: string;
  check: string;
}

/**
 * Runs a one-off operator command with one service's client from the environment, and closes the
 * connection pool afterwards whatever happens. For a one-shot write, Ctrl-C (or SIGTERM) aborts its
 * requests and ends it with 130 (143), and interrupted or failed once it may have reached the
 * service, the error says it may have taken effect and how to check before running it again (an
 * interrupted `job scale` that had landed ended in silence).
 */
export async function withClient<C extends ServiceClient, T>(
  io: Io,
  service: ServiceDefinition<C>,
  /** `interrupt`: the write's, for a question the command asks first (one handler, one line said). */
  fn: (client: C, interrupt?: Interrupt) => Promise<T>,
  write?: OneShotWrite,
): Promise<T> {
  // Only a one-shot write watches signals here: a command that holds a lock (a state push) has its
  // own interrupt, whose unlock must not be aborted by a signal every request of the client hears.
  const interrupt = write ? onInterrupt(io) : undefined;
  const connections = new ServiceConnections(io.env, [service], [], {
    http: runHttpOptions(io),
    ...(interrupt ? { signal: interrupt.signal } : {}),
  });
  const mayHaveActed = write
    ? `${write.what} may have reached the service and taken effect: check with \`${write.check}\` before running it again`
    : undefined;
  try {
    return await fn(connections.client(service), interrupt);
  } catch (error) {
    if (interrupt?.exitCode !== undefined)
      throw new CliError(mayHaveActed ? `interrupted: ${mayHaveActed}` : 'interrupted', interrupt.exitCode);
    // Only the write's own failure: a read before it (a 503 on looking the job up) did nothing.
    if (mayHaveActed && answerLost(error) && (error as { method?: string }).method !== 'GET')
      throw withNote(error, `not sent again: ${mayHaveActed}`);
    throw error;
  } finally {
    interrupt?.dispose();
    await connections.close();
  }
}

/** The error with one more line of advice, its class kept (exit codes and renderers go by it). */
export function withNote(error: unknown, note: string): unknown {
  if (!(error instanceof Error)) return error;
  error.message = `${error.message}\n${note}`;
  return error;
}
