/**
 * A service that stored the token Converge reads it with (a role's Description holding it, as sent
 * or without its dashes): what operator commands print and what `converge export` writes for a
 * repository carry it redacted, as a plan masks it. Found by a red-team pass: `role get` and the
 * export files printed it whole.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

const TOKEN = '8f414b99-8697-4992-b453-0e0b80d203ab';
const UNDASHED = TOKEN.replace(/-/g, '');
let sandbox: RunningSandbox;
let env: Record<string, string | undefined>;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, token: TOKEN });
  env = { ...sandbox.env(), NO_COLOR: '1', CONVERGE_STATE_DIR: tempDir('converge-echoed-state-') };
  const res = await fetch(`${sandbox.url}/v1/acl/role`, {
    method: 'PUT',
    headers: { 'X-Consul-Token': TOKEN, 'Content-Type': 'application/json' },
    body: JSON.stringify({ Name: 'tokrole', Description: `raw ${TOKEN} nodash ${UNDASHED} end` }),
  });
  expect(res.status).toBe(200);
});
afterAll(async () => {
  await sandbox?.close();
});

const leaked = (text: string) => text.includes(TOKEN) || text.toLowerCase().includes(UNDASHED);

describe('a token the service stored in a live value', () => {
  it('is redacted in role get and role list, text and JSON', async () => {
    for (const args of [
      ['role', 'get', 'tokrole'],
      ['role', 'get', 'tokrole', '--json'],
      ['role', 'list'],
      ['role', 'list', '--json'],
    ]) {
      const r = await runCli(args, env);
      expect(r.code, r.stderr).toBe(0);
      expect(leaked(r.stdout + r.stderr), args.join(' ')).toBe(false);
      expect(r.stdout).toContain('[redacted]');
    }
  });

  it('is written redacted by export, with a note in the file and a warning', async () => {
    const out = path.join(tempDir('converge-echoed-export-'), 'out');
    const r = await runCli(['export', '-o', out, '--kind', 'AclRole'], env);
    expect(r.code, r.stderr).toBe(0);
    const file = readFileSync(path.join(out, 'AclRole.yaml'), 'utf8');
    expect(leaked(file)).toBe(false);
    expect(file).toContain('Description: raw [redacted] nodash [redacted] end');
    expect(file).toContain('# Description held the token Converge read the service with');
    expect(r.stderr).toContain(
      'Warning: AclRole/default/tokrole: Description holds the token Converge read the service with',
    );
    expect(leaked(r.stdout + r.stderr)).toBe(false);
  });
});

describe('state pull to standard output', () => {
  it("passes the state's bytes on whole, even once an answer showed the token", async () => {
    const dir = tempDir('converge-echoed-state-');
    // The workspace's description shows the token: every answer about it echoes it.
    writeFileSync(
      path.join(dir, 'ws.yaml'),
      `apiVersion: converge/v1\nkind: Workspace\nmetadata: { name: echoing }\nspec: { description: "tok ${TOKEN}" }\n`,
    );
    expect((await runCli(['apply', '-f', dir, '--auto-approve'], env)).code).toBe(0);
    const state = `${JSON.stringify({ version: 4, serial: 1, lineage: 'L', terraform_version: '1.9.8', outputs: { t: { value: TOKEN, type: 'string' } }, resources: [] })}\n`;
    writeFileSync(path.join(dir, 's.tfstate'), state);
    expect((await runCli(['state', 'push', 'sandbox/echoing', path.join(dir, 's.tfstate')], env)).code).toBe(
      0,
    );
    const pulled = await runCli(['state', 'pull', 'sandbox/echoing'], env);
    expect(pulled.code, pulled.stderr).toBe(0);
    expect(pulled.stdout).toBe(state);
  });
});

describe('a short dev token that is also a word', () => {
  let dev: RunningSandbox;
  beforeAll(async () => {
    dev = await startSandbox({ port: 0, token: 'root' });
    await fetch(`${dev.url}/v1/acl/role`, {
      method: 'PUT',
      headers: { 'X-Consul-Token': 'root', 'Content-Type': 'application/json' },
      body: JSON.stringify({ Name: 'ca-admins', Description: 'root CA operators (chroot jail)' }),
    });
  });
  afterAll(async () => {
    await dev?.close();
  });

  it('is not looked for: role get shows the word, and state pull passes bytes on whole', async () => {
    const devEnv = { ...dev.env(), NO_COLOR: '1', CONVERGE_STATE_DIR: tempDir('converge-dev-token-state-') };
    const r = await runCli(['role', 'get', 'ca-admins'], devEnv);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('root CA operators (chroot jail)');
  });
});
