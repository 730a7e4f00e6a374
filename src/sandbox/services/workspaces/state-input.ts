/**
 * The body of `POST /workspaces/:id/state-versions`, decoded and checked against the raw state it
 * carries. Statuses (the spec lists 409, 412 and 422 without saying which condition gives which):
 * - 422: not a `state-versions` document, a missing or ill-typed attribute, a `state` (or `json-state`)
 *   that is not base64 of a version-4 state file (or of JSON);
 * - 412 (precondition failed): the request disagrees with the state it uploads: `md5` is not the MD5
 *   of the raw state, `serial` is not the state's serial, `lineage` is not the state's lineage.
 * The 409s (lock, history) need the workspace and are checked by the handler, between the 422s of
 * `decodeStateVersionBody` and the 412s of `checkPreconditions`.
 */
import { isObject } from './jsonapi.js';
import { invalidAttribute, WorkspacesError } from './model.js';
import { decodeBase64, md5Hex, parseStateFile, type StateFile } from './state-file.js';

export interface StateVersionInput {
  /** As sent (checked against the state by `checkPreconditions`). */
  serial: number;
  md5: string;
  lineage: string | null;
  /** The raw state file: base64 as sent, its bytes, and parsed. */
  stateB64: string;
  bytes: Buffer;
  state: StateFile;
  jsonStateB64: string | null;
  jsonStateOutputsB64: string | null;
  force: boolean;
  runId: string | null;
}

const attr = (name: string) => `/data/attributes/${name}`;

export function decodeStateVersionBody(body: unknown): StateVersionInput {
  if (!isObject(body) || !isObject(body.data))
    throw invalidAttribute('/data', 'The request body must be a JSON:API document with a data object');
  const data = body.data;
  if (data.type !== 'state-versions') throw invalidAttribute('/data/type', 'Type must be "state-versions"');
  const a = isObject(data.attributes) ? data.attributes : {};

  if (a.serial === undefined || a.serial === null)
    throw invalidAttribute(attr('serial'), "Serial can't be blank");
  if (!Number.isSafeInteger(a.serial) || (a.serial as number) < 0)
    throw invalidAttribute(attr('serial'), 'Serial must be a non-negative integer');
  const md5 = requiredString(a, 'md5', 'MD5');
  // The spec makes `state` required (the real API also takes uploads in two steps; not emulated).
  const stateB64 = requiredString(a, 'state', 'State');
  const lineage = optionalString(a, 'lineage', 'Lineage');
  const jsonStateB64 = optionalString(a, 'json-state', 'JSON state');
  const jsonStateOutputsB64 = optionalString(a, 'json-state-outputs', 'JSON state outputs');
  // go-tfe sends `"force": null` when not forcing.
  if (a.force !== undefined && a.force !== null && typeof a.force !== 'boolean')
    throw invalidAttribute(attr('force'), 'Force must be true or false');

  const bytes = decodeBase64(stateB64);
  if (!bytes) throw invalidAttribute(attr('state'), 'State is not valid base64');
  const state = parseStateFile(bytes);
  if (typeof state === 'string') throw invalidAttribute(attr('state'), state);
  for (const [key, value, label] of [
    ['json-state', jsonStateB64, 'JSON state'],
    ['json-state-outputs', jsonStateOutputsB64, 'JSON state outputs'],
  ] as const) {
    if (value === null) continue;
    const decoded = decodeBase64(value);
    if (!decoded || !isJson(decoded))
      throw invalidAttribute(attr(key), `${label} is not base64 of a JSON document`);
  }

  let runId: string | null = null;
  const run = isObject(data.relationships) ? data.relationships.run : undefined;
  if (isObject(run) && isObject(run.data)) {
    if (typeof run.data.id !== 'string')
      throw invalidAttribute('/data/relationships/run/data/id', 'Run id must be a string');
    runId = run.data.id;
  }

  return {
    serial: a.serial as number,
    md5: md5.toLowerCase(),
    lineage,
    stateB64,
    bytes,
    state,
    jsonStateB64,
    jsonStateOutputsB64,
    force: a.force === true,
    runId,
  };
}

/** 412 when the request's `md5`, `serial` or `lineage` disagree with the uploaded state itself. */
export function checkPreconditions(input: StateVersionInput): void {
  const actual = md5Hex(input.bytes);
  if (actual !== input.md5)
    throw preconditionFailed(`MD5 ${input.md5} does not match the MD5 of the uploaded state (${actual})`);
  if (input.serial !== input.state.serial)
    throw preconditionFailed(
      `Serial ${input.serial} does not match the serial in the uploaded state (${input.state.serial})`,
    );
  if (input.lineage !== null && input.lineage !== input.state.lineage)
    throw preconditionFailed(
      `Lineage ${input.lineage} does not match the lineage in the uploaded state (${input.state.lineage ?? 'none'})`,
    );
}

function preconditionFailed(detail: string): WorkspacesError {
  return new WorkspacesError(412, 'precondition failed', detail);
}

function requiredString(a: Record<string, unknown>, key: string, label: string): string {
  const v = a[key];
  if (v === undefined || v === null || v === '') throw invalidAttribute(attr(key), `${label} can't be blank`);
  if (typeof v !== 'string') throw invalidAttribute(attr(key), `${label} must be a string`);
  return v;
}

function optionalString(a: Record<string, unknown>, key: string, label: string): string | null {
  const v = a[key];
  if (v === undefined || v === null || v === '') return null;
  if (typeof v !== 'string') throw invalidAttribute(attr(key), `${label} must be a string`);
  return v;
}

function isJson(bytes: Uint8Array): boolean {
  try {
    JSON.parse(Buffer.from(bytes).toString('utf8'));
    return true;
  } catch {
    return false;
  }
}
