/**
 * Where a JSON.parse error points, as a line and a column: its message names a character position
 * (`at position 39`) or, for an unexpected token, none at all (`Unexpected token '}', "…" is not
 * valid JSON`), and a reader looks for a line, as in every other error.
 */
import { createRequire } from 'node:module';

import type { ParseError } from 'jsonc-parser';

type JsoncParser = typeof import('jsonc-parser');

// Read only when a file failed to parse: no command pays for it otherwise.
let jsonc: JsoncParser | undefined;
function jsoncParser(): JsoncParser {
  return (jsonc ??= createRequire(import.meta.url)('jsonc-parser') as JsoncParser);
}

export function jsonErrorLineColumn(
  text: string,
  error: Error,
): { line: number; column: number; named?: string } | undefined {
  const match = /at position (\d+)/.exec(error.message);
  const offset = match ? Number(match[1]) : firstErrorOffset(text);
  if (offset === undefined) return undefined;
  const before = text.slice(0, offset);
  return {
    line: before.split('\n').length,
    column: offset - before.lastIndexOf('\n'),
    // The words of the message that name the position, for a caller that replaces them.
    ...(match ? { named: match[0] } : {}),
  };
}

/** Where a strict JSON parser (no comments, no trailing commas) first stops, as JSON.parse does. */
function firstErrorOffset(text: string): number | undefined {
  const errors: ParseError[] = [];
  jsoncParser().parse(text, errors, { disallowComments: true, allowTrailingComma: false });
  return errors[0]?.offset;
}
