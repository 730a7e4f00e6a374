/** The directory auth method's configuration: defaults, value forms, checks, update semantics. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { type Api, apiFor } from './helpers.js';

let sandbox: RunningSandbox;
let api: Api;
let mount = 0;
/** Each test writes to a mount of its own, so update-merge never sees another test's writes. */
let base = '';

const MOUNTS = Array.from({ length: 40 }, (_, i) => ({ path: `cfg${i}` }));

beforeAll(async () => {
  sandbox = await startSandbox({ token: 'root', config: { secrets: { mounts: MOUNTS } } });
  api = apiFor(sandbox);
});

afterAll(async () => {
  await sandbox.close();
});

beforeEach(() => {
  base = `/v1/auth/cfg${mount++}`;
});

interface ConfigEnvelope {
  data: Record<string, unknown>;
  warnings: string[] | null;
}

async function readConfig(path = base): Promise<Record<string, unknown>> {
  const res = await api('GET', `${path}/config`);
  expect(res.status).toBe(200);
  return res.json<ConfigEnvelope>().data;
}

async function write(body: unknown) {
  return api('POST', `${base}/config`, { body });
}

async function refused(body: unknown): Promise<string[]> {
  const res = await write(body);
  expect(res.status, res.text).toBe(400);
  expect(res.headers.get('content-type')).toBe('application/json');
  return res.json<{ errors: string[] }>().errors;
}

const DEFAULTS = {
  url: 'ldap://127.0.0.1',
  case_sensitive_names: false,
  connection_timeout: 30,
  request_timeout: 90,
  starttls: false,
  tls_min_version: 'tls12',
  tls_max_version: 'tls12',
  insecure_tls: false,
  certificate: '',
  binddn: '',
  bindpass: '',
  userdn: '',
  userattr: 'cn',
  discoverdn: false,
  deny_null_bind: true,
  upndomain: '',
  userfilter: '',
  anonymous_group_search: false,
  groupfilter: '',
  groupdn: '',
  groupattr: '',
  username_as_alias: false,
  max_page_size: 0,
  token_ttl: 0,
  token_max_ttl: 0,
  token_policies: [],
  token_bound_cidrs: [],
  token_explicit_max_ttl: 0,
  token_no_default_policy: false,
  token_num_uses: 0,
  token_period: 0,
  token_type: 'default',
};

describe('reading the config', () => {
  it('shows every field of the table with its default, in the envelope, before any write', async () => {
    const res = await api('GET', '/v1/auth/ldap/config');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    const body = res.json<Record<string, unknown>>();
    expect(body).toEqual({
      request_id: expect.any(String) as string,
      lease_id: '',
      renewable: false,
      lease_duration: 0,
      data: DEFAULTS,
      wrap_info: null,
      warnings: null,
      auth: null,
      mount_type: 'ldap',
    });
  });

  it('answers a write without content with 204 and no body', async () => {
    const res = await write({ binddn: 'cn=admin,dc=example,dc=org' });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(res.headers.get('content-length')).toBeNull();
  });

  it('hides bindpass (empty string) and the client key and certificate', async () => {
    expect((await write({ bindpass: 's3cret', binddn: 'cn=admin' })).status).toBe(204);
    const data = await readConfig();
    expect(data.bindpass).toBe('');
    expect(data.binddn).toBe('cn=admin');
    expect(data).not.toHaveProperty('client_tls_key');
    expect(data).not.toHaveProperty('client_tls_cert');
  });
});

describe('value forms', () => {
  it.each([
    [45, 45],
    ['45', 45],
    ['30s', 30],
    ['5m', 300],
    ['1h30m', 5400],
    ['1500ms', 1],
    ['', 0],
  ])('reads duration %j back as %d seconds', async (given, seconds) => {
    expect((await write({ connection_timeout: given, token_ttl: given })).status).toBe(204);
    const data = await readConfig();
    expect([data.connection_timeout, data.token_ttl]).toEqual([seconds, seconds]);
  });

  it('refuses a duration that is neither seconds nor a Go duration', async () => {
    const [message] = await refused({ request_timeout: '5 minutes' });
    expect(message).toMatch(
      /^Field validation failed: error converting input 5 minutes for field "request_timeout"/,
    );
  });

  it.each([
    [
      ['a', 'b'],
      ['a', 'b'],
    ],
    ['a, b ,c', ['a', 'b', 'c']],
    ['', []],
    [[], []],
  ])('reads the list %j back as an array', async (given, list) => {
    expect((await write({ token_policies: given })).status).toBe(204);
    expect((await readConfig()).token_policies).toEqual(list);
  });

  it('reads token_bound_cidrs as an array from either form and refuses a bad block', async () => {
    expect((await write({ token_bound_cidrs: '10.0.0.0/8, 192.168.1.7' })).status).toBe(204);
    expect((await readConfig()).token_bound_cidrs).toEqual(['10.0.0.0/8', '192.168.1.7']);
    expect((await write({ token_bound_cidrs: ['fd00::/8'] })).status).toBe(204);
    expect((await readConfig()).token_bound_cidrs).toEqual(['fd00::/8']);
    expect(await refused({ token_bound_cidrs: ['10.0.0.0/33'] })).toEqual([
      'error parsing address "10.0.0.0/33": invalid address',
    ]);
  });

  it('takes booleans and integers in Go weak forms', async () => {
    expect((await write({ starttls: 'true', insecure_tls: 1, max_page_size: '500' })).status).toBe(204);
    const data = await readConfig();
    expect([data.starttls, data.insecure_tls, data.max_page_size]).toEqual([true, true, 500]);
    expect((await refused({ starttls: 'yes' }))[0]).toMatch(/for field "starttls"/);
    expect((await refused({ max_page_size: [1] }))[0]).toMatch(/for field "max_page_size"/);
  });

  it('lower-cases url and userattr as the real method does', async () => {
    expect((await write({ url: 'LDAP://Dir.Example:389', userattr: 'UID' })).status).toBe(204);
    const data = await readConfig();
    expect([data.url, data.userattr]).toEqual(['ldap://dir.example:389', 'uid']);
  });

  it('refuses malformed JSON and a body that is not an object', async () => {
    const bad = await api('POST', `${base}/config`, { rawBody: '{"url":' });
    expect(bad.status).toBe(400);
    expect(bad.json<{ errors: string[] }>().errors[0]).toMatch(/^failed to parse JSON input/);
    expect((await api('POST', `${base}/config`, { rawBody: '[1]' })).status).toBe(400);
  });
});

describe('checks', () => {
  it('accepts every TLS version from tls10 to tls13 with min <= max', async () => {
    expect((await write({ tls_min_version: 'tls10', tls_max_version: 'tls13' })).status).toBe(204);
    const data = await readConfig();
    expect([data.tls_min_version, data.tls_max_version]).toEqual(['tls10', 'tls13']);
  });

  it('refuses an unknown TLS version and a minimum above the maximum', async () => {
    expect(await refused({ tls_min_version: 'tls14' })).toEqual(["invalid 'tls_min_version'"]);
    expect(await refused({ tls_max_version: 'ssl3' })).toEqual(["invalid 'tls_max_version'"]);
    // The maximum stays tls12 (default), so a minimum of tls13 alone is refused too.
    expect(await refused({ tls_min_version: 'tls13' })).toEqual([
      "'tls_max_version' must be greater than or equal to 'tls_min_version'",
    ]);
    expect((await readConfig()).tls_min_version).toBe('tls12');
  });

  it('requires a userfilter to consider userattr, by template or literally', async () => {
    const message =
      'userfilter configured does not consider userattr and may result in colliding entity aliases on logins';
    expect(await refused({ userfilter: '(mail={{.Username}})' })).toEqual([message]);
    expect((await write({ userfilter: '(&(objectClass=person)({{.UserAttr}}={{.Username}}))' })).status).toBe(
      204,
    );
    expect((await write({ userattr: 'uid', userfilter: '(uid={{.Username}})' })).status).toBe(204);
    expect((await readConfig()).userfilter).toBe('(uid={{.Username}})');
    // Active Directory's attribute as it is written: attribute names are case-insensitive in LDAP,
    // and the stored userattr is lower-cased.
    expect(
      (
        await write({
          userattr: 'sAMAccountName',
          userfilter: '(&(objectClass=user)(sAMAccountName={{.Username}}))',
        })
      ).status,
    ).toBe(204);
    expect(await write({ userattr: 'uid', userfilter: '(uid={{.Username}})' })).toMatchObject({
      status: 204,
    });
    // Changing userattr alone re-checks the stored filter.
    expect(await refused({ userattr: 'mail' })).toEqual([message]);
    expect(await refused({ userfilter: '(uid={{.Username}' })).toEqual([
      'invalid userfilter: template: queryTemplate:1: unclosed action',
    ]);
  });

  it('refuses a certificate that is not PEM and a client certificate without its key', async () => {
    expect(await refused({ certificate: 'not a certificate' })).toEqual([
      'failed to parse server tls cert: failed to decode PEM block in the certificate',
    ]);
    expect(
      await refused({ client_tls_cert: '-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----' }),
    ).toEqual(['both client_tls_cert and client_tls_key must be set']);
  });

  it('checks the token fields with the real messages', async () => {
    expect(await refused({ token_type: 'default-service' })).toEqual([
      `invalid 'token_type' value "default-service"`,
    ]);
    expect(await refused({ token_ttl: '2h', token_max_ttl: '1h' })).toEqual([
      "'token_ttl' cannot be greater than 'token_max_ttl'",
    ]);
    expect(await refused({ token_num_uses: -1 })).toEqual(["'token_num_uses' cannot be negative"]);
    expect(await refused({ token_type: 'batch', token_period: 60 })).toEqual([
      "'token_type' cannot be 'batch' or 'default_batch' when set to generate periodic tokens",
    ]);
    expect((await write({ token_type: 'batch' })).status).toBe(204);
    expect((await readConfig()).token_type).toBe('batch');
    expect((await write({ token_type: '' })).status).toBe(204);
    expect((await readConfig()).token_type).toBe('default');
  });

  it('ignores unknown fields with the real warning (200 with the envelope)', async () => {
    const res = await write({ zeta: 1, url: 'ldap://a', alpha: true });
    expect(res.status).toBe(200);
    expect(res.json<ConfigEnvelope>()).toMatchObject({
      data: null,
      warnings: ['Endpoint ignored these unrecognized parameters: [alpha zeta]'],
    });
    expect((await readConfig()).url).toBe('ldap://a');
  });
});

describe('a write updates the stored config', () => {
  it('keeps fields the write leaves out, both directory and token fields', async () => {
    expect(
      (await write({ url: 'ldap://one', userdn: 'ou=people', token_policies: 'p1', token_ttl: '1h' })).status,
    ).toBe(204);
    expect((await write({ binddn: 'cn=svc', bindpass: 'pw' })).status).toBe(204);
    const data = await readConfig();
    expect(data).toMatchObject({
      url: 'ldap://one',
      userdn: 'ou=people',
      binddn: 'cn=svc',
      token_policies: ['p1'],
      token_ttl: 3600,
    });
  });

  it('puts a directory field sent as null back to its default; a token field sent as null stays', async () => {
    expect((await write({ url: 'ldap://one', connection_timeout: 5, token_ttl: 60 })).status).toBe(204);
    expect((await write({ url: null, connection_timeout: null, token_ttl: null })).status).toBe(204);
    const data = await readConfig();
    expect([data.url, data.connection_timeout, data.token_ttl]).toEqual(['ldap://127.0.0.1', 30, 60]);
  });

  it('changes nothing when a write is refused', async () => {
    expect((await write({ url: 'ldap://kept' })).status).toBe(204);
    await refused({ url: 'ldap://lost', tls_min_version: 'tls99' });
    expect((await readConfig()).url).toBe('ldap://kept');
  });
});
