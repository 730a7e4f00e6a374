/**
 * Ctrl-C or SIGTERM during work that holds something (a workspace lock around a state push, changes
 * in flight, the local apply lock).
 *
 * The first signal stops what can stop cleanly. Outside the changes of an apply, that is everything
 * at once: requests in flight and every wait (rate limit, retry) are aborted through the `signal`
 * every HTTP client of the run holds, and what holds a lock releases it (lock and unlock requests
 * are exempt). While an apply is changing objects (`letInFlightFinish`), cutting a change midway
 * could leave an object half made, so `stop` fires first (nothing new starts) and the changes in
 * flight get up to GRACE_MS to finish before `signal` aborts them too.
 *
 * A loop that runs until stopped (`converge reconcile`, `finishInFlight`) only stops at the first
 * signal: the change in flight runs to its end (each request bounded by its own timeout), and the
 * loop then ends on its own.
 *
 * The second signal quits at once, with the signal's conventional code (130 for SIGINT, 143 for
 * SIGTERM); the local apply lock is still removed by its process-exit handler (`state-lock.ts`).
 */
import type { Io } from './io.js';
import { setMaxListeners } from 'node:events';
import { heldLocks } from '../common/held-locks.js';
import { printable } from '../common/printable.js';

/** How long changes in flight may run after the first signal before they are aborted. */
export const GRACE_MS = 30_000;

/** 128 + the signal's number, as shells report a process killed by it. */
export const SIGNAL_EXIT_CODES: Readonly<Record<string, number>> = { SIGINT: 130, SIGTERM: 143 };

export interface Interrupt {
  /** Aborted by the first signal: start nothing new. */
  stop: AbortSignal;
  /**
   * Aborts requests in flight and every wait: with `stop`, or GRACE_MS after it while in-flight
   * changes may finish.
   */
  signal: AbortSignal;
  /** 130 or 143 once a signal came; what the command exits with then. */
  readonly exitCode: number | undefined;
  /** The first signal that came (`SIGTERM`), for a log that names it. */
  readonly signalName: NodeJS.Signals | undefined;
  /** From now on, the first signal lets changes in flight finish (up to the grace period). */
  letInFlightFinish(): void;
  /**
   * Runs `last` when the second signal quits at once, before the exit: only synchronous work gets
   * done then (the inventory's local file saved). Its failure never keeps the process alive.
   */
  beforeQuit(last: () => void): void;
  dispose(): void;
}

export interface InterruptOptions {
  graceMs?: number;
  /** How the second signal ends the process; injected by tests. */
  exit?: (code: number) => void;
  /**
   * The first signal only stops: nothing is aborted, so the change in flight finishes (a loop such
   * as `converge reconcile`, which then ends with its summary).
   */
  finishInFlight?: boolean;
  /** With `finishInFlight`: whether anything is in flight now, so the first signal's line says so. */
  inFlight?: () => boolean;
}

/** The service locks left held by quitting now, each with the command that releases it. */
function leftLocked(): string {
  const locks = heldLocks();
  if (locks.length === 0) return '';
  // Names come from the service (a workspace's organization and name): one inert line each. A lock
  // whose release was sent may be released already: the answer is what quitting now does not wait for.
  const lines = locks.map(
    (lock) =>
      `  ${printable(lock.release)}    (${printable(lock.what)}${lock.releasing ? '; its release was sent, so it may be released already' : ''})`,
  );
  const heading = locks.every((lock) => lock.releasing)
    ? 'Maybe left locked by this run (check, and release each once this process has exited):'
    : 'Left locked by this run (release each once this process has exited):';
  return `${heading}\n${lines.join('\n')}\n`;
}

export function onInterrupt(io: Io, options: InterruptOptions = {}): Interrupt {
  const graceMs = options.graceMs ?? GRACE_MS;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const stop = new AbortController();
  const abort = new AbortController();
  let graceful = false;
  let exitCode: number | undefined;
  let signalName: NodeJS.Signals | undefined;
  let timer: NodeJS.Timeout | undefined;
  const lastWords: (() => void)[] = [];

  const handler = (signal: NodeJS.Signals) => {
    const code = SIGNAL_EXIT_CODES[signal] ?? 130;
    if (stop.signal.aborted) {
      io.stderr.write(
        `\nInterrupted again (${signal}): quitting now; a change in flight may be cut.\n${leftLocked()}`,
      );
      for (const last of lastWords) {
        try {
          last();
        } catch (error) {
          io.stderr.write(`(while quitting: ${(error as Error).message})\n`);
        }
      }
      exit(code);
      return;
    }
    exitCode = code;
    signalName = signal;
    const reason = new Error(`interrupted by ${signal}`);
    stop.abort(reason);
    if (options.finishInFlight) {
      // Idle between cycles, there is nothing to finish: saying so sent readers looking for it.
      io.stderr.write(
        options.inFlight?.() === false
          ? `\n${signal}: stopping.\n`
          : `\n${signal}: finishing the change in flight, then stopping (again to quit at once).\n`,
      );
      return;
    }
    if (!graceful) {
      io.stderr.write(
        `\nInterrupted (${signal}): stopping requests in flight, starting nothing new and releasing locks. Press Ctrl-C (or send the signal) again to quit at once.\n`,
      );
      abort.abort(reason);
      return;
    }
    io.stderr.write(
      `\nInterrupted (${signal}): starting no new change; changes in flight may finish for up to ${Math.round(graceMs / 1000)}s, then they are aborted. Press Ctrl-C (or send the signal) again to quit at once.\n`,
    );
    timer = setTimeout(() => {
      io.stderr.write(`Changes still in flight after ${Math.round(graceMs / 1000)}s: aborting them.\n`);
      abort.abort(reason);
    }, graceMs);
    // The grace period never keeps a finished process alive.
    timer.unref();
  };
  // Every request and wait of the run listens on these two signals: a plan of hundreds of objects
  // adds far more than Node's default of 10 listeners, which is no leak here.
  setMaxListeners(0, stop.signal, abort.signal);
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return {
    stop: stop.signal,
    signal: abort.signal,
    get exitCode() {
      return exitCode;
    },
    get signalName() {
      return signalName;
    },
    letInFlightFinish() {
      graceful = true;
    },
    beforeQuit(last) {
      lastWords.push(last);
    },
    dispose() {
      if (timer) clearTimeout(timer);
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    },
  };
}
