/**
 * Query parameters of the list endpoints. Names keep their brackets here (`page[number]`); the HTTP
 * layer percent-encodes names and values (`page%5Bnumber%5D=2`), which the spec allows and which
 * every URL parser reads back the same, unlike raw brackets that some proxies reject.
 */
import type { QueryValue } from '../http/body.js';
import type { WorkspaceListQuery } from './types.js';

export type Query = Record<string, QueryValue>;

/** The page size the walking lists ask for: the service's maximum, so 120 workspaces take 2 requests. */
export const WALK_PAGE_SIZE = 100;

export function pageQuery(page: { number: number; size?: number }): Query {
  if (!Number.isSafeInteger(page.number) || page.number < 1)
    throw new TypeError(`workspaces: page number must be a positive integer, not ${page.number}`);
  if (page.size !== undefined && (!Number.isSafeInteger(page.size) || page.size < 1 || page.size > 100))
    throw new TypeError(`workspaces: page size must be between 1 and 100, not ${page.size}`);
  return { 'page[number]': page.number, 'page[size]': page.size };
}

export function includeQuery(include: readonly string[] | undefined): Query {
  return { include: include && include.length > 0 ? include.join(',') : undefined };
}

export function workspaceListQuery(query: WorkspaceListQuery): Query {
  return {
    'search[name]': query.name || undefined,
    'search[tags]': list(query.tags),
    'search[exclude-tags]': list(query.excludeTags),
    'search[wildcard-name]': query.wildcardName || undefined,
    'filter[project][id]': query.projectId || undefined,
    ...includeQuery(query.include),
  };
}

/** Comma-separated, as the service reads several tags. */
function list(values: readonly string[] | undefined): string | undefined {
  return values && values.length > 0 ? values.join(',') : undefined;
}
