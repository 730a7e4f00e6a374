/**
 * Request bodies as the sandbox reads them: one over the size cap is refused with a 413 the client
 * receives (not a dropped connection), JSON nested deeper than its handlers survive with a 400 in the
 * service's own style (not a 500 a client would retry), and a request whose client hung up during added latency is
 * still settled (the handler does not wait for ever on a body that will not come).
 */
import { request } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';

let sandbox: RunningSandbox;
const lines: string[] = [];

beforeAll(async () => {
  sandbox = await startSandbox({ config: { faults: { latencyMs: 300 } }, log: (l) => lines.push(l) });
});

afterAll(async () => {
  await sandbox.close();
});

it('answers a body over 16 MiB with 413, and closes the connection after it', async () => {
  const url = new URL('/v1/jobs', sandbox.url);
  const answer = await new Promise<{ status: number; body: string; connection: string | undefined }>(
    (resolve, reject) => {
      const req = request(url, {
        method: 'PUT',
        headers: {
          'content-type': 'application/json',
          'content-length': 17 * 1024 * 1024,
          'x-nomad-token': sandbox.rootToken,
        },
      });
      req.on('response', (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body, connection: res.headers.connection }),
        );
      });
      // The rest of the upload may meet the closed connection: the answer is what counts.
      req.on('error', (error) => setTimeout(() => reject(error), 1_000));
      const chunk = Buffer.alloc(1024 * 1024, 0x20);
      let sent = 0;
      const pump = () => {
        while (sent < 17) {
          sent += 1;
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
        req.end();
      };
      pump();
    },
  );
  expect(answer.status).toBe(413);
  expect(answer.body).toContain('request body larger than 16777216 bytes');
  expect(answer.connection).toBe('close');
}, 20_000);

it('settles a request whose client hung up during added latency, body and all', async () => {
  const { port } = new URL(sandbox.url);
  for (const [tag, body] of [
    ['full', '{"Role":{"Name":"x"}}'],
    ['partial', '{"Role":'],
  ] as const) {
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      `PUT /v1/acl/role?m=${tag} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
        `Authorization: Bearer ${sandbox.rootToken}\r\nContent-Length: ${tag === 'full' ? body.length : 100}\r\n\r\n${body}`,
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    socket.destroy();
  }
  // The sandbox logs a request once its handler is done: both are, soon after the latency.
  const until = Date.now() + 5_000;
  const done = () => ['full', 'partial'].every((tag) => lines.some((l) => l.includes(`?m=${tag} `)));
  while (!done() && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(lines.filter((l) => /\?m=(full|partial) /.test(l))).toHaveLength(2);
});

describe('a JSON body nested deeper than 500 levels', () => {
  const job = (levels: number) =>
    `{"Job":{"ID":"deep","Name":"deep","Type":"service","Datacenters":["dc1"],"TaskGroups":[{"Name":"g","Count":1,"Tasks":[{"Name":"t","Driver":"docker","Config":${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}}]}]}}`;
  const put = (path: string, body: string, headers: Record<string, string>) =>
    fetch(new URL(path, sandbox.url), { method: 'PUT', headers, body });

  it("is refused with 400 in the service's error style, where it crashed a handler before", async () => {
    const scheduler = await put('/v1/jobs', job(2_000), { 'X-Nomad-Token': sandbox.rootToken });
    expect(scheduler.status).toBe(400);
    expect(await scheduler.text()).toContain('request body nests deeper than 500 levels');

    const secrets = await put(
      '/v1/auth/ldap/groups/deep',
      `{"policies":${'['.repeat(600)}${']'.repeat(600)}}`,
      {
        'X-Vault-Token': sandbox.rootToken,
      },
    );
    expect(secrets.status).toBe(400);
    expect(await secrets.json()).toEqual({ errors: ['request body nests deeper than 500 levels'] });
  });

  it('is taken at 500 levels and under, as the real services take it', async () => {
    const scheduler = await put('/v1/jobs', job(490), { 'X-Nomad-Token': sandbox.rootToken });
    expect(scheduler.status).toBe(200);
  });
});
