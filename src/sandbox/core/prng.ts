/**
 * A small seeded pseudo-random generator (mulberry32) for fault decisions: the same seed gives the
 * same sequence, so a run with `--seed N` injects the same faults into the same request sequence.
 * Not for anything secret.
 */

/** The largest seed; seeds are 32-bit. */
export const MAX_SEED = 0xffff_ffff;

/** Returns a function yielding numbers in [0, 1), determined by `seed` alone. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
