/**
 * Untrusted text (a service's error message, a key written in a manifest) shown as one safe line.
 * Printed raw, such text could rewrite what a person sees: a newline followed by `::error …` is a
 * workflow command in a GitHub Actions log, ESC sequences move the cursor and erase lines on a
 * terminal (a forged "Plan: 0 to add"), `\r` overwrites the line, and bidi overrides reorder what is
 * displayed. Each such character is shown as a visible escape instead, so the text stays readable
 * and nothing in it acts.
 */

/**
 * C0 controls (newline, CR, tab and ESC among them), DEL, C1 controls (NEL, CSI); zero-width and
 * direction marks (U+200B–U+200F, U+061C), line and paragraph separators (U+2028, U+2029), bidi
 * embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069), the invisible operators
 * (U+2060–U+2064) and the byte-order mark; and the spaces that look like a space but are not one
 * (no-break U+00A0, the typographic U+2000–U+200A, U+202F, U+205F, ideographic U+3000, U+1680,
 * U+180E): `"a b" -> "a b"` would read as no change, and a pasted no-break space in a name or
 * value is exactly what a reviewer needs to see.
 */
const UNSAFE =
  /[\u0000-\u001f\u007f-\u00a0\u061c\u1680\u180e\u2000-\u200f\u2028-\u202f\u205f-\u2064\u2066-\u2069\u3000\ufeff]/g;

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** `text` with every character that could break or rewrite the line shown as an escape (`\n`, `\u001b`). */
export function printable(text: string): string {
  return text.replace(UNSAFE, (c) => NAMED[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
