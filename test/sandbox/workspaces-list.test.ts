/** Workspace service: list pagination (links and meta exactly) and each search filter. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { type Api, apiFor } from './helpers.js';

let sandbox: RunningSandbox;
let api: Api;

const MANY = 205;
const pad = (n: number) => String(n).padStart(3, '0');

beforeAll(async () => {
  sandbox = await startSandbox({
    token: 'root-token',
    config: {
      workspaces: {
        organizations: [
          // Seeded through the config: 205 workspaces without 205 requests.
          { name: 'big', workspaces: Array.from({ length: MANY }, (_, i) => ({ name: `ws-${pad(i)}` })) },
          {
            name: 'filters',
            projects: ['platform'],
            workspaces: [
              { name: 'app-prod', tags: ['prod', 'web'] },
              { name: 'app-staging', tags: ['staging', 'web'] },
              { name: 'db-prod', tags: ['prod', 'db'], project: 'platform' },
              { name: 'prod-tools', tags: ['tools'] },
              { name: 'Misc' },
            ],
          },
        ],
      },
    },
  });
  api = apiFor(sandbox);
});

afterAll(async () => {
  await sandbox.close();
});

interface ListDoc {
  data: { attributes: { name: string } }[];
  links: Record<string, string | null>;
  meta: { pagination: Record<string, number | null> };
}

async function list(query: string, org = 'big'): Promise<ListDoc> {
  const res = await api('GET', `/api/v2/organizations/${org}/workspaces${query}`);
  expect(res.status, res.text).toBe(200);
  return res.json<ListDoc>();
}

const names = (doc: ListDoc) => doc.data.map((w) => w.attributes.name);

describe('pagination', () => {
  it('defaults to page 1 of 20, with exact links and meta', async () => {
    const doc = await list('');
    const base = `${sandbox.url}/api/v2/organizations/big/workspaces?`;
    expect(names(doc)).toEqual(Array.from({ length: 20 }, (_, i) => `ws-${pad(i)}`));
    expect(doc.links).toEqual({
      self: `${base}page%5Bnumber%5D=1&page%5Bsize%5D=20`,
      first: `${base}page%5Bnumber%5D=1&page%5Bsize%5D=20`,
      prev: null,
      next: `${base}page%5Bnumber%5D=2&page%5Bsize%5D=20`,
      last: `${base}page%5Bnumber%5D=11&page%5Bsize%5D=20`,
    });
    expect(doc.meta.pagination).toEqual({
      'current-page': 1,
      'page-size': 20,
      'prev-page': null,
      'next-page': 2,
      'total-pages': 11,
      'total-count': MANY,
    });
  });

  it('walks the pages by the next links to the last one', async () => {
    let path: string | null = `${sandbox.url}/api/v2/organizations/big/workspaces?page%5Bsize%5D=30`;
    const seen: string[] = [];
    let pages = 0;
    while (path) {
      const res = await api('GET', path.slice(sandbox.url.length));
      const doc = res.json<ListDoc>();
      seen.push(...names(doc));
      pages++;
      path = doc.links.next ?? null;
      if (!path) {
        expect(doc.meta.pagination).toMatchObject({ 'current-page': 7, 'next-page': null, 'prev-page': 6 });
        expect(doc.data).toHaveLength(MANY - 6 * 30);
      }
    }
    expect(pages).toBe(7);
    expect(seen).toEqual(Array.from({ length: MANY }, (_, i) => `ws-${pad(i)}`));
  });

  it('serves a middle page with both neighbours and keeps other query parameters in the links', async () => {
    const doc = await list('?search%5Bname%5D=ws&page%5Bnumber%5D=2&page%5Bsize%5D=100');
    expect(names(doc)[0]).toBe('ws-100');
    expect(doc.meta.pagination).toEqual({
      'current-page': 2,
      'page-size': 100,
      'prev-page': 1,
      'next-page': 3,
      'total-pages': 3,
      'total-count': MANY,
    });
    expect(doc.links.prev).toBe(
      `${sandbox.url}/api/v2/organizations/big/workspaces?search%5Bname%5D=ws&page%5Bnumber%5D=1&page%5Bsize%5D=100`,
    );
  });

  it('caps the page size at 100 and falls back to the defaults for nonsense', async () => {
    const big = await list('?page%5Bsize%5D=500');
    expect(big.data).toHaveLength(100);
    expect(big.meta.pagination['page-size']).toBe(100);
    const nonsense = await list('?page%5Bsize%5D=abc&page%5Bnumber%5D=-1');
    expect(nonsense.meta.pagination).toMatchObject({ 'current-page': 1, 'page-size': 20 });
  });

  it('answers a page past the end with no items', async () => {
    const doc = await list('?page%5Bnumber%5D=12');
    expect(doc.data).toEqual([]);
    expect(doc.meta.pagination).toMatchObject({ 'current-page': 12, 'next-page': null, 'total-pages': 11 });
  });
});

describe('search filters', () => {
  it('search[name]: substring, case-insensitive', async () => {
    expect(names(await list('?search%5Bname%5D=PROD', 'filters'))).toEqual([
      'app-prod',
      'db-prod',
      'prod-tools',
    ]);
    expect(names(await list('?search%5Bname%5D=misc', 'filters'))).toEqual(['Misc']);
  });

  it('search[tags]: all of the comma-separated tags', async () => {
    expect(names(await list('?search%5Btags%5D=prod', 'filters'))).toEqual(['app-prod', 'db-prod']);
    expect(names(await list('?search%5Btags%5D=prod,web', 'filters'))).toEqual(['app-prod']);
    expect(names(await list('?search%5Btags%5D=prod,staging', 'filters'))).toEqual([]);
  });

  it('search[exclude-tags]: none of the comma-separated tags', async () => {
    expect(names(await list('?search%5Bexclude-tags%5D=web', 'filters'))).toEqual([
      'Misc',
      'db-prod',
      'prod-tools',
    ]);
    expect(names(await list('?search%5Bexclude-tags%5D=web,tools', 'filters'))).toEqual(['Misc', 'db-prod']);
  });

  it('search[wildcard-name]: * as prefix, suffix or both', async () => {
    const wild = async (p: string) =>
      names(await list(`?search%5Bwildcard-name%5D=${encodeURIComponent(p)}`, 'filters'));
    expect(await wild('*-prod')).toEqual(['app-prod', 'db-prod']);
    expect(await wild('app-*')).toEqual(['app-prod', 'app-staging']);
    expect(await wild('*prod*')).toEqual(['app-prod', 'db-prod', 'prod-tools']);
    expect(await wild('app-prod')).toEqual(['app-prod']);
  });

  it('filter[project][id]: one project, and filters combine (meta counts the filtered list)', async () => {
    const projects = (await api('GET', '/api/v2/organizations/filters/projects')).json<{
      data: { id: string; attributes: { name: string } }[];
    }>().data;
    const platform = projects.find((p) => p.attributes.name === 'platform')!.id;
    const doc = await list(`?filter%5Bproject%5D%5Bid%5D=${platform}`, 'filters');
    expect(names(doc)).toEqual(['db-prod']);
    expect(doc.meta.pagination['total-count']).toBe(1);
    const combined = await list('?search%5Btags%5D=web&search%5Bname%5D=staging', 'filters');
    expect(names(combined)).toEqual(['app-staging']);
  });
});
