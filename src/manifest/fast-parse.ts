/**
 * The fast first parse of a manifest file: js-yaml's event stream turned straight into plain data,
 * without yaml's syntax tree and positions (composing them was most of a 10,000-document plan's CPU,
 * issue 20). It gives up, and the file takes the position-keeping pipeline (parse.ts, prepare.ts,
 * to-value.ts) instead, on anything that pipeline has a rule or a message for, so that every
 * problem is still reported by it with its file:line:col and its exact words.
 *
 * Takes the fast path: plain block and flow mappings and sequences; plain, quoted and block scalars;
 * comments; several documents with `---` / `...`; empty documents; CRLF line ends.
 * Takes the slow path (returns undefined): a syntax error of any kind; a byte order mark anywhere;
 * directives (`%YAML`, `%TAG`); anchors, aliases and merge keys (`<<`, quoted or not); tags, even
 * allowed ones; keys that are not strings (numbers, booleans, null, collections); keys that could
 * reach prototypes; duplicate keys; keys over a thousand characters; nesting deeper than FAST_PATH_MAX_DEPTH; a document that is not
 * a mapping; a document without a `kind` key or with one written as a block scalar.
 */
import { EVENT_ID, type Event, getScalarValue, parseEvents, type ScalarEvent, SCALAR_STYLE } from 'js-yaml';
import { MAX_NESTING_DEPTH } from './limits.js';
import { joinPointer } from './pointer.js';

/** A string value that holds `${`: expanded (or refused) by the loader, which knows the sources. */
export interface PendingInterpolation {
  /** The mapping or sequence that holds the value, and its key or index there. */
  holder: Record<string, unknown> | unknown[];
  key: string | number;
  pointer: string;
  raw: string;
}

export interface FastDocument {
  value: Record<string, unknown>;
  /** Offset of the `kind` key where yaml's node for it starts (at the quote of a quoted key). */
  kindOffset: number;
  interpolations: PendingInterpolation[];
}

/**
 * Half the slow path's limit: its nesting guard estimates block depth from indentation and may
 * undercount up to twice (nesting.ts), so a file within this depth never trips it; anything deeper
 * (no real manifest) is left to the slow path to judge.
 */
export const FAST_PATH_MAX_DEPTH = Math.floor(MAX_NESTING_DEPTH / 2);

/** Keys that, once in a plain object, can change or reach its prototype (prepare.ts refuses them). */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype', '<<']);

/** Thrown inside the builder to leave the fast path; never escapes fastParse. */
class SlowPath extends Error {}

interface MapFrame {
  kind: 'map';
  value: Record<string, unknown>;
  /** The key read, waiting for its value; undefined when a key comes next. */
  key: string | undefined;
  /** Where this collection hangs in its parent (undefined for a document's root). */
  segment: string | number | undefined;
}

interface SeqFrame {
  kind: 'seq';
  value: unknown[];
  segment: string | number | undefined;
}

type Frame = MapFrame | SeqFrame;

/**
 * The file's documents as plain data, or undefined when the file must take the slow path.
 * Empty documents are left out, as parse.ts leaves them out.
 */
export function fastParse(text: string): FastDocument[] | undefined {
  // yaml skips a leading BOM and counts it in its offsets; js-yaml may not: not worth matching.
  if (text.includes('\uFEFF')) return undefined;
  const documents: FastDocument[] = [];
  try {
    for (const [start, end] of chunks(text)) {
      const chunk = text.slice(start, end);
      build(chunk, parseEvents(chunk, { maxDepth: FAST_PATH_MAX_DEPTH }), start, documents);
    }
  } catch {
    // A syntax error (js-yaml's), or SlowPath: either way, yaml reads the file.
    return undefined;
  }
  return documents;
}

/**
 * About how much text is parsed at once. js-yaml's events for a whole 10,000-document file weighed
 * more than its data (216 MB peak for a warm plan, over the 200 MB target); in runs of 8 KB they
 * die young (172 MB). Measured cold, as the CLI runs: 8 KB runs cost about 0.33 s CPU on that file,
 * the whole file 0.27 s, but 64 KB to 1 MB runs 0.45–0.7 s (V8 optimises the parser later).
 */
const CHUNK_CHARS = 8 * 1024;

/**
 * The file cut into runs of whole documents, each starting at a `---` line: a document marker at
 * the start of a line ends whatever came before it in YAML (no scalar may hold one), so the runs
 * parse as the file does; where they would not (an unterminated quote before the cut), a run has a
 * syntax error and the file goes to the slow path.
 */
function* chunks(text: string): Generator<[number, number]> {
  let start = 0;
  while (start < text.length) {
    let cut = text.indexOf('\n---', start + CHUNK_CHARS);
    while (cut >= 0 && !/^[ \t\r\n]?$/.test(text.charAt(cut + 4))) cut = text.indexOf('\n---', cut + 4);
    const end = cut < 0 ? text.length : cut + 1;
    yield [start, end];
    start = end;
  }
}

/** Adds the documents of `text` (a run of the file starting at `offset`) to `documents`. */
function build(text: string, events: Event[], offset: number, documents: FastDocument[]): void {
  const stack: Frame[] = [];
  let current: FastDocument | undefined;
  let root: unknown = undefined;
  let rootSet = false;

  /** The JSON pointer of the value about to be placed in the top frame (only for interpolations). */
  const pointerOfNext = (): string => {
    let pointer = '';
    for (let i = 1; i < stack.length; i++) pointer = joinPointer(pointer, stack[i]!.segment!);
    const top = stack[stack.length - 1]!;
    return joinPointer(pointer, top.kind === 'map' ? top.key! : top.value.length);
  };

  /** Places a finished value in the top frame, or makes it the document's root. */
  const place = (value: unknown, rawString?: string): void => {
    const top = stack[stack.length - 1];
    if (!top) {
      root = value;
      rootSet = true;
      return;
    }
    if (top.kind === 'seq') {
      if (rawString !== undefined) pending(top.value, top.value.length, rawString);
      top.value.push(value);
      return;
    }
    const key = top.key!;
    if (rawString !== undefined) pending(top.value, key, rawString);
    top.value[key] = value;
    top.key = undefined;
  };

  const pending = (holder: PendingInterpolation['holder'], key: string | number, raw: string) => {
    if (!raw.includes('${')) return;
    current!.interpolations.push({ holder, key, pointer: pointerOfNext(), raw });
  };

  /** The segment a collection opened now will hang from in its parent. */
  const nextSegment = (): string | number | undefined => {
    const top = stack[stack.length - 1];
    if (!top) return undefined;
    return top.kind === 'map' ? top.key : top.value.length;
  };

  for (let i = 0; i < events.length; i++) {
    const event = events[i]!;
    // Let each event go once read: they outweigh the data built from them.
    (events as unknown[])[i] = undefined;
    switch (event.type) {
      case EVENT_ID.DOCUMENT:
        if (event.directives.length > 0) throw new SlowPath();
        current = { value: {}, kindOffset: -1, interpolations: [] };
        root = undefined;
        rootSet = false;
        break;
      case EVENT_ID.MAPPING:
      case EVENT_ID.SEQUENCE: {
        if (event.anchorStart !== -1 || event.tagStart !== -1) throw new SlowPath();
        const top = stack[stack.length - 1];
        // A collection as a key: not a plain string key.
        if (top?.kind === 'map' && top.key === undefined) throw new SlowPath();
        const segment = nextSegment();
        stack.push(
          event.type === EVENT_ID.MAPPING
            ? { kind: 'map', value: {}, key: undefined, segment }
            : { kind: 'seq', value: [], segment },
        );
        break;
      }
      case EVENT_ID.SCALAR: {
        if (event.anchorStart !== -1 || event.tagStart !== -1) throw new SlowPath();
        const top = stack[stack.length - 1];
        if (top?.kind === 'map' && top.key === undefined) {
          top.key = keyOf(text, event, top.value);
          if (stack.length === 1 && top.key === 'kind') current!.kindOffset = offset + keyOffset(event);
          break;
        }
        const value = scalarValue(text, event);
        place(value, typeof value === 'string' ? value : undefined);
        break;
      }
      case EVENT_ID.ALIAS:
        throw new SlowPath();
      case EVENT_ID.POP: {
        const frame = stack.pop();
        if (frame) {
          place(frame.value);
          break;
        }
        // The document ends. Empty documents (nothing, or a null scalar) are skipped; anything
        // else that is not a mapping with a kind is the slow path's to report.
        if (rootSet && root !== null) {
          if (!isPlainMapping(root) || current!.kindOffset < 0) throw new SlowPath();
          current!.value = root;
          documents.push(current!);
        }
        current = undefined;
        break;
      }
    }
  }
}

function isPlainMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * yaml refuses an implicit key whose `:` is more than 1024 characters after its start (js-yaml does
 * not); a key that long, or that far from the next `:`, is the slow path's to judge.
 */
const MAX_KEY_SPAN = 1000;

/** A mapping key: a string yaml would read as a string, new in its mapping, and harmless. */
function keyOf(text: string, event: ScalarEvent, mapping: Record<string, unknown>): string {
  if (event.valueStart >= 0) {
    const colon = text.indexOf(':', event.valueEnd);
    if (colon < 0 || colon - event.valueStart > MAX_KEY_SPAN) throw new SlowPath();
  }
  const key = scalarValue(text, event);
  if (typeof key !== 'string' || FORBIDDEN_KEYS.has(key) || Object.hasOwn(mapping, key)) {
    throw new SlowPath();
  }
  return key;
}

/** Where yaml's node for a key starts: at its opening quote when quoted. */
function keyOffset(event: ScalarEvent): number {
  if (event.style === SCALAR_STYLE.PLAIN) return event.valueStart;
  if (event.style === SCALAR_STYLE.SINGLE_QUOTED || event.style === SCALAR_STYLE.DOUBLE_QUOTED) {
    return event.valueStart - 1;
  }
  throw new SlowPath();
}

function scalarValue(text: string, event: ScalarEvent): unknown {
  const source = event.valueStart < 0 ? '' : getScalarValue(text, event);
  return event.style === SCALAR_STYLE.PLAIN ? resolvePlain(source) : source;
}

/**
 * A plain scalar as yaml's core schema reads it (yaml 2.9.1, schema 'core': null, bool, octal,
 * decimal and hex integers, .inf/.nan, floats; the first that matches wins, else a string), so that
 * both paths give the same values: `yes`/`no` stay strings, `0777` is 777, no timestamps.
 */
const PLAIN_NON_STRING_STARTS = '~nNtTfF0123456789+-.';

export function resolvePlain(source: string): unknown {
  // Most values are words: only these first characters can start anything but a string.
  if (source.length > 0 && !PLAIN_NON_STRING_STARTS.includes(source[0]!)) return source;
  if (/^(?:~|[Nn]ull|NULL)?$/.test(source)) return null;
  if (/^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/.test(source)) return source[0] === 't' || source[0] === 'T';
  if (/^0o[0-7]+$/.test(source)) return parseInt(source.substring(2), 8);
  if (/^[-+]?[0-9]+$/.test(source)) return parseInt(source, 10);
  if (/^0x[0-9a-fA-F]+$/.test(source)) return parseInt(source.substring(2), 16);
  if (/^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/.test(source)) {
    if (source.slice(-3).toLowerCase() === 'nan') return NaN;
    return source[0] === '-' ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  }
  if (/^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/.test(source)) return parseFloat(source);
  if (/^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/.test(source)) return parseFloat(source);
  return source;
}
