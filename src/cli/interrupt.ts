/**
 * Ctrl-C during work that holds something (a workspace lock around a state push, changes in flight):
 * the first signal aborts cleanly — nothing new starts, requests in flight and every wait (rate limit,
 * retry) are aborted through the signal every HTTP client of the run holds, what holds a lock releases
 * it (lock and unlock requests are exempt) — and the second quits at once.
 */
import type { Io } from './io.js';

export interface Interrupt {
  signal: AbortSignal;
  dispose(): void;
}

export function onInterrupt(io: Io): Interrupt {
  const controller = new AbortController();
  const handler = (signal: NodeJS.Signals) => {
    if (controller.signal.aborted) {
      io.stderr.write(`\nInterrupted again (${signal}): quitting now; locks may be left behind.\n`);
      process.exit(130);
    }
    io.stderr.write(
      `\nInterrupted (${signal}): stopping requests in flight, starting nothing new and releasing locks. Press Ctrl-C again to quit at once.\n`,
    );
    controller.abort(new Error(`interrupted by ${signal}`));
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return {
    signal: controller.signal,
    dispose() {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    },
  };
}
