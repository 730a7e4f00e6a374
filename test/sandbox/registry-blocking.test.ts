/** The raft-like index, query-meta headers and blocking queries (`?index=N&wait=...`). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { type Api, apiFor, createRole, type RoleJson } from './helpers.js';

let sandbox: RunningSandbox;
let api: Api;

beforeAll(async () => {
  sandbox = await startSandbox();
  api = apiFor(sandbox);
});

afterAll(async () => {
  await sandbox.close();
});

const indexOf = (res: { headers: Headers }) => Number(res.headers.get('x-registry-index'));

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - started };
}

describe('query meta', () => {
  it('sends index, leader and consistency headers on reads', async () => {
    await createRole(api, { Name: 'meta' });
    const res = await api('GET', '/v1/acl/roles');
    expect(indexOf(res)).toBeGreaterThan(0);
    expect(res.headers.get('x-registry-knownleader')).toBe('true');
    expect(res.headers.get('x-registry-lastcontact')).toBe('0');
    expect(res.headers.get('x-registry-effective-consistency')).toBe('leader');
    expect((await api('GET', '/v1/acl/roles?stale')).headers.get('x-registry-effective-consistency')).toBe(
      'stale',
    );
    expect(
      (await api('GET', '/v1/acl/roles?consistent')).headers.get('x-registry-effective-consistency'),
    ).toBe('consistent');
  });

  it('sends index 0 as 1', async () => {
    const res = await api('GET', '/v1/acl/roles?ns=never-written');
    expect(res.headers.get('x-registry-index')).toBe('1');
  });

  it('refuses ?stale with ?consistent', async () => {
    const res = await api('GET', '/v1/acl/roles?stale&consistent');
    expect([res.status, res.text]).toEqual([
      400,
      'Cannot specify ?stale with ?consistent, conflicting semantics.',
    ]);
  });

  it.each([
    ['wait=5', 'Invalid wait time'],
    ['wait=soon', 'Invalid wait time'],
    ['wait=1x', 'Invalid wait time'],
    ['index=-1', 'Invalid index'],
    ['index=abc', 'Invalid index'],
    ['index=1.5', 'Invalid index'],
    ['index=99999999999999999999', 'Invalid index'],
  ])('answers 400 for ?%s', async (query, text) => {
    const res = await api('GET', `/v1/acl/roles?${query}`);
    expect([res.status, res.text]).toEqual([400, text]);
  });
});

describe('index', () => {
  it('grows with every write: create, update, delete', async () => {
    const before = indexOf(await api('GET', '/v1/acl/roles'));
    const a = await createRole(api, { Name: 'idx-a' });
    const b = await createRole(api, { Name: 'idx-b' });
    expect(a.CreateIndex).toBeGreaterThan(before);
    expect(b.CreateIndex).toBeGreaterThan(a.CreateIndex);
    const updated = (
      await api('PUT', `/v1/acl/role/${a.ID}`, { body: { Name: 'idx-a', Description: 'x' } })
    ).json<RoleJson>();
    expect(updated.ModifyIndex).toBeGreaterThan(b.ModifyIndex);
    const afterUpdate = indexOf(await api('GET', '/v1/acl/roles'));
    expect(afterUpdate).toBe(updated.ModifyIndex);
    await api('DELETE', `/v1/acl/role/${b.ID}`);
    expect(indexOf(await api('GET', '/v1/acl/roles'))).toBeGreaterThan(afterUpdate);
  });

  it('does not move on a failed write or a delete of a missing role', async () => {
    const before = indexOf(await api('GET', '/v1/acl/roles'));
    await api('PUT', '/v1/acl/role', { body: { Name: 'bad name' } });
    await api('DELETE', '/v1/acl/role/9e1c1a7e-0000-4000-8000-000000000404');
    expect(indexOf(await api('GET', '/v1/acl/roles'))).toBe(before);
  });
});

describe('blocking queries', () => {
  it('returns early when a write changes the result', async () => {
    const index = indexOf(await api('GET', '/v1/acl/roles'));
    const pending = timed(() => api('GET', `/v1/acl/roles?index=${index}&wait=5s`));
    await new Promise((r) => setTimeout(r, 100));
    await createRole(api, { Name: 'wake-up' });
    const { value: res, ms } = await pending;
    expect(ms).toBeGreaterThanOrEqual(90);
    expect(ms).toBeLessThan(2000);
    expect(indexOf(res)).toBeGreaterThan(index);
    expect(res.json<RoleJson[]>().map((r) => r.Name)).toContain('wake-up');
  });

  it('answers after the wait time when nothing changes, with the same index', async () => {
    const index = indexOf(await api('GET', '/v1/acl/roles'));
    const { value: res, ms } = await timed(() => api('GET', `/v1/acl/roles?index=${index}&wait=200ms`));
    expect(res.status).toBe(200);
    expect(ms).toBeGreaterThanOrEqual(195);
    expect(ms).toBeLessThan(200 * (1 + 1 / 16) + 400);
    expect(indexOf(res)).toBe(index);
  });

  it('answers at once when the client index is behind, or is 0', async () => {
    const { ms: behind } = await timed(() => api('GET', '/v1/acl/roles?index=1&wait=5s'));
    const { ms: zero } = await timed(() => api('GET', '/v1/acl/roles?index=0&wait=5s'));
    expect(behind).toBeLessThan(150);
    expect(zero).toBeLessThan(150);
  });

  it('wakes a read by ID when that role changes', async () => {
    const role = await createRole(api, { Name: 'watched' });
    const pending = api('GET', `/v1/acl/role/${role.ID}?index=${role.ModifyIndex}&wait=5s`);
    await new Promise((r) => setTimeout(r, 50));
    await api('PUT', `/v1/acl/role/${role.ID}`, { body: { Name: 'watched', Description: 'changed' } });
    const res = await pending;
    expect(res.json<RoleJson>().Description).toBe('changed');
  });

  it('waits for a role that does not exist yet (404 until created)', async () => {
    const res404 = await api('GET', '/v1/acl/role/name/later');
    expect(res404.status).toBe(404);
    const pending = api('GET', `/v1/acl/role/name/later?index=${indexOf(res404)}&wait=5s`);
    await new Promise((r) => setTimeout(r, 50));
    await createRole(api, { Name: 'later' });
    expect((await pending).status).toBe(200);
  });

  it('is not woken by writes in another namespace', async () => {
    const index = indexOf(await api('GET', '/v1/acl/roles?ns=quiet'));
    const pending = timed(() => api('GET', `/v1/acl/roles?ns=quiet&index=${index}&wait=300ms`));
    await new Promise((r) => setTimeout(r, 50));
    await createRole(api, { Name: 'noise', Namespace: 'loud' });
    const { ms, value } = await pending;
    expect(ms).toBeGreaterThanOrEqual(290);
    expect(indexOf(value)).toBe(index);
  });

  it('ends pending blocking queries when the sandbox closes', async () => {
    const other = await startSandbox();
    const otherApi = apiFor(other);
    const index = indexOf(await otherApi('GET', '/v1/acl/roles'));
    const pending = timed(() => otherApi('GET', `/v1/acl/roles?index=${index}&wait=10m`));
    await new Promise((r) => setTimeout(r, 50));
    const { ms: closeMs } = await timed(() => other.close());
    const { value: res, ms } = await pending;
    expect(res.status).toBe(200);
    expect(ms).toBeLessThan(1500);
    expect(closeMs).toBeLessThan(1500);
  });
});
