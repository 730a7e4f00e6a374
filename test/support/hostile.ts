/**
 * Hostile services for the tests: a real HTTP server on 127.0.0.1 (port 0) whose handler the test
 * writes, and an oracle that looks for a secret in any encoding in what Converge printed or threw.
 * The oracle decodes base64 itself rather than reusing the scrubber's approach, so that a gap in one
 * is not hidden by the same gap in the other.
 */
import { createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface HostileServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  close(): Promise<void>;
}

export async function hostileServer(
  handler: (req: IncomingMessage, res: ServerResponse, body: string) => void,
): Promise<HostileServer> {
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handler(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Sends a JSON answer. */
export function reply(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** Every way an echoing service may write the value back: what `leaks` looks for. */
export function echoForms(value: string) {
  const json = JSON.stringify(value).slice(1, -1);
  const hex = Buffer.from(value).toString('hex');
  return {
    raw: value,
    json,
    url: encodeURIComponent(value),
    form: new URLSearchParams({ v: value }).toString().slice(2),
    base64: Buffer.from(value).toString('base64'),
    base64url: Buffer.from(value).toString('base64url'),
    base64OfJson: Buffer.from(json).toString('base64'),
    hex,
    hexUpper: hex.toUpperCase(),
    // A fingerprint's form (`openssl x509 -fingerprint`), and Go's `% X`.
    hexColons: hex.replace(/(..)(?!$)/g, '$1:'),
    hexSpacedUpper: hex.toUpperCase().replace(/(..)(?!$)/g, '$1 '),
    base32: base32(Buffer.from(value)),
    base32hex: base32(Buffer.from(value), BASE32HEX),
    base32Unpadded: base32(Buffer.from(value)).replace(/=+$/, ''),
    base32Lower: base32(Buffer.from(value)).toLowerCase(),
    // Escaped whole: a `\u` escape per character, a `%XX` per byte (a hostile service's forms).
    jsonEveryChar: value
      .split('')
      .map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
      .join(''),
    percentEveryByte: [...Buffer.from(value)]
      .map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`)
      .join(''),
  };
}

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
/** RFC 4648's base32hex ("extended hex") alphabet. */
const BASE32HEX = '0123456789ABCDEFGHIJKLMNOPQRSTUV';

/** RFC 4648 base32, padded: written here from the RFC, apart from the scrubber's. */
export function base32(bytes: Uint8Array, alphabet = BASE32): string {
  let bitString = '';
  for (const byte of bytes) bitString += byte.toString(2).padStart(8, '0');
  let out = '';
  for (let i = 0; i < bitString.length; i += 5)
    out += alphabet[parseInt(bitString.slice(i, i + 5).padEnd(5, '0'), 2)];
  return out.padEnd(Math.ceil(out.length / 8) * 8, '=');
}

/** The bytes of a base32 text (either case, padding ignored), a partial last byte dropped. */
function fromBase32(text: string, alphabet = BASE32): Buffer {
  let bitString = '';
  for (const c of text.toUpperCase().replace(/=+$/, ''))
    bitString += alphabet.indexOf(c).toString(2).padStart(5, '0');
  const bytes: number[] = [];
  for (let i = 0; i + 8 <= bitString.length; i += 8) bytes.push(parseInt(bitString.slice(i, i + 8), 2));
  return Buffer.from(bytes);
}

/**
 * The forms of `secret` found in `text`: raw, JSON-escaped, URL-encoded, and any base64, hex or
 * base32 run (any alignment, either case where the encoding has none) that decodes to bytes holding
 * the secret raw or JSON-escaped.
 */
export function leaks(text: string, secret: string): string[] {
  const found: string[] = [];
  const { raw, json, url, form } = echoForms(secret);
  for (const [name, form_] of Object.entries({ raw, json, url, form }))
    if (text.includes(form_)) found.push(name);
  const holds = (bytes: Buffer) => {
    const latin1 = bytes.toString('latin1');
    const utf8 = bytes.toString('utf8');
    return [raw, json].some((f) => latin1.includes(f) || utf8.includes(f));
  };
  for (const run of text.match(/[A-Za-z0-9+/_-]{6,}/g) ?? []) {
    const std = run.replace(/-/g, '+').replace(/_/g, '/');
    for (let skip = 0; skip < 4; skip++) {
      const part = std.slice(skip);
      if (holds(Buffer.from(part.slice(0, part.length - (part.length % 4)), 'base64'))) {
        found.push(`base64 run ${run.slice(0, 12)}…`);
        break;
      }
    }
  }
  for (const run of text.match(/[0-9A-Fa-f]{8,}/g) ?? []) {
    // A byte is two digits: the run may start on either digit of one.
    for (const part of [run, run.slice(1)]) {
      if (holds(Buffer.from(part.slice(0, part.length - (part.length % 2)), 'hex'))) {
        found.push(`hex run ${run.slice(0, 12)}…`);
        break;
      }
    }
  }
  for (const run of text.match(/[0-9A-Fa-f]{2}(?:[:\- ][0-9A-Fa-f]{2}){3,}/g) ?? []) {
    if (holds(Buffer.from(run.replace(/[:\- ]/g, ''), 'hex')))
      found.push(`separated hex run ${run.slice(0, 12)}…`);
  }
  for (const [name, alphabet, pattern] of [
    ['base32', BASE32, /[A-Za-z2-7]{8,}/g],
    ['base32hex', BASE32HEX, /[0-9A-Va-v]{8,}/g],
  ] as const) {
    for (const run of text.match(pattern) ?? []) {
      // Five bits a character: skipping 0 to 7 characters tries every bit alignment of a byte.
      for (let skip = 0; skip < 8; skip++) {
        if (holds(fromBase32(run.slice(skip), alphabet))) {
          found.push(`${name} run ${run.slice(0, 12)}…`);
          break;
        }
      }
    }
  }
  return found;
}

/** Every 8-character piece of `secret` that appears in `text` (none may, once scrubbed). */
export function pieces(text: string, secret: string, size = 8): string[] {
  const out: string[] = [];
  for (let i = 0; i + size <= secret.length; i++) {
    const piece = secret.slice(i, i + size);
    if (text.includes(piece)) out.push(piece);
  }
  return out;
}

/**
 * Passes a request the hostile server got on to `target` (a sandbox) with node's own http client, and
 * its answer back, `rewrite` applied to the body. Not global fetch: its shared pool is the test
 * worker's, and what earlier test files left in it failed these requests ("fetch failed").
 */
export function forward(
  req: IncomingMessage,
  res: ServerResponse,
  body: string,
  target: string,
  options: {
    headers?: Record<string, string>;
    rewrite?: (text: string) => string;
    /** Told of a failure to reach `target` (answered 502), so that a test fails with its reason. */
    onError?: (error: Error) => void;
  } = {},
): void {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers))
    if (typeof value === 'string' && !['host', 'connection', 'content-length'].includes(name))
      headers[name] = value;
  Object.assign(headers, options.headers);
  if (body) headers['content-length'] = String(Buffer.byteLength(body));
  const out = request(
    new URL(req.url ?? '/', target),
    { method: req.method ?? 'GET', headers, agent: false },
    (answer) => {
      const chunks: Buffer[] = [];
      answer.on('data', (c: Buffer) => chunks.push(c));
      answer.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        res.writeHead(answer.statusCode ?? 502, {
          'content-type': answer.headers['content-type'] ?? 'text/plain',
        });
        res.end(options.rewrite ? options.rewrite(text) : text);
      });
    },
  );
  out.on('error', (error) => {
    options.onError?.(error);
    res.writeHead(502).end(String(error));
  });
  out.end(body || undefined);
}
