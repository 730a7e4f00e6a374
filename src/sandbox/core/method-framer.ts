/**
 * Extension methods (such as `LIST`, which the real secrets service uses) past node's HTTP parser.
 * llhttp knows a fixed set of methods and answers anything else with a 400 before any handler runs,
 * so the sandbox puts a framer between each connection and the parser. The framer follows the byte
 * stream request by request (request line, header lines, then the body by `Content-Length` or chunked
 * coding, so keep-alive and pipelined requests stay in step) and, for a request whose method is one of
 * the extension methods, rewrites the method to `GET` and adds a marker header naming the original
 * method with a per-server nonce (so a client cannot forge it). The server reads the marker back.
 *
 * Whatever the framer does not understand (an odd request line, folded headers, a transfer coding
 * other than chunked, CONNECT, a line too long) makes it give up for the rest of the connection:
 * from then on, and including the bytes it was holding, everything passes through untouched, so
 * node's parser reports the error exactly as it would without the framer.
 *
 * Why a wrapper stream: node's HTTP server reads a real TCP socket's handle natively, bypassing any
 * JS-level listener or transform, so the bytes can only be changed by handing the server another
 * stream in place of the socket (see `FramedSocket`).
 */
import { Duplex } from 'node:stream';
import type { Socket } from 'node:net';

/** The header the framer adds; its value is `<METHOD> <nonce>`. */
export const METHOD_MARKER_HEADER = 'x-sandbox-extension-method';

/** Longest request line, header line or chunk-size line the framer follows (llhttp allows 16 KiB of headers). */
const MAX_LINE_BYTES = 16 * 1024;

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const REQUEST_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) (\S+) HTTP\/1\.[01]$/;

type State =
  | { kind: 'request-line' }
  | { kind: 'headers'; contentLength: number | undefined; chunked: boolean; upgrade: boolean }
  | { kind: 'body'; remaining: number }
  | { kind: 'chunk-size' }
  | { kind: 'chunk-data'; remaining: number }
  | { kind: 'chunk-data-end' }
  | { kind: 'trailers' }
  | { kind: 'passthrough' };

/**
 * The pure part: bytes in, bytes out. `push` returns what may be handed to the parser now; a partial
 * request line (or header line) is held until its end arrives.
 */
export class MethodFramer {
  private state: State = { kind: 'request-line' };
  /** Bytes of the current line not yet passed on (only request lines and chunk-size lines are held). */
  private line: Buffer[] = [];
  private lineBytes = 0;
  private readonly methods: ReadonlySet<string>;

  constructor(
    methods: Iterable<string>,
    private readonly nonce: string,
  ) {
    this.methods = new Set(methods);
  }

  /** Whether the framer lost track and now passes everything through. */
  get passingThrough(): boolean {
    return this.state.kind === 'passthrough';
  }

  push(chunk: Buffer): Buffer {
    const out: Buffer[] = [];
    let pos = 0;
    while (pos < chunk.length) {
      const state = this.state;
      switch (state.kind) {
        case 'passthrough':
          out.push(chunk.subarray(pos));
          pos = chunk.length;
          break;
        case 'body':
        case 'chunk-data': {
          const take = Math.min(state.remaining, chunk.length - pos);
          out.push(chunk.subarray(pos, pos + take));
          pos += take;
          state.remaining -= take;
          if (state.remaining === 0) {
            this.state = state.kind === 'body' ? { kind: 'request-line' } : { kind: 'chunk-data-end' };
          }
          break;
        }
        default: {
          // Line-oriented states: gather up to and including the next LF.
          const lf = chunk.indexOf(0x0a, pos);
          const end = lf === -1 ? chunk.length : lf + 1;
          this.line.push(chunk.subarray(pos, end));
          this.lineBytes += end - pos;
          pos = end;
          if (lf === -1) {
            if (this.lineBytes > MAX_LINE_BYTES) out.push(this.giveUp());
            break;
          }
          const raw = Buffer.concat(this.line);
          this.line = [];
          this.lineBytes = 0;
          out.push(this.onLine(raw));
        }
      }
    }
    return out.length === 1 ? out[0]! : Buffer.concat(out);
  }

  /** The bytes held back at the end of the stream (a partial line), unchanged. */
  flush(): Buffer {
    const held = Buffer.concat(this.line);
    this.line = [];
    this.lineBytes = 0;
    return held;
  }

  private giveUp(extra?: Buffer): Buffer {
    this.state = { kind: 'passthrough' };
    const held = this.flush();
    return extra ? Buffer.concat([held, extra]) : held;
  }

  /** One whole line (with its line ending); returns what to pass on. */
  private onLine(raw: Buffer): Buffer {
    if (raw.length > MAX_LINE_BYTES) return this.giveUp(raw);
    const text = raw.toString('latin1').replace(/\r?\n$/, '');
    const state = this.state;
    switch (state.kind) {
      case 'request-line':
        return this.onRequestLine(raw, text);
      case 'headers':
        return this.onHeaderLine(raw, text, state);
      case 'chunk-size': {
        const size = /^([0-9A-Fa-f]{1,13})[ \t]*(?:;.*)?$/.exec(text);
        if (!size) return this.giveUp(raw);
        const n = parseInt(size[1]!, 16);
        this.state = n === 0 ? { kind: 'trailers' } : { kind: 'chunk-data', remaining: n };
        return raw;
      }
      case 'chunk-data-end':
        if (text !== '') return this.giveUp(raw);
        this.state = { kind: 'chunk-size' };
        return raw;
      case 'trailers':
        if (text === '') this.state = { kind: 'request-line' };
        return raw;
      default:
        return this.giveUp(raw);
    }
  }

  private onRequestLine(raw: Buffer, text: string): Buffer {
    // Empty lines between requests are skipped by the parser (RFC 9112 §2.2).
    if (text === '') return raw;
    const m = REQUEST_LINE.exec(text);
    if (!m) return this.giveUp(raw);
    const method = m[1]!;
    this.state = { kind: 'headers', contentLength: undefined, chunked: false, upgrade: method === 'CONNECT' };
    if (!this.methods.has(method)) return raw;
    const eol = raw.subarray(raw.length - (raw.at(-2) === 0x0d ? 2 : 1));
    return Buffer.concat([
      Buffer.from(`GET ${text.slice(method.length + 1)}`, 'latin1'),
      eol,
      Buffer.from(`${METHOD_MARKER_HEADER}: ${method} ${this.nonce}`, 'latin1'),
      eol,
    ]);
  }

  private onHeaderLine(raw: Buffer, text: string, state: Extract<State, { kind: 'headers' }>): Buffer {
    if (text === '') {
      // After CONNECT the connection stops being HTTP requests. (An `Upgrade:` header alone does not:
      // node serves such a request as a normal one when the server has no 'upgrade' listener, as here.)
      if (state.upgrade) return this.giveUp(raw);
      if (state.chunked) this.state = { kind: 'chunk-size' };
      else if (state.contentLength) this.state = { kind: 'body', remaining: state.contentLength };
      else this.state = { kind: 'request-line' };
      return raw;
    }
    // Obsolete line folding, or anything that is not `name: value`: let the parser judge.
    const colon = text.indexOf(':');
    if (text.startsWith(' ') || text.startsWith('\t') || colon <= 0) return this.giveUp(raw);
    const name = text.slice(0, colon);
    if (!TOKEN.test(name)) return this.giveUp(raw);
    const value = text.slice(colon + 1).trim();
    switch (name.toLowerCase()) {
      case 'content-length': {
        if (!/^\d{1,15}$/.test(value)) return this.giveUp(raw);
        const n = Number(value);
        if (state.contentLength !== undefined && state.contentLength !== n) return this.giveUp(raw);
        state.contentLength = n;
        break;
      }
      case 'transfer-encoding': {
        const codings = value
          .toLowerCase()
          .split(',')
          .map((c) => c.trim());
        // A request's body is delimited only when chunked is the last coding; anything else is the parser's call.
        if (codings.at(-1) !== 'chunked' || state.chunked) return this.giveUp(raw);
        state.chunked = true;
        break;
      }
      case METHOD_MARKER_HEADER:
        // A client's own marker could only confuse; the nonce makes it harmless, but keep the rule simple.
        break;
    }
    if (state.chunked && state.contentLength !== undefined) return this.giveUp(raw);
    return raw;
  }
}

/**
 * A stand-in for a connection's socket: reads go through a `MethodFramer`, writes go straight to the
 * socket, and the socket's addresses, timeouts and lifetime show through, so the HTTP server (keep-
 * alive timeouts, `closeIdleConnections`, `req.socket.remoteAddress`) works as with the socket itself.
 */
export class FramedSocket extends Duplex {
  private readonly framer: MethodFramer;

  constructor(
    readonly socket: Socket,
    methods: Iterable<string>,
    nonce: string,
  ) {
    super({ allowHalfOpen: true });
    this.framer = new MethodFramer(methods, nonce);
    socket.on('data', (chunk: Buffer) => {
      const out = this.framer.push(chunk);
      if (out.length > 0 && !this.push(out)) socket.pause();
    });
    socket.on('end', () => {
      const held = this.framer.flush();
      if (held.length > 0) this.push(held);
      this.push(null);
    });
    socket.on('timeout', () => this.emit('timeout'));
    socket.on('error', (err) => this.destroy(err));
    socket.on('close', () => this.destroy());
  }

  override _read(): void {
    this.socket.resume();
  }

  override _write(chunk: Buffer, encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.socket.write(chunk, encoding, callback);
  }

  /**
   * What the HTTP server writes corked (a response's head and body) leaves in one write: without
   * this, each part was a write and a TCP segment of its own, so every answer cost the sandbox two
   * system calls (about a tenth of its CPU per request) and the client two reads.
   */
  override _writev(
    chunks: { chunk: Buffer; encoding: BufferEncoding }[],
    callback: (error?: Error | null) => void,
  ): void {
    this.socket.cork();
    chunks.forEach(({ chunk, encoding }, i) =>
      i === chunks.length - 1
        ? this.socket.write(chunk, encoding, callback)
        : this.socket.write(chunk, encoding),
    );
    this.socket.uncork();
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.socket.end(callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (!this.socket.destroyed) this.socket.destroy();
    callback(error);
  }

  get remoteAddress(): string | undefined {
    return this.socket.remoteAddress;
  }

  get remotePort(): number | undefined {
    return this.socket.remotePort;
  }

  get remoteFamily(): string | undefined {
    return this.socket.remoteFamily;
  }

  get localAddress(): string | undefined {
    return this.socket.localAddress;
  }

  get localPort(): number | undefined {
    return this.socket.localPort;
  }

  get bytesRead(): number {
    return this.socket.bytesRead;
  }

  get bytesWritten(): number {
    return this.socket.bytesWritten;
  }

  address(): ReturnType<Socket['address']> {
    return this.socket.address();
  }

  setTimeout(ms: number, callback?: () => void): this {
    this.socket.setTimeout(ms);
    if (callback) this.once('timeout', callback);
    return this;
  }

  setNoDelay(noDelay?: boolean): this {
    this.socket.setNoDelay(noDelay);
    return this;
  }

  setKeepAlive(enable?: boolean, initialDelay?: number): this {
    this.socket.setKeepAlive(enable, initialDelay);
    return this;
  }

  ref(): this {
    this.socket.ref();
    return this;
  }

  unref(): this {
    this.socket.unref();
    return this;
  }

  destroySoon(): void {
    this.end();
  }
}
