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
// Each code point is matched alone, combining ones (the variation selectors) included: on purpose.
/* eslint-disable no-misleading-character-class */
const UNSAFE =
  /[\p{Cf}\p{Default_Ignorable_Code_Point}\u0000-\u001f\u007f-\u00a0\u034f\u115f\u1160\u1680\u17b4\u17b5\u180b-\u180f\u2000-\u200f\u2028-\u202f\u205f-\u206f\u3000\u3164\ufe00-\ufe0f\uffa0\u{e0100}-\u{e01ef}]|##(?:vso)?\[/giu;
// Also invisible, and so escaped: the soft hyphen, the grapheme joiner, the Hangul fillers, the
// variation selectors (U+FE00–U+FE0F and the supplement), the tag characters (U+E0000–U+E007F) and
// the interlinear annotations. Put between the letters of a token, they display it whole while no
// search for the token (the scrubber's, GitHub's log masking) finds it.
//
// `##[` anywhere in a line is the older form of a GitHub Actions workflow command (`##[error]`,
// `##[stop-commands]`, which would silence Converge's own annotations): shown as `#\#[`.

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** `text` with every character that could break or rewrite the line shown as an escape (`\n`, `\u001b`). */
export function printable(text: string): string {
  return text.replace(UNSAFE, (c) => {
    const named = NAMED[c];
    if (named !== undefined) return named;
    // `##[` and Azure's `##vso[` act anywhere in a line: the second # is shown escaped.
    if (c.startsWith('##')) return `#\\${c.slice(1)}`;
    const code = c.codePointAt(0)!;
    return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/**
 * What may sit between a token's letters and leave it readable: format characters (zero-width
 * spaces and joiners, direction marks, the soft hyphen, tags), combining and enclosing marks
 * (variation selectors, an underline), the Hangul fillers and the braille blank. A copy of a
 * service's text without them is searched for secrets too (scrub.ts), and taken only when it finds
 * more; the text shown otherwise keeps them, for printable() to escape.
 */
export const INVISIBLE =
  /[\p{Cf}\p{Default_Ignorable_Code_Point}\p{Mn}\p{Me}\u115f\u1160\u2800\u3164\uffa0]/gu;

/**
 * Characters a JSON document on standard output must not carry raw, though JSON allows them in
 * strings: C1 controls (U+009B starts a terminal sequence), format characters (direction overrides),
 * the line and paragraph separators. Written as JSON escapes they read back as the same value.
 */
const JSON_UNSAFE = /[\u007f-\u009f\u2028\u2029\p{Cf}]/gu;
/* eslint-enable no-misleading-character-class */

/**
 * `JSON.stringify`, made inert for a CI log or a terminal: what `--json` prints is read back by
 * programs, yet shown in logs too, where a service's `##[error]` (or Azure's `##vso[`) in a string
 * acted as a workflow command and raw U+009B as a terminal sequence. The escapes decode to the
 * same value, so a program reading the output sees no difference.
 */
export function jsonOut(value: unknown, replacer?: null, space?: number): string {
  const text = JSON.stringify(value, replacer ?? undefined, space) ?? 'null';
  return (
    text
      // Each UTF-16 unit of the character (an astral one is a surrogate pair), as JSON writes them.
      .replace(JSON_UNSAFE, (c) =>
        Array.from(
          { length: c.length },
          (_, i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`,
        ).join(''),
      )
      .replace(/##(?=(?:vso)?\[)/gi, '#\\u0023')
  );
}
