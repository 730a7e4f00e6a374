/** Walking a paginated list to its end. */
import { WALK_PAGE_SIZE } from './query.js';
import type { Pagination } from './types.js';

/** Which page to ask for; without `size` the service's default (20). */
export interface PageRequest {
  number: number;
  size?: number;
}

/** One page of a list and where it stands among the others. */
export interface Page<T> {
  items: T[];
  pagination: Pagination;
}

/** Stops a service that keeps answering "there is a next page" from looping forever. */
export const MAX_PAGES = 10_000;

/**
 * Fetches page 1, then whatever `nextPage` names, until there is none, at the largest page size. Pages are fetched one after the
 * other, not in parallel: the total is only known after the first, and a list that changes while it is
 * walked is read more consistently front to back.
 */
export async function walkPages<T>(fetchPage: (page: PageRequest) => Promise<Page<T>>): Promise<T[]> {
  const all: T[] = [];
  let number = 1;
  for (let fetched = 0; fetched < MAX_PAGES; fetched++) {
    const { items, pagination } = await fetchPage({ number, size: WALK_PAGE_SIZE });
    all.push(...items);
    const next = pagination.nextPage;
    // A next page that is not ahead of this one would repeat pages forever.
    if (next === null || next <= number) return all;
    number = next;
  }
  throw new Error(`workspaces: gave up listing after ${MAX_PAGES} pages`);
}
