/**
 * Reading `{"errors":[…]}` error bodies, which the workspace and secrets services send. Two entry
 * shapes occur:
 * - JSON:API error objects: `{"errors":[{"status":"422","title":"invalid attribute","detail":"Name has
 *   already been taken","source":{"pointer":"/data/attributes/name"}}]}`; `status` is a string in most
 *   answers but an integer in the documented 429 body, so both are read.
 * - Plain strings: `{"errors":["not found"]}`, which go-tfe accepts too.
 *
 * go-tfe renders an entry as `title\n\ndetail`. A CLI prints errors on one line, so Converge renders
 * `title: detail (at /pointer)`, drops the title when the detail already starts with it, and joins
 * several entries with `; `.
 */
import { defaultParseError } from './body.js';
import type { ServiceErrorDetail } from './errors.js';

/** The entries of an error body; empty when it is not a JSON error document. */
export function errorDetails(body: unknown): ServiceErrorDetail[] {
  const doc = typeof body === 'string' ? parseJson(body) : body;
  if (typeof doc !== 'object' || doc === null) return [];
  const errors = (doc as { errors?: unknown }).errors;
  if (!Array.isArray(errors)) return [];
  const out: ServiceErrorDetail[] = [];
  for (const entry of errors) {
    if (typeof entry === 'string') {
      if (entry) out.push({ detail: entry });
      continue;
    }
    if (typeof entry !== 'object' || entry === null) continue;
    const e = entry as Record<string, unknown>;
    const detail: ServiceErrorDetail = {};
    const status = typeof e.status === 'number' ? e.status : Number(e.status);
    if (Number.isInteger(status) && status > 0) detail.status = status;
    if (typeof e.title === 'string' && e.title) detail.title = e.title;
    if (typeof e.detail === 'string' && e.detail) detail.detail = e.detail;
    const pointer = (e.source as { pointer?: unknown } | undefined)?.pointer;
    if (typeof pointer === 'string' && pointer) detail.pointer = pointer;
    if (detail.title !== undefined || detail.detail !== undefined) out.push(detail);
  }
  return out;
}

/** One line for a CLI: `invalid attribute: Name has already been taken (at /data/attributes/name)`. */
export function formatErrorDetails(details: readonly ServiceErrorDetail[]): string | undefined {
  const lines = details.map(formatDetail).filter((line) => line !== '');
  return lines.length > 0 ? lines.join('; ') : undefined;
}

function formatDetail(d: ServiceErrorDetail): string {
  const title = d.title?.trim() ?? '';
  const detail = d.detail?.trim() ?? '';
  // "Conflict" + "Conflict: the workspace is locked" would otherwise say "Conflict" twice.
  const text =
    title && detail && !detail.toLowerCase().startsWith(title.toLowerCase())
      ? `${title}: ${detail}`
      : detail || title;
  return text && d.pointer ? `${text} (at ${d.pointer})` : text;
}

/**
 * A `parseError` hook for services with error documents: the entries on one line, read whatever the
 * content type says (a proxy may relabel the JSON as text); anything else falls back to the layer's
 * default reading (text, or the status text).
 */
export function parseErrorDocument(
  status: number,
  bodyText: string,
  contentType: string | undefined,
): string {
  return formatErrorDetails(errorDetails(bodyText)) ?? defaultParseError(status, bodyText, contentType);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
