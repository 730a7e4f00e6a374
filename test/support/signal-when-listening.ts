/**
 * For in-process tests of a command's interrupt: emits `signal` to this process `afterMs` after the
 * command starts listening for it (its modules load first), so that its first requests are out.
 * Returns when it was sent (Infinity until then) and a stop for the wait.
 */
export function signalWhenListening(
  signal: NodeJS.Signals,
  afterMs = 100,
): { sentAt: () => number; stop: () => void } {
  const before = process.listenerCount(signal);
  let sentAt = Number.POSITIVE_INFINITY;
  const listening = setInterval(() => {
    if (process.listenerCount(signal) <= before) return;
    clearInterval(listening);
    setTimeout(() => {
      sentAt = Date.now();
      process.emit(signal, signal);
    }, afterMs);
  }, 5);
  return { sentAt: () => sentAt, stop: () => clearInterval(listening) };
}
