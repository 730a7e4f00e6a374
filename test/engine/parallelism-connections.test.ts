/**
 * `--parallelism` above the default opens as many connections per service: with the pool capped at
 * 10, the rest of the run's "started" changes waited unseen in the pool (and still went out after a
 * Ctrl-C). Counted at a server that holds every request until as many as asked are in at once.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { registryService } from '../../src/clients/registry/definition.js';
import { httpOptions, MAX_CONNECTIONS, ServiceConnections } from '../../src/engine/connections.js';
import { defaultCatalog } from '../../src/engine/services.js';

let server: Server | undefined;
afterEach(async () => {
  const running = server;
  server = undefined;
  if (!running) return;
  running.closeAllConnections();
  await new Promise((resolve) => running.close(resolve));
});

/** A registry that answers nothing until `wanted` requests are in at once (or `holdMs` passed). */
async function holdingRegistry(wanted: number, holdMs: number): Promise<{ url: string; most: () => number }> {
  let inFlight = 0;
  let most = 0;
  const waiting: (() => void)[] = [];
  server = createServer((req, res) => {
    inFlight += 1;
    most = Math.max(most, inFlight);
    const answer = () => {
      inFlight -= 1;
      res.writeHead(200, { 'content-type': 'application/json', 'x-consul-index': '1' });
      res.end('[]');
    };
    waiting.push(answer);
    if (waiting.length >= wanted) for (const release of waiting.splice(0)) release();
    else
      setTimeout(
        () => waiting.includes(answer) && waiting.splice(waiting.indexOf(answer), 1) && answer(),
        holdMs,
      );
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, most: () => most };
}

/**
 * `holdMs`: how long a request that never sees `requests` in at once is held. Long where all of them
 * are expected (it only bounds a failure); short where some must wait, yet long enough for requests
 * the client sent at once to all have arrived.
 */
async function mostInFlight(
  parallelism: number | undefined,
  requests: number,
  holdMs = 1500,
): Promise<number> {
  const registry = await holdingRegistry(requests, holdMs);
  const env = { CONVERGE_REGISTRY_ADDR: registry.url, CONVERGE_REGISTRY_TOKEN: 'token' };
  const connections = new ServiceConnections(env, defaultCatalog.definitions, [], {
    http: httpOptions(env, parallelism === undefined ? {} : { parallelism }),
  });
  try {
    const client = connections.client(registryService);
    await Promise.all(Array.from({ length: requests }, () => client.listPolicies()));
  } finally {
    await connections.close();
  }
  return registry.most();
}

describe('connections per service', () => {
  it('follow a parallelism above the default', async () => {
    expect(await mostInFlight(25, 25)).toBe(25);
  });

  it('stay at 10 by default', async () => {
    expect(await mostInFlight(undefined, 12, 250)).toBe(10);
  });

  it('are bounded however high the parallelism asked (each is a socket)', () => {
    expect(httpOptions({}, { parallelism: 1_000_000 }).maxConnections).toBe(MAX_CONNECTIONS);
  });
});
