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
 * - base64 (standard and URL-safe, padded or not) of any of the forms above, at any of the three
 *   byte alignments it can have inside a longer base64 run: a run that holds one is replaced whole,
 *   since its neighbouring characters carry bits of the secret too.
 *
 * Scrub first, truncate after (`scrubAndTruncate`): cutting first can leave the first half of a
 * secret that no longer matches anything.
 */
import { literalAlternation, replaceOverlapping } from './replace-overlapping.js';

export const REDACTED = '[redacted]';

/**
 * Shorter values are left alone: scrubbing them would shred ordinary words (and their base64 forms
 * match too much), and no real token or password is that short.
 */
export const MIN_SECRET_LENGTH = 4;

/** The longest service message an error shows; an HTML error page would otherwise fill a screen. */
export const MAX_MESSAGE_LENGTH = 500;

type Secrets = readonly (string | undefined)[];

/** Removes every form of every secret from `text`. */
export function scrubSecrets(text: string, secrets: Secrets): string {
  const matcher = matcherFor(secrets);
  return matcher ? matcher(text) : text;
}

/** `scrubSecrets`, then cut to `max` characters (with `…`), in that order. */
export function scrubAndTruncate(text: string, secrets: Secrets, max = MAX_MESSAGE_LENGTH): string {
  return truncate(scrubSecrets(text, secrets), max);
}

export function truncate(text: string, max = MAX_MESSAGE_LENGTH): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** Runs of base64 characters (both alphabets), with optional padding. */
const BASE64_RUN = /[A-Za-z0-9+/_-]+={0,2}/g;

/** Built once per set of secrets, since an error scrubs several texts with the same set. */
const cache = new Map<string, ((text: string) => string) | undefined>();

function matcherFor(secrets: Secrets): ((text: string) => string) | undefined {
  const values = [...new Set(secrets.filter((s): s is string => !!s && s.length >= MIN_SECRET_LENGTH))];
  if (values.length === 0) return undefined;
  const key = JSON.stringify(values);
  if (cache.has(key)) return cache.get(key);
  const texts = [...new Set(values.flatMap(textForms))];
  // Case-insensitive: escape digits come in either case (`\u00e9`, `%2F`), a proxy may lower-case
  // what it echoes, and a hex secret (a rekey share) is the same secret in upper case.
  const literal = new RegExp(literalAlternation(texts), 'gi');
  // Base64 is case-sensitive: another case is other bytes.
  const core = new RegExp(literalAlternation([...new Set(texts.flatMap(base64Cores))]));
  const matcher = (text: string) =>
    replaceOverlapping(
      text.replace(BASE64_RUN, (run) => (core.test(run) ? REDACTED : run)),
      literal,
      REDACTED,
    );
  // A run scrubs a handful of secret sets; the bound only keeps a long-lived library user safe.
  if (cache.size > 100) cache.clear();
  cache.set(key, matcher);
  return matcher;
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
  return [secret, ...json, ...url];
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
