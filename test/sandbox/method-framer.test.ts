/**
 * Extension methods (`LIST`) past node's HTTP parser: the framer on its own, and over raw sockets
 * against a sandbox whose only service declares `LIST`, with keep-alive, chunked bodies and pipelining.
 */
import { createServer } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonResponse } from '../../src/sandbox/core/http.js';
import {
  frameConnections,
  METHOD_MARKER_HEADER,
  MethodFramer,
} from '../../src/sandbox/core/method-framer.js';
import { defineService } from '../../src/sandbox/core/service.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';

const echoService = defineService<undefined>({
  name: 'echo',
  pathPrefixes: ['/v1/echo'],
  extensionMethods: ['LIST'],
  errorResponse: (status, message) => jsonResponse(status, { errors: [message] }),
  create(_ctx, router) {
    const echo = async (req: Parameters<Parameters<typeof router.add>[1][string] & object>[0]) =>
      jsonResponse(200, {
        method: req.method,
        path: req.path,
        body: await req.text(),
        remote: req.remoteAddress,
        marker: req.header(METHOD_MARKER_HEADER) ?? null,
      });
    router.add('/v1/echo/*rest', { GET: echo, POST: echo, LIST: echo });
    return {};
  },
});

let sandbox: RunningSandbox;
const logs: string[] = [];

beforeAll(async () => {
  sandbox = await startSandbox({ token: 'root', services: [echoService], log: (l) => logs.push(l) });
});

afterAll(async () => {
  await sandbox.close();
});

/** Sends raw bytes on one connection and collects `count` responses (bodies by Content-Length). */
async function exchange(
  chunks: string[],
  count: number,
): Promise<{ status: number; headers: string; body: string }[]> {
  const socket: Socket = connect(sandbox.port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  let received = Buffer.alloc(0);
  const responses: { status: number; headers: string; body: string }[] = [];
  const done = new Promise<void>((resolve, reject) => {
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      for (;;) {
        const end = received.indexOf('\r\n\r\n');
        if (end === -1) break;
        const head = received.subarray(0, end).toString('latin1');
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (received.length < end + 4 + length) break;
        responses.push({
          status: Number(head.split(' ')[1]),
          headers: head,
          body: received.subarray(end + 4, end + 4 + length).toString('utf8'),
        });
        received = received.subarray(end + 4 + length);
      }
      if (responses.length >= count) resolve();
    });
    socket.on('error', reject);
    socket.on('close', () => resolve());
  });
  for (const chunk of chunks) {
    socket.write(chunk);
    await new Promise((r) => setTimeout(r, 5));
  }
  await done;
  socket.destroy();
  return responses;
}

describe('the framer on its own', () => {
  const framer = () => new MethodFramer(['LIST'], 'n0nce');
  const run = (f: MethodFramer, ...parts: string[]) =>
    parts.map((p) => f.push(Buffer.from(p, 'latin1')).toString('latin1')).join('');

  it('rewrites LIST to GET with a marker, leaving other requests as they are', () => {
    expect(run(framer(), 'LIST /v1/echo/x HTTP/1.1\r\nHost: a\r\n\r\n')).toBe(
      `GET /v1/echo/x HTTP/1.1\r\n${METHOD_MARKER_HEADER}: LIST n0nce\r\nHost: a\r\n\r\n`,
    );
    expect(run(framer(), 'GET /v1/echo/x HTTP/1.1\r\nHost: a\r\n\r\n')).toBe(
      'GET /v1/echo/x HTTP/1.1\r\nHost: a\r\n\r\n',
    );
  });

  it('holds a request line split across chunks until it is whole', () => {
    const f = framer();
    expect(run(f, 'LI')).toBe('');
    expect(run(f, 'ST /a HTTP/1.1\r')).toBe('');
    expect(run(f, '\n\r\n')).toBe(`GET /a HTTP/1.1\r\n${METHOD_MARKER_HEADER}: LIST n0nce\r\n\r\n`);
  });

  it('skips Content-Length and chunked bodies that look like request lines', () => {
    const f = framer();
    const post = 'POST /a HTTP/1.1\r\nContent-Length: 24\r\n\r\nLIST /x HTTP/1.1\r\n\r\n\r\n\r\n';
    expect(run(f, post)).toBe(post);
    const chunked =
      'POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n14\r\nLIST /x HTTP/1.1\r\n\r\n\r\n0\r\nX-T: 1\r\n\r\n';
    expect(run(f, chunked)).toBe(chunked);
    expect(f.passingThrough).toBe(false);
    expect(run(f, 'LIST /b HTTP/1.1\r\n\r\n')).toContain('GET /b HTTP/1.1');
  });

  it('keeps framing after a request with an Upgrade header, but not after CONNECT', () => {
    const f = framer();
    expect(run(f, 'GET /a HTTP/1.1\r\nUpgrade: websocket\r\n\r\nLIST /b HTTP/1.1\r\n\r\n')).toContain(
      'GET /b HTTP/1.1',
    );
    const g = framer();
    const connect = 'CONNECT a:443 HTTP/1.1\r\n\r\nLIST /b HTTP/1.1\r\n\r\n';
    expect(run(g, connect)).toBe(connect);
    expect(g.passingThrough).toBe(true);
  });

  it('gives up on what it does not follow and passes everything on untouched', () => {
    const f = framer();
    const odd = 'POST /a HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\nLIST /b HTTP/1.1\r\n\r\n';
    expect(run(f, odd)).toBe(odd);
    expect(f.passingThrough).toBe(true);
    const g = framer();
    expect(run(g, 'LIST /b HTTP/2.0\r\n\r\n')).toBe('LIST /b HTTP/2.0\r\n\r\n');
    const h = framer();
    expect(run(h, 'GET /a HTTP/1.1\r\n folded\r\n\r\n')).toBe('GET /a HTTP/1.1\r\n folded\r\n\r\n');
    expect(h.passingThrough).toBe(true);
  });
});

describe('the fast path for whole heads', () => {
  // Byte by byte, no head is ever whole in one chunk, so every byte goes the line-by-line way; in one
  // chunk, ordinary heads take the fast path. Both must frame every stream alike.
  const streams = [
    'GET /a HTTP/1.1\r\nHost: a\r\n\r\nLIST /b HTTP/1.1\r\n\r\n',
    'POST /a HTTP/1.1\r\nContent-Length: 24\r\n\r\nLIST /x HTTP/1.1\r\n\r\n\r\n\r\nLIST /y HTTP/1.1\r\n\r\n',
    'PUT /a HTTP/1.1\r\ncontent-length:\t3 \r\n\r\nabcLIST /y HTTP/1.1\r\n\r\n',
    'POST /a HTTP/1.1\r\nContent-Length: 4\r\nContent-Length: 4\r\n\r\nabcdLIST /y HTTP/1.1\r\n\r\n',
    'POST /a HTTP/1.1\r\nContent-Length: 4\r\nContent-Length: 5\r\n\r\nabcdeLIST /y HTTP/1.1\r\n\r\n',
    'POST /a HTTP/1.1\r\nContent-Length: 4x\r\n\r\nabcdLIST /y HTTP/1.1\r\n\r\n',
    'POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\nLIST /y HTTP/1.1\r\n\r\n',
    'POST /a HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\nabcLIST /y HTTP/1.1\r\n\r\n',
    'GET /a HTTP/1.1\r\nX: 1\r\n folded\r\n\r\nLIST /y HTTP/1.1\r\n\r\n',
    'GET /a HTTP/1.1\nHost: a\n\nLIST /y HTTP/1.1\r\n\r\n',
    'GET /a HTTP/1.1\r\nHost: a\rb\r\n\r\nLIST /y HTTP/1.1\r\n\r\n',
    'CONNECT a:443 HTTP/1.1\r\n\r\nLIST /y HTTP/1.1\r\n\r\n',
    `GET /a HTTP/1.1\r\n${METHOD_MARKER_HEADER}: LIST guessed\r\n\r\nLIST /y HTTP/1.1\r\n${METHOD_MARKER_HEADER}: GET x\r\n\r\n`,
    'GET /a HTTP/2.0\r\n\r\nLIST /y HTTP/1.1\r\n\r\n',
    'LIST /a HTTP/1.1\r\nContent-Length: 16\r\n\r\nLIST /z HTTP/1.1GET /b HTTP/1.1\r\n\r\n',
    '\r\nGET /a HTTP/1.1\r\nUpgrade: websocket\r\n\r\nLIST /y HTTP/1.1\r\n\r\n',
  ];
  it.each(streams)('frames %j alike whole and byte by byte', (stream) => {
    const whole = new MethodFramer(['LIST'], 'n0nce');
    const bytewise = new MethodFramer(['LIST'], 'n0nce');
    const input = Buffer.from(stream, 'latin1');
    const fast = Buffer.concat([whole.push(input), whole.flush()]).toString('latin1');
    const slow = Buffer.concat([
      ...Array.from(input, (byte) => bytewise.push(Buffer.from([byte]))),
      bytewise.flush(),
    ]).toString('latin1');
    expect(fast).toBe(slow);
    expect(whole.passingThrough).toBe(bytewise.passingThrough);
  });

  it('rewrites a LIST that follows ordinary requests in the same chunk', () => {
    const f = new MethodFramer(['LIST'], 'n0nce');
    const out = f
      .push(
        Buffer.from(
          'GET /a HTTP/1.1\r\n\r\nPOST /b HTTP/1.1\r\nContent-Length: 2\r\n\r\nhiLIST /c HTTP/1.1\r\n\r\n',
        ),
      )
      .toString('latin1');
    expect(out).toBe(
      `GET /a HTTP/1.1\r\n\r\nPOST /b HTTP/1.1\r\nContent-Length: 2\r\n\r\nhiGET /c HTTP/1.1\r\n${METHOD_MARKER_HEADER}: LIST n0nce\r\n\r\n`,
    );
  });
});

describe('LIST over raw sockets', () => {
  it('reaches the router as LIST, with the client address and no marker header', async () => {
    const [res] = await exchange(['LIST /v1/echo/users HTTP/1.1\r\nHost: x\r\n\r\n'], 1);
    expect(res!.status).toBe(200);
    expect(JSON.parse(res!.body)).toEqual({
      method: 'LIST',
      path: '/v1/echo/users',
      body: '',
      remote: '127.0.0.1',
      marker: null,
    });
    expect(logs.some((l) => l.startsWith('LIST /v1/echo/users 200'))).toBe(true);
  });

  it('serves a POST with a JSON body and then a LIST on one keep-alive connection', async () => {
    const body = JSON.stringify({ policies: 'a,b' });
    const responses = await exchange(
      [
        `POST /v1/echo/groups/g HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
        'LIST /v1/echo/groups HTTP/1.1\r\nHost: x\r\n\r\n',
      ],
      2,
    );
    expect(responses.map((r) => JSON.parse(r.body) as { method: string; body: string })).toEqual([
      expect.objectContaining({ method: 'POST', body }),
      expect.objectContaining({ method: 'LIST', body: '' }),
    ]);
  });

  it('serves a chunked POST and then a LIST, also pipelined in one write', async () => {
    const chunked =
      'POST /v1/echo/users/u HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n' +
      '5\r\n{"a":\r\n3\r\n"b"\r\n1\r\n}\r\n0\r\n\r\n';
    const list = 'LIST /v1/echo/users HTTP/1.1\r\nHost: x\r\n\r\n';
    for (const chunks of [[chunked, list], [chunked + list]]) {
      const responses = await exchange(chunks, 2);
      expect(responses.map((r) => JSON.parse(r.body) as { method: string; body: string })).toEqual([
        expect.objectContaining({ method: 'POST', body: '{"a":"b"}' }),
        expect.objectContaining({ method: 'LIST' }),
      ]);
    }
  });

  it('ignores a marker header a client sends itself', async () => {
    const [res] = await exchange(
      [`GET /v1/echo/x HTTP/1.1\r\nHost: x\r\n${METHOD_MARKER_HEADER}: LIST guessed\r\n\r\n`],
      1,
    );
    expect(JSON.parse(res!.body)).toEqual(expect.objectContaining({ method: 'GET' }));
    const [list] = await exchange(
      [`LIST /v1/echo/x HTTP/1.1\r\nHost: x\r\n${METHOD_MARKER_HEADER}: GET guessed\r\n\r\n`],
      1,
    );
    expect(JSON.parse(list!.body)).toEqual(expect.objectContaining({ method: 'LIST', marker: null }));
  });

  it('leaves malformed requests to node, which still answers 400', async () => {
    const [res] = await exchange(['BREW /v1/echo/x HTTP/1.1\r\nHost: x\r\n\r\n'], 1);
    expect(res!.status).toBe(400);
  });

  it('still works through fetch', async () => {
    const res = await fetch(`${sandbox.url}/v1/echo/y`, { method: 'POST', body: 'hi' });
    expect(await res.json()).toEqual(expect.objectContaining({ method: 'POST', body: 'hi' }));
  });
});

describe('a request line sent a byte at a time', () => {
  /** A server framed as the sandbox's, whose head deadline is short enough to wait for. */
  async function serverWith(): Promise<{ port: number; close: () => Promise<void> }> {
    const server = createServer({ headersTimeout: 400, requestTimeout: 800 }, (_req, res) => res.end('ok'));
    frameConnections(server, () => new MethodFramer(['LIST'], 'nonce'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      port: (server.address() as AddressInfo).port,
      close: () => {
        server.closeAllConnections();
        return new Promise((resolve) => server.close(() => resolve()));
      },
    };
  }

  /**
   * Trickles a request line a byte every 50 ms, after `before` (whole requests sent at once), and
   * stops at `giveUpMs`: what came back, whether the server closed, and whether the line was still
   * being sent then (it is long enough to take seconds).
   */
  function trickle(
    port: number,
    giveUpMs: number,
    before = '',
  ): Promise<{ closed: boolean; answer: string; stillSending: boolean }> {
    return new Promise((resolve) => {
      const socket = connect(port, '127.0.0.1');
      const line = `LIST /v1/echo/${'x'.repeat(200)} HTTP/1.1`;
      let sent = 0;
      let answer = '';
      if (before) socket.write(before);
      const tick = setInterval(() => {
        if (!socket.destroyed && sent < line.length) socket.write(line[sent++]!);
      }, 50);
      const finish = (closed: boolean) => {
        clearInterval(tick);
        clearTimeout(giveUp);
        socket.destroy();
        resolve({ closed, answer, stillSending: sent < line.length });
      };
      const giveUp = setTimeout(() => finish(false), giveUpMs);
      socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
      socket.on('close', () => finish(true));
      socket.on('error', () => {});
    });
  }

  it("is cut off at the server's headersTimeout with node's 408, as node cuts off a head it parses itself", async () => {
    // Held by the framer, the line never reaches node's parser, whose own deadline then never starts.
    const framed = await serverWith();
    try {
      const started = performance.now();
      const result = await trickle(framed.port, 3000);
      expect(result.closed).toBe(true);
      // Cut off while the client was still sending: the deadline ran from the line's first byte,
      // not from its latest one.
      expect(result.stillSending).toBe(true);
      expect(result.answer).toBe('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
      expect(performance.now() - started).toBeGreaterThanOrEqual(380);
    } finally {
      await framed.close();
    }
  });

  it('answers the 408 on a keep-alive connection too, after the answers already sent', async () => {
    const framed = await serverWith();
    try {
      const result = await trickle(framed.port, 3000, 'GET /first HTTP/1.1\r\nHost: x\r\n\r\n');
      expect(result.closed).toBe(true);
      expect(result.answer).toMatch(
        /^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\nokHTTP\/1\.1 408 Request Timeout\r\n/,
      );
    } finally {
      await framed.close();
    }
  });

  it('does not cut off a line that ends in time, nor the requests after it', async () => {
    const framed = await serverWith();
    try {
      const socket = connect(framed.port, '127.0.0.1');
      socket.on('error', () => {});
      let answer = '';
      socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
      await new Promise((resolve) => socket.once('connect', resolve));
      // Split twice, each part well within the deadline; together longer than it.
      for (const part of ['GET /a', ' HTTP/1.1\r\nHost: x\r\n\r\nGET /b HT', 'TP/1.1\r\nHost: x\r\n\r\n']) {
        socket.write(part);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(socket.destroyed).toBe(false);
      expect(answer.match(/HTTP\/1\.1 200 OK/g)).toHaveLength(2);
      socket.destroy();
    } finally {
      await framed.close();
    }
  });
});
