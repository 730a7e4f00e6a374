/**
 * A 160-bit hash of a string as 40 hex digits, in plain JavaScript: the key under which the build
 * stores a schema's generated validator and the run looks it up (`schemaKey` in ./precompiled.ts).
 *
 * Not node:crypto: loading it is about 3 ms of every `converge validate` (issue 20), for a hash of
 * a few kilobytes of trusted text (schemas are code, never input). What the key must do is tell a
 * schema that changed since the build from the one the build saw; five independent 32-bit lanes
 * (multiplicative hashing over UTF-16 code units, each with its own seed and multiplier, finished
 * with MurmurHash3's avalanche step and the length) make an accidental match vanishingly unlikely.
 */
const SEEDS = [0x811c9dc5, 0x9e3779b9, 0x85ebca6b, 0xc2b2ae35, 0x27d4eb2f] as const;
const MULTIPLIERS = [0x01000193, 0x5bd1e995, 0xcc9e2d51, 0x1b873593, 0x165667b1] as const;

/** MurmurHash3's finaliser: every input bit flips each output bit with about even odds. */
function avalanche(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

export function hash160(text: string): string {
  let h0: number = SEEDS[0];
  let h1: number = SEEDS[1];
  let h2: number = SEEDS[2];
  let h3: number = SEEDS[3];
  let h4: number = SEEDS[4];
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    h0 = Math.imul(h0 ^ c, MULTIPLIERS[0]);
    h1 = Math.imul(h1 ^ c, MULTIPLIERS[1]);
    h2 = Math.imul(h2 ^ c, MULTIPLIERS[2]);
    h3 = Math.imul(h3 ^ c, MULTIPLIERS[3]);
    h4 = Math.imul(h4 ^ c, MULTIPLIERS[4]);
  }
  return [h0, h1, h2, h3, h4]
    .map((h) =>
      avalanche(h ^ text.length)
        .toString(16)
        .padStart(8, '0'),
    )
    .join('');
}
