/**
 * The connection pool loads the part of undici it uses: a command that makes requests does not pay
 * for undici's fetch, WebSocket or mock agent (about 50 ms of CPU each time it starts).
 */
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/clients/http/index.js';

const require = createRequire(import.meta.url);
const server = createServer((req, res) => {
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ path: req.url, method: req.method }));
});
let baseUrl = '';
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('the built-in connection pool', () => {
  it("sends requests with undici's Agent without loading fetch, WebSocket or the mock agent", async () => {
    const client = new HttpClient({ service: 'registry', baseUrl, token: 't' });
    try {
      const res = await client.request({ method: 'GET', path: '/v1/acl/roles', query: { prefix: 'a' } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ path: '/v1/acl/roles?prefix=a', method: 'GET' });
    } finally {
      await client.close();
    }
    const loaded = Object.keys(require.cache).filter((file) => /[\\/]undici[\\/]/.test(file));
    expect(loaded.some((file) => /dispatcher[\\/]agent\.js$/.test(file))).toBe(true);
    expect(loaded.filter((file) => /[\\/]lib[\\/](web|mock)[\\/]/.test(file))).toEqual([]);
  });
});
