/**
 * The loop's HTTP endpoints, on node:http: `/healthz` for probes, `/metrics` for Prometheus, and
 * `POST /reconcile` for a git webhook. Anyone who reaches the port may call it, so every request is
 * bounded: headers and the whole request have timeouts, a body is read only up to a few KiB, and the
 * trigger needs the bearer token from the environment.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Health } from './health.js';
import type { ListenAddress } from './listen-address.js';
import { bearerMatches, RECONCILE_TOKEN_VARIABLE } from './token.js';

/** A webhook's payload is not read; anything longer than this is refused rather than buffered. */
export const MAX_BODY_BYTES = 64 * 1024;
const HEADERS_TIMEOUT_MS = 5_000;
const REQUEST_TIMEOUT_MS = 10_000;
const CLOSE_DEADLINE_MS = 5_000;

export interface StatusHandlers {
  health(): Health;
  metrics(): Promise<{ contentType: string; body: string }>;
  /** Asks for a cycle now; says whether one was already running (the request joins the next). */
  trigger(): { inFlight: boolean };
  /** CONVERGE_RECONCILE_TOKEN; without it `POST /reconcile` does not exist. */
  token: string | undefined;
}

export interface StatusServer {
  address: ListenAddress;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, body: unknown, contentType = 'application/json'): void {
  const text = typeof body === 'string' ? body : `${JSON.stringify(body)}\n`;
  res.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store' });
  res.end(text);
}

/** Reads and drops the body, up to `MAX_BODY_BYTES`; false (and a 413 sent) when it is longer. */
function drainBody(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
  return new Promise((resolve) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    const refuse = () => {
      res.setHeader('connection', 'close');
      send(res, 413, { error: `request body over ${MAX_BODY_BYTES} bytes` });
      req.destroy();
      resolve(false);
    };
    if (declared > MAX_BODY_BYTES) return refuse();
    let seen = 0;
    req.on('data', (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > MAX_BODY_BYTES) refuse();
    });
    req.on('end', () => resolve(true));
    req.on('error', () => resolve(false));
  });
}

async function handle(req: IncomingMessage, res: ServerResponse, h: StatusHandlers): Promise<void> {
  const path = (req.url ?? '/').split('?')[0];
  if ((path === '/healthz' || path === '/metrics') && req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('allow', 'GET, HEAD');
    send(res, 405, { error: 'use GET or HEAD' });
    return;
  }
  // HEAD is answered as GET (node:http sends the headers and drops the body).
  if (path === '/healthz') {
    const state = h.health();
    send(res, state.healthy ? 200 : 503, {
      status: state.healthy ? 'ok' : 'stale',
      reason: state.reason,
      ageSeconds: state.ageSeconds,
    });
    return;
  }
  if (path === '/metrics') {
    const { contentType, body } = await h.metrics();
    send(res, 200, body, contentType);
    return;
  }
  if (path === '/reconcile') {
    if (h.token === undefined || h.token === '') {
      send(res, 404, { error: `triggering is off: set ${RECONCILE_TOKEN_VARIABLE} to switch it on` });
      return;
    }
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      send(res, 405, { error: 'use POST' });
      return;
    }
    if (!(await drainBody(req, res))) return;
    if (!bearerMatches(req.headers.authorization, h.token)) {
      res.setHeader('www-authenticate', 'Bearer');
      send(res, 401, { error: `a bearer token equal to ${RECONCILE_TOKEN_VARIABLE} is required` });
      return;
    }
    const { inFlight } = h.trigger();
    send(res, 202, { queued: true, inFlight });
    return;
  }
  send(res, 404, { error: 'not found: /healthz, /metrics and POST /reconcile are served' });
}

export async function startStatusServer(
  listen: ListenAddress,
  handlers: StatusHandlers,
): Promise<StatusServer> {
  const server: Server = createServer((req, res) => {
    handle(req, res, handlers).catch(() => {
      if (!res.headersSent) send(res, 500, { error: 'internal error' });
      else res.destroy();
    });
  });
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  server.keepAliveTimeout = HEADERS_TIMEOUT_MS;
  server.maxHeadersCount = 50;
  await new Promise<void>((resolve, reject) => {
    const refused = (error: NodeJS.ErrnoException) => reject(listenError(error, listen));
    server.once('error', refused);
    server.listen(listen.port, listen.host, () => {
      server.off('error', refused);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  return {
    address: { host: bound.address, port: bound.port },
    close: () =>
      new Promise<void>((resolve) => {
        // Idle keep-alive sockets would hold close() open; a scrape in flight gets a short deadline.
        server.closeIdleConnections();
        const force = setTimeout(() => server.closeAllConnections(), CLOSE_DEADLINE_MS);
        force.unref();
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
      }),
  };
}

/** Why `--listen` could not be served, in words (node's `listen EADDRINUSE: …` names no remedy). */
function listenError(error: NodeJS.ErrnoException, listen: ListenAddress): Error {
  const where = `${listen.host.includes(':') ? `[${listen.host}]` : listen.host}:${listen.port}`;
  const why =
    error.code === 'EADDRINUSE'
      ? 'another process listens there; choose another port'
      : error.code === 'EACCES'
        ? 'permission denied (ports below 1024 need privileges)'
        : error.code === 'EADDRNOTAVAIL'
          ? 'no interface of this machine has that address'
          : (error.code ?? error.message);
  return new Error(`cannot listen on ${where} (--listen): ${why}`, { cause: error });
}
