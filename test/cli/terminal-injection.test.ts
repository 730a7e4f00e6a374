/**
 * A hostile service (or manifest) writes text meant to act on the reader's screen or CI log: a
 * newline followed by `::error …` (a GitHub Actions workflow command), ESC sequences that erase and
 * rewrite lines on a terminal (a forged "Plan: 0 to add"), `\r`, and bidi overrides. Run in-process
 * against real servers on 127.0.0.1: whatever Converge prints shows that text as visible escapes on
 * the line it belongs to, and nothing in it acts.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type HostileServer, hostileServer, reply } from '../support/hostile.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

/** What the review's hostile service answered. */
const INJECTION =
  'bad\n::error file=x::INJECTED\n\u001b[2K\u001b[1A\u001b[32mPlan: 0 to add, 0 to change\r\u202eevil\u2066x\u2069\u009b2J\u0085';

const servers: HostileServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(handler: Parameters<typeof hostileServer>[0]): Promise<string> {
  const server = await hostileServer(handler);
  servers.push(server);
  return server.url;
}

function stateDir(): string {
  return tempDir('converge-injection-state-');
}

function folder(files: Record<string, string>): string {
  const dir = tempDir('converge-injection-');
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  return dir;
}

/**
 * Nothing in `shown` acts on a terminal or a CI log: no ESC, CR, C1 control or bidi character, no
 * line that is a workflow command; and the service's text is still there to read, escaped.
 */
function expectInert(shown: string) {
  expect(shown).not.toMatch(/[\u001b\r\u0080-\u009f]/);
  expect(shown).not.toMatch(/[\u202a-\u202e\u2066-\u2069]/);
  expect(shown.split('\n').filter((line) => line.trim().startsWith('::'))).toEqual([]);
  expect(shown).toContain('\\n::error file=x::INJECTED\\n\\u001b[2K\\u001b[1A');
  expect(shown).toContain('\\r\\u202eevil\\u2066x\\u2069');
}

describe("a service's error text", () => {
  it('is one inert line in a 400 of converge ldap login', async () => {
    const address = await serve((_req, res) => reply(res, 400, { errors: [INJECTION] }));
    const r = await runCli(
      ['ldap', 'login', 'alice'],
      { CONVERGE_SECRETS_ADDR: address, CONVERGE_STATE_DIR: stateDir(), NO_COLOR: '1' },
      { stdin: 'a-password\n' },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^Error: secrets: POST \/v1\/auth\/ldap\/login\/alice → 400 bad\\n::error/);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expectInert(r.stdout + r.stderr);
  });

  it('is one inert line in the warnings of a successful login', async () => {
    const address = await serve((_req, res) =>
      reply(res, 200, {
        auth: { client_token: 'issued', policies: [], metadata: {}, lease_duration: 60, renewable: false },
        warnings: [INJECTION],
      }),
    );
    const r = await runCli(
      ['ldap', 'login', 'alice'],
      { CONVERGE_SECRETS_ADDR: address, CONVERGE_STATE_DIR: stateDir(), NO_COLOR: '1' },
      { stdin: 'a-password\n' },
    );
    expect(r.code, r.stderr).toBe(0);
    expectInert(r.stdout + r.stderr);
  });

  it("is one inert line when the scheduler's parser refuses converge job plan's file", async () => {
    const address = await serve((_req, res) => {
      res.writeHead(400, { 'content-type': 'text/plain' });
      res.end(`Failed to parse job: input.hcl:1,1: ${INJECTION}`);
    });
    const dir = folder({ 'web.hcl': 'job "web" {}\n' });
    const r = await runCli(['job', 'plan', path.join(dir, 'web.hcl')], {
      CONVERGE_SCHEDULER_ADDR: address,
      CONVERGE_STATE_DIR: stateDir(),
      NO_COLOR: '1',
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${path.join(dir, 'web.hcl')}:1,1: bad\\n::error`);
    expectInert(r.stdout + r.stderr);
  });

  it("is one inert line in the plan's warnings of converge job plan", async () => {
    const address = await serve((req, res) =>
      req.url?.startsWith('/v1/job/web/plan')
        ? reply(res, 200, { JobModifyIndex: 0, Warnings: INJECTION })
        : reply(res, 404, {}),
    );
    const dir = folder({ 'web.json': JSON.stringify({ Job: { ID: 'web', Type: 'service' } }) });
    const r = await runCli(['job', 'plan', path.join(dir, 'web.json')], {
      CONVERGE_SCHEDULER_ADDR: address,
      CONVERGE_STATE_DIR: stateDir(),
      NO_COLOR: '1',
    });
    expect(r.stdout + r.stderr).toContain('Warnings: bad\\n::error');
    expectInert(r.stdout + r.stderr);
  });

  it('is one inert line in the problem of a Job manifest whose specFile the parser refuses', async () => {
    const address = await serve((req, res) => {
      if (req.url === '/v1/jobs/parse') {
        res.writeHead(400, { 'content-type': 'text/plain' });
        return res.end(INJECTION);
      }
      reply(res, 404, {});
    });
    const dir = folder({
      'web.hcl': 'job "web" {}\n',
      'jobs.yaml':
        'apiVersion: converge/v1\nkind: Job\nmetadata: { name: web }\nspec:\n  specFile: web.hcl\n',
    });
    const r = await runCli(['plan', '-f', dir], {
      CONVERGE_SCHEDULER_ADDR: address,
      CONVERGE_STATE_DIR: stateDir(),
      NO_COLOR: '1',
    });
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).toContain('web.hcl: bad\\n::error');
    expectInert(r.stdout + r.stderr);
  });
});

describe("a service's error text during an apply", () => {
  it('is inert in the retry line, the progress line and the summary of what failed', async () => {
    let reads = 0;
    const address = await serve((req, res) => {
      if (req.method === 'GET') {
        // The first read is retried, the service's text in its reason.
        if (reads++ === 0) {
          res.writeHead(503, { 'content-type': 'text/plain', 'retry-after': '0' });
          return res.end(INJECTION);
        }
        // Empty lists (roles, policies) and no role by name (404): the plan creates one.
        return /^\/v1\/acl\/[a-z]+s(\?|$)/.test(req.url ?? '') ? reply(res, 200, []) : reply(res, 404, {});
      }
      res.writeHead(400, { 'content-type': 'text/plain' });
      res.end(INJECTION);
    });
    const dir = folder({
      'r.yaml':
        'apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: hostile }\nspec: { Description: x }\n',
    });
    const r = await runCli(['apply', '-f', dir, '--auto-approve'], {
      CONVERGE_REGISTRY_ADDR: address,
      CONVERGE_REGISTRY_TOKEN: 'a-token',
      CONVERGE_STATE_DIR: stateDir(),
      NO_COLOR: '1',
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/attempt 1 failed/);
    expect(r.stdout).toMatch(/^AclRole\/default\/hostile: FAILED: .*bad\\n::error/m);
    expect(r.stderr).toMatch(/^ {2}failed: AclRole\/default\/hostile: .*bad\\n::error/m);
    expectInert(r.stdout + r.stderr);
  });
});

describe('text a manifest quotes in its errors', () => {
  it('shows a key holding control and bidi characters escaped, on its own line', async () => {
    const key = 'a\u001b[2K\rb\u202ec::x';
    const dir = folder({
      'r.yaml': `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: r }\nspec:\n  Description: x\n  ${JSON.stringify(key)}: 1\n`,
    });
    const r = await runCli(['validate', '-f', dir], { CONVERGE_STATE_DIR: stateDir(), NO_COLOR: '1' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('r.yaml:6:3: unknown field "a\\u001b[2K\\rb\\u202ec::x" in spec');
    expect(r.stderr).not.toMatch(/[\u001b\r\u202e]/);
  });

  it('shows a JSON job file whose text the parser quotes without its control characters', async () => {
    const dir = folder({ 'web.json': '{"Job": \u001b[2K\n::error::x}' });
    const r = await runCli(['job', 'plan', path.join(dir, 'web.json')], {
      CONVERGE_SCHEDULER_ADDR: 'http://127.0.0.1:9',
      CONVERGE_STATE_DIR: stateDir(),
      NO_COLOR: '1',
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('is not valid JSON');
    expect(r.stderr).not.toMatch(/[\u001b\r]/);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
  });
});
