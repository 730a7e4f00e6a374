/** Reading a service's address and credentials from CONVERGE_<SERVICE>_* variables. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connectionFromEnv, EndpointConfigError } from '../../src/clients/http/index.js';

/** A service definition's environment-relevant part. */
const svc = (name: string, settings: { key: string; env: string; description: string }[] = []) => ({
  name,
  settings,
});
const endpointFromEnv = (name: string, env: NodeJS.ProcessEnv) => connectionFromEnv(svc(name), env);

const dir = mkdtempSync(join(tmpdir(), 'converge-endpoint-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('connectionFromEnv', () => {
  it('reads address and token', () => {
    const e = endpointFromEnv('registry', {
      CONVERGE_REGISTRY_ADDR: 'http://127.0.0.1:8500/',
      CONVERGE_REGISTRY_TOKEN: 't0ken',
    });
    expect(e).toEqual({
      address: 'http://127.0.0.1:8500',
      token: 't0ken',
      addressSource: 'CONVERGE_REGISTRY_ADDR',
      tokenSource: 'CONVERGE_REGISTRY_TOKEN',
      settings: {},
    });
  });

  it("reads the settings a service declares, and only that service's", () => {
    const org = [{ key: 'organization', env: 'ORGANIZATION', description: 'default organization' }];
    const env = {
      CONVERGE_WORKSPACES_ADDR: 'http://h.test',
      CONVERGE_WORKSPACES_ORGANIZATION: ' acme ',
      CONVERGE_REGISTRY_ADDR: 'http://h.test',
      CONVERGE_REGISTRY_ORGANIZATION: 'ignored',
    };
    expect(connectionFromEnv(svc('workspaces', org), env).settings).toEqual({ organization: 'acme' });
    expect(connectionFromEnv(svc('registry'), env).settings).toEqual({});
    expect(
      connectionFromEnv(svc('workspaces', org), { CONVERGE_WORKSPACES_ADDR: 'http://h.test' }).settings,
    ).toEqual({});
  });

  it('names the missing variable', () => {
    expect(() => endpointFromEnv('secrets', {})).toThrow(EndpointConfigError);
    expect(() => endpointFromEnv('secrets', {})).toThrow(/^CONVERGE_SECRETS_ADDR is not set/);
  });

  it('accepts only http and https addresses, without credentials', () => {
    expect(() => endpointFromEnv('scheduler', { CONVERGE_SCHEDULER_ADDR: 'ftp://x' })).toThrow(
      'CONVERGE_SCHEDULER_ADDR must start with http:// or https://',
    );
    expect(() => endpointFromEnv('scheduler', { CONVERGE_SCHEDULER_ADDR: '127.0.0.1:4646' })).toThrow(
      /CONVERGE_SCHEDULER_ADDR/,
    );
    expect(() => endpointFromEnv('scheduler', { CONVERGE_SCHEDULER_ADDR: 'http://u:p@h' })).toThrow(
      /credentials/,
    );
    expect(
      endpointFromEnv('workspaces', { CONVERGE_WORKSPACES_ADDR: 'https://tfe.example/prefix/' }).address,
    ).toBe('https://tfe.example/prefix');
  });

  it('reads the CA file and the insecure switch', () => {
    const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    const caPath = join(dir, 'ca.pem');
    writeFileSync(caPath, pem);
    const e = endpointFromEnv('secrets', {
      CONVERGE_SECRETS_ADDR: 'https://127.0.0.1:8200',
      CONVERGE_SECRETS_CACERT: caPath,
      CONVERGE_SECRETS_INSECURE: '1',
    });
    expect(e.caCertificate).toBe(pem);
    expect(e.insecureSkipTlsVerify).toBe(true);
    expect(() =>
      endpointFromEnv('secrets', {
        CONVERGE_SECRETS_ADDR: 'https://127.0.0.1:8200',
        CONVERGE_SECRETS_CACERT: join(dir, 'missing.pem'),
      }),
    ).toThrow(/^CONVERGE_SECRETS_CACERT: cannot read/);
  });
});
