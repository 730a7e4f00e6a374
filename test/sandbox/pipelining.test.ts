/**
 * Pipelined requests on one keep-alive connection are handled one at a time, in order, as the real
 * services' Go servers handle them: a read sent right behind a write, in the same TCP write, sees it.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';

let sandbox: RunningSandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ token: 'root' });
});

afterAll(async () => {
  await sandbox.close();
});

interface RawResponse {
  status: number;
  body: string;
}

/** Writes `raw` in one write and reads `count` responses (bodies by Content-Length, chunked not used). */
async function pipelined(raw: string, count: number): Promise<RawResponse[]> {
  const socket = connect(sandbox.port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  let received = Buffer.alloc(0);
  const responses: RawResponse[] = [];
  await new Promise<void>((resolve, reject) => {
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
          body: received.subarray(end + 4, end + 4 + length).toString('utf8'),
        });
        received = received.subarray(end + 4 + length);
      }
      if (responses.length >= count) resolve();
    });
    socket.on('error', reject);
    socket.on('close', () => resolve());
    socket.write(raw);
  });
  socket.destroy();
  return responses;
}

const request = (method: string, path: string, headers: Record<string, string>, body = '') =>
  `${method} ${path} HTTP/1.1\r\nHost: sandbox\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

describe('pipelined requests', () => {
  it('a secrets read pipelined behind a write sees it, and a LIST behind it lists it', async () => {
    const token = { 'X-Secrets-Token': 'root' };
    const responses = await pipelined(
      request('POST', '/v1/auth/ldap/groups/piped', token, '{"policies":"z1"}') +
        request('GET', '/v1/auth/ldap/groups/piped', token) +
        request('LIST', '/v1/auth/ldap/groups', token),
      3,
    );
    expect(responses.map((r) => r.status)).toEqual([204, 200, 200]);
    expect(JSON.parse(responses[1]!.body).data.policies).toEqual(['z1']);
    expect(JSON.parse(responses[2]!.body).data.keys).toContain('piped');
  });

  it('a registry read by name pipelined behind the create finds the role', async () => {
    const token = { 'X-Registry-Token': 'root' };
    const responses = await pipelined(
      request('PUT', '/v1/acl/role', token, '{"Name":"piped-role"}') +
        request('GET', '/v1/acl/role/name/piped-role', token),
      2,
    );
    expect(responses.map((r) => r.status)).toEqual([200, 200]);
    expect(JSON.parse(responses[1]!.body).Name).toBe('piped-role');
  });

  it('holds up only its own connection: another is answered while one waits in a blocking read', async () => {
    const token = { 'X-Registry-Token': 'root' };
    const order: string[] = [];
    // An index far ahead blocks the read until its wait runs out (1 s).
    const blocked = pipelined(request('GET', '/v1/acl/roles?index=999999&wait=1s', token), 1).then((r) => {
      order.push('blocking read');
      return r;
    });
    const other = pipelined(request('GET', '/v1/acl/roles', token), 1).then((r) => {
      order.push('other connection');
      return r;
    });
    const [a, b] = await Promise.all([blocked, other]);
    expect([a[0]!.status, b[0]!.status]).toEqual([200, 200]);
    expect(order).toEqual(['other connection', 'blocking read']);
  });

  it('does not handle a request still waiting its turn once the client has closed the connection', async () => {
    const token = { 'X-Registry-Token': 'root' };
    const [made] = await pipelined(request('PUT', '/v1/acl/role', token, '{"Name":"not-deleted"}'), 1);
    const id = (JSON.parse(made!.body) as { ID: string }).ID;
    const socket = connect(sandbox.port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    // The delete waits behind a blocking read (1 s); the client hangs up before it gets its turn.
    socket.write(
      request('GET', '/v1/acl/roles?index=999999&wait=1s', token) +
        request('DELETE', `/v1/acl/role/${id}`, token),
    );
    await new Promise((r) => setTimeout(r, 100));
    socket.destroy();
    await new Promise((r) => setTimeout(r, 1300));
    const [read] = await pipelined(request('GET', `/v1/acl/role/${id}`, token), 1);
    expect(read!.status).toBe(200);
  });
});
