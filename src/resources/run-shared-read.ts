/**
 * A read that one run's plan-time checks share with the read that compares (one directory
 * configuration read per mount, one workspace list per organization): whoever asks first starts it.
 * The comparing read takes the shared one at most once; a later read in the same run (the re-read
 * before an apply, to refuse a stale change) starts afresh, so it never sees a plan-time answer.
 * Keyed by the run's context, so a later run reads again.
 */
import { type KindContext, runContextOf } from './contract.js';

interface Shared<T> {
  value: T;
  taken: boolean;
}

export class RunSharedRead<T> {
  private readonly runs = new WeakMap<KindContext, Map<string, Shared<T>>>();

  private of(ctx: KindContext): Map<string, Shared<T>> {
    // The run's, not a change's context made from it: every change of the run shares its reads.
    const run = runContextOf(ctx);
    let map = this.runs.get(run);
    if (!map) this.runs.set(run, (map = new Map()));
    return map;
  }

  /** The run's read under `id`, started now if nobody asked yet. */
  shared(ctx: KindContext, id: string, start: () => T): T {
    const map = this.of(ctx);
    let shared = map.get(id);
    if (!shared) map.set(id, (shared = { value: start(), taken: false }));
    return shared.value;
  }

  /** The run's shared read the first time, a fresh one after that (which later checks share too). */
  take(ctx: KindContext, id: string, start: () => T): T {
    const map = this.of(ctx);
    const shared = map.get(id);
    if (shared && !shared.taken) {
      shared.taken = true;
      return shared.value;
    }
    const value = start();
    map.set(id, { value, taken: true });
    return value;
  }
}

/** The id of a read of one scope (a mount, an organization) on one connection. */
export function sharedReadId(connection: string | undefined, scope: string): string {
  return `${connection ?? ''}\u0000${scope}`;
}
