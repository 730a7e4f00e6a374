/**
 * Shamir's secret sharing as the real service uses it (`shamir/shamir.go`, `vault/rekey.go`), over
 * `shamir-secret-sharing`, whose field (GF(2^8), polynomial 0x11b) and share layout (`[y1..yN, x]`,
 * one byte of overhead) are the real ones, so shares move between the two.
 *
 * The real service never splits for one share and never combines for a threshold of one: a single
 * share is the key itself. The library refuses both cases, so they are handled here.
 *
 * The library silently returns a wrong value for too few or mismatched shares; callers compare the
 * result with a key-check value (`seal.ts`) rather than trusting it.
 */
import { combine, split } from 'shamir-secret-sharing';

/** The recovery key's length: the real barrier's `GenerateKey` (AES-256). */
export const KEY_BYTES = 32;
/** One x coordinate appended to every share (`shamir.ShareOverhead`). */
export const SHARE_OVERHEAD = 1;
/**
 * What a submitted key may measure (`Core.BarrierKeyLength`: the barrier's 16..32 bytes plus the
 * overhead), checked by the HTTP layer to choose hex or base64 and by the core to refuse a key.
 */
export const MIN_KEY_BYTES = 16;
export const MAX_KEY_BYTES = 32 + SHARE_OVERHEAD;

/** The library checks `constructor === Uint8Array`, which a Buffer fails. */
const plain = (bytes: Uint8Array): Uint8Array => new Uint8Array(bytes);

/** `shares` parts of `key` of which `threshold` rebuild it; one share is the key itself. */
export async function splitKey(key: Uint8Array, shares: number, threshold: number): Promise<Uint8Array[]> {
  if (shares === 1) return [plain(key)];
  return split(plain(key), shares, threshold);
}

/** Why the library refused to combine, in the real service's words (`shamir.Combine`). */
const COMBINE_ERRORS: [RegExp, string][] = [
  [/at least 2 bytes/, 'parts must be at least two bytes'],
  [/at least 2/, 'less than two parts cannot be used to reconstruct the secret'],
  [/same byte length/, 'all parts must be the same length'],
  [/duplicate/, 'duplicate part detected'],
];

export class CombineError extends Error {}

/**
 * The key `parts` rebuild: with a threshold of one the first part is the key; otherwise Shamir's
 * combination. Throws `CombineError` with the real service's text when the parts cannot be combined
 * (different lengths, the same x twice); a wrong but well-formed set returns a wrong key.
 */
export async function combineKey(parts: Uint8Array[], threshold: number): Promise<Uint8Array> {
  if (threshold === 1) return plain(parts[0]!);
  try {
    return await combine(parts.map(plain));
  } catch (err) {
    const message = (err as Error).message;
    const known = COMBINE_ERRORS.find(([re]) => re.test(message));
    throw new CombineError(known ? known[1] : message);
  }
}

/**
 * A submitted key as the HTTP layer decodes it (`http/sys_rekey.go`): hex when it is valid hex of an
 * acceptable length, otherwise standard base64 (a string that is both is taken as base64 when its hex
 * reading has the wrong length). Undefined when it is neither.
 */
export function decodeKey(text: string): Uint8Array | undefined {
  if (/^(?:[0-9a-fA-F]{2})*$/.test(text)) {
    const bytes = Buffer.from(text, 'hex');
    if (bytes.length >= MIN_KEY_BYTES && bytes.length <= MAX_KEY_BYTES) return plain(bytes);
  }
  // Go's StdEncoding: padded, standard alphabet; it skips CR and LF.
  const compact = text.replace(/[\r\n]/g, '');
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(compact)) return undefined;
  return plain(Buffer.from(compact, 'base64'));
}

export const toHex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');
export const toBase64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64');
export const fromHex = (text: string): Uint8Array => plain(Buffer.from(text, 'hex'));
