/**
 * Expands `${env:NAME}` and `${file:path}` references inside one string value. `$${` is the escape
 * for a literal `${`. Several references may appear in one string; every bad one is reported.
 * The caller (prepare.ts) applies this to scalars while walking the YAML AST, so each error can
 * point at the exact value it came from.
 */

import type { EnvLookup } from './env-access.js';
import { MAX_INTERPOLATED_FILE_BYTES, utf8BytesOver } from './limits.js';

export interface InterpolationSources {
  /** A variable the operator exposed, or why the manifest may not have it. */
  env(name: string): EnvLookup;
  /** The contents of a file inside the manifest root, or why it cannot be used. */
  file(reference: string): Promise<{ ok: true; text: string } | { ok: false; reason: string }>;
}

export interface Expansion {
  value: string;
  /** Whether at least one reference was replaced (escapes alone do not count). */
  interpolated: boolean;
  errors: ExpansionError[];
}

export interface ExpansionError {
  message: string;
  /**
   * Which reference of the string it is (0 for the first `${` that is not an escape), so that the
   * caller can point at the reference in the source rather than at the start of the string.
   */
  ordinal: number;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const LITERAL_HINT = 'write $${...} for a literal "${"';

/** Cheap test so that the (async) expansion runs only for strings that need it. */
export function mayNeedExpansion(raw: string): boolean {
  return raw.includes('${');
}

export async function expandReferences(raw: string, sources: InterpolationSources): Promise<Expansion> {
  let value = '';
  let interpolated = false;
  const errors: ExpansionError[] = [];
  let ordinal = -1;
  const fail = (message: string) => errors.push({ message, ordinal });
  let index = 0;
  while (index < raw.length) {
    const start = raw.indexOf('${', index);
    if (start < 0) {
      value += raw.slice(index);
      break;
    }
    // `$${` is an escape: it stands for a literal `${`, and what follows is ordinary text.
    if (start - 1 >= index && raw[start - 1] === '$') {
      value += `${raw.slice(index, start - 1)}\${`;
      index = start + 2;
      continue;
    }
    value += raw.slice(index, start);
    ordinal++;
    const end = raw.indexOf('}', start + 2);
    if (end < 0) {
      fail(`unterminated reference "${raw.slice(start, start + 40)}": missing "}" (${LITERAL_HINT})`);
      value += raw.slice(start);
      break;
    }
    const reference = raw.slice(start, end + 1);
    const body = raw.slice(start + 2, end);
    const colon = body.indexOf(':');
    const source = colon < 0 ? body : body.slice(0, colon);
    const argument = colon < 0 ? '' : body.slice(colon + 1);
    index = end + 1;

    if (source === 'env' && ENV_NAME.test(argument)) {
      const found = sources.env(argument);
      if ('value' in found) {
        value += found.value;
        interpolated = true;
      } else {
        const reason =
          'refused' in found
            ? found.refused
            : `environment variable ${argument} is not set${found.suggestion ? ` (names are case-sensitive: did you mean ${found.suggestion}?)` : ''}`;
        fail(`${reason} (referenced as ${reference})`);
        value += reference;
      }
    } else if (source === 'env') {
      fail(
        `invalid environment variable name in ${reference}: use letters, digits and underscores, not starting with a digit`,
      );
      value += reference;
    } else if (source === 'file' && argument.trim() !== '') {
      const file = await sources.file(argument);
      if (file.ok) {
        value += file.text;
        interpolated = true;
      } else {
        fail(`cannot use ${reference}: ${file.reason}`);
        value += reference;
      }
    } else if (source === 'file') {
      fail(`empty file path in ${reference}`);
      value += reference;
    } else {
      fail(`unknown reference ${reference}: use \${env:NAME} or \${file:path} (${LITERAL_HINT})`);
      value += reference;
    }
  }
  // One value made of many references (the same file four hundred times) is refused as a whole file
  // over the limit would be: at its last reference.
  const oversized = interpolated && utf8BytesOver(value, MAX_INTERPOLATED_FILE_BYTES);
  if (oversized && errors.length === 0)
    fail(
      `the value is ${sizeOver(Buffer.byteLength(value, 'utf8'), MAX_INTERPOLATED_FILE_BYTES)} once its references are filled in; a value may hold at most ${MAX_INTERPOLATED_FILE_BYTES / 1024 / 1024} MiB`,
    );
  return {
    value: errors.length > 0 && oversized ? raw : value,
    interpolated,
    errors,
  };
}

/**
 * Where each reference of `raw` starts (the index of its `${`), escapes left out, found as
 * expandReferences finds them: the n-th is the one an error with ordinal n is about.
 */
export function referenceStarts(raw: string): number[] {
  return references(raw).map((r) => r.start);
}

/** Each reference of `raw` as written (`${env:A}`, or the rest of the text when unterminated), escapes left out. */
export function referenceTexts(raw: string): string[] {
  return references(raw).map((r) => r.text);
}

function references(raw: string): { start: number; text: string }[] {
  const found: { start: number; text: string }[] = [];
  let index = 0;
  while (index < raw.length) {
    const start = raw.indexOf('${', index);
    if (start < 0) break;
    if (start - 1 >= index && raw[start - 1] === '$') {
      index = start + 2;
      continue;
    }
    const end = raw.indexOf('}', start + 2);
    found.push({ start, text: end < 0 ? raw.slice(start) : raw.slice(start, end + 1) });
    if (end < 0) break;
    index = end + 1;
  }
  return found;
}

/**
 * A size over `limit` as MiB to one decimal, or in bytes where that would read as the limit itself
 * ("1.0 MiB …; at most 1 MiB" said of a value one byte over).
 */
function sizeOver(bytes: number, limit: number): string {
  const mib = (bytes / 1024 / 1024).toFixed(1);
  return Number(mib) * 1024 * 1024 > limit ? `${mib} MiB` : `${bytes} bytes (${bytes - limit} over)`;
}
