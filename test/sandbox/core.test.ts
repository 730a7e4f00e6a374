/** The sandbox core: server lifecycle, logging, routing, and the small parsers the services share. */
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { parseGoDuration } from '../../src/sandbox/core/duration.js';
import { Router } from '../../src/sandbox/core/router.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { blake2b } from '@noble/hashes/blake2.js';
import { apiFor, UUID_RE } from './helpers.js';

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

describe('server lifecycle', () => {
  it('listens on loopback with a random root token, and frees the port on close despite keep-alive', async () => {
    const sandbox = await startSandbox();
    expect(sandbox.host).toBe('127.0.0.1');
    expect(sandbox.url).toBe(`http://127.0.0.1:${sandbox.port}`);
    expect(sandbox.rootToken).toMatch(UUID_RE);
    const api = apiFor(sandbox);
    for (let i = 0; i < 3; i++) expect((await api('GET', '/v1/acl/roles')).status).toBe(200); // reuses one socket
    const started = performance.now();
    await sandbox.close();
    expect(performance.now() - started).toBeLessThan(1000);
    expect(await portIsFree(sandbox.port)).toBe(true);
    await sandbox.close(); // a second close is harmless
  });

  it('uses the port it is given, and gives every service the same address and the root token', async () => {
    const probe = await startSandbox();
    const port = probe.port;
    await probe.close();
    const sandbox = await startSandbox({ port, token: 'fixed' });
    try {
      expect(sandbox.port).toBe(port);
      expect(sandbox.env()).toEqual({
        CONVERGE_WORKSPACES_ADDR: sandbox.url,
        CONVERGE_WORKSPACES_TOKEN: 'fixed',
        CONVERGE_SECRETS_ADDR: sandbox.url,
        CONVERGE_SECRETS_TOKEN: 'fixed',
        CONVERGE_REGISTRY_ADDR: sandbox.url,
        CONVERGE_REGISTRY_TOKEN: 'fixed',
        CONVERGE_SCHEDULER_ADDR: sandbox.url,
        CONVERGE_SCHEDULER_TOKEN: 'fixed',
        CONVERGE_WORKSPACES_ORGANIZATION: 'sandbox',
      });
    } finally {
      await sandbox.close();
    }
  });

  it('rejects a port in use with a clear SandboxStartError', async () => {
    const first = await startSandbox();
    try {
      await expect(startSandbox({ port: first.port })).rejects.toThrow(
        `port ${first.port} on 127.0.0.1 is already in use`,
      );
    } finally {
      await first.close();
    }
  });

  it('logs one line per request, hiding ?token= values', async () => {
    const lines: string[] = [];
    const sandbox = await startSandbox({ log: (l) => lines.push(l) });
    try {
      await apiFor(sandbox)('GET', `/v1/acl/roles?token=${sandbox.rootToken}&pretty`, { token: null });
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^GET \/v1\/acl\/roles\?token=<hidden>&pretty 200 \d+ms$/);
      expect(lines.join('\n')).not.toContain(sandbox.rootToken);
    } finally {
      await sandbox.close();
    }
  });

  it('hides ?token= in the log however the name is spelled, and keeps other parameters', async () => {
    const lines: string[] = [];
    const sandbox = await startSandbox({ log: (l) => lines.push(l) });
    try {
      const api = apiFor(sandbox);
      const secret = sandbox.rootToken;
      await api('GET', `/v1/acl/roles?ns=default&%74oken=${secret}`, { token: null });
      await api('GET', `/v1/acl/roles?token=${secret}&token=${secret}x`, { token: null });
      await api('GET', `/v1/acl/role/name/nope?token=${secret}`, { token: null });
      expect(lines).toHaveLength(3);
      expect(lines[0]).toMatch(/^GET \/v1\/acl\/roles\?ns=default&token=<hidden> 200 \d+ms$/);
      expect(lines[1]).toMatch(/^GET \/v1\/acl\/roles\?token=<hidden>&token=<hidden> 200 /);
      expect(lines[2]).toMatch(/^GET \/v1\/acl\/role\/name\/nope\?token=<hidden> 404 /);
      expect(lines.join('\n')).not.toContain(secret);
    } finally {
      await sandbox.close();
    }
  });

  it('answers 404 for paths no service owns', async () => {
    const sandbox = await startSandbox();
    try {
      const res = await apiFor(sandbox)('GET', '/nowhere/at/all');
      expect(res.status).toBe(404);
      expect(res.text).toBe('no sandbox endpoint at /nowhere/at/all');
    } finally {
      await sandbox.close();
    }
  });
});

describe('Router', () => {
  const router = new Router();
  const ok = () => ({ status: 200 });
  router.add('/v1/thing', { PUT: ok });
  router.add('/v1/thing/name/*name', { GET: ok });
  router.add('/v1/thing/*id', { GET: ok, DELETE: ok });
  router.add('/v1/a/:x/b', { GET: ok });

  it('matches literals, one-segment and rest parameters, first pattern first', () => {
    expect(router.match('GET', '/v1/thing/name/web')).toMatchObject({
      kind: 'found',
      params: { name: 'web' },
    });
    expect(router.match('GET', '/v1/thing/abc')).toMatchObject({ kind: 'found', params: { id: 'abc' } });
    expect(router.match('GET', '/v1/thing/')).toMatchObject({ kind: 'found', params: { id: '' } });
    expect(router.match('GET', '/v1/a/one/b')).toMatchObject({ kind: 'found', params: { x: 'one' } });
    expect(router.match('GET', '/v1/thing/a%20b')).toMatchObject({ params: { id: 'a b' } });
  });

  it('answers method-not-allowed from the owning pattern, and not-found otherwise', () => {
    expect(router.match('GET', '/v1/thing')).toEqual({ kind: 'method-not-allowed', allowed: ['PUT'] });
    expect(router.match('PUT', '/v1/thing/name/x')).toEqual({ kind: 'method-not-allowed', allowed: ['GET'] });
    expect(router.match('GET', '/v1/a//b')).toEqual({ kind: 'not-found' });
    expect(router.match('GET', '/v1/things')).toEqual({ kind: 'not-found' });
  });

  it('refuses a rest parameter before the end', () => {
    expect(() => router.add('/x/*rest/y', {})).toThrow("'*' parameter must be the last segment");
  });
});

describe('parseGoDuration', () => {
  it.each([
    ['5s', 5000],
    ['100ms', 100],
    ['1m', 60_000],
    ['1h30m', 5_400_000],
    ['1.5s', 1500],
    ['.5s', 500],
    ['300us', 0.3],
    ['300µs', 0.3],
    ['0', 0],
    ['-2s', -2000],
  ])('reads %j as %d ms', (text, ms) => {
    expect(parseGoDuration(text)).toBeCloseTo(ms, 6);
  });

  it.each(['', '5', '5 s', 's', '1d', '1.s.', '--1s', '1s5', '.s'])('rejects %j', (text) => {
    expect(parseGoDuration(text)).toBeUndefined();
  });
});

describe('blake2b', () => {
  it('matches the RFC 7693 test vectors and node for 512 bits', async () => {
    const { createHash } = await import('node:crypto');
    expect(Buffer.from(blake2b(Buffer.from('abc'), { dkLen: 32 })).toString('hex')).toBe(
      'bddd813c634239723171ef3fee98579b94964e3bb1cb3e427262c8c068d52319',
    );
    for (const size of [0, 3, 127, 128, 129, 256, 1000]) {
      const data = Buffer.alloc(size, 7);
      expect(Buffer.from(blake2b(data, { dkLen: 64 })).toString('hex')).toBe(
        createHash('blake2b512').update(data).digest('hex'),
      );
    }
  });
});

describe('scheduler endpoints not emulated yet', () => {
  it("answer 501 saying so, in the scheduler's plain-text style, instead of a bare 404", async () => {
    const sandbox = await startSandbox({ token: 'fixed' });
    try {
      const res = await fetch(`${sandbox.url}/v1/jobs/statuses`);
      expect(res.status).toBe(501);
      expect(res.headers.get('content-type')).toContain('text/plain');
      expect(await res.text()).toContain('not emulated yet');
    } finally {
      await sandbox.close();
    }
  });
});
