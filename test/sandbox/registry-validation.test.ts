/** Role name and identity rules, with the real registry's texts (HTTP 500, plain text). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { type Api, apiFor, createRole } from './helpers.js';

let sandbox: RunningSandbox;
let api: Api;
let counter = 0;

beforeAll(async () => {
  sandbox = await startSandbox();
  api = apiFor(sandbox);
});

afterAll(async () => {
  await sandbox.close();
});

const INVALID_NAME = "Invalid Role: invalid Name. Only alphanumeric characters, '-' and '_' are allowed";

describe('role Name', () => {
  it.each(['a', 'web-readers', 'Web_Readers-2', 'x'.repeat(256)])('accepts %j', async (name) => {
    const res = await api('PUT', '/v1/acl/role', { body: { Name: name } });
    expect(res.status).toBe(200);
  });

  it('requires a Name', async () => {
    for (const body of [{}, { Name: '' }, { Description: 'no name' }]) {
      const res = await api('PUT', '/v1/acl/role', { body });
      expect([res.status, res.text]).toEqual([500, 'Invalid Role: no Name is set']);
    }
  });

  it.each(['has space', 'dot.ted', 'slash/x', 'ümlaut', 'x'.repeat(257)])('rejects %j', async (name) => {
    const res = await api('PUT', '/v1/acl/role', { body: { Name: name } });
    expect([res.status, res.text]).toEqual([500, INVALID_NAME]);
  });
});

const serviceNameError = (name: string) =>
  `Service identity "${name}" has an invalid name. Only alphanumeric characters, '-' and '_' are allowed`;

describe('ServiceIdentities', () => {
  it.each(['web', 'a', 'web-1', 'web_api', '0x', 'a'.repeat(256)])(
    'accepts ServiceName %j',
    async (serviceName) => {
      const role = await createRole(api, {
        Name: `sid-ok-${++counter}`,
        ServiceIdentities: [{ ServiceName: serviceName }],
      });
      expect(role.ServiceIdentities).toEqual([{ ServiceName: serviceName }]);
    },
  );

  it.each(['Web', '-web', 'web-', '_web', 'web_', 'we b', 'web.api', 'a'.repeat(257)])(
    'rejects ServiceName %j',
    async (serviceName) => {
      const res = await api('PUT', '/v1/acl/role', {
        body: { Name: `sid-bad-${++counter}`, ServiceIdentities: [{ ServiceName: serviceName }] },
      });
      expect([res.status, res.text]).toEqual([500, serviceNameError(serviceName)]);
    },
  );

  it('requires ServiceName', async () => {
    const res = await api('PUT', '/v1/acl/role', {
      body: { Name: 'sid-missing', ServiceIdentities: [{ Datacenters: ['dc1'] }] },
    });
    expect([res.status, res.text]).toEqual([
      500,
      'Service identity is missing the service name field on this role',
    ]);
  });

  it('sorts and merges duplicates; an identity without datacenters widens to all', async () => {
    const role = await createRole(api, {
      Name: 'sid-merge',
      ServiceIdentities: [
        { ServiceName: 'web', Datacenters: ['dc2'] },
        { ServiceName: 'api', Datacenters: ['dc1'] },
        { ServiceName: 'web', Datacenters: ['dc1', 'dc2'] },
        { ServiceName: 'db', Datacenters: ['dc1'] },
        { ServiceName: 'db' },
      ],
    });
    expect(role.ServiceIdentities).toEqual([
      { ServiceName: 'api', Datacenters: ['dc1'] },
      { ServiceName: 'db' },
      { ServiceName: 'web', Datacenters: ['dc1', 'dc2'] },
    ]);
  });

  it('keeps a single identity as given', async () => {
    const role = await createRole(api, {
      Name: 'sid-single',
      ServiceIdentities: [{ ServiceName: 'web', Datacenters: ['dc2', 'dc1'] }],
    });
    expect(role.ServiceIdentities).toEqual([{ ServiceName: 'web', Datacenters: ['dc2', 'dc1'] }]);
  });
});

describe('NodeIdentities', () => {
  it('accepts a valid identity and returns it', async () => {
    const role = await createRole(api, {
      Name: 'nid-ok',
      NodeIdentities: [{ NodeName: 'node-1', Datacenter: 'dc1' }],
    });
    expect(role.NodeIdentities).toEqual([{ NodeName: 'node-1', Datacenter: 'dc1' }]);
  });

  it('requires NodeName and Datacenter', async () => {
    const noName = await api('PUT', '/v1/acl/role', {
      body: { Name: 'nid-1', NodeIdentities: [{ Datacenter: 'dc1' }] },
    });
    expect([noName.status, noName.text]).toEqual([
      500,
      'Node identity is missing the node name field on this role',
    ]);
    const noDc = await api('PUT', '/v1/acl/role', {
      body: { Name: 'nid-2', NodeIdentities: [{ NodeName: 'n1' }] },
    });
    expect([noDc.status, noDc.text]).toEqual([
      500,
      'Node identity is missing the datacenter field on this role',
    ]);
  });

  it.each(['Node', 'node-', '-node', 'no de', 'n'.repeat(257)])('rejects NodeName %j', async (nodeName) => {
    const res = await api('PUT', '/v1/acl/role', {
      body: { Name: `nid-bad-${++counter}`, NodeIdentities: [{ NodeName: nodeName, Datacenter: 'dc1' }] },
    });
    expect([res.status, res.text]).toEqual([
      500,
      "Node identity has an invalid name. Only alphanumeric characters, '-' and '_' are allowed",
    ]);
  });

  it('drops exact duplicates and sorts', async () => {
    const role = await createRole(api, {
      Name: 'nid-dedup',
      NodeIdentities: [
        { NodeName: 'b', Datacenter: 'dc1' },
        { NodeName: 'a', Datacenter: 'dc2' },
        { NodeName: 'b', Datacenter: 'dc1' },
        { NodeName: 'a', Datacenter: 'dc1' },
      ],
    });
    expect(role.NodeIdentities).toEqual([
      { NodeName: 'a', Datacenter: 'dc1' },
      { NodeName: 'a', Datacenter: 'dc2' },
      { NodeName: 'b', Datacenter: 'dc1' },
    ]);
  });
});

describe('check order', () => {
  it('checks the name before policies and identities', async () => {
    const res = await api('PUT', '/v1/acl/role', {
      body: { Name: 'bad name', Policies: [{ Name: 'nope' }], ServiceIdentities: [{ ServiceName: 'BAD' }] },
    });
    expect(res.text).toBe(INVALID_NAME);
  });

  it('checks policy names before identities', async () => {
    const res = await api('PUT', '/v1/acl/role', {
      body: { Name: 'order-2', Policies: [{ Name: 'nope' }], ServiceIdentities: [{ ServiceName: 'BAD' }] },
    });
    expect(res.text).toBe('No such ACL policy with name "nope"');
  });

  it('stores nothing when validation fails', async () => {
    await api('PUT', '/v1/acl/role', {
      body: { Name: 'order-3', ServiceIdentities: [{ ServiceName: 'BAD' }] },
    });
    expect((await api('GET', '/v1/acl/role/name/order-3')).status).toBe(404);
  });
});
