/**
 * The CLI against services that echo a refused request back, in-process (`runCli`) with real servers
 * on 127.0.0.1: the LDAP bind password on `apply`, the password of `converge ldap login` on a 400, on
 * a 500 after a retry and with CONVERGE_DEBUG=1. Nothing Converge prints may hold the secret in any
 * encoding. And the limits a run sets for every client: CONVERGE_MAX_RESPONSE_BYTES, and the run's
 * interrupt signal reaching requests whose kind passes none.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ServiceConnections } from '../../src/engine/connections.js';
import { registryService } from '../../src/clients/registry/definition.js';
import { REDACTED } from '../../src/common/scrub.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { echoForms, forward, type HostileServer, hostileServer, leaks, reply } from '../support/hostile.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

const TOKEN = `hostile-token-${randomUUID()}`;
const servers: HostileServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(handler: Parameters<typeof hostileServer>[0]): Promise<string> {
  const server = await hostileServer(handler);
  servers.push(server);
  return server.url;
}

function env(address: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    CONVERGE_SECRETS_ADDR: address,
    CONVERGE_SECRETS_TOKEN: TOKEN,
    CONVERGE_STATE_DIR: tempDir('converge-hostile-state-'),
    NO_COLOR: '1',
    ...extra,
  };
}

/** The request body as the service got it, written back raw, JSON-quoted and in base64. */
function echo(body: string): string {
  return `refused ${body} | quoted ${JSON.stringify(body)} | b64 ${Buffer.from(body).toString('base64')} | b64url ${Buffer.from(`.${body}`).toString('base64url')}`;
}

describe('an LdapConfig applied against a service that echoes the body back', () => {
  it('never prints the bind password, JSON-escaped or in base64', async () => {
    const bindpass = `bind"pa\\ss-${randomUUID()}`;
    let posted = 0;
    const address = await serve((req, res, body) => {
      if (req.method === 'POST' && req.url === '/v1/auth/ldap/config') {
        posted++;
        // Only the field, so that the echo sits within the part of the message that is shown.
        const sent = JSON.stringify({ bindpass: (JSON.parse(body) as { bindpass: string }).bindpass });
        return reply(res, 400, { errors: [echo(sent)] });
      }
      reply(res, 404, { errors: [] });
    });
    const dir = tempDir('converge-hostile-');
    writeFileSync(
      path.join(dir, 'ldap.yaml'),
      `apiVersion: converge/v1
kind: LdapConfig
metadata: { name: ldap }
spec:
  url: ldap://127.0.0.1:1
  binddn: cn=svc,dc=example,dc=test
  bindpass: \${env:HOSTILE_BINDPASS}
  userdn: ou=people,dc=example,dc=test
`,
    );
    const result = await runCli(
      ['apply', '-f', dir, '--auto-approve'],
      env(address, { HOSTILE_BINDPASS: bindpass, CONVERGE_ALLOW_ENV: 'HOSTILE_BINDPASS' }),
    );
    expect(posted).toBe(1);
    expect(result.code).not.toBe(0);
    const shown = result.stdout + result.stderr;
    expect(shown).toContain('[redacted]');
    expect(leaks(shown, bindpass)).toEqual([]);
    expect(leaks(shown, TOKEN)).toEqual([]);
  });
});

describe("an LdapConfig applied against a Go service that echoes the body in Go's own encoding", () => {
  it('never prints the bind password: <>& as \\u0026…, ö raw, or lower-cased by a proxy', async () => {
    // The review's password: every character an encoder may treat differently.
    const bindpass = 'Bind-P@ss/wörd+"q"&=1<a>';
    // Go's json.Marshal escapes <, > and & but leaves non-ASCII as it is.
    const goMarshal = (value: unknown) =>
      JSON.stringify(value).replace(/[<>&]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
    const address = await serve((req, res, body) => {
      if (req.method === 'POST' && req.url === '/v1/auth/ldap/config') {
        const { bindpass: sent } = JSON.parse(body) as { bindpass: string };
        return reply(res, 400, {
          errors: [
            `invalid config ${goMarshal({ bindpass: sent })}`,
            `proxy: ${encodeURIComponent(sent).toLowerCase()}`,
          ],
        });
      }
      reply(res, 404, { errors: [] });
    });
    const dir = tempDir('converge-hostile-');
    writeFileSync(
      path.join(dir, 'ldap.yaml'),
      `apiVersion: converge/v1
kind: LdapConfig
metadata: { name: ldap }
spec:
  url: ldap://127.0.0.1:1
  binddn: cn=svc,dc=example,dc=test
  bindpass: \${env:HOSTILE_BINDPASS}
  userdn: ou=people,dc=example,dc=test
`,
    );
    const result = await runCli(
      ['apply', '-f', dir, '--auto-approve'],
      env(address, { HOSTILE_BINDPASS: bindpass, CONVERGE_ALLOW_ENV: 'HOSTILE_BINDPASS' }),
    );
    expect(result.code).not.toBe(0);
    const shown = (result.stdout + result.stderr).toLowerCase();
    expect(shown).toContain('invalid config {"bindpass":"[redacted]"}');
    expect(shown).toContain('proxy: [redacted]');
    for (const piece of ['p@ss', 'wörd', 'p%40ss', 'w%c3%b6rd', '\\u0026=1'])
      expect(shown).not.toContain(piece);
  });
});

describe('converge ldap login against a service that echoes the password back', () => {
  const password = `s3cr"et\\pw-${randomUUID()}`;

  async function login(status: number, extra: Record<string, string> = {}) {
    let attempts = 0;
    const address = await serve((req, res, body) => {
      attempts++;
      // One 429 first: a retry (and its log line) happens before the final answer.
      if (status >= 500 && attempts === 1)
        return reply(res, 429, { errors: [echo(body)] }, { 'retry-after': '0' });
      reply(res, status, { errors: [echo(body), `url ${encodeURIComponent(password)}`] });
    });
    const result = await runCli(['ldap', 'login', 'alice'], env(address, extra), { stdin: `${password}\n` });
    return { ...result, attempts };
  }

  it('keeps it out of a 400', async () => {
    const result = await login(400);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('400');
    expect(leaks(result.stdout + result.stderr, password)).toEqual([]);
  });

  it('keeps it out of a 500 after a retry, and out of the retry line', async () => {
    const result = await login(500);
    expect(result.attempts).toBe(2);
    expect(result.stderr).toMatch(/attempt 1 failed \(429/);
    expect(result.stderr).toContain('500');
    expect(leaks(result.stdout + result.stderr, password)).toEqual([]);
  });

  it('keeps it out of the warnings of a successful login', async () => {
    const address = await serve((_req, res, body) =>
      reply(res, 200, {
        auth: {
          client_token: 'issued-token',
          policies: ['dev'],
          metadata: {},
          lease_duration: 60,
          renewable: false,
        },
        warnings: [echo(body)],
      }),
    );
    const result = await runCli(['ldap', 'login', 'alice'], env(address), { stdin: `${password}\n` });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('Warning: refused');
    expect(leaks(result.stdout + result.stderr, password)).toEqual([]);
  });

  it('keeps it out of the CONVERGE_DEBUG=1 stack print', async () => {
    const result = await login(500, { CONVERGE_DEBUG: '1' });
    expect(result.stderr).toMatch(/\n\s+at /);
    expect(leaks(result.stdout + result.stderr, password)).toEqual([]);
    expect(leaks(result.stdout + result.stderr, TOKEN)).toEqual([]);
  });
});

describe('a job planned against a scheduler that echoes the token and a password in hex and base32', () => {
  it('prints neither, in any encoding, in the plan problem', async () => {
    const token = randomUUID();
    const password = `pg-${randomUUID().slice(0, 13)}`;
    // The forms a debugging proxy or a careless service writes bytes in besides base64.
    const encoded = (value: string) => {
      const f = echoForms(value);
      return `hex ${f.hex} HEX ${f.hexUpper} b32 ${f.base32} b32np ${f.base32Unpadded}`;
    };
    let planned = 0;
    const address = await serve((req, res, body) => {
      // The job does not exist yet: the plan reads it, then asks the scheduler's dry run.
      if (req.method === 'GET') return reply(res, 404, 'job not found');
      planned++;
      const bearer = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      const sent = body.includes(password) ? password : 'not sent';
      res.writeHead(400, { 'content-type': 'text/plain' });
      res.end(`bad job | token ${encoded(bearer)} | env ${encoded(sent)}`);
    });
    const dir = tempDir('converge-hostile-');
    writeFileSync(
      path.join(dir, 'job.yaml'),
      `apiVersion: converge/v1
kind: Job
metadata: { name: web }
spec:
  Type: service
  Datacenters: [dc1]
  TaskGroups:
    - Name: web
      Tasks:
        - { Name: web, Driver: docker, Config: { image: nginx }, Env: { DB_PASSWORD: "\${env:DB_PASSWORD}" } }
`,
    );
    const result = await runCli(['plan', '-f', dir], {
      CONVERGE_SCHEDULER_ADDR: address,
      CONVERGE_SCHEDULER_TOKEN: token,
      CONVERGE_STATE_DIR: tempDir('converge-hostile-state-'),
      CONVERGE_ALLOW_ENV: 'DB_PASSWORD',
      DB_PASSWORD: password,
      NO_COLOR: '1',
    });
    expect(planned).toBe(1);
    const shown = result.stdout + result.stderr;
    // Every form replaced where it stood, so the rest of the service's words still read.
    expect(shown).toContain(
      `bad job | token hex ${REDACTED} HEX ${REDACTED} b32 ${REDACTED} b32np ${REDACTED} | env hex ${REDACTED} HEX ${REDACTED} b32 ${REDACTED} b32np ${REDACTED}`,
    );
    expect(leaks(shown, token)).toEqual([]);
    expect(leaks(shown, password)).toEqual([]);
  });
});

describe('a scheduler that echoes a password where the message is cut to length', () => {
  it("leaves no fragment of it: the run scrubs the manifest's sensitive values before the cut", async () => {
    const password = `pg-${randomUUID().slice(0, 13)}`;
    const b64 = Buffer.from(password).toString('base64');
    const address = await serve((req, res) => {
      if (req.method === 'GET') return reply(res, 404, 'job not found');
      res.writeHead(400, { 'content-type': 'text/plain' });
      // The base64 straddles the 500th character, where a service's message is cut.
      // Words around it, not base64 letters, which the scrubber would take for part of the run.
      const filler = '- '.repeat(500).slice(0, 500 - Math.floor(b64.length / 2) - 1);
      res.end(`${filler} ${b64} and more`);
    });
    const dir = tempDir('converge-hostile-');
    writeFileSync(
      path.join(dir, 'job.yaml'),
      `apiVersion: converge/v1
kind: Job
metadata: { name: web }
spec:
  Type: service
  Datacenters: [dc1]
  TaskGroups:
    - Name: web
      Tasks:
        - { Name: web, Driver: docker, Config: { image: nginx }, Env: { DB_PASSWORD: "\${env:DB_PASSWORD}" } }
`,
    );
    const result = await runCli(['plan', '-f', dir], {
      CONVERGE_SCHEDULER_ADDR: address,
      CONVERGE_SCHEDULER_TOKEN: randomUUID(),
      CONVERGE_STATE_DIR: tempDir('converge-hostile-state-'),
      CONVERGE_ALLOW_ENV: 'DB_PASSWORD',
      DB_PASSWORD: password,
      NO_COLOR: '1',
    });
    const shown = result.stdout + result.stderr;
    expect(shown).toContain('- '.repeat(50));
    // Not even the half of the base64 before the cut.
    expect(shown).not.toContain(b64.slice(0, Math.floor(b64.length / 2)));
    expect(leaks(shown, password)).toEqual([]);
  });
});

describe('converge ldap login against a service that floods its warnings', () => {
  it('prints at most 20 warnings of 500 characters each, saying how much was left out', async () => {
    const password = `pw-${randomUUID()}`;
    const megabyte = `${'A'.repeat(1_000_000)}\u001b[2J`;
    const address = await serve((_req, res) =>
      reply(res, 200, {
        auth: {
          client_token: 'issued',
          policies: ['dev'],
          metadata: {},
          lease_duration: 60,
          renewable: false,
        },
        // Two warnings of a megabyte (the second ends with the password), then 99,998 short ones.
        warnings: [
          megabyte,
          megabyte + password,
          ...Array.from({ length: 99_998 }, (_, i) => `w${i}\r\u001b[1A`),
        ],
      }),
    );
    const result = await runCli(['ldap', 'login', 'alice'], env(address), { stdin: `${password}\n` });
    expect(result.code, result.stderr).toBe(0);
    const warnings = result.stdout.split('\n').filter((l) => l.startsWith('Warning: '));
    expect(warnings).toHaveLength(21);
    expect(warnings[0]).toBe(`Warning: ${'A'.repeat(500)}… (${megabyte.length - 500} more characters)`);
    expect(warnings[2]).toBe('Warning: w0\\r\\u001b[1A');
    expect(warnings[20]).toBe('Warning: … and 99980 more warnings');
    expect(result.stdout.length).toBeLessThan(20_000);
    expect(result.stdout).not.toMatch(/[\r\u001b]/);
    expect(leaks(result.stdout + result.stderr, password)).toEqual([]);
  });
});

describe('limits a run sets for every service', () => {
  it('reads CONVERGE_MAX_RESPONSE_BYTES and refuses a larger answer, naming the limit', async () => {
    const address = await serve((_req, res) => reply(res, 200, { data: { url: 'x'.repeat(4096) } }));
    const result = await runCli(
      ['ldap', 'get', 'config'],
      env(address, { CONVERGE_MAX_RESPONSE_BYTES: '1024' }),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('response body larger than the 1 KiB limit');
    expect(result.stderr).toContain('CONVERGE_MAX_RESPONSE_BYTES');
  });

  it('says what is wrong with a CONVERGE_MAX_RESPONSE_BYTES that is not a number of bytes', async () => {
    const result = await runCli(
      ['ldap', 'get', 'config'],
      env('http://127.0.0.1:9', { CONVERGE_MAX_RESPONSE_BYTES: '64MB' }),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('CONVERGE_MAX_RESPONSE_BYTES must be a whole number of bytes');
  });

  it("gives the run's interrupt signal to every client, also for kinds that pass none", async () => {
    let contacted = 0;
    const address = await serve((_req, res) => {
      contacted++;
      reply(res, 200, []);
    });
    const interrupt = new AbortController();
    const reason = new Error('interrupted by SIGINT');
    interrupt.abort(reason);
    const connections = new ServiceConnections(
      { CONVERGE_REGISTRY_ADDR: address, CONVERGE_REGISTRY_TOKEN: TOKEN },
      [registryService],
      [],
      { signal: interrupt.signal },
    );
    try {
      await expect(connections.client(registryService).listRoles()).rejects.toBe(reason);
      expect(contacted).toBe(0);
    } finally {
      await connections.close();
    }
  });
});

describe('a service answering JSON nested deeper than Converge walks', () => {
  it('fails export with the service and request named, not a stack overflow', async () => {
    // A scheduler that hands back a task Config 5,000 levels deep (the real one stores up to 10,000,
    // Go's decoder limit; the sandbox refuses over 500): the sandbox behind a proxy that deepens it.
    const sandbox = await startSandbox({ port: 0, token: `deep-root-${randomUUID()}` });
    try {
      const made = await fetch(new URL('/v1/jobs', sandbox.url), {
        method: 'PUT',
        headers: { 'X-Nomad-Token': sandbox.rootToken },
        body: JSON.stringify({
          Job: {
            ID: 'deep',
            Name: 'deep',
            Type: 'batch',
            Datacenters: ['dc1'],
            TaskGroups: [
              { Name: 'g', Count: 1, Tasks: [{ Name: 't', Driver: 'exec', Config: { deepen: 1 } }] },
            ],
          },
        }),
      });
      expect(made.status).toBe(200);
      const deep = `${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}`;
      const address = await serve((req, res, body) =>
        forward(req, res, body, sandbox.url, {
          headers: { 'X-Nomad-Token': sandbox.rootToken },
          rewrite: (text) => text.replaceAll('{"deepen":1}', deep),
        }),
      );
      const out = tempDir('converge-deep-export-');
      const result = await runCli(['export', '--kind', 'Job', '-o', out], {
        CONVERGE_SCHEDULER_ADDR: address,
        CONVERGE_SCHEDULER_TOKEN: sandbox.rootToken,
        NO_COLOR: '1',
        CONVERGE_STATE_DIR: tempDir('converge-deep-state-'),
      });
      expect(result.stderr).not.toContain('call stack');
      expect(result.stderr).toMatch(
        /scheduler: GET \/v1\/job\/deep\S* → 200 JSON in the response body nests deeper than 128 levels/,
      );
      expect(result.code).toBe(1);
      expect(readdirSync(out)).toEqual([]);
    } finally {
      await sandbox.close();
    }
  });
});
