/**
 * JSON:API pagination as the real service does it: `page[number]` (first page when omitted),
 * `page[size]` (20 when omitted, at most 100), `links {self, first, prev, next, last}` with absolute
 * URLs that keep the other query parameters, and `meta.pagination`. `prev`/`next` are null at the ends.
 */
import type { SandboxRequest } from '../../core/http.js';

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

export interface Page<T> {
  items: T[];
  links: Record<string, string | null>;
  meta: {
    pagination: {
      'current-page': number;
      'page-size': number;
      'prev-page': number | null;
      'next-page': number | null;
      'total-pages': number;
      'total-count': number;
    };
  };
}

/**
 * Reads the page parameters. UNCONFIRMED: a size above 100 is clamped to 100 (the documented maximum;
 * the real list endpoints are not documented to refuse it), and a size or number that is not a positive
 * whole number falls back to the default, as the Rails paginator behind the real API does.
 */
export function pageParams(req: SandboxRequest): { number: number; size: number } {
  const size = positiveInt(req.query.get('page[size]')) ?? DEFAULT_PAGE_SIZE;
  return {
    number: positiveInt(req.query.get('page[number]')) ?? 1,
    size: Math.min(size, MAX_PAGE_SIZE),
  };
}

function positiveInt(raw: string | null): number | undefined {
  if (raw === null || !/^\s*\d+\s*$/.test(raw)) return undefined;
  const n = Number(raw);
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/**
 * One page of `all`. UNCONFIRMED: an empty list still has one (empty) page, so `last` is always a
 * page that exists; a page beyond the last is empty, with `prev` pointing back.
 */
export function paginate<T>(req: SandboxRequest, baseUrl: string, all: readonly T[]): Page<T> {
  const { number, size } = pageParams(req);
  const totalPages = Math.max(1, Math.ceil(all.length / size));
  const prev = number > 1 ? number - 1 : null;
  const next = number < totalPages ? number + 1 : null;
  const link = (n: number) => pageUrl(req, baseUrl, n, size);
  return {
    items: all.slice((number - 1) * size, number * size),
    links: {
      self: link(number),
      first: link(1),
      prev: prev === null ? null : link(prev),
      next: next === null ? null : link(next),
      last: link(totalPages),
    },
    meta: {
      pagination: {
        'current-page': number,
        'page-size': size,
        'prev-page': prev,
        'next-page': next,
        'total-pages': totalPages,
        'total-count': all.length,
      },
    },
  };
}

/** The request's URL with the page parameters replaced (brackets percent-encoded, as the real links). */
function pageUrl(req: SandboxRequest, baseUrl: string, number: number, size: number): string {
  const query = new URLSearchParams();
  for (const [key, value] of req.query) {
    if (key !== 'page[number]' && key !== 'page[size]') query.append(key, value);
  }
  query.set('page[number]', String(number));
  query.set('page[size]', String(size));
  return `${baseUrl}${req.path}?${query.toString()}`;
}
