/**
 * One attempt over undici's handler interface (src/clients/http/exchange.ts), against a real server
 * on loopback: the answer whole, the cap, the time limit and the caller's signal, also while the
 * attempt still waits for a connection.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AttemptTimeout, exchange, ResponseTooLarge } from '../../src/clients/http/exchange.js';

let server: Server;
let origin: string;
const held: (() => void)[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/hang') {
      held.push(() => res.end());
      return;
    }
    if (req.url === '/stream') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('x'.repeat(600));
      res.end('y'.repeat(600));
      return;
    }
    res.writeHead(201, { 'content-type': 'application/json', 'set-cookie': ['a=1', 'b=2'] });
    res.end(JSON.stringify({ method: req.method, url: req.url }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const release of held) release();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const limits = { timeoutMs: 5_000, maxResponseBytes: 1024 };
const call = (agent: Agent, path: string, more: Partial<typeof limits> & { signal?: AbortSignal } = {}) =>
  exchange(agent, { origin, path, method: 'GET', headers: {}, body: undefined }, { ...limits, ...more });

describe('exchange', () => {
  it('returns the status, the headers as undici parses them and the whole body', async () => {
    const agent = new Agent();
    try {
      const res = await call(agent, '/hello?x=1');
      expect(res.status).toBe(201);
      expect(res.headers['set-cookie']).toEqual(['a=1', 'b=2']);
      expect(JSON.parse(res.text)).toEqual({ method: 'GET', url: '/hello?x=1' });
    } finally {
      await agent.close();
    }
  });

  it('stops reading past the cap, counted as it streams in', async () => {
    const agent = new Agent();
    try {
      const err = await call(agent, '/stream').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ResponseTooLarge);
      expect(err).toMatchObject({ status: 200, announcedBytes: undefined });
      expect((await call(agent, '/stream', { maxResponseBytes: 2048 })).text).toHaveLength(1200);
    } finally {
      await agent.close();
    }
  });

  it('ends a silent attempt at its time limit, and one queued for a connection too', async () => {
    const agent = new Agent({ connections: 1 });
    try {
      const first = call(agent, '/hang', { timeoutMs: 300 });
      const started = performance.now();
      // Queued behind the first: its own limit ends it, whether or not the connection frees.
      const queued = call(agent, '/hello', { timeoutMs: 100 });
      await expect(queued).rejects.toBeInstanceOf(AttemptTimeout);
      expect(performance.now() - started).toBeLessThan(250);
      await expect(first).rejects.toBeInstanceOf(AttemptTimeout);
    } finally {
      await agent.close();
    }
  });

  it("aborts with the caller's reason, at once even while queued", async () => {
    const agent = new Agent({ connections: 1 });
    try {
      const stop = new AbortController();
      const first = call(agent, '/hang', { signal: stop.signal });
      const queued = call(agent, '/hello', { signal: stop.signal });
      await new Promise((resolve) => setTimeout(resolve, 50));
      const reason = new Error('interrupted');
      stop.abort(reason);
      await expect(queued).rejects.toBe(reason);
      await expect(first).rejects.toBe(reason);
      await expect(call(agent, '/hello', { signal: stop.signal })).rejects.toBe(reason);
      // The connection is usable again after the aborts.
      expect((await call(agent, '/hello')).status).toBe(201);
    } finally {
      await agent.close();
    }
  });
});
