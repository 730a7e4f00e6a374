/**
 * How the real secrets service (HashiCorp Vault) shapes its HTTP answers (`sdk/logical/response_util.go`,
 * `http/handler.go`, `http/logical.go`):
 * - errors are `{"errors":["msg"]}` (or `{"errors":[]}` without a message) with `Content-Type:
 *   application/json` exactly (hvac parses a body only with that type);
 * - a write that returns nothing is 204 without a body;
 * - a read that finds nothing, and a list without keys, are 404 `{"errors":[]}`;
 * - anything else is the response envelope, 200.
 * Bodies end with a newline, as Go's `json.Encoder` writes them.
 */
import { randomUUID } from 'node:crypto';
import type { SandboxResponse } from '../../core/http.js';

/** A refusal in the real service's terms: status and the `errors` list. */
export class SecretsError extends Error {
  readonly errors: string[];

  constructor(
    readonly status: number,
    message?: string,
  ) {
    super(message ?? `status ${status}`);
    this.name = 'SecretsError';
    this.errors = message === undefined ? [] : [message];
  }
}

// The real texts of the core's errors (`sdk/logical/error.go`). UNCONFIRMED: recent releases wrap
// errors that come back from a backend in a multierror ("1 error occurred:\n\t* unsupported path\n\n");
// the sandbox answers with the bare text, which is what clients match on.
export const PERMISSION_DENIED = 'permission denied';
export const UNSUPPORTED_PATH = 'unsupported path';
export const UNSUPPORTED_OPERATION = 'unsupported operation';

export const permissionDenied = () => new SecretsError(403, PERMISSION_DENIED);

/** The router's answer for a path under no mount (`vault/router.go`); `path` is without `/v1/`. */
export const noHandler = (path: string) =>
  new SecretsError(404, `no handler for route ${JSON.stringify(path)}. route entry not found.`);

/** A JSON body as the real service writes it (the raw `sys/` handlers answer with bare documents). */
export function vaultJson(status: number, value: unknown): SandboxResponse {
  return {
    status,
    headers: { 'Content-Type': 'application/json' },
    body: `${JSON.stringify(value)}\n`,
  };
}

export function errorResponse(status: number, errors: string[]): SandboxResponse {
  return vaultJson(status, { errors });
}

export function fromError(err: SecretsError): SandboxResponse {
  return errorResponse(err.status, err.errors);
}

export const noContent = (): SandboxResponse => ({ status: 204 });

export interface EnvelopeParts {
  data?: unknown;
  auth?: unknown;
  warnings?: string[];
}

/** The envelope every successful answer with content has (`logical.HTTPResponse`). */
export function envelope(parts: EnvelopeParts, mountType = 'ldap'): SandboxResponse {
  return vaultJson(200, {
    request_id: randomUUID(),
    lease_id: '',
    renewable: false,
    lease_duration: 0,
    data: parts.data ?? null,
    wrap_info: null,
    warnings: parts.warnings && parts.warnings.length > 0 ? parts.warnings : null,
    auth: parts.auth ?? null,
    mount_type: mountType,
  });
}

/** A write's answer: 204 unless there are warnings (then the envelope with `data: null`, 200). */
export function writeResponse(warnings: string[]): SandboxResponse {
  return warnings.length > 0 ? envelope({ warnings }) : noContent();
}

/** A list's answer: `data.keys`, or 404 `{"errors":[]}` when there are none (`logical.ListResponse`). */
export function listResponse(keys: string[]): SandboxResponse {
  return keys.length > 0 ? envelope({ data: { keys } }) : errorResponse(404, []);
}
