/**
 * Timeouts, refused and broken connections, keep-alive and TLS against real sockets on 127.0.0.1: the
 * failures a MockAgent can only pretend to have.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createTcpServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ConnectionError,
  HttpClient,
  type HttpClientOptions,
  type RetryEvent,
  TimeoutError,
} from '../../src/clients/http/index.js';
import { RegistryClient } from '../../src/clients/registry/client.js';
import { WorkspacesClient } from '../../src/clients/workspaces/client.js';
import { caught, everyRendering, TOKEN } from './helpers.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

type Closable = {
  listen(port: number, host: string, cb: () => void): unknown;
  address(): unknown;
  close(): unknown;
};

/** Listens on a free loopback port and registers the server (and its sockets) for closing. */
async function listen(server: Closable, sockets: Set<Socket> = new Set()): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close();
        resolve();
      }),
  );
  return `127.0.0.1:${(server.address() as { port: number }).port}`;
}

/**
 * Accepts connections and never answers. Counts requests received rather than connections: undici's
 * pool may open a spare connection after an aborted request.
 */
async function hangingServer(): Promise<{ address: string; requests: () => number }> {
  const sockets = new Set<Socket>();
  let count = 0;
  const server = createTcpServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('data', (chunk) => {
      count += chunk.toString('latin1').match(/^[A-Z]+ \S+ HTTP\/1\.1\r\n/gm)?.length ?? 0;
    });
  });
  return { address: `http://${await listen(server, sockets)}`, requests: () => count };
}

function client(baseUrl: string, overrides: Partial<HttpClientOptions> = {}): HttpClient {
  const c = new HttpClient({
    service: 'registry',
    baseUrl,
    token: TOKEN,
    requestTimeoutMs: 200,
    ...overrides,
    retry: { minDelayMs: 1, maxDelayMs: 5, ...overrides.retry },
  });
  closers.push(() => c.close());
  return c;
}

describe('timeouts', () => {
  it('times out a GET that gets no answer, retrying it', async () => {
    const server = await hangingServer();
    const c = client(server.address, { retry: { maxRetries: 2 } });
    const started = performance.now();
    const err = await caught(c.request({ method: 'GET', path: '/v1/acl/roles' }));
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err).toMatchObject({ kind: 'timeout', phase: 'response', timeoutMs: 200, attempts: 3 });
    expect((err as Error).message).toBe(
      `registry: GET /v1/acl/roles → no complete response from ${server.address} within 200ms (gave up after 3 attempts)`,
    );
    expect(performance.now() - started).toBeGreaterThanOrEqual(550);
    expect(server.requests()).toBe(3);
    expect(everyRendering(err)).not.toContain(TOKEN);
  });

  it('does not retry a POST that timed out: the service may have acted on it', async () => {
    const server = await hangingServer();
    const c = client(server.address);
    const err = await caught(c.request({ method: 'POST', path: '/v1/jobs', body: {} }));
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err).toMatchObject({ attempts: 1 });
    expect(c.requestCount).toBe(1);
    expect(server.requests()).toBe(1);
  });

  it('lets one request wait longer than the default (blocking queries)', async () => {
    const server = createHttpServer((_req, res) => setTimeout(() => res.end('late'), 400));
    const c = client(`http://${await listen(server)}`);
    const res = await c.request({ method: 'GET', path: '/slow', timeoutMs: 2000 });
    expect(res.body).toBe('late');
  });

  it('counts the body in the timeout: headers alone are not a response', async () => {
    const server = createHttpServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('partial');
    });
    const sockets = new Set<Socket>();
    server.on('connection', (s) => sockets.add(s));
    const c = client(`http://${await listen(server, sockets)}`, { retry: { maxRetries: 0 } });
    await expect(c.request({ method: 'GET', path: '/dribble' })).rejects.toBeInstanceOf(TimeoutError);
  });
});

describe('deadline', () => {
  it('bounds the whole request, retries included, and says so', async () => {
    const server = await hangingServer();
    const events: RetryEvent[] = [];
    // Ten retries of 200 ms would take over 2 s; the deadline stops them at 500 ms.
    const c = client(server.address, {
      deadlineMs: 500,
      retry: { maxRetries: 10 },
      onRetry: (e) => events.push(e),
    });
    const started = performance.now();
    const err = await caught(c.request({ method: 'GET', path: '/v1/acl/roles' }));
    const elapsed = performance.now() - started;

    expect(err).toBeInstanceOf(TimeoutError);
    expect(err).toMatchObject({ kind: 'timeout', phase: 'response', timeoutMs: 200, deadlineMs: 500 });
    const attempts = (err as TimeoutError).attempts;
    expect(attempts).toBeGreaterThanOrEqual(2);
    expect(attempts).toBeLessThanOrEqual(3);
    expect((err as Error).message).toMatch(
      new RegExp(
        `^registry: GET /v1/acl/roles → gave up after \\d+ms and ${attempts} attempts \\(deadline 500ms\\): ` +
          `no complete response from ${server.address} within 200ms$`,
      ),
    );
    expect(elapsed).toBeGreaterThanOrEqual(390);
    expect(elapsed).toBeLessThan(900);
    expect(events.map((e) => [e.attempt, e.reason, e.maxAttempts])).toEqual(
      Array.from({ length: attempts - 1 }, (_, i) => [i + 1, 'no complete response within 200ms', 11]),
    );
  });

  it('cuts an attempt to the time left, and reports the limit it really had', async () => {
    const server = await hangingServer();
    const c = client(server.address, { requestTimeoutMs: 5_000, deadlineMs: 300 });
    const started = performance.now();
    const err = await caught(c.request({ method: 'GET', path: '/v1/acl/roles' }));
    expect(performance.now() - started).toBeLessThan(1_500);
    expect(err).toMatchObject({ timeoutMs: 300, deadlineMs: 300, attempts: 1 });
    expect((err as Error).message).toMatch(
      /→ gave up after \d+ms and 1 attempt \(deadline 300ms\): no complete response from \S+ within 300ms$/,
    );
  });

  it('extends the deadline for a request that may wait longer (blocking queries)', async () => {
    const server = createHttpServer((_req, res) => setTimeout(() => res.end('late'), 600));
    const c = client(`http://${await listen(server)}`, { requestTimeoutMs: 100, deadlineMs: 300 });
    const res = await c.request({ method: 'GET', path: '/v1/acl/roles?index=7', timeoutMs: 2_000 });
    expect(res.body).toBe('late');
  });

  it('reaches the HTTP layer through both service clients', async () => {
    const server = await hangingServer();
    const http = { requestTimeoutMs: 5_000, deadlineMs: 250, retry: { minDelayMs: 1, maxDelayMs: 5 } };
    const registry = RegistryClient.fromConnection({ address: server.address, http });
    const workspaces = WorkspacesClient.fromConnection({
      address: server.address,
      defaultOrganization: 'acme',
      http,
    });
    closers.push(
      () => registry.close(),
      () => workspaces.close(),
    );
    const started = performance.now();
    const [a, b] = await Promise.all([caught(registry.listRoles()), caught(workspaces.listProjects('acme'))]);
    expect(performance.now() - started).toBeLessThan(1_500);
    expect(a).toMatchObject({ service: 'registry', kind: 'timeout', deadlineMs: 250 });
    expect(b).toMatchObject({ service: 'workspaces', kind: 'timeout', deadlineMs: 250 });
  });
});

describe('connection errors', () => {
  it('reports a closed port as a ConnectionError naming the address, retrying even a POST', async () => {
    const probe = createTcpServer();
    const address = await new Promise<string>((resolve) =>
      probe.listen(0, '127.0.0.1', () =>
        resolve(`http://127.0.0.1:${(probe.address() as { port: number }).port}`),
      ),
    );
    await new Promise((resolve) => probe.close(resolve));
    const c = client(address, { retry: { maxRetries: 2 } });
    const err = await caught(c.request({ method: 'POST', path: '/v1/jobs', body: {} }));
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err).toMatchObject({ kind: 'connection', code: 'ECONNREFUSED', address, attempts: 3 });
    expect((err as Error).message).toContain(`cannot reach ${address}: connection refused (ECONNREFUSED)`);
    expect((err as Error).message).toContain('check CONVERGE_REGISTRY_ADDR');
    expect(c.requestCount).toBe(3);
  });

  it('gives up on a port where nothing listens after 4 attempts, not the 9 a failing service gets', async () => {
    const probe = createTcpServer();
    const address = await new Promise<string>((resolve) =>
      probe.listen(0, '127.0.0.1', () =>
        resolve(`http://127.0.0.1:${(probe.address() as { port: number }).port}`),
      ),
    );
    await new Promise((resolve) => probe.close(resolve));
    const c = client(address);
    const err = await caught(c.request({ method: 'GET', path: '/v1/jobs' }));
    expect(err).toMatchObject({ kind: 'connection', code: 'ECONNREFUSED', attempts: 4 });
    expect(c.requestCount).toBe(4);
  });

  it('names the address source given by the caller (a manifest connection)', async () => {
    const probe = createTcpServer();
    const address = await new Promise<string>((resolve) =>
      probe.listen(0, '127.0.0.1', () =>
        resolve(`http://127.0.0.1:${(probe.address() as { port: number }).port}`),
      ),
    );
    await new Promise((resolve) => probe.close(resolve));
    const c = client(address, {
      retry: { maxRetries: 0 },
      addressSource: 'connection "eu" (infra/conn.yaml:3:7)',
    });
    const err = await caught(c.request({ method: 'GET', path: '/x' }));
    expect((err as Error).message).toContain('check connection "eu" (infra/conn.yaml:3:7)');
  });

  it('says an answer that is not HTTP comes from the wrong address, without retrying it', async () => {
    let connections = 0;
    // An SSH server (or a database) at the address: it speaks first, and never HTTP.
    const server = createTcpServer((socket) => {
      connections++;
      socket.on('error', () => {});
      socket.end('SSH-2.0-OpenSSH_9.2\r\n');
    });
    const address = `http://${await listen(server)}`;
    const c = client(address, { retry: { maxRetries: 2 } });
    const err = await caught(c.request({ method: 'GET', path: '/x' }));
    expect(err).toBeInstanceOf(ConnectionError);
    expect((err as Error).message).toContain(
      `cannot reach ${address}: the answer is not HTTP (HPE_INVALID); check that`,
    );
    expect((err as Error).message).toContain("is the service's address");
    expect(connections).toBe(1);
  });

  it('retries a GET when the service drops the connection, but not a POST', async () => {
    let connections = 0;
    const server = createTcpServer((socket) => {
      connections++;
      socket.on('error', () => {});
      socket.once('data', () => socket.destroy());
    });
    const address = `http://${await listen(server)}`;
    const c = client(address, { retry: { maxRetries: 2 } });

    const getErr = await caught(c.request({ method: 'GET', path: '/x' }));
    expect(getErr).toBeInstanceOf(ConnectionError);
    expect(getErr).toMatchObject({ attempts: 3 });
    expect(['UND_ERR_SOCKET', 'ECONNRESET']).toContain((getErr as ConnectionError).code);
    // The service was reached: no "cannot reach", no hint to check an address that is right.
    expect((getErr as Error).message).toMatch(
      new RegExp(
        `connection to ${address.replace(/[.]/g, '\\.')} lost before the answer: connection (closed|reset) by the service`,
      ),
    );
    expect((getErr as Error).message).not.toMatch(/cannot reach|is the service running|check CONVERGE_/);
    expect(connections).toBe(3);

    expect((getErr as Error).message).not.toContain('may have carried the request out');
    const postErr = await caught(c.request({ method: 'POST', path: '/x', body: {} }));
    expect(postErr).toMatchObject({ attempts: 1 });
    // A write whose answer was lost may have been done: the message says so.
    expect((postErr as Error).message).toContain('lost before the answer');
    expect((postErr as Error).message).toContain('the service may have carried the request out');
    expect(connections).toBe(4);
  });

  it('reuses keep-alive connections for sequential requests', async () => {
    let connections = 0;
    const server: Server = createHttpServer((_req, res) => res.end('ok'));
    server.on('connection', () => connections++);
    const c = client(`http://${await listen(server)}`);
    for (let i = 0; i < 6; i++) await c.request({ method: 'GET', path: '/x' });
    // undici hands the next request to a second socket while the first is being released, then
    // alternates between the two: two connections, not six.
    expect(connections).toBeLessThanOrEqual(2);
  });
});

// A throwaway self-signed certificate for 127.0.0.1, made with the openssl command when it exists.
const tls = (() => {
  try {
    const dir = mkdtempSync(join(tmpdir(), 'converge-tls-'));
    execFileSync(
      'openssl',
      [
        ...[
          'req',
          '-x509',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:prime256v1',
          '-nodes',
          '-days',
          '1',
        ],
        ...['-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')],
        ...['-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'],
      ],
      { stdio: 'ignore' },
    );
    const pair = {
      key: readFileSync(join(dir, 'key.pem'), 'utf8'),
      cert: readFileSync(join(dir, 'cert.pem'), 'utf8'),
    };
    rmSync(dir, { recursive: true, force: true });
    return pair;
  } catch {
    return undefined;
  }
})();

describe('an https:// address served in plain HTTP', () => {
  it('says a plain-HTTP server at an https:// address speaks no TLS, without OpenSSL internals or a CA hint', async () => {
    const server = createHttpServer((_req, res) => res.end('plain'));
    const c = client(`https://${await listen(server)}`);
    const err = await caught(c.request({ method: 'GET', path: '/x' }));
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err).toMatchObject({ attempts: 1 });
    const message = (err as Error).message;
    expect(message).toContain('TLS: the server did not answer in TLS (wrong version number)');
    expect(message).toContain(
      'the server at the address in CONVERGE_REGISTRY_ADDR speaks no TLS on that port: if it serves plain HTTP, write the address with http://',
    );
    expect(message).not.toMatch(/SSL routines|openssl|\.c:\d+|CACERT/);
  });
});

describe.skipIf(!tls)('TLS', () => {
  async function httpsServer(): Promise<string> {
    const server = createHttpsServer({ key: tls!.key, cert: tls!.cert }, (_req, res) => res.end('secure'));
    return `https://${await listen(server)}`;
  }

  it('refuses an unknown certificate with a hint, and does not retry it', async () => {
    const c = client(await httpsServer());
    const err = await caught(c.request({ method: 'GET', path: '/x' }));
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err).toMatchObject({ attempts: 1 });
    expect((err as Error).message).toContain('TLS:');
    expect((err as Error).message).toContain('set CONVERGE_REGISTRY_CACERT');
  });

  it('trusts a given CA certificate', async () => {
    const c = client(await httpsServer(), { caCertificate: tls!.cert });
    expect((await c.request({ method: 'GET', path: '/x' })).body).toBe('secure');
  });

  it('skips verification only when asked explicitly', async () => {
    const c = client(await httpsServer(), { insecureSkipTlsVerify: true });
    expect((await c.request({ method: 'GET', path: '/x' })).body).toBe('secure');
  });
});
