/**
 * The request and response shapes handlers work with. Handlers return a response object instead of
 * writing to node's `ServerResponse`, so the core can add fault headers, logging and
 * `Connection: close` during shutdown in one place, and handlers stay easy to read.
 */
import type { IncomingHttpHeaders } from 'node:http';

export interface SandboxRequest {
  method: string;
  /** The path as sent (still percent-encoded); route params are decoded. */
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** Route parameters (`:id`, `*name`), percent-decoded. */
  params: Record<string, string>;
  remoteAddress: string;
  /** Aborted when the client goes away or the sandbox shuts down. */
  signal: AbortSignal;
  /** First value of a header, case-insensitive. */
  header(name: string): string | undefined;
  /**
   * The whole body as UTF-8 text (read once, cached). Rejects with BodyTooLargeError over the size
   * limit, and with BodyNestedTooDeepError for JSON nested deeper than MAX_BODY_NESTING.
   */
  text(): Promise<string>;
}

export interface SandboxResponse {
  status: number;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
}

export const MAX_BODY_BYTES = 16 * 1024 * 1024;

/**
 * Deepest JSON a request body may nest. Vault's default `max_json_depth` (its listeners refuse deeper
 * with 400); the scheduler and registry take up to 10,000 levels (Go's decoder), which the sandbox's
 * own handlers, recursing per level, do not survive, so the sandbox refuses them above this too.
 */
export const MAX_BODY_NESTING = 500;

/** A request body nested deeper than MAX_BODY_NESTING: answered 400 in the service's own style. */
export class BodyNestedTooDeepError extends Error {
  constructor(limit: number) {
    super(`request body nests deeper than ${limit} levels`);
    this.name = 'BodyNestedTooDeepError';
  }
}

export class BodyTooLargeError extends Error {
  constructor(limit: number) {
    super(`request body larger than ${limit} bytes`);
    this.name = 'BodyTooLargeError';
  }
}

export function textResponse(
  status: number,
  text: string,
  headers: Record<string, string> = {},
): SandboxResponse {
  return { status, headers: { 'Content-Type': 'text/plain; charset=utf-8', ...headers }, body: text };
}

export function jsonResponse(
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
  opts: { pretty?: boolean; contentType?: string } = {},
): SandboxResponse {
  const body = opts.pretty ? `${JSON.stringify(value, null, 4)}\n` : JSON.stringify(value);
  return { status, headers: { 'Content-Type': opts.contentType ?? 'application/json', ...headers }, body };
}
