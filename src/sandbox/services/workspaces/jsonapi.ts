/**
 * JSON:API plumbing of the workspace service: the media type, error documents (the real shape
 * `{"errors":[{"status":"422","title":"invalid attribute","detail":"…","source":{"pointer":"…"}}]}`),
 * reading bodies (malformed JSON is a 400), the bearer token and the sandbox's own base URL.
 */
import type { SandboxRequest, SandboxResponse } from '../../core/http.js';
import { badRequest, WorkspacesError } from './model.js';

export const MEDIA_TYPE = 'application/vnd.api+json';

export function jsonApi(status: number, doc: unknown, headers: Record<string, string> = {}): SandboxResponse {
  return { status, headers: { 'Content-Type': MEDIA_TYPE, ...headers }, body: JSON.stringify(doc) };
}

export function noContent(): SandboxResponse {
  return { status: 204 };
}

const TITLES: Record<number, string> = {
  400: 'bad request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not found',
  405: 'method not allowed',
  409: 'conflict',
  412: 'precondition failed',
  413: 'payload too large',
  422: 'invalid attribute',
  500: 'internal server error',
  503: 'service unavailable',
};

export function errorFromWorkspacesError(err: WorkspacesError): SandboxResponse {
  const entry: Record<string, unknown> = { status: String(err.status), title: err.title };
  if (err.detail !== undefined) entry.detail = err.detail;
  if (err.source) entry.source = err.source;
  return jsonApi(err.status, { errors: [entry] });
}

/** Errors the core produces (faults, unknown paths, body too large) in the service's format. */
export function coreErrorResponse(status: number, message: string): SandboxResponse {
  if (status === 429) {
    // The real body (with an integer status, as the real docs show it).
    return jsonApi(429, {
      errors: [
        { detail: "You have exceeded the API's rate limit.", status: 429, title: 'Too many requests' },
      ],
    });
  }
  // The real 404 carries no detail: `{"errors":[{"status":"404","title":"not found"}]}`.
  if (status === 404) return errorFromWorkspacesError(new WorkspacesError(404, 'not found'));
  return errorFromWorkspacesError(new WorkspacesError(status, TITLES[status] ?? 'error', message));
}

/**
 * The parsed JSON body; `undefined` for an empty body when `optional`. Any content type is accepted
 * (`application/vnd.api+json`, `application/json` as go-tfe sends for locks, or none).
 */
export async function readJson(req: SandboxRequest, opts: { optional?: boolean } = {}): Promise<unknown> {
  const text = await req.text();
  if (text.trim() === '') {
    if (opts.optional) return undefined;
    throw badRequest('request body is empty; a JSON:API document is required');
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw badRequest(`request body is not valid JSON: ${(err as Error).message}`);
  }
}

/** `Authorization: Bearer <token>` (scheme case-insensitive); empty when absent. */
export function bearerToken(req: SandboxRequest): string {
  const auth = req.header('Authorization') ?? '';
  const match = /^\s*bearer\s+(\S+)/i.exec(auth);
  return match ? match[1]! : '';
}

/**
 * `http://<host>` as the client reached the sandbox, for absolute links and download URLs (the
 * service is created before the port is known, so the Host header is the one reliable source).
 */
export function baseUrlOf(req: SandboxRequest): string {
  return `http://${req.header('Host') ?? 'localhost'}`;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
