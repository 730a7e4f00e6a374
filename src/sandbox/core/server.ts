/**
 * The one HTTP listener all services share. It turns node's request into a `SandboxRequest`, applies
 * injected faults, dispatches through the router, renders errors in the owning service's style, logs
 * one line per request, and shuts down cleanly: pending blocking queries answer, keep-alive sockets
 * close, and `close()` resolves only when the port is free.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { finished } from 'node:stream';
import { jsonNestsDeeperThan } from '../../common/json-depth.js';
import { credentialKey } from './credential.js';
import type { FaultDecision, FaultInjector } from './faults.js';
import {
  BodyNestedTooDeepError,
  BodyTooLargeError,
  MAX_BODY_BYTES,
  MAX_BODY_NESTING,
  type SandboxRequest,
  type SandboxResponse,
  textResponse,
} from './http.js';
import { frameConnections, METHOD_MARKER_HEADER, MethodFramer } from './method-framer.js';
import type { Router } from './router.js';
import { type AnyServiceDefinition, pathHasPrefix } from './service.js';

export interface SandboxServerOptions {
  router: Router;
  services: readonly AnyServiceDefinition[];
  faults?: FaultInjector;
  /** Aborted by close(); services watch it to end blocking queries. */
  shutdown: AbortController;
  log?: (line: string) => void;
}

/** How long in-flight requests get to finish during close() before their sockets are cut. */
const CLOSE_GRACE_MS = 2000;

export class SandboxStartError extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
    this.name = 'SandboxStartError';
  }
}

export class SandboxServer {
  private readonly server: Server;
  private closing: Promise<void> | undefined;
  /** Proves a method marker was added by this server's framer, not sent by a client. */
  private readonly markerNonce = randomBytes(16).toString('hex');
  /** Per connection, the handling of its latest request: the next one pipelined waits for it. */
  private readonly turns = new WeakMap<Socket, Promise<void>>();
  /** Wakes each request in its added latency: closing cuts the waits short. */
  private readonly sleepers = new Set<() => void>();

  constructor(private readonly opts: SandboxServerOptions) {
    this.server = createServer({ keepAlive: true }, (req, res) => {
      const run = () =>
        this.handle(req, res).catch((err: Error) => {
          // Last resort: a bug in the core must cost one request, never the process.
          this.opts.log?.(`sandbox error: ${err.stack ?? err.message}`);
          if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
          res.end('sandbox internal error');
        });
      // One request at a time per connection, as the real services' Go servers handle them: node
      // emits a pipelined request while the one before it still runs, and a read pipelined after a
      // write then answered from before the write.
      const socket = req.socket;
      const before = this.turns.get(socket);
      // A request waiting its turn on a connection the client closed is not handled: nobody reads
      // its answer, and node never tells a queued response that its client left.
      const turn = before ? before.then(() => (socket.destroyed ? undefined : run())) : run();
      this.turns.set(socket, turn);
      void turn.then(() => {
        if (this.turns.get(socket) === turn) this.turns.delete(socket);
      });
    });
    const methods = new Set(opts.services.flatMap((s) => s.extensionMethods ?? []));
    // Requests with an extension method (`LIST`) reach the router instead of node's 400.
    if (methods.size > 0) {
      frameConnections(this.server, () => new MethodFramer(methods, this.markerNonce), opts.log);
    }
  }

  listen(port: number, host: string): Promise<AddressInfo> {
    return new Promise((resolve, reject) => {
      const onError = (err: NodeJS.ErrnoException) => {
        this.server.off('listening', onListening);
        reject(describeListenError(err, port, host));
      };
      const onListening = () => {
        this.server.off('error', onError);
        resolve(this.server.address() as AddressInfo);
      };
      this.server.once('error', onError);
      this.server.once('listening', onListening);
      this.server.listen({ port, host });
    });
  }

  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      this.opts.shutdown.abort();
      for (const wake of this.sleepers) wake();
      if (!this.server.listening) {
        resolve();
        return;
      }
      const force = setTimeout(() => this.server.closeAllConnections(), CLOSE_GRACE_MS);
      this.server.close(() => {
        clearTimeout(force);
        resolve();
      });
      this.server.closeIdleConnections();
    });
    return this.closing;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    const url = requestUrl(req.url);
    const shutdown = this.opts.shutdown.signal;
    // "Client gone or sandbox closing" as a signal, made only for the handlers that ask for one (a
    // blocking query, a directory login): an AbortController with its listeners for every request
    // was a tenth of the sandbox's CPU. Built by hand rather than with AbortSignal.any so no listener
    // stays on the long-lived shutdown signal after the response.
    let aborter: AbortController | undefined;
    let onShutdown: (() => void) | undefined;
    let gone = false;
    let closed = false;
    const signal = (): AbortSignal => {
      if (!aborter) {
        const made = new AbortController();
        aborter = made;
        // Read after the answer (background work): the request is over, and no listener may be
        // left on the shutdown signal with nothing to remove it.
        if (gone || closed || shutdown.aborted) made.abort();
        else {
          onShutdown = () => made.abort();
          shutdown.addEventListener('abort', onShutdown, { once: true });
        }
      }
      return aborter.signal;
    };
    let wake: (() => void) | undefined;
    res.on('close', () => {
      closed = true;
      if (onShutdown) shutdown.removeEventListener('abort', onShutdown);
      // Only a client gone before its answer leaves anything waiting. Aborting after every answer
      // built an AbortError (a stack trace) per request: a tenth of the bench's sandbox CPU.
      if (!res.writableFinished) {
        gone = true;
        aborter?.abort();
        wake?.();
      }
    });
    const request = toSandboxRequest(req, url, signal, this.markerNonce);
    const service = this.opts.services.find((s) =>
      s.pathPrefixes.some((p) => pathHasPrefix(url.pathname, p)),
    );

    // Decided on arrival, so the seeded sequence follows the order requests come in.
    const fault = this.opts.faults?.decide(service?.name, () =>
      credentialKey(req.headers, url.searchParams, request.remoteAddress),
    );
    if (fault && fault.delayMs > 0 && !gone && !shutdown.aborted)
      await this.delay(fault.delayMs, (w) => (wake = w));

    let response: SandboxResponse;
    try {
      if (fault?.kind === 'reset' && !fault.afterActing) {
        this.drop(req, request, url, started, 'before acting');
        return;
      }
      const injected = fault && fault.kind !== 'reset' ? this.faultResponse(fault, service) : undefined;
      response = injected ?? (await this.route(request, service));
      if (fault?.kind === 'reset') {
        this.drop(req, request, url, started, `after acting (${response.status} not sent)`);
        return;
      }
    } catch (err) {
      response =
        err instanceof BodyTooLargeError
          ? renderError(service, 413, err.message)
          : err instanceof BodyNestedTooDeepError
            ? renderError(service, 400, err.message)
            : renderError(service, 500, `sandbox internal error: ${(err as Error).message}`);
      this.opts.log?.(`sandbox error on ${request.method} ${url.pathname}: ${(err as Error).stack ?? err}`);
    }
    this.write(res, response);
    this.opts.log?.(
      `${request.method} ${redactTokens(url)} ${response.status} ${Math.round(performance.now() - started)}ms`,
    );
  }

  /**
   * Waits `ms`, or less when `wake` is called (the client went) or the sandbox closes: a timer and a
   * set entry, where a signal-listening sleep cost an AbortController and two listeners a request.
   */
  private delay(ms: number, setWake: (wake: () => void) => void): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.sleepers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.sleepers.add(done);
      setWake(done);
    });
  }

  /** The answer an injected fault gives in place of the service's; undefined lets the service answer. */
  private faultResponse(
    fault: Exclude<FaultDecision, { kind: 'reset' }>,
    service: AnyServiceDefinition | undefined,
  ): SandboxResponse | undefined {
    switch (fault.kind) {
      case 'pass':
        return undefined;
      case 'unavailable':
        return renderError(service, 503, fault.message);
      case 'rate-limited': {
        const res = renderError(service, 429, fault.message);
        return { ...res, headers: { ...res.headers, ...fault.headers } };
      }
    }
  }

  /** An injected connection reset: the socket is destroyed with no answer at all. */
  private drop(req: IncomingMessage, request: SandboxRequest, url: URL, started: number, when: string): void {
    req.socket.destroy();
    this.opts.log?.(
      `${request.method} ${redactTokens(url)} connection dropped ${when} ${Math.round(performance.now() - started)}ms`,
    );
  }

  private async route(
    req: SandboxRequest,
    service: AnyServiceDefinition | undefined,
  ): Promise<SandboxResponse> {
    const match = this.opts.router.match(req.method, req.path);
    switch (match.kind) {
      case 'found':
        req.params = match.params;
        return await match.handler(req);
      case 'method-not-allowed': {
        const allow = ['OPTIONS', ...match.allowed].join(',');
        if (req.method === 'OPTIONS') return { status: 200, headers: { Allow: allow } };
        const res =
          service?.methodNotAllowed?.(req.method, match.allowed) ??
          renderError(service, 405, `method ${req.method} not allowed`);
        return { ...res, headers: { Allow: allow, ...res.headers } };
      }
      case 'not-found':
        return service?.notFound?.(req) ?? renderError(service, 404, `no sandbox endpoint at ${req.path}`);
    }
  }

  private write(res: ServerResponse, response: SandboxResponse): void {
    if (res.destroyed) return;
    const body = response.body ?? '';
    const headers: Record<string, string | number> = { ...response.headers };
    // A 204 or 304 has no body and, as Go's server writes it, no Content-Length either.
    if (response.status !== 204 && response.status !== 304)
      headers['Content-Length'] = typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
    // Once closing, tell keep-alive clients not to reuse the socket so the port frees quickly; after
    // an oversized body, do not go on reading what the client still sends.
    if (this.closing || oversized.has(res.req)) headers.Connection = 'close';
    res.writeHead(response.status, headers);
    res.end(body);
  }
}

/** The request target as a URL; `//x` stays a path (not a host), as servers read it. */
function requestUrl(target: string | undefined): URL {
  const base = 'http://sandbox.invalid';
  try {
    return target?.startsWith('/') ? new URL(`${base}${target}`) : new URL(target ?? '/', base);
  } catch {
    return new URL('/', base);
  }
}

function renderError(
  service: AnyServiceDefinition | undefined,
  status: number,
  message: string,
): SandboxResponse {
  return service ? service.errorResponse(status, message) : textResponse(status, message);
}

function toSandboxRequest(
  req: IncomingMessage,
  url: URL,
  signal: () => AbortSignal,
  markerNonce: string,
): SandboxRequest {
  let body: Promise<string> | undefined;
  return {
    method: originalMethod(req, markerNonce),
    path: url.pathname,
    query: url.searchParams,
    headers: req.headers,
    params: {},
    remoteAddress: req.socket.remoteAddress ?? '',
    get signal() {
      return signal();
    },
    header(name) {
      const value = req.headers[name.toLowerCase()];
      return Array.isArray(value) ? value[0] : value;
    },
    text() {
      body ??= readBody(req).then(refuseDeepNesting);
      return body;
    },
  };
}

/** The method as sent: the framer's marker (checked against its nonce) names an extension method. */
function originalMethod(req: IncomingMessage, nonce: string): string {
  const marker = req.headers[METHOD_MARKER_HEADER];
  if (typeof marker === 'string') {
    delete req.headers[METHOD_MARKER_HEADER];
    const [method, given] = marker.split(' ');
    if (given === nonce && method) return method;
  }
  return req.method ?? 'GET';
}

/** Requests whose body passed MAX_BODY_BYTES: their answer closes the connection. */
const oversized = new WeakSet<IncomingMessage>();

/**
 * The whole body, read by events (an async iterator per request cost more than the read). Over
 * MAX_BODY_BYTES the rest is drained unread and the read refused, so the 413 (or the service's own
 * answer) still reaches the client, on a connection closed after it; a body cut short, or a request
 * already gone when its body is asked for (a hang-up during added latency), rejects.
 */
function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > MAX_BODY_BYTES) {
        req.off('data', onData);
        chunks.length = 0;
        oversized.add(req);
        req.resume();
        reject(new BodyTooLargeError(MAX_BODY_BYTES));
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    // `finished` also answers for a request that ended or was destroyed before this was called.
    finished(req, (err) => {
      if (oversized.has(req)) return;
      if (err) reject(err);
      else resolve(Buffer.concat(chunks, size).toString('utf8'));
    });
  });
}

/** The body, unless it is JSON nested deeper than the handlers' recursion survives. */
function refuseDeepNesting(text: string): string {
  if (jsonNestsDeeperThan(text, MAX_BODY_NESTING)) throw new BodyNestedTooDeepError(MAX_BODY_NESTING);
  return text;
}

/** Tokens passed as `?token=` never reach the log (as the real registry redacts them). */
function redactTokens(url: URL): string {
  if (!url.searchParams.has('token')) return url.pathname + url.search;
  const query = url.search
    .slice(1)
    .split('&')
    .map((pair) => (isTokenPair(pair) ? 'token=<hidden>' : pair));
  return `${url.pathname}?${query.join('&')}`;
}

/** Compared decoded, as the registry reads it: `%74oken=…` is a token too. */
function isTokenPair(pair: string): boolean {
  return new URLSearchParams(pair).keys().next().value === 'token';
}

function describeListenError(err: NodeJS.ErrnoException, port: number, host: string): SandboxStartError {
  switch (err.code) {
    case 'EADDRINUSE':
      return new SandboxStartError(
        `port ${port} on ${host} is already in use; stop whatever listens there or choose another port (0 picks a free one)`,
        err.code,
      );
    case 'EACCES':
      return new SandboxStartError(
        `not allowed to listen on ${host}:${port} (ports below 1024 need privileges)`,
        err.code,
      );
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
      return new SandboxStartError(`cannot listen on host '${host}': no such local address`, err.code);
    default:
      return new SandboxStartError(`cannot listen on ${host}:${port}: ${err.message}`, err.code);
  }
}
