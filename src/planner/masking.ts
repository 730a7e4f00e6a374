/**
 * Secret attributes, wherever they sit: a kind names them as dotted paths (`bindpass`, `tls.key`,
 * `users.password`, `env.*`), lists are passed through (a path names the attribute in every item),
 * and `*` matches any key. Masking replaces the values by `(sensitive value)` in rendered attributes
 * and attribute diffs; `secretValues` collects the values themselves so that error messages can be
 * scrubbed of them.
 */
import {
  type AnyResourceKind,
  type AttributeDiff,
  hasSensitiveAttributes,
  writeOnlyPaths,
} from '../resources/contract.js';
import { MIN_SENSITIVE_VALUE_CHARS } from '../common/allow-list.js';
import { literalAlternation, replaceOverlapping } from '../common/replace-overlapping.js';
import { scrubSecrets } from '../common/scrub.js';
import { pathParts } from '../resources/diff-path.js';
import { SENSITIVE } from './render/format.js';

type Segments = readonly string[];

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Every secret path of a kind: its sensitive and its write-only attributes. */
export function secretPaths(kind: AnyResourceKind): readonly Segments[] {
  // Asked once per planned object: split each kind's paths once.
  let paths = secretPathsByKind.get(kind);
  if (!paths) {
    paths = [...(hasSensitiveAttributes(kind) ? kind.sensitive : []), ...writeOnlyPaths(kind)].map((p) =>
      p.split('.'),
    );
    secretPathsByKind.set(kind, paths);
  }
  return paths;
}

const secretPathsByKind = new WeakMap<AnyResourceKind, Segments[]>();

/** The value with everything under `pattern` replaced by the marker. */
function maskValue(value: unknown, pattern: Segments): unknown {
  if (pattern.length === 0) return value === undefined ? value : SENSITIVE;
  if (Array.isArray(value)) return value.map((item) => maskValue(item, pattern));
  if (!isObject(value)) return value;
  const [head, ...rest] = pattern;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = head === '*' || head === k ? maskValue(v, rest) : v;
  return out;
}

export function maskAttributes(
  paths: readonly Segments[],
  attrs: Record<string, unknown>,
): Record<string, unknown> {
  let masked: unknown = attrs;
  for (const p of paths) masked = maskValue(masked, p);
  return masked as Record<string, unknown>;
}

/**
 * Diff paths are dotted keys, with `[i]`/`[key]` for items and `["a.b"]` for map keys (diff-path.ts):
 * compared as plain segments, list indexes dropped.
 */
function diffSegments(path: string): string[] {
  const segments: string[] = [];
  for (const part of pathParts(path)) {
    if (part.type === 'name') segments.push(part.name);
    else if (part.type === 'key') segments.push(part.key);
    else if (part.selector !== '' && !/^\d+$/.test(part.selector)) segments.push(part.selector);
  }
  return segments;
}

/** How a secret path relates to a diff path: the diff is the secret (or inside it), or holds it. */
function relate(diffPath: Segments, pattern: Segments): 'inside' | { rest: Segments } | undefined {
  const n = Math.min(diffPath.length, pattern.length);
  for (let i = 0; i < n; i++) if (pattern[i] !== '*' && pattern[i] !== diffPath[i]) return undefined;
  return diffPath.length >= pattern.length ? 'inside' : { rest: pattern.slice(diffPath.length) };
}

export function maskDiffs(paths: readonly Segments[], diffs: AttributeDiff[]): AttributeDiff[] {
  if (paths.length === 0) return diffs;
  return diffs.map((d) => {
    const segments = diffSegments(d.path);
    let out = d;
    for (const p of paths) {
      const relation = relate(segments, p);
      if (relation === undefined) continue;
      const { before, after, ...rest } = out;
      if (relation === 'inside') {
        out = {
          ...rest,
          sensitive: true,
          ...(before !== undefined ? { before: SENSITIVE } : {}),
          ...(after !== undefined ? { after: SENSITIVE } : {}),
        };
      } else {
        out = {
          ...rest,
          ...(before !== undefined ? { before: maskValue(before, relation.rest) } : {}),
          ...(after !== undefined ? { after: maskValue(after, relation.rest) } : {}),
        };
      }
    }
    return out;
  });
}

/** The values at a path, for scrubbing: strings and numbers, however deep. */
function valuesAt(value: unknown, pattern: Segments, found: string[]): void {
  if (Array.isArray(value)) {
    for (const item of value) valuesAt(item, pattern, found);
    return;
  }
  if (pattern.length === 0) {
    if (typeof value === 'string' && value !== '') found.push(value);
    else if (typeof value === 'number') found.push(String(value));
    else if (isObject(value)) for (const v of Object.values(value)) valuesAt(v, [], found);
    return;
  }
  if (!isObject(value)) return;
  const [head, ...rest] = pattern;
  for (const [k, v] of Object.entries(value)) if (head === '*' || head === k) valuesAt(v, rest, found);
}

export function secretValues(paths: readonly Segments[], spec: unknown): string[] {
  const found: string[] = [];
  for (const p of paths) valuesAt(spec, p, found);
  // Longest first, so a secret that contains another is replaced whole.
  return [...new Set(found)].sort((a, b) => b.length - a.length);
}

/** The text with every secret value replaced by the marker. */
export function scrub(text: string, secrets: readonly string[]): string {
  // Values shorter than three characters would blank out ordinary words; kinds validate lengths.
  const long = secrets.filter((s) => s.length >= 3);
  if (long.length === 0) return text;
  return replaceOverlapping(text, new RegExp(literalAlternation(long), 'g'), SENSITIVE);
}

/** The value at a dotted path of a spec (lists are not walked: write-only values are scalars). */
export function valueAtPath(spec: unknown, path: string): unknown {
  let value: unknown = spec;
  for (const key of path.split('.')) {
    if (!isObject(value)) return undefined;
    value = value[key];
  }
  return value;
}

/**
 * A secret is masked where the manifest copies it, not only in its own attribute: the same
 * `${env:BINDPASS}` in a description (or a job's environment) would otherwise print the password in
 * a plan posted to a pull request. Shorter values are left alone: masking every `admin` or `true`
 * in a plan would hide more than it protects, and a kind's secret of that length is no secret.
 */
const MIN_COPIED_SECRET = 6;

/**
 * A secret as a kind may have normalised it: trimmed, and lower- or upper-cased as JavaScript does
 * it (`İ` lower-cases to two characters, which a case-insensitive pattern does not match).
 */
function normalForms(value: string): string[] {
  const trimmed = value.trim();
  return [...new Set([value, trimmed, trimmed.toLowerCase(), trimmed.toUpperCase(), value.toLowerCase()])];
}

/**
 * A value of a sensitive variable that is only a switch (a `VERIFY_TOKEN: "true"`) is not masked:
 * it would blank out every such word of the plan and protects nothing. A number may be a PIN.
 */
const PLAIN_WORD = /^(true|false|yes|no|on|off)$/i;

/** A value read from a sensitive variable is a secret by the operator's word: masked from this length. */
const MIN_DECLARED_SECRET = MIN_SENSITIVE_VALUE_CHARS;

/**
 * Whether a secret known by the operator's word (a sensitive variable's value, an entry named as
 * secret) is one whose copies are looked for: long enough, and not a switch word. Shorter, masking
 * its copies would blank out ordinary text.
 */
export function isMaskableSecret(value: string): boolean {
  const v = value.trim();
  return v.length >= MIN_DECLARED_SECRET && !PLAIN_WORD.test(v);
}

/** The manifest's secrets, compiled once into the matcher `maskCopies` takes. */
export interface SecretCopies {
  /** One alternation of every secret, longest first (a secret containing another is replaced whole). */
  pattern: RegExp;
  /** The secrets themselves, for scrubbing a service's text in every encoding (`maskMessage`). */
  values: readonly string[];
  /**
   * The pieces of secrets that hold commas (trimmed, lower case): a kind that takes a list as one
   * comma-separated string shows it split, so a text that is one whole piece (a list's item) is
   * masked. Only whole: masked inside any text, a piece that is a word (`production`) blanked that
   * word out of every description.
   */
  pieces: ReadonlySet<string>;
}

/** The secrets the manifest's objects carry (their kinds' secret paths), compiled to mask copies of. */
export function copiedSecrets(
  objects: readonly { key: { kind: string }; spec: unknown }[],
  lookup: (kind: string) => AnyResourceKind | undefined,
  /**
   * Secrets the manifest holds outside any kind's secret attributes: what it read from sensitive
   * variables (`CONVERGE_SENSITIVE_ENV`), a job's database password in its Env, say. Masked from
   * 4 characters, as the error scrubber masks a request's secrets.
   */
  declared: readonly string[] = [],
): SecretCopies | undefined {
  const values = objects.flatMap((o) => {
    const kind = lookup(o.key.kind);
    return kind ? secretValues(secretPaths(kind), o.spec) : [];
  });
  // A secret of several lines (a PEM key from `${file:…}`) is also masked line by line: a copy of it
  // need not be whole (the file's last line break left out, one line pasted), and a diff of text
  // shows it a line at a time.
  // Not a PEM armour line (`-----BEGIN CERTIFICATE-----`): every certificate has it, and a public one
  // beside a secret key showed its own first and last lines masked.
  const lines = [...values, ...declared].flatMap((v) =>
    v.includes('\n')
      ? v
          .split('\n')
          .map((l) => l.trim())
          .filter((l) => !PEM_ARMOUR.test(l))
      : [],
  );
  // Comma by comma too: a kind that takes a list as one comma-separated string (an LDAP
  // configuration's token_policies) shows it split, trimmed and sorted, and a secret holding commas
  // put there showed piece by piece. A text that is one whole piece is masked (`SecretCopies.pieces`).
  const pieces = new Set(
    [...values, ...declared]
      .flatMap((v) => (v.includes(',') ? v.split(',').map((p) => p.trim().toLowerCase()) : []))
      .filter((p) => p !== '' && !PLAIN_WORD.test(p)),
  );
  // Trimmed too: a kind may normalise what it is given (an LDAP group's policies are trimmed and
  // lower-cased), and the plan shows the value as the service will hold it.
  const long = [
    ...new Set([
      ...[...values, ...lines].flatMap(normalForms).filter((v) => v.length >= MIN_COPIED_SECRET),
      ...declared.flatMap(normalForms).filter(isMaskableSecret),
    ]),
  ];
  if (long.length === 0) return undefined;
  // One scan of each string whatever the number of secrets (300 users' passwords, say); in any
  // letter case, for the same reason as the trimming above.
  return { pattern: new RegExp(literalAlternation(long), 'gi'), values: long, pieces };
}

/** The first or last line of a PEM block: the same in every certificate and key of its type. */
const PEM_ARMOUR = /^-----(BEGIN|END) [A-Z0-9 ]+-----$/;

/**
 * A message a service may have written (an error, a plan problem): every secret masked as written,
 * and removed in every encoding a service may echo it in (JSON-escaped, URL-encoded, another letter
 * case, hex, base64, base32), as the HTTP layer removes a request's own secrets. A value the operator
 * marked sensitive reaches no request's list of secrets, so it is only caught here.
 */
export function maskMessage(text: string, secrets: SecretCopies): string {
  return scrubSecrets(maskText(text, secrets), secrets.values);
}

/** Whether the whole text is a piece of a secret that holds commas (`SecretCopies.pieces`). */
function isPiece(text: string, secrets: SecretCopies): boolean {
  return secrets.pieces.size > 0 && secrets.pieces.has(text.trim().toLowerCase());
}

/** The text with every copy of a secret replaced by the marker, overlapping copies included. */
export function maskText(text: string, secrets: SecretCopies): string {
  if (isPiece(text, secrets)) return SENSITIVE;
  return replaceOverlapping(text, secrets.pattern, SENSITIVE);
}

/** Whether any string in `value` (keys too) holds a copy of a secret: no copy of the value is made. */
export function holdsSecret(value: unknown, secrets: SecretCopies): boolean {
  if (typeof value === 'string') {
    if (isPiece(value, secrets)) return true;
    secrets.pattern.lastIndex = 0;
    return secrets.pattern.test(value);
  }
  if (Array.isArray(value)) return value.some((v) => holdsSecret(v, secrets));
  if (!isObject(value)) return false;
  return Object.entries(value).some(([k, v]) => holdsSecret(k, secrets) || holdsSecret(v, secrets));
}

/**
 * How many copies of each secret `value`'s strings (keys too) hold. Overlapping copies count too
 * (each match is looked for again one character on, as `replaceOverlapping` masks them), so a
 * secret whose start overlaps another's end is not missed.
 */
export function secretCounts(
  value: unknown,
  secrets: SecretCopies,
  found = new Map<string, number>(),
): Map<string, number> {
  if (typeof value === 'string') {
    if (isPiece(value, secrets)) {
      const piece = value.trim().toLowerCase();
      found.set(piece, (found.get(piece) ?? 0) + 1);
    }
    const pattern = secrets.pattern;
    pattern.lastIndex = 0;
    for (let match = pattern.exec(value); match; match = pattern.exec(value)) {
      const copy = match[0].toLowerCase();
      found.set(copy, (found.get(copy) ?? 0) + 1);
      pattern.lastIndex = match.index + 1;
    }
    pattern.lastIndex = 0;
  } else if (Array.isArray(value)) {
    for (const v of value) secretCounts(v, secrets, found);
  } else if (isObject(value)) {
    for (const [k, v] of Object.entries(value)) {
      secretCounts(k, secrets, found);
      secretCounts(v, secrets, found);
    }
  }
  return found;
}

/** `value` with every copy of a secret in its strings (keys too) replaced by the marker. */
export function maskCopies<T>(value: T, secrets: SecretCopies): T {
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return maskText(v, secrets);
    if (Array.isArray(v)) return v.map(walk);
    if (!isObject(v)) return v;
    const out: Record<string, unknown> = {};
    for (const [k, item] of Object.entries(v)) out[walk(k) as string] = walk(item);
    return out;
  };
  return walk(value) as T;
}
