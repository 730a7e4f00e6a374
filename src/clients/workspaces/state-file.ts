/**
 * Reading a local state file before it is pushed. The service checks the upload against the fields
 * the client sends (`serial`, `md5`, `lineage`), so they are read from the very text that is uploaded,
 * and a file the service would refuse is refused here first, with an error that names the file.
 */
import { nodeCrypto } from '../../common/lazy-crypto.js';
import { jsonNestsDeeperThan } from '../../common/json-depth.js';
import { jsonErrorLineColumn } from '../../common/json-error-position.js';

export interface StateFileInfo {
  serial: number;
  lineage: string;
  /** The state format version: always 4 (written by the engine 0.12 and later). */
  version: number;
  /** Hex MD5 of the UTF-8 text, as the service's `md5` attribute wants it. */
  md5: string;
  /** Base64 of the UTF-8 text, the `state` attribute. */
  base64: string;
  /** Instances of managed resources (data sources are read, not managed, so they do not count). */
  resourceCount: number;
  /** The text as read: what is uploaded and what a download must give back. */
  text: string;
}

export class StateFileError extends Error {
  readonly source: string;

  constructor(source: string, problem: string) {
    super(`${source}: ${problem}`);
    this.name = 'StateFileError';
    this.source = source;
  }
}

/** The only state format Converge pushes; older ones would need the engine to upgrade them first. */
export const STATE_FORMAT_VERSION = 4;

/** Validates a format-4 state file; `source` (a path, usually) names it in errors. */
/**
 * Deepest nesting a state file may have: a resource's attributes nest as their provider's schema
 * does, a few dozen levels at most; deeper text (from a pull request's `state:` file or a download)
 * would overflow the stack of whatever walks it, its error message first.
 */
const MAX_STATE_NESTING = 128;

export function parseStateFile(text: string, source: string): StateFileInfo {
  if (jsonNestsDeeperThan(text, MAX_STATE_NESTING))
    throw new StateFileError(
      source,
      `not a state file: its JSON nests deeper than ${MAX_STATE_NESTING} levels`,
    );
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    // V8's message quotes the text around the error; a mistyped path may point at a secrets file,
    // so only the position is reported.
    throw new StateFileError(
      source,
      `not a state file: not valid JSON${jsonErrorPosition(text, err as Error)}`,
    );
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw new StateFileError(source, 'not a state file: expected a JSON object');
  const state = doc as Record<string, unknown>;

  if (state.version === undefined) throw new StateFileError(source, 'not a state file: it has no "version"');
  if (state.version !== STATE_FORMAT_VERSION) {
    throw new StateFileError(
      source,
      `state format version ${JSON.stringify(state.version)} is not supported; only version ${STATE_FORMAT_VERSION} (written by the engine 0.12 and later) can be pushed`,
    );
  }
  const serial = state.serial;
  if (serial === undefined) throw new StateFileError(source, 'the state has no "serial"');
  if (typeof serial !== 'number' || !Number.isSafeInteger(serial) || serial < 0)
    throw new StateFileError(
      source,
      `"serial" must be an integer of 0 or more, not ${JSON.stringify(serial)}`,
    );
  const lineage = state.lineage;
  if (lineage === undefined) throw new StateFileError(source, 'the state has no "lineage"');
  if (typeof lineage !== 'string' || lineage.trim() === '')
    throw new StateFileError(source, `"lineage" must be a non-empty string, not ${JSON.stringify(lineage)}`);

  const bytes = Buffer.from(text, 'utf8');
  return {
    serial,
    lineage,
    version: STATE_FORMAT_VERSION,
    md5: nodeCrypto().createHash('md5').update(bytes).digest('hex'),
    base64: bytes.toString('base64'),
    resourceCount: countManagedInstances(state.resources),
    text,
  };
}

function countManagedInstances(resources: unknown): number {
  if (!Array.isArray(resources)) return 0;
  let count = 0;
  for (const resource of resources) {
    const r = resource as { mode?: unknown; instances?: unknown } | null;
    if (r?.mode !== 'managed') continue;
    count += Array.isArray(r.instances) ? r.instances.length : 1;
  }
  return count;
}

/** ` (at line L, column C)` for a JSON.parse error that names a position, else nothing. */
function jsonErrorPosition(text: string, error: Error): string {
  const at = jsonErrorLineColumn(text, error);
  return at ? ` (at line ${at.line}, column ${at.column})` : '';
}
