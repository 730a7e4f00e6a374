/**
 * The one-by-one reads of LDAP users after their LIST follow `--parallelism`: with more allowed, more
 * are in flight at once (the pipe stays full at 10 ms round trips); with fewer, the service never
 * sees more than the user allowed. Counted by a TCP proxy in front of the sandbox, which adds latency so
 * that reads overlap.
 */
import { writeFileSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

const USERS = 24;
let sandbox: RunningSandbox;
let proxy: { url: string; server: Server; inFlight: number; most: number };

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, config: { faults: { latencyMs: 25 } } });
  const target = new URL(sandbox.url);
  const state = { url: '', inFlight: 0, most: 0 } as typeof proxy;
  // A TCP proxy: node's HTTP server refuses the secrets service's LIST method. One request at a time
  // per connection (HTTP/1.1 without pipelining), so a connection whose request was a user read and
  // whose answer has not begun is one read in flight.
  state.server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    let counted = false;
    client.on('data', (chunk: Buffer) => {
      if (/^GET \/v1\/auth\/ldap\/users\/[^/?\s]+/.test(chunk.toString('latin1', 0, 64))) {
        counted = true;
        state.most = Math.max(state.most, ++state.inFlight);
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (counted && chunk.toString('latin1', 0, 5) === 'HTTP/') {
        counted = false;
        state.inFlight--;
      }
      client.write(chunk);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => state.server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(state.server.address() as { port: number }).port}`;
  proxy = state;
});
afterAll(async () => {
  await new Promise<void>((resolve) => proxy.server.close(() => resolve()));
  await sandbox?.close();
});

function manifest(): string {
  const dir = tempDir('converge-ldap-par-');
  const docs = [
    `apiVersion: converge/v1\nkind: LdapConfig\nmetadata: { name: ldap }\nspec: { url: 'ldap://ldap.test', userdn: 'ou=people,dc=t', groupdn: 'ou=groups,dc=t' }\n`,
    ...Array.from(
      { length: USERS },
      (_, i) =>
        `apiVersion: converge/v1\nkind: LdapUser\nmetadata: { name: u-${i} }\nspec: { policies: [p${i}] }\n`,
    ),
  ];
  writeFileSync(path.join(dir, 'directory.yaml'), docs.join('---\n'));
  return dir;
}

function env(): Record<string, string> {
  return {
    ...sandbox.env(),
    CONVERGE_SECRETS_ADDR: proxy.url,
    CONVERGE_STATE_DIR: tempDir('converge-ldap-par-state-'),
    NO_COLOR: '1',
  };
}

describe('LDAP user reads during a plan', () => {
  const dir = manifest();

  beforeAll(async () => {
    const applied = await runCli(['apply', '-f', dir, '--auto-approve'], env());
    expect(applied.code, applied.stderr).toBe(0);
  });

  it('keeps as many reads in flight as --parallelism allows, beyond the old fixed 8', async () => {
    proxy.most = 0;
    const r = await runCli(['plan', '-f', dir, '--parallelism', '16'], env());
    expect(r.code, r.stderr).toBe(0);
    expect(proxy.most).toBeGreaterThan(8);
    expect(proxy.most).toBeLessThanOrEqual(16);
  });

  it('never sends the service more reads at once than --parallelism', async () => {
    proxy.most = 0;
    const r = await runCli(['plan', '-f', dir, '--parallelism', '2'], env());
    expect(r.code, r.stderr).toBe(0);
    expect(proxy.most).toBeGreaterThan(0);
    expect(proxy.most).toBeLessThanOrEqual(2);
  });
});
