/**
 * BLAKE2b (RFC 7693) with a selectable digest length. node:crypto only offers the fixed 512-bit
 * variant (`blake2b512`), and BLAKE2b-256 is not a truncation of it (the digest length is part of
 * the parameter block), so the real registry's role Hash — BLAKE2b-256 — is computed here. Inputs
 * are a few hundred bytes, so plain BigInt arithmetic is fast enough.
 */

const MASK = (1n << 64n) - 1n;

const IV = [
  0x6a09e667f3bcc908n,
  0xbb67ae8584caa73bn,
  0x3c6ef372fe94f82bn,
  0xa54ff53a5f1d36f1n,
  0x510e527fade682d1n,
  0x9b05688c2b3e6c1fn,
  0x1f83d9abfb41bd6bn,
  0x5be0cd19137e2179n,
];

const SIGMA = [
  [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
  [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
  [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4],
  [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
  [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13],
  [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
  [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11],
  [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
  [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5],
  [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0],
];

const BLOCK_BYTES = 128;

function rotr(x: bigint, n: bigint): bigint {
  return ((x >> n) | (x << (64n - n))) & MASK;
}

function compress(h: bigint[], block: Uint8Array, bytesSoFar: bigint, last: boolean): void {
  const view = new DataView(block.buffer, block.byteOffset, BLOCK_BYTES);
  const m: bigint[] = [];
  for (let i = 0; i < 16; i++) m.push(view.getBigUint64(i * 8, true));
  const v = [...h, ...IV];
  v[12] = v[12]! ^ (bytesSoFar & MASK);
  v[13] = v[13]! ^ (bytesSoFar >> 64n);
  if (last) v[14] = v[14]! ^ MASK;

  const g = (a: number, b: number, c: number, d: number, x: bigint, y: bigint) => {
    v[a] = (v[a]! + v[b]! + x) & MASK;
    v[d] = rotr(v[d]! ^ v[a]!, 32n);
    v[c] = (v[c]! + v[d]!) & MASK;
    v[b] = rotr(v[b]! ^ v[c]!, 24n);
    v[a] = (v[a]! + v[b]! + y) & MASK;
    v[d] = rotr(v[d]! ^ v[a]!, 16n);
    v[c] = (v[c]! + v[d]!) & MASK;
    v[b] = rotr(v[b]! ^ v[c]!, 63n);
  };

  for (let round = 0; round < 12; round++) {
    const s = SIGMA[round % 10]!;
    const w = (i: number) => m[s[i]!]!;
    g(0, 4, 8, 12, w(0), w(1));
    g(1, 5, 9, 13, w(2), w(3));
    g(2, 6, 10, 14, w(4), w(5));
    g(3, 7, 11, 15, w(6), w(7));
    g(0, 5, 10, 15, w(8), w(9));
    g(1, 6, 11, 12, w(10), w(11));
    g(2, 7, 8, 13, w(12), w(13));
    g(3, 4, 9, 14, w(14), w(15));
  }
  for (let i = 0; i < 8; i++) h[i] = h[i]! ^ v[i]! ^ v[i + 8]!;
}

/** Unkeyed BLAKE2b of `data` with a digest of `outBytes` (1..64) bytes. */
export function blake2b(data: Uint8Array, outBytes = 64): Uint8Array {
  if (outBytes < 1 || outBytes > 64) throw new RangeError('BLAKE2b digest length must be 1..64 bytes');
  const h = [...IV];
  h[0] = h[0]! ^ (0x01010000n | BigInt(outBytes));

  let offset = 0;
  // Every block but the last is compressed as non-final; an empty input still has one (empty) final block.
  while (data.length - offset > BLOCK_BYTES) {
    compress(h, data.subarray(offset, offset + BLOCK_BYTES), BigInt(offset + BLOCK_BYTES), false);
    offset += BLOCK_BYTES;
  }
  const last = new Uint8Array(BLOCK_BYTES);
  last.set(data.subarray(offset));
  compress(h, last, BigInt(data.length), true);

  const out = new Uint8Array(64);
  const view = new DataView(out.buffer);
  for (let i = 0; i < 8; i++) view.setBigUint64(i * 8, h[i]!, true);
  return out.slice(0, outBytes);
}

/** BLAKE2b-256 over the concatenation of `parts` (what Go's `hash.Write` calls amount to). */
export function blake2b256(parts: readonly string[]): Uint8Array {
  return blake2b(Buffer.from(parts.join(''), 'utf8'), 32);
}
