/**
 * The scheduler's namespace capabilities per token (the spec's endpoint table), the token headers,
 * and its config section and token rights validation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, SandboxConfigError, startSandbox } from '../../src/sandbox/index.js';
import { type Api, apiFor } from './helpers.js';
import { getJson, type Json, jobSpec, register } from './scheduler-helpers.js';

let sandbox: RunningSandbox;
let api: Api;

beforeAll(async () => {
  sandbox = await startSandbox({
    config: {
      tokens: [
        {
          name: 'reader',
          secret: 'reader-token',
          scheduler: { namespaces: { default: { policy: 'read' } } },
        },
        { name: 'writer', secret: 'writer-token', scheduler: { namespaces: { '*': { policy: 'write' } } } },
        {
          name: 'team-a',
          secret: 'team-a-token',
          namespace: 'team-a',
          scheduler: { namespaces: { 'team-a': { capabilities: ['submit-job', 'read-job'] } } },
        },
        {
          name: 'overrider',
          secret: 'override-token',
          scheduler: { namespaces: { default: { policy: 'write', capabilities: ['policy-override'] } } },
        },
        {
          name: 'denied',
          secret: 'denied-token',
          scheduler: { namespaces: { '*': { policy: 'write' }, 'team-a': { policy: 'deny' } } },
        },
        { name: 'nothing', secret: 'nothing-token' },
      ],
      scheduler: { namespaces: ['team-a'] },
    },
  });
  api = apiFor(sandbox);
  await register(api, jobSpec('acl-default'));
  await api('PUT', '/v1/jobs?namespace=team-a', { body: { Job: jobSpec('acl-team') } });
});

afterAll(async () => {
  await sandbox.close();
});

const as = (token: string | null) => ({ token });

describe('tokens', () => {
  it('reads the token from X-Scheduler-Token, X-Nomad-Token or Authorization: Bearer', async () => {
    for (const header of ['X-Scheduler-Token', 'X-Nomad-Token']) {
      const res = await api('GET', '/v1/job/acl-default', {
        token: null,
        headers: { [header]: 'reader-token' },
      });
      expect([header, res.status]).toEqual([header, 200]);
    }
    expect(
      (
        await api('GET', '/v1/job/acl-default', {
          token: null,
          headers: { Authorization: 'bearer reader-token' },
        })
      ).status,
    ).toBe(200);
  });

  it('no token is the anonymous token, which may do nothing: 403 Permission denied', async () => {
    for (const [method, path] of [
      ['GET', '/v1/jobs'],
      ['GET', '/v1/job/acl-default'],
      ['DELETE', '/v1/job/acl-default'],
    ] as const) {
      const res = await api(method, path, as(null));
      expect([path, res.status, res.text]).toEqual([path, 403, 'Permission denied']);
    }
  });

  it('an unknown token is 403 ACL token not found', async () => {
    const res = await api('GET', '/v1/jobs', as('who-is-this'));
    expect([res.status, res.text]).toEqual([403, 'ACL token not found']);
  });

  it('a token without scheduler rights is denied', async () => {
    expect((await api('GET', '/v1/jobs', as('nothing-token'))).status).toBe(403);
  });
});

describe('namespace capabilities', () => {
  it('read policy: list and read, but not submit or stop', async () => {
    expect((await api('GET', '/v1/jobs', as('reader-token'))).status).toBe(200);
    for (const path of ['', '/versions', '/allocations', '/evaluations', '/summary'])
      expect((await api('GET', `/v1/job/acl-default${path}`, as('reader-token'))).status).toBe(200);
    const reg = await api('PUT', '/v1/jobs', { ...as('reader-token'), body: { Job: jobSpec('by-reader') } });
    expect([reg.status, reg.text]).toEqual([403, 'Permission denied']);
    expect(
      (
        await api('POST', '/v1/job/acl-default', {
          ...as('reader-token'),
          body: { Job: jobSpec('acl-default') },
        })
      ).status,
    ).toBe(403);
    expect((await api('DELETE', '/v1/job/acl-default', as('reader-token'))).status).toBe(403);
    const stable = await api('PUT', '/v1/job/acl-default/stable', {
      ...as('reader-token'),
      body: { JobID: 'acl-default', JobVersion: 0, Stable: true },
    });
    expect(stable.status).toBe(403);
  });

  it('rights are per namespace: the reader sees nothing in team-a, even a missing job is 403 not 404', async () => {
    expect((await api('GET', '/v1/job/acl-team?namespace=team-a', as('reader-token'))).status).toBe(403);
    expect((await api('GET', '/v1/job/missing?namespace=team-a', as('reader-token'))).status).toBe(403);
    expect((await api('GET', '/v1/jobs?namespace=team-a', as('reader-token'))).status).toBe(403);
  });

  it('write on "*" covers every namespace', async () => {
    const res = await api('PUT', '/v1/jobs?namespace=team-a', {
      ...as('writer-token'),
      body: { Job: jobSpec('by-writer') },
    });
    expect(res.status).toBe(200);
    expect(
      (await api('DELETE', '/v1/job/by-writer?namespace=team-a&purge=true', as('writer-token'))).status,
    ).toBe(200);
  });

  it('an exact namespace rule wins over "*" (deny)', async () => {
    expect((await api('GET', '/v1/jobs', as('denied-token'))).status).toBe(200);
    expect((await api('GET', '/v1/jobs?namespace=team-a', as('denied-token'))).status).toBe(403);
  });

  it('capabilities without a policy: submit and read in the token namespace, no list', async () => {
    const res = await api('PUT', '/v1/jobs?namespace=team-a', {
      ...as('team-a-token'),
      body: { Job: jobSpec('team-own') },
    });
    expect(res.status).toBe(200);
    expect((await getJson(api, '/v1/job/team-own?namespace=team-a', as('team-a-token'))).Namespace).toBe(
      'team-a',
    );
    expect((await api('GET', '/v1/jobs?namespace=team-a', as('team-a-token'))).status).toBe(403);
    expect(
      (await api('PUT', '/v1/jobs?namespace=default', { ...as('team-a-token'), body: { Job: jobSpec('x') } }))
        .status,
    ).toBe(403);
  });

  it('without ?namespace every endpoint means default, whatever namespace the token has (spec: job list default)', async () => {
    // team-a-token has a namespace of its own (the registry's fallback) and no right in default.
    expect((await api('GET', '/v1/jobs', as('team-a-token'))).status).toBe(403);
    expect(
      (await api('PUT', '/v1/jobs', { ...as('team-a-token'), body: { Job: jobSpec('no-namespace') } }))
        .status,
    ).toBe(403);
    expect((await api('GET', '/v1/job/team-own', as('team-a-token'))).status).toBe(403);
    // The writer's list without ?namespace is default's jobs only.
    const listed = await getJson<Json[]>(api, '/v1/jobs', as('writer-token'));
    expect(new Set(listed.map((j) => j.Namespace))).toEqual(new Set(['default']));
  });

  it('PolicyOverride needs the policy-override capability too', async () => {
    const body = { Job: jobSpec('override'), PolicyOverride: true };
    expect((await api('PUT', '/v1/jobs', { ...as('writer-token'), body })).status).toBe(403);
    expect((await api('PUT', '/v1/jobs', { ...as('override-token'), body })).status).toBe(200);
  });

  it('namespace=* lists only the namespaces where the token may list; none at all is 403', async () => {
    const reader = await getJson<Json[]>(api, '/v1/jobs?namespace=*', as('reader-token'));
    expect(new Set(reader.map((j) => j.Namespace))).toEqual(new Set(['default']));
    const root = await getJson<Json[]>(api, '/v1/jobs?namespace=*');
    expect(new Set(root.map((j) => j.Namespace))).toEqual(new Set(['default', 'team-a']));
    expect((await api('GET', '/v1/jobs?namespace=*', as('team-a-token'))).status).toBe(403);
  });

  it('a bad body is 400 before the token is looked at', async () => {
    const res = await api('PUT', '/v1/jobs', { ...as(null), body: {} });
    expect([res.status, res.text]).toEqual([400, 'Job must be specified']);
  });
});

describe('config section and token rights', () => {
  async function startError(config: Record<string, unknown>): Promise<string> {
    try {
      const s = await startSandbox({ config });
      await s.close();
    } catch (err) {
      if (err instanceof SandboxConfigError) return err.message;
      throw err;
    }
    throw new Error('expected a SandboxConfigError');
  }

  it.each([
    [
      'a rule for an unknown namespace',
      { tokens: [{ name: 't', secret: 's', scheduler: { namespaces: { 'team-x': { policy: 'read' } } } }] },
      'tokens[0].scheduler.namespaces.team-x: unknown namespace "team-x"',
    ],
    [
      'an unknown capability',
      {
        tokens: [
          { name: 't', secret: 's', scheduler: { namespaces: { default: { capabilities: ['drive-job'] } } } },
        ],
      },
      'tokens[0].scheduler.namespaces.default.capabilities[0]: must be one of',
    ],
    [
      'an unknown policy',
      { tokens: [{ name: 't', secret: 's', scheduler: { namespaces: { default: { policy: 'admin' } } } }] },
      'tokens[0].scheduler.namespaces.default.policy: must be one of',
    ],
    [
      'a duplicate namespace',
      { scheduler: { namespaces: ['a', 'a'] } },
      'scheduler.namespaces[1]: duplicate namespace',
    ],
    [
      'a bad namespace name',
      { scheduler: { namespaces: ['no spaces'] } },
      'scheduler.namespaces[0]: invalid namespace name',
    ],
    ['default listed', { scheduler: { namespaces: ['default'] } }, 'the default namespace always exists'],
    ['an empty node list', { scheduler: { nodes: [] } }, 'scheduler.nodes: at least one node'],
    [
      'a duplicate node',
      { scheduler: { nodes: [{ name: 'n' }, { name: 'n' }] } },
      'scheduler.nodes[1].name: duplicate node name',
    ],
    ['an unknown key', { scheduler: { nodez: [] } }, 'scheduler.nodez: unknown key'],
  ])('refuses %s', async (_label, config, message) => {
    expect(await startError(config)).toContain(message);
  });

  it('accepts rules for configured namespaces and "*"', async () => {
    const s = await startSandbox({
      config: {
        scheduler: { namespaces: ['x'], nodes: [{ name: 'only', datacenter: 'dc9' }] },
        tokens: [
          {
            name: 't',
            secret: 's',
            scheduler: { namespaces: { x: { policy: 'read' }, '*': { policy: 'deny' } } },
          },
        ],
      },
    });
    try {
      const a = apiFor(s);
      await register(a, jobSpec('placed', { web: 2 }));
      const allocs = await getJson<Json[]>(a, '/v1/job/placed/allocations');
      expect(allocs.map((x) => x.NodeName)).toEqual(['only', 'only']);
    } finally {
      await s.close();
    }
  });
});
