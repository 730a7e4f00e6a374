/**
 * The one scrubber for everything a service wrote that a person may see: error messages, a
 * service's own message and details, a sanitised cause, retry lines. A hostile or careless service
 * may echo a refused request back in any encoding, so each secret is removed in every form it can
 * take on the way back:
 *
 * - raw;
 * - JSON-escaped, as it sits inside a JSON string, as any common encoder writes it: `<>&` as
 *   `\u003c` or raw (Go escapes them), non-ASCII as `\u00f6` or raw (Python's `ensure_ascii`
 *   escapes it, Go does not), `/` as `\/` or raw, in every combination; and escaped twice, for a
 *   JSON body quoted inside a JSON message;
 * - URL-encoded (`encodeURIComponent`, and form encoding with `+` for spaces);
 * - all of the above in any letter case: escape digits come in either case, a proxy may lower-case
 *   what it echoes, and hex (a rekey share) is the same secret in upper case;
 * - hex of the bytes of any of the forms above, in either case (`xxd -p`, Go's `%x`, a debug dump):
 *   a byte is two digits, so the secret's hex stands in a longer dump as it stands alone; and with
 *   its bytes separated (`39:66:2a`, `39 66 2a`, `39-66-2a`: a certificate fingerprint's form, Go's
 *   `% x`), where the whole separated run goes;
 * - base64 (standard and URL-safe, padded or not) of any of the forms above, at any of the three
 *   byte alignments it can have inside a longer base64 run: a run that holds one is replaced whole,
 *   since its neighbouring characters carry bits of the secret too;
 * - base32 (RFC 4648, padded or not, in either case, in the standard alphabet and in base32hex's)
 *   of any of the forms above, the same way at any of its five byte alignments.
 *
 * Scrub first, truncate after (`scrubAndTruncate`): cutting first can leave the first half of a
 * secret that no longer matches anything.
 */
import { literalAlternation, replaceOverlapping } from './replace-overlapping.js';
import { INVISIBLE } from './printable.js';

/**
 * A credential as a service may echo it in what it shows: as sent, and its bytes in hex and base64
 * (standard and URL-safe, padded or not). The error scrubber removes more encodings still; a plan's
 * every value is masked with one pattern, which these keep to a handful of alternatives.
 */
export function credentialForms(token: string): string[] {
  const bytes = Buffer.from(token, 'utf8');
  const base64 = bytes.toString('base64');
  return [
    ...new Set([
      token,
      bytes.toString('hex'),
      base64,
      base64.replace(/=+$/, ''),
      bytes.toString('base64url'),
      // A `%XX` per byte, and a dashed token (a UUID) without its dashes: the same token to a reader.
      [...bytes].map((b) => `%${b.toString(16).padStart(2, '0')}`).join(''),
      ...(token.includes('-') && token.replace(/-/g, '').length >= MIN_SECRET_LENGTH
        ? [token.replace(/-/g, '')]
        : []),
    ]),
  ];
}

export const REDACTED = '[redacted]';

/**
 * Shorter values are left alone: scrubbing them would shred ordinary words (and their encoded forms
 * match too much), and no real token or password is that short.
 */
export const MIN_SECRET_LENGTH = 4;

/**
 * Whether a token is looked for in what services show (echo detection): not a dev token that is
 * also a word (`root`, `password`, `devtoken`), which masking blanked from descriptions, user names,
 * lock reasons and role names. Real tokens are long (a UUID, `hvs.` and 90 more characters), or at
 * least mix letters and digits.
 */
export function tokenWorthLookingFor(token: string): boolean {
  if (token.length >= 16) return true;
  return token.length >= 8 && /[A-Za-z]/.test(token) && /[0-9]/.test(token);
}

/** The longest service message an error shows; an HTML error page would otherwise fill a screen. */
export const MAX_MESSAGE_LENGTH = 500;

/**
 * Many secrets shared by many scrubs (a run's sensitive values, scrubbed from every request's
 * errors), beside the few each scrub adds (a request's token and own secrets). Its matcher is built
 * once and applied after theirs: folded into each request's own set, every request with secrets of
 * its own built a matcher of hundreds again (300 failing writes took 6 s instead of under one).
 */
export class SecretSet {
  constructor(readonly values: readonly string[]) {}
}

export type Secrets = readonly (string | undefined | SecretSet)[];

const setMatchers = new WeakMap<SecretSet, ((text: string) => string) | undefined>();

function overlaps(loose: readonly (string | undefined)[], values: readonly string[]): boolean {
  return loose.some(
    (a) =>
      !!a &&
      a.length >= MIN_SECRET_LENGTH &&
      values.some((b) => b.length >= MIN_SECRET_LENGTH && a !== b && (a.includes(b) || b.includes(a))),
  );
}

/** Removes every form of every secret from `text`. */
export function scrubSecrets(text: string, secrets: Secrets): string {
  const first = scrubVisible(text, secrets);
  // Characters that display as nothing (or combine with the letter before), put between a token's
  // letters, hide it from the search while it still reads whole. What the first pass left is
  // searched again without them, for the secrets and their own such characters removed; that text
  // is taken only when it finds something more, so a text with no hidden secret keeps them all,
  // for printable() to show escaped.
  const stripped = first.replace(INVISIBLE, '');
  if (stripped === first) return first;
  const second = scrubVisible(stripped, [...secrets, ...strippedForms(secrets)]);
  return second !== stripped ? second : first;
}

/** Each secret without its invisible and combining characters, where that changes it. */
function strippedForms(secrets: Secrets): string[] {
  const forms: string[] = [];
  for (const s of secrets)
    for (const value of s instanceof SecretSet ? s.values : [s]) {
      if (!value) continue;
      const bare = value.replace(INVISIBLE, '');
      if (bare !== value && bare.length >= MIN_SECRET_LENGTH) forms.push(bare);
    }
  return forms;
}

function scrubVisible(text: string, secrets: Secrets): string {
  const loose: (string | undefined)[] = [];
  const sets: SecretSet[] = [];
  for (const s of secrets) {
    if (s instanceof SecretSet) sets.push(s);
    else loose.push(s);
  }
  // One secret inside another across the two (a token that holds a run's password) needs the one
  // pass that replaces overlapping matches whole: in two, the first leaves pieces of the other.
  if (sets.some((set) => overlaps(loose, set.values))) {
    const matcher = matcherFor([...loose, ...sets.flatMap((set) => set.values)]);
    return matcher ? matcher(text) : text;
  }
  const matcher = matcherFor(loose);
  let scrubbed = matcher ? matcher(text) : text;
  for (const set of sets) {
    if (!setMatchers.has(set)) setMatchers.set(set, matcherFor(set.values));
    const own = setMatchers.get(set);
    if (own) scrubbed = own(scrubbed);
  }
  return scrubbed;
}

/** `scrubSecrets`, then cut to `max` characters (with `…`), in that order. */
export function scrubAndTruncate(text: string, secrets: Secrets, max = MAX_MESSAGE_LENGTH): string {
  return truncate(scrubSecrets(text, secrets), max);
}

export function truncate(text: string, max = MAX_MESSAGE_LENGTH): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/**
 * Runs of base64 characters (both alphabets), with optional padding; base32's alphabet lies inside
 * them, and its padding runs to six `=`.
 */
const ENCODED_RUN = /[A-Za-z0-9+/_-]+=*/g;

/** Hex bytes with one separator between each two (`:`, `-` or a space), four bytes at least. */
const SEPARATED_HEX_RUN = /[0-9A-Fa-f]{2}([:\- ])[0-9A-Fa-f]{2}(?:\1[0-9A-Fa-f]{2}){2,}/g;

/** Every form of one secret, worked out once however many sets of secrets it is part of. */
interface SecretForms {
  /** Matched as they stand, in any letter case: the textual forms and their hex. */
  literals: readonly string[];
  /** What a base64 run holding the secret must contain (case-sensitive). */
  base64: readonly string[];
  /**
   * What a base32 run holding the secret must contain (upper case; a run is compared in upper case),
   * in both alphabets: base32hex's digits and letters lie inside the same run.
   */
  base32: readonly string[];
  /** The hex of the textual forms (lower case): a separated run is compared without its separators. */
  hex: readonly string[];
}

/**
 * The forms by secret: an error builds a matcher per set of secrets (a request's token with the
 * passwords of its body), and the same token joins many sets in a run.
 */
const formsCache = new Map<string, SecretForms>();

function formsOf(secret: string): SecretForms {
  const cached = formsCache.get(secret);
  if (cached) return cached;
  const texts = [...new Set(textForms(secret))];
  const hex = [...new Set(texts.map((t) => Buffer.from(t, 'utf8').toString('hex')))];
  const forms: SecretForms = {
    literals: [...new Set([...texts, ...hex])],
    base64: [...new Set(texts.flatMap(base64Cores))],
    base32: [
      ...new Set(
        texts.flatMap((t) => [...base32Cores(t, BASE32_ALPHABET), ...base32Cores(t, BASE32HEX_ALPHABET)]),
      ),
    ],
    hex,
  };
  // The bound only keeps a long-lived library user safe: a run's secrets number hundreds at most.
  if (formsCache.size > 1000) formsCache.clear();
  formsCache.set(secret, forms);
  return forms;
}

/** Built once per set of secrets, since an error scrubs several texts with the same set. */
const cache = new Map<string, ((text: string) => string) | undefined>();

/**
 * Longer secrets (a certificate bundle read from a file) are removed as written only: the pattern of
 * their every encoding (hex doubles a value) outgrew what a regular expression may hold, and the
 * scrub threw instead of scrubbing. No service echoes a kilobytes-long value re-encoded.
 */
const MAX_ENCODED_SECRET = 2048;

/** A scrub that removes each of `values` as written, and no encoding of it. */
function removedAsWritten(values: readonly string[]): (text: string) => string {
  return (text) => values.reduce((t, v) => t.split(v).join(REDACTED), text);
}

function matcherFor(secrets: readonly (string | undefined)[]): ((text: string) => string) | undefined {
  const all = [...new Set(secrets.filter((s): s is string => !!s && s.length >= MIN_SECRET_LENGTH))];
  if (all.length === 0) return undefined;
  const key = JSON.stringify(all);
  if (cache.has(key)) return cache.get(key);
  // By their UTF-8 size: an escape form (`\\u00e9`, `%C3%A9`) is several times a character's length.
  const isLong = (v: string) => Buffer.byteLength(v) > MAX_ENCODED_SECRET;
  const long = all.filter(isLong);
  const values = all.filter((v) => !isLong(v));
  const removeLong = removedAsWritten(long);
  if (values.length === 0) {
    cache.set(key, removeLong);
    return removeLong;
  }
  const forms = values.map(formsOf);
  const every = (pick: (f: SecretForms) => readonly string[]) => [...new Set(forms.flatMap(pick))];
  // Case-insensitive: escape digits come in either case (`\u00e9`, `%2F`), a proxy may lower-case
  // what it echoes, and a hex secret (a rekey share) or hex of one is the same bytes in upper case.
  let literal: RegExp;
  try {
    literal = new RegExp(literalAlternation(every((f) => f.literals)), 'gi');
  } catch {
    // Too large a pattern after all (many long secrets together): every secret is removed as
    // written, never the error, whose message would quote the pattern and so every secret in it.
    const removeAll = removedAsWritten(all);
    cache.set(key, removeAll);
    return removeAll;
  }
  // Base64 is case-sensitive: another case is other bytes. Base32 is not: its alphabet has one case.
  const base64 = coreIndex(every((f) => f.base64));
  const base32 = coreIndex(every((f) => f.base32));
  const holds = (run: string) => base64(run) || base32(run.toUpperCase());
  const hex = coreIndex(every((f) => f.hex));
  const matcher = (text: string) =>
    replaceOverlapping(
      removeLong(text)
        .replace(SEPARATED_HEX_RUN, (run) =>
          // Every other character is a separator: the digits are pairs, so byte boundaries hold.
          hex(run.replace(/[^0-9A-Fa-f]/g, '').toLowerCase()) ? REDACTED : run,
        )
        .replace(ENCODED_RUN, (run) => (holds(run) ? REDACTED : run)),
      literal,
      REDACTED,
    );
  // A run scrubs a handful of secret sets; the bound only keeps a long-lived library user safe.
  if (cache.size > 100) cache.clear();
  cache.set(key, matcher);
  return matcher;
}

/**
 * Whether a run holds any of `cores`, looked up by their first four characters: the cores of a few
 * hundred secrets number tens of thousands, and one regular expression of them took seconds to
 * compile (a plan's first masked error with 300 users' passwords), where this index takes
 * milliseconds. The four characters are packed into one number as the run is read (the alphabets
 * are ASCII, seven bits each), so a lookup costs no string.
 */
function coreIndex(cores: readonly string[]): (run: string) => boolean {
  const byStart = new Map<number, string[]>();
  for (const core of cores) {
    // Every core has MIN_SECRET_LENGTH (4) characters at least.
    const key = packed(core, 0);
    const list = byStart.get(key);
    if (list) list.push(core);
    else byStart.set(key, [core]);
  }
  if (byStart.size === 0) return () => false;
  return (run) => {
    let key = 0;
    for (let i = 0; i < run.length; i++) {
      key = ((key << 7) | (run.charCodeAt(i) & 0x7f)) & 0xfffffff;
      if (i < 3) continue;
      const candidates = byStart.get(key);
      if (candidates !== undefined && candidates.some((core) => run.startsWith(core, i - 3))) return true;
    }
    return false;
  };
}

/** Four ASCII characters from `at` as one number, as `coreIndex` reads a run. */
function packed(text: string, at: number): number {
  let key = 0;
  for (let i = at; i < at + 4; i++) key = (key << 7) | (text.charCodeAt(i) & 0x7f);
  return key;
}

/**
 * Which characters a JSON encoder writes as `\uXXXX` beyond what every encoder escapes (`"`, `\`,
 * controls), and whether it writes `/` as `\/`. Encoders differ: Go's `encoding/json` (the services'
 * language) escapes `<`, `>`, `&` (and U+2028/U+2029) but leaves non-ASCII raw; Python's
 * `ensure_ascii` escapes non-ASCII and DEL but not `<>&`; PHP escapes non-ASCII and `/`. Every
 * combination is a form.
 */
interface JsonStyle {
  html: boolean;
  nonAscii: boolean;
  slash: boolean;
}

const JSON_STYLES: readonly JsonStyle[] = [false, true].flatMap((html) =>
  [false, true].flatMap((nonAscii) => [false, true].map((slash) => ({ html, nonAscii, slash }))),
);

const STANDARD: JsonStyle = { html: false, nonAscii: false, slash: false };

/** Every textual (not base64) form of one secret. */
function textForms(secret: string): string[] {
  const json = JSON_STYLES.flatMap((style) => [
    jsonEscape(secret, style),
    // Escaped twice: the request body (which Converge wrote with JSON.stringify) quoted inside the
    // service's JSON message, or a body the service itself encoded and then quoted.
    jsonEscape(jsonEscape(secret, STANDARD), style),
    jsonEscape(jsonEscape(secret, style), style),
  ]);
  const url = [
    encodeURIComponent(secret),
    encodeURIComponent(secret).replace(/%20/g, '+'),
    new URLSearchParams({ s: secret }).toString().slice(2),
  ];
  // Escaped whole, not only where an encoder must: a JSON string of `\u` escapes, one per character,
  // and a URL of `%XX`, one per byte, are both valid and decode to the secret (a hostile service's).
  const whole = [
    secret.split('').map(unicodeEscape).join(''),
    [...Buffer.from(secret, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join(''),
  ];
  // A token of dashed groups (a UUID) without its dashes is the same token to whoever reads it.
  const undashed = secret.replace(/-/g, '');
  const bare = undashed !== secret && undashed.length >= MIN_SECRET_LENGTH ? [undashed] : [];
  return [secret, ...json, ...url, ...whole, ...bare];
}

/** `value` as one JSON encoder writes it between the quotes of a string. */
function jsonEscape(value: string, style: JsonStyle): string {
  let text = JSON.stringify(value).slice(1, -1);
  // Safe after stringify: a backslash of the value is already `\\`, so `/` stands for itself.
  if (style.slash) text = text.replace(/\//g, '\\/');
  if (style.html) text = text.replace(/[<>&\u2028\u2029]/g, unicodeEscape);
  if (style.nonAscii) text = text.replace(/[\u007f-\uffff]/g, unicodeEscape);
  return text;
}

function unicodeEscape(c: string): string {
  return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/**
 * The base64 characters that depend on nothing but `text`'s bytes, for each of the three byte
 * offsets at which it may start inside a longer encoded run, in both alphabets. Whatever surrounds
 * the secret, one of these appears in the run that carries it.
 */
function base64Cores(text: string): string[] {
  const bytes = Buffer.from(text, 'utf8');
  const cores: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    // Character i holds bits [6i, 6i+6): it depends on the secret alone when those bits lie inside it.
    const first = Math.ceil((8 * offset) / 6);
    const end = Math.floor((8 * (offset + bytes.length)) / 6);
    const core = encoded.slice(first, end);
    if (core.length < MIN_SECRET_LENGTH) continue;
    cores.push(core, core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return cores;
}

const BASE32_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
/** RFC 4648's "base32hex" (extended hex alphabet): DNSSEC's NSEC3 names, some ID schemes. */
const BASE32HEX_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUV';

/** RFC 4648 base32 in `alphabet`, unpadded (Node has no encoder for it). */
function base32(bytes: Uint8Array, alphabet: string): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = ((value << 8) | byte) & 0xfff;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  return out;
}

/**
 * As `base64Cores`, for base32: a character holds 5 bits, so the secret may start at any of five
 * byte offsets within a group of the run; each offset leaves the characters that depend on nothing
 * but the secret's bytes.
 */
function base32Cores(text: string, alphabet: string): string[] {
  const bytes = Buffer.from(text, 'utf8');
  const cores: string[] = [];
  for (let offset = 0; offset < 5; offset++) {
    const encoded = base32(Buffer.concat([Buffer.alloc(offset), bytes]), alphabet);
    const first = Math.ceil((8 * offset) / 5);
    const end = Math.floor((8 * (offset + bytes.length)) / 5);
    const core = encoded.slice(first, end);
    if (core.length >= MIN_SECRET_LENGTH) cores.push(core);
  }
  return cores;
}
