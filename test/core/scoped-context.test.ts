/**
 * A change's context: the clients it hands out carry the change's scope on every request (retry
 * lines name the object; a create's sends count as one request), through the client's blocking
 * reads too, while sharing the run's client, caches and per-run reads. Passed explicitly rather than
 * by an AsyncLocalStorage, whose promise hooks cost a third of an apply's CPU on Node 20.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { MockAgent } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { requestScopeOf, scopedContext } from '../../src/applier/scoped-context.js';
import type { RetryEvent } from '../../src/clients/http/client.js';
import { RegistryClient } from '../../src/clients/registry/client.js';
import { WorkspacesClient } from '../../src/clients/workspaces/client.js';
import { workspacesService } from '../../src/clients/workspaces/definition.js';
import { registryService } from '../../src/clients/registry/definition.js';
import { CreateSends } from '../../src/clients/http/create-sends.js';
import type { KindContext } from '../../src/resources/contract.js';
import { RunSharedRead } from '../../src/resources/run-shared-read.js';
import { jsonHeaders, mockAgent, mockedClient, ORIGIN } from '../clients/helpers.js';

let agent: MockAgent;
beforeEach(() => {
  agent = mockAgent();
});
afterEach(async () => {
  agent.assertNoPendingInterceptors();
  await agent.close();
});

function runContext(client: RegistryClient): KindContext {
  return { client: (() => client) as KindContext['client'], option: () => false };
}

describe('a change’s context', () => {
  it('labels each change’s requests with its own object, concurrently, through blocking reads too', async () => {
    const pool = agent.get(ORIGIN);
    for (const name of ['a', 'b']) {
      pool.intercept({ path: `/v1/acl/role/name/${name}`, method: 'GET' }).reply(503, 'busy');
      pool
        .intercept({ path: `/v1/acl/role/name/${name}`, method: 'GET' })
        .reply(200, { ID: `id-${name}`, Name: name }, { headers: jsonHeaders });
    }
    const retries: RetryEvent[] = [];
    const client = new RegistryClient(mockedClient(agent, { onRetry: (e) => retries.push(e) }));
    const run = runContext(client);
    const read = async (name: string) => {
      const ctx = scopedContext(run, { label: `AclRole/default/${name}` });
      await delay(name === 'a' ? 5 : 0);
      return ctx.client(registryService).readRoleByName(name);
    };
    const [a, b] = await Promise.all([read('a'), read('b')]);
    expect([a?.ID, b?.ID]).toEqual(['id-a', 'id-b']);
    expect(retries.map((r) => [r.path.replace(/\?.*/, ''), r.label]).sort()).toEqual([
      ['/v1/acl/role/name/a', 'AclRole/default/a'],
      ['/v1/acl/role/name/b', 'AclRole/default/b'],
    ]);
    // The run's own client is untouched: its requests carry no label.
    pool.intercept({ path: '/v1/acl/role/name/c', method: 'GET' }).reply(503, 'busy');
    pool
      .intercept({ path: '/v1/acl/role/name/c', method: 'GET' })
      .reply(200, { ID: 'id-c', Name: 'c' }, { headers: jsonHeaders });
    await client.readRoleByName('c');
    expect(retries.at(-1)?.label).toBeUndefined();
  });

  it('adds a create’s sends to the change’s scope, and shares the run’s client and reads', async () => {
    const client = new RegistryClient(mockedClient(agent));
    const run = runContext(client);
    const sends = new CreateSends();
    const change = scopedContext(run, { label: 'AclRole/default/x' });
    const create = scopedContext(change, { createSends: sends });
    expect(requestScopeOf(create)).toEqual({ label: 'AclRole/default/x', createSends: sends });
    // A view of the run's client: the same client underneath, for caches keyed by client.
    expect(create.client(registryService).root).toBe(client);
    expect(create.client(registryService).http.baseUrl).toBe(client.http.baseUrl);
    // Reads shared per run are shared by every change of the run.
    const shared = new RunSharedRead<number>();
    let started = 0;
    expect(shared.shared(change, 'k', () => ++started)).toBe(1);
    expect(shared.shared(create, 'k', () => ++started)).toBe(1);
    expect(shared.shared(run, 'k', () => ++started)).toBe(1);
  });

  it("downloads state through the client's own one download connection, labelled by the change", async () => {
    const pool = agent.get(ORIGIN);
    for (const n of [1, 2]) {
      pool.intercept({ path: `/state/${n}`, method: 'GET' }).reply(503, 'busy');
      pool.intercept({ path: `/state/${n}`, method: 'GET' }).reply(200, `{"serial":${n}}`);
    }
    const retries: RetryEvent[] = [];
    let opened = 0;
    const client = new WorkspacesClient(mockedClient(agent, { service: 'workspaces' }), {
      openDownloads: () => {
        opened += 1;
        return {
          http: mockedClient(agent, { service: 'workspaces', token: '', onRetry: (e) => retries.push(e) }),
          close: async () => {},
        };
      },
    });
    const run: KindContext = { client: (() => client) as KindContext['client'], option: () => false };
    for (const n of [1, 2]) {
      const view = scopedContext(run, { label: `Workspace/acme/w${n}` }).client(workspacesService);
      expect(await view.downloadState(`${ORIGIN}/state/${n}`)).toBe(`{"serial":${n}}`);
    }
    // One connection for the client and all its views (each view had opened, and never closed, its own).
    expect(opened).toBe(1);
    expect(retries.map((r) => r.label)).toEqual(['Workspace/acme/w1', 'Workspace/acme/w2']);
  });
});
