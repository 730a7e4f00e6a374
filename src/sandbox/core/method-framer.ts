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
 * How the bytes reach the framer: see `frameSocket`.
 */
import { METHODS } from 'node:http';
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/** The header the framer adds; its value is `<METHOD> <nonce>`. */
export const METHOD_MARKER_HEADER = 'x-sandbox-extension-method';

/** Longest request line, header line or chunk-size line the framer follows (llhttp allows 16 KiB of headers). */
const MAX_LINE_BYTES = 16 * 1024;

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const REQUEST_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) (\S+) HTTP\/1\.[01]$/;
const HEAD_END = Buffer.from('\r\n\r\n', 'latin1');
/** What sends a head down the line-by-line path: a lone CR or LF, a folded line, a coded body, a marker. */
const NOT_PLAIN_HEAD = new RegExp(
  `\\r(?!\\n)|(?<!\\r)\\n|\\n[ \\t]|\\ntransfer-encoding[ \\t]*:|\\n${METHOD_MARKER_HEADER}[ \\t]*:`,
  'i',
);
const CONTENT_LENGTH = /\ncontent-length[ \t]*:[ \t]*([^\r]*)/gi;
/** Methods node's parser knows itself, but not CONNECT, after which a connection stops being HTTP. */
const PARSER_METHODS = new Set(METHODS.filter((m) => m !== 'CONNECT'));

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
  /** Request lines whose bytes were gathered here, counting each from its first byte. */
  private requestLinesBegun = 0;
  /** Whether this push changed any byte (a request line rewritten). */
  private rewrote = false;
  private readonly methods: ReadonlySet<string>;

  constructor(
    methods: Iterable<string>,
    private readonly nonce: string,
  ) {
    this.methods = new Set(methods);
  }

  /**
   * Whether part of a request line is held back: node's parser has not seen the request begin, so
   * its `headersTimeout` does not run for it (see `frameSocket`).
   */
  get holdingRequestLine(): boolean {
    return this.state.kind === 'request-line' && this.lineBytes > 0;
  }

  /** Which request line is held (a count of those begun): tells a new one from the same one. */
  get requestLineNumber(): number {
    return this.requestLinesBegun;
  }

  /** Whether the framer lost track and now passes everything through. */
  get passingThrough(): boolean {
    return this.state.kind === 'passthrough';
  }

  push(chunk: Buffer): Buffer {
    const out: Buffer[] = [];
    // Nothing held from before, nothing held now and nothing rewritten: the chunk goes on as it came.
    const heldBefore = this.lineBytes > 0;
    this.rewrote = false;
    let pos = 0;
    while (pos < chunk.length) {
      const state = this.state;
      if (state.kind === 'request-line' && this.lineBytes === 0) {
        const next = this.plainHead(chunk, pos);
        if (next !== undefined) {
          out.push(chunk.subarray(pos, next));
          pos = next;
          continue;
        }
      }
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
          if (this.lineBytes === 0 && state.kind === 'request-line') this.requestLinesBegun += 1;
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
    if (!heldBefore && !this.rewrote && this.lineBytes === 0) return chunk;
    return out.length === 1 ? out[0]! : Buffer.concat(out);
  }

  /**
   * The fast path, for the head of an ordinary request (a method node's parser knows) that lies whole
   * in the chunk: found with one search and two regular expressions instead of line by line. Returns
   * where the head ends, with the state set for its body; undefined leaves the head to the line-by-
   * line path, which judges everything unusual (a chunked body, a repeated Content-Length, a folded
   * line). A head the parser refuses closes the connection anyway, so being lenient here about what
   * the parser will refuse (a bad header name) changes nothing it answers.
   */
  private plainHead(chunk: Buffer, pos: number): number | undefined {
    const end = chunk.indexOf(HEAD_END, pos);
    if (end === -1) return undefined;
    const head = chunk.toString('latin1', pos, end + 2);
    const space = head.indexOf(' ');
    const method = head.slice(0, space);
    if (!PARSER_METHODS.has(method) || this.methods.has(method)) return undefined;
    if (!REQUEST_LINE.test(head.slice(0, head.indexOf('\r\n')))) return undefined;
    if (NOT_PLAIN_HEAD.test(head)) return undefined;
    let contentLength = 0;
    let seen = 0;
    for (const m of head.matchAll(CONTENT_LENGTH)) {
      seen += 1;
      const value = m[1]!.trim();
      if (seen > 1 || !/^\d{1,15}$/.test(value)) return undefined;
      contentLength = Number(value);
    }
    this.state = contentLength > 0 ? { kind: 'body', remaining: contentLength } : { kind: 'request-line' };
    return end + 4;
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
    this.rewrote = true;
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
        // A client's own marker is dropped (heads with one skip the fast path): node would join it
        // with the framer's into one value, which no longer names the method.
        this.rewrote = true;
        return Buffer.alloc(0);
    }
    if (state.chunked && state.contentLength !== undefined) return this.giveUp(raw);
    return raw;
  }
}

/**
 * What node's HTTP server writes when a request's head took longer than its `headersTimeout`
 * (`socketOnError` in _http_server.js, for ERR_HTTP_REQUEST_TIMEOUT, with no 'clientError' listener).
 */
const REQUEST_TIMEOUT_ANSWER = 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n';

/**
 * Puts `framer` between a connection and node's HTTP server, which must already have taken the
 * socket (its 'connection' listener has run). Node's server reads a socket natively, its parser
 * consuming the socket's handle with no JS in between, unless someone adds a 'data' listener: then
 * it stops consuming and parses what the 'data' events carry (`unconsume` in node's _http_server.js,
 * how node keeps a user's own listener working). So the server's 'data' listener is swapped for one
 * that frames each chunk first, and an 'end' listener ahead of the server's hands over the bytes the
 * framer still holds, so the parser judges a cut-off request as it would without the framer.
 *
 * Node times a request's head from its first byte, but the parser sees no byte of a request line the
 * framer holds: a client sending one a byte at a time, never ending it, would keep the connection
 * for ever. So the framer keeps the same deadline for the request line itself, `headersTimeoutMs`
 * from its first byte, and answers as node does when it passes. (Node's own deadline then starts
 * when the line is handed over, so a whole head may take up to twice `headersTimeout`: bounded.)
 *
 * Writes, timeouts, addresses and the socket's lifetime stay the socket's own, where a stand-in
 * Duplex for the socket (as before) put two more stream layers under every request and had to mirror
 * each socket property the server reads.
 */
export function frameSocket(
  socket: Socket,
  framer: MethodFramer,
  serverOnData: (chunk: Buffer) => void,
  headersTimeoutMs = 0,
): void {
  // Once the server is done with the connection as HTTP (an upgrade, CONNECT) it frees the socket's
  // parser, which may then serve another connection: nothing more is handed to it from here.
  const parsing = () => (socket as Socket & { parser?: unknown }).parser != null;
  /** The held request line's deadline, and which line it is for. */
  let lineDeadline: NodeJS.Timeout | undefined;
  let deadlineFor = 0;
  const stopDeadline = () => {
    clearTimeout(lineDeadline);
    lineDeadline = undefined;
  };
  const startDeadline = () => {
    stopDeadline();
    deadlineFor = framer.requestLineNumber;
    lineDeadline = setTimeout(() => {
      lineDeadline = undefined;
      if (!framer.holdingRequestLine || framer.requestLineNumber !== deadlineFor) return;
      if (socket.destroyed) return;
      // As node (`socketOnError`): the 408 unless an answer is already on its way, whose bytes it
      // would corrupt.
      const answering = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
      if (socket.writable && !answering?.headersSent) socket.write(REQUEST_TIMEOUT_ANSWER);
      socket.destroy();
    }, headersTimeoutMs);
    // A connection held only by this deadline must not keep the process up.
    lineDeadline.unref();
  };
  const framed = (chunk: Buffer) => {
    if (!parsing()) {
      socket.removeListener('data', framed);
      stopDeadline();
      return;
    }
    const out = framer.push(chunk);
    if (out.length > 0) serverOnData(out);
    if (!framer.holdingRequestLine) stopDeadline();
    else if (
      headersTimeoutMs > 0 &&
      (lineDeadline === undefined || deadlineFor !== framer.requestLineNumber)
    ) {
      startDeadline();
    }
  };
  socket.removeListener('data', serverOnData);
  socket.on('data', framed);
  socket.once('close', stopDeadline);
  socket.prependListener('end', () => {
    stopDeadline();
    const held = framer.flush();
    if (held.length > 0 && parsing()) serverOnData(held);
  });
}

/**
 * Frames every connection `server` accepts from now on (`frameSocket`), with a framer of its own
 * from `framerFor`, under the server's own `headersTimeout`. The listening socket, connection
 * counting and `close()` stay node's own.
 */
export function frameConnections(
  server: Server,
  framerFor: () => MethodFramer,
  log?: (line: string) => void,
): void {
  const listeners = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) => {
    const before = new Set(socket.listeners('data'));
    for (const listener of listeners) listener.call(server, socket);
    // The server's own reader: the one 'data' listener its connection listener added.
    const added = socket.listeners('data').filter((l) => !before.has(l));
    if (added.length !== 1) {
      // Not thrown from an event (that would end the process): the connection goes unframed,
      // and its LIST requests get node's 400.
      log?.(
        `sandbox error: expected node's HTTP server to add one 'data' listener, found ${added.length}; LIST is refused on this connection`,
      );
      return;
    }
    frameSocket(socket, framerFor(), added[0] as (chunk: Buffer) => void, server.headersTimeout);
  });
}
