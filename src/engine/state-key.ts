/**
 * The state key: the secret that keys the inventory's digests of write-only values and the MAC of
 * saved plans. It must carry at least 32 random bytes, written as hex or base64, wherever it comes
 * from (`CONVERGE_STATE_KEY` or `.converge/state.key`): a short or mistyped key would let anyone with
 * a plan file or an inventory guess the secrets behind the digests, or forge a plan.
 */
import { createHash } from 'node:crypto';
import { EngineError } from './errors.js';

export const MIN_STATE_KEY_BYTES = 32;

/**
 * Fewer distinct byte values than this and a key is not random: 32 random bytes take about 30
 * distinct values (fewer than 16 happens with a probability far below 1e-10), while a key typed as
 * `0000…`, `zzzz…` or `AAAA…=` (zero bytes in base64) takes one to three. Length alone cannot tell.
 */
export const MIN_DISTINCT_KEY_BYTES = 16;

/** A usable key and where it came from, for messages ("CONVERGE_STATE_KEY", a state.key path). */
export interface StateKey {
  readonly key: Buffer;
  /** A short fingerprint that names the key in plan files and messages without revealing it. */
  readonly id: string;
  readonly source: string;
}

const HEX = /^[0-9a-fA-F]+$/;
// Standard or URL-safe alphabet, padding optional.
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/**
 * The key bytes of `text` (surrounding blanks ignored), or an EngineError naming `source` and never
 * quoting the value. A value made only of hex digits is read as hex, so 63 hex digits are refused
 * rather than read as 47 bytes of base64.
 */
export function parseStateKey(text: string, source: string, fix: string): Buffer {
  const trimmed = text.trim();
  let key: Buffer | undefined;
  let why: string;
  if (HEX.test(trimmed)) {
    if (trimmed.length % 2 === 0 && trimmed.length >= MIN_STATE_KEY_BYTES * 2) {
      key = Buffer.from(trimmed, 'hex');
    }
    why = `it holds ${trimmed.length} hex digit${trimmed.length === 1 ? '' : 's'}, and a key needs an even number of at least ${MIN_STATE_KEY_BYTES * 2}`;
  } else if (BASE64.test(trimmed)) {
    const decoded = Buffer.from(trimmed.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    const canonical = decoded.toString('base64').replace(/=+$/, '');
    const given = trimmed.replace(/-/g, '+').replace(/_/g, '/').replace(/=+$/, '');
    if (canonical !== given) why = 'it is not valid base64';
    else if (decoded.length < MIN_STATE_KEY_BYTES)
      why = `it is base64 of ${decoded.length} bytes, and a key needs at least ${MIN_STATE_KEY_BYTES}`;
    else {
      key = decoded;
      why = '';
    }
  } else {
    why = trimmed === '' ? 'it is empty' : 'it is neither hex nor base64';
  }
  if (key) {
    const distinct = new Set(key).size;
    if (distinct >= MIN_DISTINCT_KEY_BYTES) return key;
    why = `it does not look random: its ${key.length} bytes take only ${distinct} distinct value${distinct === 1 ? '' : 's'}, and a key needs at least ${MIN_DISTINCT_KEY_BYTES} (32 random bytes take about 30)`;
  }
  throw new EngineError(
    `${source} is not a usable state key: ${why}. A state key is ${MIN_STATE_KEY_BYTES} or more random bytes as hex or base64 (make one with \`openssl rand -hex 32\`); ${fix}`,
  );
}

/** First 16 hex digits of SHA-256 over a fixed label and the key: enough to tell keys apart. */
export function stateKeyId(key: Buffer): string {
  return createHash('sha256').update('converge state key id\u0000').update(key).digest('hex').slice(0, 16);
}

export function stateKeyFrom(key: Buffer, source: string): StateKey {
  return { key, id: stateKeyId(key), source };
}
