/**
 * How CLI commands reach services: the engine's ServiceConnections, with every retry reported on
 * standard error as it happens, so a slow service is never silent.
 */
import type { RunHttpOptions, ServiceClient, ServiceDefinition } from '../clients/service.js';
import { currentRequestLabel } from '../common/request-label.js';
import { httpOptions, ServiceConnections } from '../engine/connections.js';
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
 * Runs a one-off operator command with one service's client from the environment, and closes the
 * connection pool afterwards whatever happens.
 */
export async function withClient<C extends ServiceClient, T>(
  io: Pick<Io, 'env' | 'stderr'>,
  service: ServiceDefinition<C>,
  fn: (client: C) => Promise<T>,
): Promise<T> {
  const connections = new ServiceConnections(io.env, [service], [], {
    http: runHttpOptions(io),
  });
  try {
    return await fn(connections.client(service));
  } finally {
    await connections.close();
  }
}
