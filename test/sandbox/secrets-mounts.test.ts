/**
 * Mounts from the config (nested paths, seeds, validation with positions), persistence across a
 * restart, and the real LIST method over raw sockets against the secrets service.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSandboxConfig, SandboxConfigError, startSandbox } from '../../src/sandbox/index.js';
import { apiFor, tempDir } from './helpers.js';

let dir: ReturnType<typeof tempDir>;
let n = 0;

beforeAll(() => {
  dir = tempDir('secrets-mounts');
});

afterAll(() => {
  dir.remove();
});

function configFile(text: string): string {
  const path = join(dir.path, `sandbox-${++n}.yaml`);
  writeFileSync(path, text);
  return path;
}

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof SandboxConfigError) return err.message.split('\n').map((l) => l.trim());
    throw err;
  }
  throw new Error('expected a SandboxConfigError');
}

const SEEDED = `tokens:
  - { name: ldap-reader, secret: r-token, secrets: { ldap: read } }
secrets:
  mounts:
    - path: corp-ldap
      config:
        url: ldap://dir.example:389
        connection_timeout: 10s
        token_policies: base, extra
        token_bound_cidrs: [10.0.0.0/8]
      groups:
        - { name: Admins, policies: [admin, ops] }
      users:
        - { name: alice, policies: dev, groups: [Admins] }
    - path: team/ldap
    - path: ldap
      groups: [{ name: default-mount-group, policies: p }]
`;

describe('mounts from the config', () => {
  it('serves every mount, nested paths included, with its seeds', async () => {
    const sandbox = await startSandbox({ token: 'root', config: configFile(SEEDED) });
    const api = apiFor(sandbox);
    try {
      const config = await api('GET', '/v1/auth/corp-ldap/config');
      expect(config.json<{ data: Record<string, unknown> }>().data).toMatchObject({
        url: 'ldap://dir.example:389',
        connection_timeout: 10,
        token_policies: ['base', 'extra'],
        token_bound_cidrs: ['10.0.0.0/8'],
      });
      const group = await api('GET', '/v1/auth/corp-ldap/groups/admins');
      expect(group.json<{ data: unknown }>().data).toEqual({ policies: ['admin', 'ops'] });
      const user = await api('GET', '/v1/auth/corp-ldap/users/alice');
      expect(user.json<{ data: unknown }>().data).toEqual({ groups: 'admins', policies: ['dev'] });
      // The nested mount is a mount of its own, unconfigured.
      expect((await api('POST', '/v1/auth/team/ldap/groups/g', { body: { policies: 'x' } })).status).toBe(
        204,
      );
      expect((await api('LIST', '/v1/auth/team/ldap/groups')).json<{ data: unknown }>().data).toEqual({
        keys: ['g'],
      });
      expect((await api('LIST', '/v1/auth/ldap/groups')).json<{ data: unknown }>().data).toEqual({
        keys: ['default-mount-group'],
      });
      const login = await api('POST', '/v1/auth/team/ldap/login/bob', {
        token: null,
        body: { password: 'x' },
      });
      expect([login.status, login.json()]).toEqual([400, { errors: ['auth method not configured'] }]);
      // `team` itself is not a mount.
      expect((await api('GET', '/v1/auth/team/config')).status).toBe(404);
      expect(sandbox.env()).toMatchObject({
        CONVERGE_SECRETS_ADDR: sandbox.url,
        CONVERGE_SECRETS_TOKEN: 'root',
      });
    } finally {
      await sandbox.close();
    }
  });

  it('reports bad mounts and seeds with file:line:col', () => {
    const file = configFile(`tokens:
  - { name: t, secret: s, secrets: { ldap: admin } }
secrets:
  mounts:
    - path: a
    - path: a/b
    - path: token
    - path: /x/
    - path: ok
      config: { tls_min_version: tls13 }
      groups: [{ name: G }, { name: g }]
    - path: typo
      config: { urll: ldap://x }
`);
    const problems = problemsOf(() => loadSandboxConfig(file));
    expect(problems).toContain(`${file}:2:44: tokens[0].secrets.ldap: must be one of: read, write, none`);
    expect(problems.find((p) => p.includes('urll'))).toContain(
      `${file}:13:17: secrets.mounts[5].config.urll: unknown key; allowed here: url, `,
    );
    // Semantic problems appear once the schema passes.
    const semantic = configFile(`secrets:
  mounts:
    - path: a
    - path: a/b
    - path: token
    - path: /x/
    - path: ok
      config: { tls_min_version: tls13 }
      groups: [{ name: G }, { name: g }]
    - path: a
`);
    expect(problemsOf(() => loadSandboxConfig(semantic))).toEqual([
      'invalid sandbox config:',
      `${semantic}:4:13: secrets.mounts[1].path: path is already in use at auth/a/`,
      `${semantic}:5:13: secrets.mounts[2].path: path is already in use at auth/token/`,
      `${semantic}:6:13: secrets.mounts[3].path: a mount path is segments separated by single slashes, without a slash at either end`,
      `${semantic}:8:15: secrets.mounts[4].config: 'tls_max_version' must be greater than or equal to 'tls_min_version'`,
      `${semantic}:9:37: secrets.mounts[4].groups[1].name: another group has the same name (groups[0])`,
      `${semantic}:10:13: secrets.mounts[5].path: another entry has the same path (mounts[0])`,
    ]);
  });
});

describe('persistence', () => {
  it('keeps mounts, config, groups and users across a restart, and seeds only fresh mounts', async () => {
    const data = join(dir.path, 'data');
    const config = { secrets: { mounts: [{ path: 'kept', groups: [{ name: 'seeded', policies: 'a' }] }] } };
    const first = await startSandbox({ token: 'root', dataDir: data, config });
    let api = apiFor(first);
    expect(
      (await api('POST', '/v1/auth/kept/config', { body: { url: 'ldap://saved', bindpass: 'pw' } })).status,
    ).toBe(204);
    expect((await api('DELETE', '/v1/auth/kept/groups/seeded')).status).toBe(204);
    expect(
      (await api('POST', '/v1/auth/kept/users/u', { body: { groups: 'g', policies: 'p' } })).status,
    ).toBe(204);
    expect((await api('POST', '/v1/auth/ldap/groups/on-default', { body: { policies: 'x' } })).status).toBe(
      204,
    );
    await first.close();

    const saved = JSON.parse(readFileSync(join(data, 'secrets.json'), 'utf8')) as {
      service: string;
      state: { mounts: { path: string }[] };
    };
    expect(saved.service).toBe('secrets');
    expect(saved.state.mounts.map((m) => m.path)).toEqual(['kept', 'ldap']);

    const second = await startSandbox({ token: 'root', dataDir: data, config });
    api = apiFor(second);
    try {
      expect((await api('GET', '/v1/auth/kept/config')).json<{ data: { url: string } }>().data.url).toBe(
        'ldap://saved',
      );
      // Configured before the restart: login gets past "not configured".
      const login = await api('POST', '/v1/auth/kept/login/x', { token: null, body: { password: 'p' } });
      expect(login.text).not.toContain('auth method not configured');
      expect((await api('GET', '/v1/auth/kept/groups/seeded')).status).toBe(404); // deleted stays deleted
      expect((await api('GET', '/v1/auth/kept/users/u')).json<{ data: unknown }>().data).toEqual({
        groups: 'g',
        policies: ['p'],
      });
      expect((await api('LIST', '/v1/auth/ldap/groups')).json<{ data: unknown }>().data).toEqual({
        keys: ['on-default'],
      });
    } finally {
      await second.close();
    }
  });
});

describe('LIST over raw sockets', () => {
  /**
   * Sends each request on one keep-alive connection, waiting for its response before the next (as a
   * client without pipelining does), and returns the responses.
   */
  async function raw(port: number, requests: string[]): Promise<{ status: number; body: string }[]> {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    const responses: { status: number; body: string }[] = [];
    let arrived: () => void = () => {};
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      for (;;) {
        const end = text.indexOf('\r\n\r\n');
        if (end === -1) break;
        const head = text.slice(0, end);
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (text.length < end + 4 + length) break;
        responses.push({ status: Number(head.split(' ')[1]), body: text.slice(end + 4, end + 4 + length) });
        text = text.slice(end + 4 + length);
        arrived();
      }
    });
    try {
      for (const request of requests) {
        const count = responses.length + 1;
        const next = new Promise<void>((resolve, reject) => {
          arrived = () => {
            if (responses.length >= count) resolve();
          };
          socket.once('error', reject);
        });
        socket.write(request);
        await next;
      }
    } finally {
      socket.destroy();
    }
    return responses;
  }

  it('serves LIST, and a JSON or chunked POST followed by LIST on one keep-alive connection', async () => {
    const sandbox = await startSandbox({ token: 'root' });
    try {
      const auth = 'X-Secrets-Token: root\r\nHost: x\r\n';
      const body = '{"policies":"dev"}';
      const [post, list] = await raw(sandbox.port, [
        `POST /v1/auth/ldap/users/alice HTTP/1.1\r\n${auth}Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
        `LIST /v1/auth/ldap/users HTTP/1.1\r\n${auth}\r\n`,
      ]);
      expect(post!.status).toBe(204);
      expect(list!.status).toBe(200);
      expect((JSON.parse(list!.body) as { data: unknown }).data).toEqual({ keys: ['alice'] });

      const chunked = `POST /v1/auth/ldap/users/bob HTTP/1.1\r\n${auth}Transfer-Encoding: chunked\r\n\r\n6\r\n{"poli\r\nc\r\ncies":"ops"}\r\n0\r\n\r\n`;
      const [post2, list2] = await raw(sandbox.port, [
        chunked,
        `LIST /v1/auth/ldap/users HTTP/1.1\r\n${auth}\r\n`,
      ]);
      expect(post2!.status).toBe(204);
      expect((JSON.parse(list2!.body) as { data: unknown }).data).toEqual({ keys: ['alice', 'bob'] });
      expect(
        (await apiFor(sandbox)('GET', '/v1/auth/ldap/users/bob')).json<{ data: unknown }>().data,
      ).toEqual({
        groups: '',
        policies: ['ops'],
      });
    } finally {
      await sandbox.close();
    }
  });

  it('closes an idle keep-alive connection on close() so the port frees', async () => {
    const sandbox = await startSandbox({ token: 'root' });
    const socket = connect(sandbox.port, '127.0.0.1');
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.write('LIST /v1/auth/ldap/users HTTP/1.1\r\nHost: x\r\nX-Secrets-Token: root\r\n\r\n');
    await new Promise<void>((resolve) => socket.once('data', () => resolve()));
    const started = performance.now();
    await sandbox.close();
    await closed;
    expect(performance.now() - started).toBeLessThan(1500);
  });
});
