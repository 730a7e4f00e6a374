/**
 * From an HTTP request to the real service's logical request (`http/logical.go
 * buildLogicalRequestNoAuth`): the operation the method stands for, and the JSON body.
 */
import type { SandboxRequest } from '../../core/http.js';
import { SecretsError } from './vault.js';

export type Operation = 'read' | 'list' | 'update' | 'delete' | 'patch';

/** Go's `strconv.ParseBool`. */
function parseGoBool(text: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(text)) return false;
  return undefined;
}

/**
 * `LIST`, and `GET` with `?list=<true>`, are list operations (a `list` value that is not a Go bool is
 * 400 with an empty `errors`); `POST`/`PUT` update; `DELETE` deletes. Other methods are 405 before
 * this is asked (the service's route does not take them).
 */
export function operationOf(req: SandboxRequest): Operation {
  switch (req.method) {
    case 'GET': {
      const list = req.query.get('list');
      if (list === null || list === '') return 'read';
      const parsed = parseGoBool(list);
      if (parsed === undefined) throw new SecretsError(400);
      return parsed ? 'list' : 'read';
    }
    case 'LIST':
      return 'list';
    case 'POST':
    case 'PUT':
      return 'update';
    case 'DELETE':
      return 'delete';
    default:
      return 'patch';
  }
}

/** The body as a JSON object; empty means no fields. Not JSON, or not an object: 400. */
export async function readJsonBody(req: SandboxRequest): Promise<Record<string, unknown>> {
  const text = await req.text();
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new SecretsError(400, `failed to parse JSON input: ${(err as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    // UNCONFIRMED: the real text names Go's unmarshal error for a non-object body.
    throw new SecretsError(400, 'failed to parse JSON input: the body must be a JSON object');
  }
  return value as Record<string, unknown>;
}
