/**
 * The one scrubber for everything a service wrote that a person may see: error messages, a
 * service's own message and details, a sanitised cause, retry lines. A hostile or careless service
 * may echo a refused request back in any encoding, so each secret is removed in every form it can
 * take on the way back:
 *
 * - raw;
 * - JSON-escaped, as it sits inside a JSON string (standard escaping, Go's `\u003c` style for `<>&`
 *   and non-ASCII, `\/` for `/`, and escaped twice for a JSON body quoted inside a JSON message);
 * - URL-encoded (`encodeURIComponent`, and form encoding with `+` for spaces), percent digits in
 *   either case;
 * - base64 (standard and URL-safe, padded or not) of any of the forms above, at any of the three
 *   byte alignments it can have inside a longer base64 run: a run that holds one is replaced whole,
 *   since its neighbouring characters carry bits of the secret too.
 *
 * Scrub first, truncate after (`scrubAndTruncate`): cutting first can leave the first half of a
 * secret that no longer matches anything.
 */
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
  const forms = values.flatMap(textForms);
  const literal = new RegExp(
    [...new Set(forms.map((f) => f.pattern))].sort((a, b) => b.length - a.length).join('|'),
    'g',
  );
  const cores = [...new Set(forms.flatMap((f) => base64Cores(f.text)))];
  const matcher = (text: string) =>
    text
      .replace(BASE64_RUN, (run) => (cores.some((core) => run.includes(core)) ? REDACTED : run))
      .replace(literal, REDACTED);
  // A run scrubs a handful of secret sets; the bound only keeps a long-lived library user safe.
  if (cache.size > 100) cache.clear();
  cache.set(key, matcher);
  return matcher;
}

interface TextForm {
  /** The form as bytes would carry it (for its base64 forms). */
  text: string;
  /** A regular expression matching it, escape digits in either case. */
  pattern: string;
}

/** Every textual form of one secret. */
function textForms(secret: string): TextForm[] {
  const json = jsonEscape(secret);
  const jsonTexts = [
    json,
    goJsonEscape(secret),
    json.replace(/\//g, '\\/'),
    goJsonEscape(secret).replace(/\//g, '\\/'),
    jsonEscape(json),
  ];
  const urlTexts = [
    encodeURIComponent(secret),
    encodeURIComponent(secret).replace(/%20/g, '+'),
    new URLSearchParams({ s: secret }).toString().slice(2),
  ];
  const forms: TextForm[] = [{ text: secret, pattern: escapeRegExp(secret) }];
  for (const text of jsonTexts) forms.push({ text, pattern: hexInsensitive(text, /\\u[0-9a-fA-F]{4}/g) });
  for (const text of urlTexts) forms.push({ text, pattern: hexInsensitive(text, /%[0-9a-fA-F]{2}/g) });
  return forms;
}

/** Inside a JSON string: what `JSON.stringify` writes between the quotes. */
function jsonEscape(value: string): string {
  return JSON.stringify(value).slice(1, -1);
}

/** Go's `encoding/json` (the services' language): also `<`, `>`, `&` and non-ASCII as `\uXXXX`. */
function goJsonEscape(value: string): string {
  return jsonEscape(value).replace(
    /[<>&\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** A regular expression for `text` in which the hex digits of each escape (`\u00e9`, `%2F`) match either case. */
function hexInsensitive(text: string, escapes: RegExp): string {
  let out = '';
  let last = 0;
  for (const m of text.matchAll(escapes)) {
    out += escapeRegExp(text.slice(last, m.index));
    out += [...m[0]]
      .map((c) => (/[a-fA-F]/.test(c) ? `[${c.toLowerCase()}${c.toUpperCase()}]` : escapeRegExp(c)))
      .join('');
    last = m.index + m[0].length;
  }
  return out + escapeRegExp(text.slice(last));
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
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
