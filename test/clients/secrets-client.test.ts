/**
 * The secrets client's directory-method calls against the sandbox over real HTTP on 127.0.0.1: the
 * `X-Secrets-Token` header, LIST, the envelope, mounts other than `auth/ldap`, and the service's
 * error bodies as typed errors. Fault cases the sandbox cannot produce use undici's MockAgent.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectionFromEnv, HttpStatusError } from '../../src/clients/http/index.js';
import { SecretsClient } from '../../src/clients/secrets/client.js';
import { secretsService } from '../../src/clients/secrets/definition.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { caught, everyRendering, jsonHeaders, mockAgent } from './helpers.js';

const ROOT = 'root-secret-51c0e7';
const BINDPASS = 'bind-password-9d1f04e2';

let sandbox: Awaited<ReturnType<typeof startSandbox>>;
let client: SecretsClient;
let anonymous: SecretsClient;

const unique = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;

beforeAll(async () => {
  sandbox = await startSandbox({
    port: 0,
    token: ROOT,
    config: { secrets: { mounts: [{ path: 'corp-ldap' }, { path: 'team/ldap' }] } },
  });
  const endpoint = connectionFromEnv(secretsService, sandbox.env());
  client = SecretsClient.fromConnection({ address: endpoint.address, token: ROOT });
  anonymous = SecretsClient.fromConnection({ address: endpoint.address });
});

afterAll(async () => {
  await client?.close();
  await anonymous?.close();
  await sandbox?.close();
});

describe('configuration', () => {
  it('reads the defaults of the spec table on a fresh mount', async () => {
    const config = await client.readLdapConfig('corp-ldap');
    expect(config).toMatchObject({
      url: 'ldap://127.0.0.1',
      connection_timeout: 30,
      request_timeout: 90,
      tls_min_version: 'tls12',
      tls_max_version: 'tls12',
      deny_null_bind: true,
      userattr: 'cn',
      bindpass: '',
    });
  });

  it('writes fields, keeps the others, and never returns the bind password', async () => {
    await client.writeLdapConfig('team/ldap', {
      url: 'ldap://a.example,ldap://b.example',
      binddn: 'cn=svc,dc=example',
      bindpass: BINDPASS,
      connection_timeout: '5m',
      token_policies: 'dev, ops',
    });
    await client.writeLdapConfig('team/ldap', { userdn: 'ou=people,dc=example' });
    const config = await client.readLdapConfig('team/ldap');
    expect(config).toMatchObject({
      url: 'ldap://a.example,ldap://b.example',
      binddn: 'cn=svc,dc=example',
      userdn: 'ou=people,dc=example',
      connection_timeout: 300,
      bindpass: '',
    });
    expect(JSON.stringify(config)).not.toContain(BINDPASS);
  });

  it("turns the service's refusal into a typed error with its message", async () => {
    const err = await caught(client.writeLdapConfig('corp-ldap', { userfilter: '(uid={{.Username}})' }));
    expect(err).toBeInstanceOf(HttpStatusError);
    const e = err as HttpStatusError;
    expect(e.status).toBe(400);
    expect(e.details.length).toBeGreaterThan(0);
    expect(e.serviceMessage).toMatch(/userattr|UserAttr/);
  });

  it('names the mount when nothing is mounted at the path', async () => {
    const err = (await caught(client.readLdapConfig('nowhere'))) as HttpStatusError;
    expect(err).toBeInstanceOf(HttpStatusError);
    expect(err.status).toBe(404);
    expect(err.message).toContain('auth/nowhere');
  });

  it('refuses a mount path that would leave auth/', async () => {
    await expect(client.readLdapConfig('../sys')).rejects.toThrow(/invalid mount path/);
    await expect(client.readLdapConfig('')).rejects.toThrow(/invalid mount path/);
  });

  it('is refused without a token, with a hint naming the variable', async () => {
    const err = (await caught(anonymous.readLdapConfig())) as HttpStatusError;
    expect(err.status).toBe(403);
    expect(err.message).toContain('CONVERGE_SECRETS_TOKEN');
  });
});

describe('groups and users', () => {
  it('writes policies as a comma string and reads them back as a list', async () => {
    const name = unique('ops');
    await client.writeLdapGroup('ldap', name, { policies: ['Ops', 'dev', 'dev'] });
    expect(await client.readLdapGroup('ldap', name)).toEqual(
      expect.objectContaining({ policies: ['dev', 'ops'] }),
    );
    expect(await client.listLdapGroups('ldap')).toContain(name);
    await client.deleteLdapGroup('ldap', name);
    expect(await client.readLdapGroup('ldap', name)).toBeUndefined();
  });

  it("reads a user's groups as the spec's comma string", async () => {
    const name = unique('alice');
    await client.writeLdapUser('corp-ldap', name, { policies: ['dev'], groups: ['admins', 'ops'] });
    const user = await client.readLdapUser('corp-ldap', name);
    expect(user?.policies).toEqual(['dev']);
    expect(typeof user?.groups).toBe('string');
    expect(user!.groups.split(',').sort()).toEqual(['admins', 'ops']);
    expect(await client.listLdapUsers('corp-ldap')).toContain(name);
  });

  it('lists nothing as an empty list (the service answers 404)', async () => {
    expect(await client.listLdapUsers('team/ldap')).toEqual([]);
  });

  it('sends LIST as the method the spec writes', async () => {
    const methods: string[] = [];
    const watched = SecretsClient.fromConnection({
      address: connectionFromEnv(secretsService, sandbox.env()).address,
      token: ROOT,
      http: { onRequest: (event) => methods.push(event.method) },
    });
    try {
      await watched.listLdapGroups('ldap');
    } finally {
      await watched.close();
    }
    expect(methods).toEqual(['LIST']);
  });
});

describe('login', () => {
  it('needs no token and never shows the password in an error', async () => {
    const password = 'typed-password-1c9e77';
    // The sandbox's default mount points at 127.0.0.1:389, where nothing answers in the tests.
    await client.writeLdapConfig('corp-ldap', { url: 'ldap://127.0.0.1:1', connection_timeout: 1 });
    const err = await caught(anonymous.login('corp-ldap', 'alice', password));
    expect(err).toBeInstanceOf(HttpStatusError);
    expect(everyRendering(err)).not.toContain(password);
  });

  it('reads the auth object, and refuses an answer that has none (MockAgent)', async () => {
    const agent = mockAgent();
    const pool = agent.get('http://secrets.test:8200');
    pool.intercept({ path: '/v1/auth/ldap/login/alice', method: 'POST' }).reply(
      200,
      {
        auth: {
          client_token: 's.x',
          policies: ['default'],
          metadata: { username: 'alice' },
          lease_duration: 60,
          renewable: true,
        },
        warnings: null,
        data: null,
      },
      { headers: jsonHeaders },
    );
    pool
      .intercept({ path: '/v1/auth/ldap/login/bob', method: 'POST' })
      .reply(200, { auth: null, data: null }, { headers: jsonHeaders });
    const mocked = SecretsClient.fromConnection({ address: 'http://secrets.test:8200', dispatcher: agent });
    const ok = await mocked.login('ldap', 'alice', 'pw');
    expect(ok.auth.policies).toEqual(['default']);
    expect(ok.warnings).toEqual([]);
    await expect(mocked.login('ldap', 'bob', 'pw')).rejects.toThrow(/no auth.client_token/);
    await mocked.close();
  });
});
