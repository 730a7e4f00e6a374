/**
 * A manifest Connection cannot carry the operator's credentials to an address of the manifest
 * author's choosing: a token from outside the manifest goes only to an address the operator
 * configured or allowed (CONVERGE_ALLOW_ADDRESSES, --allow-address). The "service" is a small HTTP
 * server that records every request it gets and the token header it carried.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

const TOKEN = 'planted-connection-token-5c1d9e';
const ENV_TOKEN = 'planted-env-registry-token-7a2b4f';

interface Seen {
  method: string;
  url: string;
  authorization: string | undefined;
  body: string;
}

let server: http.Server;
let address: string;
const seen: Seen[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        authorization: req.headers.authorization,
        body,
      });
      res.writeHead(404, { 'Content-Type': 'application/json' }).end('{"error":"not found"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  address = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  seen.length = 0;
});

/** A Connection (token from the environment unless given) and a role that uses it. */
function manifest(connectionAddress: string, token: string | null = '${env:TEST_CONN_TOKEN}'): string {
  const dir = tempDir('converge-conn-');
  writeFileSync(
    path.join(dir, 'm.yaml'),
    `apiVersion: converge/v1
kind: Connection
metadata: { name: elsewhere }
spec:
  service: registry
  address: ${connectionAddress}
${token === null ? '' : `  token: ${token}\n`}---
apiVersion: converge/v1
kind: AclRole
metadata: { name: web, connection: elsewhere }
spec: { Description: web }
`,
  );
  return dir;
}

function env(extra: Record<string, string> = {}): Record<string, string> {
  return {
    CONVERGE_STATE_DIR: tempDir('converge-conn-state-'),
    // Exposes the variable to the manifest where the env allow-list applies.
    CONVERGE_ALLOW_ENV: 'TEST_*',
    TEST_CONN_TOKEN: TOKEN,
    NO_COLOR: '1',
    ...extra,
  };
}

describe('a manifest Connection with a token from the environment', () => {
  it.each([
    ['validate', []],
    ['plan', []],
    ['apply', ['--auto-approve']],
  ])(
    '%s refuses an address the operator did not allow, at the address, contacting nothing',
    async (command, flags) => {
      const dir = manifest(address);
      const r = await runCli([command, '-f', dir, ...flags], env());
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(
        `${path.join(dir, 'm.yaml')}:6:12: connection "elsewhere" takes its token from outside the manifest and would send it to ${address}`,
      );
      expect(r.stderr).toContain(`CONVERGE_ALLOW_ADDRESSES=${address} or --allow-address ${address}`);
      expect(r.stderr + r.stdout).not.toContain(TOKEN);
      expect(seen).toEqual([]);
    },
  );

  it('is refused in the same run as a problem elsewhere in the manifest, not only once that is fixed', async () => {
    const dir = manifest(address);
    writeFileSync(
      path.join(dir, 'typo.yaml'),
      'apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: api, connection: elsewher }\nspec: { Description: api }\n',
    );
    const r = await runCli(['validate', '-f', dir], env());
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('the manifest has 2 problems');
    expect(r.stderr).toContain('connection "elsewher" is not declared');
    expect(r.stderr).toContain(
      `${path.join(dir, 'm.yaml')}:6:12: connection "elsewhere" takes its token from outside the manifest and would send it to ${address}`,
    );
    expect(seen).toEqual([]);
  });

  it('sends the token to an address allowed with --allow-address (a glob)', async () => {
    const r = await runCli(['plan', '-f', manifest(address), '--allow-address', 'http://127.0.0.1:*'], env());
    expect(seen.length, r.stderr).toBeGreaterThan(0);
    expect(seen.every((s) => s.authorization === `Bearer ${TOKEN}`)).toBe(true);
  });

  it('sends the token to an address allowed in CONVERGE_ALLOW_ADDRESSES', async () => {
    await runCli(
      ['plan', '-f', manifest(`${address}/`)],
      env({ CONVERGE_ALLOW_ADDRESSES: `https://other.example, ${address}` }),
    );
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((s) => s.authorization === `Bearer ${TOKEN}`)).toBe(true);
  });

  it('allows an address written with its default port or upper-case host, as the manifest writes it', async () => {
    // Compared normalised on both sides: allowing the manifest's own text must work.
    for (const written of [
      'https://Registry.EU.example:443',
      'http://registry.eu.example:80/',
      // The scheme is case-insensitive too (RFC 3986, 3.1), as every HTTP client reads it.
      'HTTPS://registry.eu.example',
    ]) {
      const r = await runCli(['validate', '-f', manifest(written), '--allow-address', written], env());
      expect(r.code, r.stderr).toBe(0);
    }
    // A glob is matched as written, and an address it does not cover is still refused.
    const other = await runCli(
      [
        'validate',
        '-f',
        manifest('https://registry.eu.example:443'),
        '--allow-address',
        'https://other.example:443',
      ],
      env(),
    );
    expect(other.code).toBe(1);
    // Allowed in lower case, an upper-case scheme in the manifest is the same address.
    const upper = await runCli(
      ['validate', '-f', manifest('HTTPS://Registry.EU.example'), '--allow-address', 'https://*.eu.example'],
      env(),
    );
    expect(upper.code, upper.stderr).toBe(0);
  });

  it("refuses a CA or skipped verification of the manifest on a connection carrying the operator's token", async () => {
    for (const [field, line] of [
      ['insecureSkipTlsVerify', '  insecureSkipTlsVerify: true'],
      ['caCertificate', '  caCertificate: "-----BEGIN CERTIFICATE-----\\nMIIB\\n-----END CERTIFICATE-----"'],
    ] as const) {
      const dir = manifest(address);
      const file = path.join(dir, 'm.yaml');
      writeFileSync(file, readFileSync(file, 'utf8').replace(/^spec:\n/m, `spec:\n${line}\n`));
      const r = await runCli(['plan', '-f', dir, '--allow-address', address], env());
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(
        /m\.yaml:\d+:\d+: connection "elsewhere" takes its token from outside the manifest, so whom it trusts is the operator's to say/,
      );
      expect(r.stderr).toContain(
        field === 'caCertificate' ? 'a caCertificate written here' : 'insecureSkipTlsVerify',
      );
      expect(r.stderr).toContain('NODE_EXTRA_CA_CERTS');
      expect(seen).toEqual([]);
    }
  });

  it('is allowed at the address the operator configured for the service', async () => {
    const r = await runCli(
      ['validate', '-f', manifest(`${address}/`)],
      env({ CONVERGE_REGISTRY_ADDR: address }),
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });

  it("is refused at another service's configured address", async () => {
    const r = await runCli(['validate', '-f', manifest(address)], env({ CONVERGE_SCHEDULER_ADDR: address }));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('or use the address set in CONVERGE_REGISTRY_ADDR');
  });

  it('is refused when the token comes through an alias of an interpolated value', async () => {
    const dir = tempDir('converge-conn-');
    writeFileSync(
      path.join(dir, 'm.yaml'),
      `apiVersion: converge/v1
kind: Connection
metadata: { name: elsewhere, labels: { t: &tok "\${env:TEST_CONN_TOKEN}" } }
spec: { service: registry, address: "${address}", token: *tok }
`,
    );
    const r = await runCli(['validate', '-f', dir], env());
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('takes its token from outside the manifest');
  });
});

describe('a manifest Connection without a token from outside', () => {
  it("never falls back to the environment's token, even at the configured address", async () => {
    const r = await runCli(
      ['plan', '-f', manifest(address, null)],
      env({ CONVERGE_REGISTRY_ADDR: address, CONVERGE_REGISTRY_TOKEN: ENV_TOKEN }),
    );
    expect(seen.length, r.stderr).toBeGreaterThan(0);
    expect(seen.map((s) => s.authorization)).toEqual(seen.map(() => undefined));
  });

  it('may send a token written in the manifest itself anywhere: it is the author’s own', async () => {
    await runCli(['plan', '-f', manifest(address, 'written-in-the-manifest')], env());
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((s) => s.authorization === 'Bearer written-in-the-manifest')).toBe(true);
  });
});

describe('a manifest Connection that would carry values from outside the manifest', () => {
  const SECRET = 'planted-db-password-93e1c7';

  /** A tokenless scheduler Connection and a job whose Meta copies an allowed variable (a pull request's trick). */
  function jobManifest(connectionAddress: string, note = '"p=${env:TEST_DB_PASSWORD}"'): string {
    const dir = tempDir('converge-conn-');
    writeFileSync(
      path.join(dir, 'm.yaml'),
      `apiVersion: converge/v1
kind: Connection
metadata: { name: x }
spec: { service: scheduler, address: "${connectionAddress}" }
---
apiVersion: converge/v1
kind: Job
metadata: { name: exfil, connection: x }
spec:
  Type: batch
  Datacenters: [dc1]
  Meta: { note: ${note} }
  TaskGroups: [{ Name: g, Tasks: [{ Name: t, Driver: exec, Config: { command: /bin/true } }] }]
`,
    );
    return dir;
  }

  it.each([
    ['validate', []],
    ['plan', []],
    ['apply', ['--auto-approve']],
  ])(
    '%s refuses it at the value, naming the connection and the address, contacting nothing',
    async (command, flags) => {
      // Even plan sends a job whole (its plan endpoint): the variable would reach the author's address.
      const dir = jobManifest(address);
      const r = await runCli([command, '-f', dir, ...flags], env({ TEST_DB_PASSWORD: SECRET }));
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(
        `${path.join(dir, 'm.yaml')}:12:17: Job "exfil" spec.Meta.note is read from outside the manifest`,
      );
      expect(r.stderr).toContain(
        `connection "x" (${path.join(dir, 'm.yaml')}:2:1) would send it to ${address}`,
      );
      expect(r.stderr).toContain(`CONVERGE_ALLOW_ADDRESSES=${address} or --allow-address ${address}`);
      expect(r.stderr + r.stdout).not.toContain(SECRET);
      expect(seen).toEqual([]);
    },
  );

  it('sends it to an address the operator allowed', async () => {
    const r = await runCli(
      ['plan', '-f', jobManifest(address), '--allow-address', address],
      env({ TEST_DB_PASSWORD: SECRET }),
    );
    expect(seen.length, r.stderr).toBeGreaterThan(0);
  });

  it('lets a value written in the manifest go anywhere: it is the author’s own', async () => {
    const r = await runCli(['validate', '-f', jobManifest(address, 'written-here')], env());
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });

  it("refuses a job's specFile: its contents are sent whole, even by plan", async () => {
    const dir = tempDir('converge-conn-');
    // A checkout's credentials sit in files like this one.
    writeFileSync(path.join(dir, 'config'), `[http]\n\textraheader = AUTHORIZATION: basic ${SECRET}\n`);
    writeFileSync(
      path.join(dir, 'm.yaml'),
      `apiVersion: converge/v1
kind: Connection
metadata: { name: x }
spec: { service: scheduler, address: "${address}" }
---
apiVersion: converge/v1
kind: Job
metadata: { name: exfil, connection: x }
spec: { specFile: config }
`,
    );
    const r = await runCli(['plan', '-f', dir], env());
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `${path.join(dir, 'm.yaml')}:9:19: Job "exfil" spec.specFile names a file of the runner (its contents are sent whole) and connection "x"`,
    );
    expect(r.stderr + r.stdout).not.toContain(SECRET);
    expect(seen).toEqual([]);
  });

  it('never quotes an allowed address read from a variable, even when the service cannot be reached', async () => {
    // A port nothing listens on (the test server's own, closed after use, would do as well).
    const down = 'http://127.0.0.1:9';
    const dir = manifest('"${env:TEST_EU_ADDR}"', null);
    const r = await runCli(['plan', '-f', dir], env({ TEST_EU_ADDR: down, CONVERGE_ALLOW_ADDRESSES: down }));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('cannot reach [redacted]');
    expect(r.stderr).toContain('connection "elsewhere"');
    expect(r.stderr + r.stdout).not.toContain('127.0.0.1:9');
    // A bare one-word host is a word too: it stays in names (`localhost-web`) and messages.
    const bare = manifest('"${env:TEST_EU_ADDR}"', null);
    const file = path.join(bare, 'm.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace('name: web,', 'name: localhost-web,'));
    const named = await runCli(
      ['plan', '-f', bare],
      env({ TEST_EU_ADDR: 'http://localhost', CONVERGE_ALLOW_ADDRESSES: 'http://localhost' }),
    );
    expect(named.code).toBe(1);
    expect(named.stderr + named.stdout).toContain('localhost-web');
    expect(named.stderr + named.stdout).not.toContain('http://localhost');
  });

  it('refuses an address that reads a variable, without quoting it', async () => {
    const dir = tempDir('converge-conn-');
    writeFileSync(
      path.join(dir, 'm.yaml'),
      `apiVersion: converge/v1
kind: Connection
metadata: { name: elsewhere }
spec: { service: registry, address: "${address}/\${env:TEST_DB_PASSWORD}" }
---
apiVersion: converge/v1
kind: AclRole
metadata: { name: web, connection: elsewhere }
spec: { Description: web }
`,
    );
    for (const command of ['validate', 'plan']) {
      const r = await runCli([command, '-f', dir], env({ TEST_DB_PASSWORD: SECRET }));
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(
        'the address of connection "elsewhere" is read from outside the manifest (${env:…} or ${file:…})',
      );
      expect(r.stderr).toContain('would send it to its address (read from outside the manifest, not shown)');
      expect(r.stderr + r.stdout).not.toContain(SECRET);
    }
    // With a token from outside too, the token's refusal does not quote it either.
    const withToken = readFileSync(path.join(dir, 'm.yaml'), 'utf8').replace(
      '/${env:TEST_DB_PASSWORD}" }',
      '/${env:TEST_DB_PASSWORD}", token: "${env:TEST_CONN_TOKEN}" }',
    );
    writeFileSync(path.join(dir, 'm.yaml'), withToken);
    const r = await runCli(['plan', '-f', dir, '--markdown'], env({ TEST_DB_PASSWORD: SECRET }));
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).toContain('takes its token from outside the manifest');
    expect(r.stdout + r.stderr).not.toContain(SECRET);
    expect(seen).toEqual([]);
  });

  it("refuses a PruneScope's namespace read from a variable on a manifest Connection", async () => {
    const dir = tempDir('converge-conn-');
    writeFileSync(
      path.join(dir, 'm.yaml'),
      `apiVersion: converge/v1
kind: Connection
metadata: { name: elsewhere }
spec: { service: registry, address: "${address}" }
---
apiVersion: converge/v1
kind: PruneScope
metadata: { name: s }
spec: { kind: AclRole, connection: elsewhere, namespace: "\${env:TEST_DB_PASSWORD}" }
`,
    );
    const r = await runCli(['plan', '-f', dir, '--prune'], env({ TEST_DB_PASSWORD: SECRET }));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('the namespace of PruneScope "s" is read from outside the manifest');
    expect(r.stderr + r.stdout).not.toContain(SECRET);
    expect(seen).toEqual([]);
  });

  it('lets labels take a variable: they never reach a service', async () => {
    const dir = jobManifest(address, 'written-here');
    const text = readFileSync(path.join(dir, 'm.yaml'), 'utf8').replace(
      'metadata: { name: exfil, connection: x }',
      'metadata: { name: exfil, connection: x, labels: { team: "${env:TEST_DB_PASSWORD}" } }',
    );
    writeFileSync(path.join(dir, 'm.yaml'), text);
    const r = await runCli(['validate', '-f', dir], env({ TEST_DB_PASSWORD: SECRET }));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });

  it("refuses a Connection's own setting read from a variable, without a token", async () => {
    const dir = tempDir('converge-conn-');
    writeFileSync(
      path.join(dir, 'm.yaml'),
      `apiVersion: converge/v1
kind: Connection
metadata: { name: ws }
spec: { service: workspaces, address: "${address}", organization: "\${env:TEST_ORG}" }
`,
    );
    const r = await runCli(['validate', '-f', dir], env({ TEST_ORG: SECRET }));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('the organization of connection "ws" is read from outside the manifest');
    expect(r.stderr).not.toContain(SECRET);
  });

  it('does not quote a name filled from a variable', async () => {
    const dir = tempDir('converge-conn-');
    writeFileSync(
      path.join(dir, 'm.yaml'),
      `apiVersion: converge/v1
kind: Connection
metadata: { name: elsewhere }
spec: { service: registry, address: "${address}" }
---
apiVersion: converge/v1
kind: AclRole
metadata: { name: "\${env:TEST_ROLE}", connection: elsewhere }
spec: { Description: web }
`,
    );
    const r = await runCli(['validate', '-f', dir], env({ TEST_ROLE: 'role-name-from-variable' }));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('AclRole metadata.name is read from outside the manifest');
    expect(r.stderr).not.toContain('role-name-from-variable');
  });
});

describe('a refused request on a manifest Connection', () => {
  it('names the connection to fix, in words that read', async () => {
    const refusing = http.createServer((req, res) => {
      req.resume();
      const message = req.headers.authorization ? 'ACL not found' : 'Permission denied';
      res.writeHead(403, { 'Content-Type': 'text/plain' }).end(message);
    });
    await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
    const at = `http://127.0.0.1:${(refusing.address() as AddressInfo).port}`;
    try {
      const withToken = await runCli(['plan', '-f', manifest(at), '--allow-address', at], env());
      expect(withToken.code).toBe(1);
      expect(withToken.stderr).toMatch(
        /\(check the token in connection "elsewhere" \(.*m\.yaml:\d+:\d+\): the service refused it\)/,
      );
      const without = await runCli(['plan', '-f', manifest(at, null)], env());
      expect(without.code).toBe(1);
      expect(without.stderr).toMatch(
        /\(no token was sent: give connection "elsewhere" \(.*m\.yaml:\d+:\d+\) a token\)/,
      );
    } finally {
      await new Promise<void>((resolve) => refusing.close(() => resolve()));
    }
  });
});
