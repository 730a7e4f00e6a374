/**
 * The position-keeping parser (parse.ts, with yaml's syntax trees), loaded only when something needs
 * it: a file the fast path leaves alone, a problem to point at, a Connection's address. A valid,
 * plain manifest is read by the fast path alone, and `converge validate` of one never loads yaml
 * (about a tenth of its start-up, issue 20).
 */
import type { parseManifestText } from './parse.js';

type ParseManifestText = typeof parseManifestText;

let loaded: ParseManifestText | undefined;

/** Loads the parser (once); afterwards `positionParser()` returns it. */
export async function loadPositionParser(): Promise<ParseManifestText> {
  loaded ??= (await import('./parse.js')).parseManifestText;
  return loaded;
}

/** The parser if `loadPositionParser` has run, else undefined (positions then fall back to a document's start). */
export function positionParser(): ParseManifestText | undefined {
  return loaded;
}

/** Whether the position-keeping parser was loaded (by this run or an earlier one in the process). */
export function positionParserLoaded(): boolean {
  return loaded !== undefined;
}
