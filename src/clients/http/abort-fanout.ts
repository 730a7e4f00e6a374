/**
 * One abort listener per shared signal, however many requests follow it.
 *
 * Every request of a run follows the run's signal (Ctrl-C, a reconcile cycle's stop), and each of
 * its attempts and waits listens for an abort. Listening on the shared signal itself put one listener
 * there per request in flight: past 10 (the parallelism, plus requests a task sends side by side, plus
 * retries waiting), Node printed a MaxListenersExceededWarning, on every cycle of a reconcile loop
 * against a failing service. Here each request gets its own controller instead, and the shared signal
 * gets one listener that aborts all of them: the attempts listen on the request's own signal, and the
 * listener on the shared one is taken off when the last request following it ends.
 */

/** The requests following one signal, and the one listener that aborts them. */
interface Fanout {
  followers: Set<AbortController>;
  onAbort: () => void;
}

const fanouts = new WeakMap<AbortSignal, Fanout>();

/**
 * Aborts `follower` with `signal`'s reason when `signal` aborts (at once if it already has), until
 * the returned function is called; call it when the request ends.
 */
export function followAbort(signal: AbortSignal, follower: AbortController): () => void {
  if (signal.aborted) {
    follower.abort(signal.reason);
    return () => undefined;
  }
  const fanout = fanouts.get(signal) ?? listen(signal);
  fanout.followers.add(follower);
  return () => {
    fanout.followers.delete(follower);
    // The last one out takes the listener off, so a long-lived signal ends as it started.
    if (fanout.followers.size === 0 && fanouts.get(signal) === fanout) {
      signal.removeEventListener('abort', fanout.onAbort);
      fanouts.delete(signal);
    }
  };
}

function listen(signal: AbortSignal): Fanout {
  const followers = new Set<AbortController>();
  const onAbort = () => {
    fanouts.delete(signal);
    for (const follower of followers) follower.abort(signal.reason);
  };
  const fanout = { followers, onAbort };
  fanouts.set(signal, fanout);
  signal.addEventListener('abort', onAbort, { once: true });
  return fanout;
}
