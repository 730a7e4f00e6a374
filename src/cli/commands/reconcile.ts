/**
 * `converge reconcile`: runs the reconcile loop (src/reconcile) until SIGTERM or SIGINT. The first
 * signal lets the change in flight finish and ends with a summary line, exiting 143 (SIGTERM) or 130
 * (SIGINT) as a process killed by it would; a second one quits at once. The signals are the CLI's
 * shared `onInterrupt` (interrupt.ts) in its `finishInFlight` form: nothing is aborted, the loop ends
 * itself after the cycle in flight.
 */
import { parseGoDuration } from '../../common/go-duration.js';
import type { Catalog } from '../../engine/catalog.js';
import { parseListenAddress } from '../../reconcile/listen-address.js';
import { DEFAULT_MAX_BACKOFF_MS, runReconcile } from '../../reconcile/loop.js';
import { environmentSecrets } from '../debug-trace.js';
import { CliError } from '../exit-codes.js';
import type { Io } from '../io.js';
import { requireManifestPaths } from '../manifest-paths.js';
import { CLI_SETTING_NAMES } from '../setting-flags.js';
import { onInterrupt } from '../interrupt.js';

export interface ReconcileFlags {
  file: string[];
  interval: string;
  dryRun?: boolean;
  listen?: string;
  maxBackoff?: string;
  prune?: boolean;
  parallelism: number;
  timeout?: number;
  lockTimeout?: number;
  allowEmpty?: boolean;
  maxDeletes?: number;
  allowEnv?: string[];
  allowAddress?: string[];
}

/** A positive Go duration (`5m`, `30s`, `1h30m`) in milliseconds, or a usage error naming the flag. */
function duration(flag: string, text: string): number {
  const ms = parseGoDuration(text);
  if (ms === undefined || ms <= 0) {
    throw new CliError(`${flag} must be a positive duration like 30s, 5m or 1h30m, not "${text}"`);
  }
  return ms;
}

export async function reconcileCommand(flags: ReconcileFlags, io: Io, catalog: Catalog): Promise<number> {
  requireManifestPaths(flags.file);
  const intervalMs = duration('--interval', flags.interval);
  const maxBackoffMs = flags.maxBackoff
    ? duration('--max-backoff', flags.maxBackoff)
    : DEFAULT_MAX_BACKOFF_MS;
  let listen;
  try {
    listen = flags.listen ? parseListenAddress(flags.listen) : undefined;
  } catch (error) {
    throw new CliError((error as Error).message);
  }

  let loop: Awaited<ReturnType<typeof runReconcile>> | undefined;
  const interrupt = onInterrupt(io, {
    finishInFlight: true,
    inFlight: () => loop?.cycleInFlight() ?? true,
  });
  // The loop's summary and shutdown line name the signal (`"reason":"SIGTERM"`), not the Error the
  // shared mechanism aborts with.
  const stop = new AbortController();
  interrupt.stop.addEventListener('abort', () => stop.abort(interrupt.signalName), { once: true });
  try {
    loop = await runReconcile(
      {
        paths: flags.file,
        intervalMs,
        maxBackoffMs,
        dryRun: Boolean(flags.dryRun),
        prune: Boolean(flags.prune),
        limits: {
          ...(flags.allowEmpty ? { allowEmpty: true } : {}),
          ...(flags.maxDeletes !== undefined ? { maxDeletes: flags.maxDeletes } : {}),
        },
        parallelism: flags.parallelism,
        env: io.env,
        catalog,
        signal: stop.signal,
        secrets: environmentSecrets(io.env),
        allowEnv: flags.allowEnv ?? [],
        allowAddresses: flags.allowAddress ?? [],
        ...(flags.timeout !== undefined ? { timeoutSeconds: flags.timeout } : {}),
        ...(flags.lockTimeout !== undefined ? { lockTimeoutSeconds: flags.lockTimeout } : {}),
        settingNames: CLI_SETTING_NAMES,
        ...(listen ? { listen } : {}),
      },
      io,
    );
    await loop.done;
    return interrupt.exitCode ?? 0;
  } finally {
    interrupt.dispose();
  }
}
