// The built-in service definitions keep their client (and the whole HTTP layer) out of start-up:
// `converge validate` reads names and settings only (issue 20). Connections load it before use.
import { describe, expect, it } from 'vitest';
import { defineLazyClientService, type ServiceClient } from '../../src/clients/service.js';
import { connectionFromEnv } from '../../src/clients/http/index.js';
import { ServiceConnections } from '../../src/engine/connections.js';

function notesDefinition(imported: { count: number }) {
  return defineLazyClientService<ServiceClient & { address: string }>({
    name: 'registry',
    description: 'a lazily loaded client, for tests',
    authHeaders: (token) => ({ 'x-token': token }),
    importClient: async () => {
      imported.count += 1;
      return (options) => ({ address: options.address, requestCount: 0, close: async () => {} });
    },
  });
}

describe('a lazily loaded service client', () => {
  it('is refused, naming the service, until its module has been loaded', () => {
    const service = notesDefinition({ count: 0 });
    const config = connectionFromEnv(service, { CONVERGE_REGISTRY_ADDR: 'http://h.test' });
    expect(() => service.createClient(config)).toThrow(/registry client was used before loadClient/);
  });

  it('loads its module once, however many connections ask, and then makes clients', async () => {
    const imported = { count: 0 };
    const service = notesDefinition(imported);
    const env = { CONVERGE_REGISTRY_ADDR: 'http://h.test' };
    const [a, b] = await Promise.all([
      new ServiceConnections(env, [service]).ready(),
      new ServiceConnections(env, [service]).ready(),
    ]);
    expect(imported.count).toBe(1);
    expect(a.client(service).address).toBe('http://h.test');
    expect(b.client(service).address).toBe('http://h.test');
  });
});
