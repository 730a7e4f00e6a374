/**
 * How deep JSON text nests, found without parsing it. V8's JSON.parse takes any depth, but the code
 * that walks a parsed value (comparison, masking, rendering, export) recurses once or more per level
 * and overflows the stack a few hundred levels down: a service answering, or a client sending, a
 * value nested thousands of levels deep would end a run with "Maximum call stack size exceeded".
 * Both ends refuse such text before parsing it, with a limit far above any real object.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/**
 * Whether `text` opens more than `max` arrays or objects inside one another. Linear: strings are
 * skipped whole (their brackets are not structure), and text too short to nest that deep is not
 * scanned at all. Invalid JSON is not judged here (JSON.parse reports it).
 */
export function jsonNestsDeeperThan(text: string, max: number): boolean {
  // Each level takes at least its opening character: shorter text cannot be deeper.
  if (text.length <= max) return false;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = closingQuote(text, i);
      if (i < 0) return false;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > max) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

/** The index of the quote closing the string opened at `open`; -1 when the text ends first. */
function closingQuote(text: string, open: number): number {
  for (let at = text.indexOf('"', open + 1); at >= 0; at = text.indexOf('"', at + 1)) {
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
  return -1;
}
