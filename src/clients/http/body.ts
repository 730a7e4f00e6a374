/** Encoding request bodies and query strings, and decoding response bodies by their content type. */
import { STATUS_CODES } from 'node:http';
import { jsonNestsDeeperThan } from '../../common/json-depth.js';

export type QueryValue = string | number | boolean | undefined | null;

/** Appends `query` to `path` (which may already carry a query); undefined and null values are left out. */
export function withQuery(path: string, query: Record<string, QueryValue> | undefined): string {
  if (!query) return path;
  const parts: string[] = [];
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    parts.push(`${encodeURIComponent(name)}=${encodeURIComponent(String(value))}`);
  }
  if (parts.length === 0) return path;
  return `${path}${path.includes('?') ? '&' : '?'}${parts.join('&')}`;
}

export interface EncodedBody {
  payload?: string | Uint8Array;
  contentType?: string;
}

/**
 * Strings and bytes are sent as they are (text/plain and application/octet-stream unless the caller
 * names a type); anything else is JSON.
 */
export function encodeBody(body: unknown, contentType: string | undefined): EncodedBody {
  if (body === undefined) return {};
  if (typeof body === 'string')
    return { payload: body, contentType: contentType ?? 'text/plain; charset=utf-8' };
  if (body instanceof Uint8Array)
    return { payload: body, contentType: contentType ?? 'application/octet-stream' };
  return { payload: JSON.stringify(body), contentType: contentType ?? 'application/json' };
}

/** application/json, application/vnd.api+json, application/problem+json, ... */
export function isJsonContentType(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const mediaType = contentType.split(';')[0]!.trim().toLowerCase();
  return mediaType === 'application/json' || /^application\/[\w.-]+\+json$/.test(mediaType);
}

export type DecodedBody = { ok: true; value: unknown } | { ok: false; problem: string };

/**
 * Deepest nesting of arrays and objects taken from a service. Real objects stay under about 15
 * levels, as manifests do (their limit is 64); the code that compares, masks and exports a value
 * recurses per level and overflowed the stack at about 600 (a job's task `Config` as deep as the
 * scheduler stores it). The real services take deeper input than this (Go's decoder 10,000 levels),
 * so a hostile or broken one could hand it back.
 */
export const MAX_RESPONSE_NESTING = 128;

/** JSON when the content type says so, text otherwise, undefined when there is no body. */
export function decodeBody(text: string, contentType: string | undefined): DecodedBody {
  if (text.length === 0) return { ok: true, value: undefined };
  const json = isJsonContentType(contentType);
  // Text that is JSON under another type (a state file downloaded as octet-stream, then parsed and
  // walked by its reader) is held to the same limit.
  if ((json || /^\s*[[{]/.test(text)) && jsonNestsDeeperThan(text, MAX_RESPONSE_NESTING))
    return {
      ok: false,
      problem: `JSON in the response body nests deeper than ${MAX_RESPONSE_NESTING} levels`,
    };
  if (!json) return { ok: true, value: text };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return { ok: false, problem: `invalid JSON in the response body (${(err as Error).message})` };
  }
}

/**
 * A service-neutral reading of an error body: the JSON shapes the four services use
 * (`{"errors":["msg"]}`, `{"errors":[{"title","detail"}]}`, `{"message"}`/`{"error"}`), else the
 * trimmed text, else the status text. Not cut short here: the error that shows it scrubs secrets
 * first and truncates after (`scrub.ts`), so that a secret at the cut is not left half shown.
 */
export function defaultParseError(status: number, bodyText: string, contentType: string | undefined): string {
  const text = bodyText.trim();
  if (text && isJsonContentType(contentType)) {
    const fromJson = messageFromJson(text);
    if (fromJson) return fromJson;
  }
  return text || (STATUS_CODES[status] ?? '');
}

function messageFromJson(text: string): string | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof doc !== 'object' || doc === null) return typeof doc === 'string' ? doc : undefined;
  const record = doc as Record<string, unknown>;
  if (Array.isArray(record.errors)) {
    const messages = record.errors
      .map((e) => {
        if (typeof e === 'string') return e;
        const item = (e ?? {}) as Record<string, unknown>;
        const title = typeof item.title === 'string' ? item.title : '';
        const detail = typeof item.detail === 'string' ? item.detail : '';
        return detail && title ? `${title}: ${detail}` : title || detail;
      })
      .filter((m) => m);
    if (messages.length > 0) return messages.join('; ');
  }
  for (const key of ['message', 'error']) {
    if (typeof record[key] === 'string' && record[key]) return record[key] as string;
  }
  return undefined;
}
