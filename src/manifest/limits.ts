/**
 * Hard limits that keep hostile or accidental input (a 50 MB log passed by mistake, a YAML bomb, a
 * file of 100k `[`) from hanging or crashing the CLI. Each limit is far above what a real manifest
 * needs, and each one produces a clear error instead of a stack overflow or an out-of-memory kill.
 */

const MiB = 1024 * 1024;

/** Largest manifest file we read. Checked with `stat` before reading, and again while reading. */
export const MAX_MANIFEST_FILE_BYTES = 5 * MiB;

/** Largest file a `${file:...}` reference may pull in, and the longest value references may make. */
export const MAX_INTERPOLATED_FILE_BYTES = 1 * MiB;

/**
 * Most text all of a manifest's `${file:...}` references may fill in, counted per reference: a
 * file read once is cached, but each reference copies its text, and 400 references to one 1 MiB
 * file in a 5 KB document held gigabytes and crashed the run.
 */
export const MAX_INTERPOLATED_TOTAL_BYTES = 16 * MiB;

/**
 * Deepest nesting of collections we accept. yaml's composer and ajv both recurse per level, and
 * yaml's parser slows down sharply (and ran out of memory at 1M levels) on deep flow collections,
 * so depth is checked on the token stream before parsing. Real manifests stay under ~15 levels.
 */
export const MAX_NESTING_DEPTH = 64;

/**
 * yaml's own guard against alias bombs ("billion laughs"); this is its default, kept explicit so a
 * later change of default cannot silently loosen it.
 */
export const MAX_ALIAS_COUNT = 100;

/**
 * How many values aliases and merge keys may add to a document that uses merge keys. A merge copies
 * the anchored map (a plain alias shares it), so yaml's alias count alone would let a large anchor
 * be copied a hundred times; a real manifest's merges add a few hundred values.
 */
export const MAX_MERGE_EXPANSION_NODES = 1_000_000;

/**
 * Most text one document may hold once its references are filled in and its aliases expanded (each
 * alias copies what it names when the object is sent): a 3 KB document of 99 aliases of a list of
 * fifteen 1 MiB references validated, then crashed the plan with "Invalid string length".
 */
export const MAX_DOCUMENT_TEXT = 8 * MiB;

/**
 * Whether the strings (keys too) of `value` hold more than `limit` characters, counting a shared
 * value (an alias) once per place it appears, as sending it would; stops as soon as they do.
 */
export function textExceeds(value: unknown, limit: number): boolean {
  let total = 0;
  const walk = (v: unknown): boolean => {
    if (typeof v === 'string') return (total += v.length) > limit;
    if (Array.isArray(v)) return v.some(walk);
    if (v !== null && typeof v === 'object')
      return Object.entries(v).some(([k, item]) => (total += k.length) > limit || walk(item));
    return false;
  };
  return walk(value);
}

/**
 * The UTF-8 size of `text` in bytes, as the limits in MiB are stated (a character of CJK text is 3
 * bytes, one UTF-16 unit). Counted only where it could matter: no unit is more than 3 bytes.
 */
export function utf8BytesOver(text: string, limit: number): boolean {
  if (text.length * 3 <= limit) return false;
  return text.length > limit || Buffer.byteLength(text, 'utf8') > limit;
}

/** Most text the files a manifest's objects name may hold in all, counted per object (load.ts). */
export const MAX_KIND_FILES_TOTAL = 64 * MiB;
