/**
 * The state key keys the inventory's digests and signs saved plans, so it must carry at least 32
 * random bytes: hex (64+ digits) or base64 (of 32+ bytes), from CONVERGE_STATE_KEY or state.key.
 * Anything else is an error naming where the key came from, never quoting it.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

let sandbox: RunningSandbox;
let dir: string;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
  dir = tempDir('converge-key-');
  writeFileSync(
    path.join(dir, 'r.yaml'),
    'apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: key-role }\nspec: { Description: x }\n',
  );
});
afterAll(async () => sandbox?.close());

function stateDir(keyFile?: string): string {
  const d = tempDir('converge-key-state-');
  if (keyFile !== undefined) writeFileSync(path.join(d, 'state.key'), keyFile);
  return d;
}

function plan(env: Record<string, string>) {
  return runCli(['plan', '-f', dir, '-out', path.join(env.CONVERGE_STATE_DIR!, 'p.plan')], {
    ...sandbox.env(),
    ...env,
  });
}

const weak: [string, string][] = [
  ['one character', 'a'],
  ['63 hex digits', 'f'.repeat(63)],
  ['base64 of 31 bytes', randomBytes(31).toString('base64')],
  ['a passphrase', 'correct horse battery staple'],
];

describe('a weak CONVERGE_STATE_KEY', () => {
  it.each(weak)('(%s) is refused, naming the variable and not the value', async (_what, value) => {
    const r = await plan({ CONVERGE_STATE_DIR: stateDir(), CONVERGE_STATE_KEY: value });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^Error: CONVERGE_STATE_KEY is not a usable state key: /);
    expect(r.stderr).toContain('openssl rand -hex 32');
    // (A one-letter value is in any sentence; the longer ones must not be quoted.)
    if (value.length > 1) expect(r.stderr).not.toContain(value);
    expect(r.stdout).toBe('');
  });

  it('leaves plan -out saying the plan was not saved', async () => {
    const out = path.join(stateDir(), 'never.plan');
    const r = await runCli(['plan', '-f', dir, '-out', out], {
      ...sandbox.env(),
      CONVERGE_STATE_DIR: stateDir(),
      CONVERGE_STATE_KEY: 'a',
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`Plan not saved to ${out}: the plan could not be made.`);
  });

  it('is refused by apply too, before anything is sent', async () => {
    const r = await runCli(['apply', '-f', dir, '--auto-approve'], {
      ...sandbox.env(),
      CONVERGE_STATE_DIR: stateDir(),
      CONVERGE_STATE_KEY: 'a',
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('CONVERGE_STATE_KEY is not a usable state key');
    expect(
      (
        await fetch(`${sandbox.url}/v1/acl/role/name/key-role`, {
          headers: { Authorization: `Bearer ${sandbox.rootToken}` },
        })
      ).status,
    ).toBe(404);
  });
});

describe('a weak state.key file', () => {
  it.each([['zz', 'zz\n'], ...weak.map(([w, v]) => [w, `${v}\n`] as [string, string])])(
    '(%s) is refused, naming the file',
    async (_what, text) => {
      const d = stateDir(text);
      const r = await plan({ CONVERGE_STATE_DIR: d });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`the state key file ${path.join(d, 'state.key')} is not a usable state key`);
      expect(r.stderr).toContain('delete it to have one generated');
    },
  );
});

describe('a key of the right length that is not random', () => {
  const notRandom: [string, string][] = [
    ['64 hex zeros', '0'.repeat(64)],
    ['64 × z, read as base64', 'z'.repeat(64)],
    ['base64 of 32 zero bytes', Buffer.alloc(32).toString('base64')],
    ['a short pattern repeated', 'deadbeef'.repeat(8)],
  ];

  it.each(notRandom)(
    '(%s) is refused from CONVERGE_STATE_KEY, naming it and not the value',
    async (_what, value) => {
      const r = await plan({ CONVERGE_STATE_DIR: stateDir(), CONVERGE_STATE_KEY: value });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(
        /^Error: CONVERGE_STATE_KEY is not a usable state key: it does not look random: its \d+ bytes take only [1-4] distinct values?, and a key needs at least 16/,
      );
      expect(r.stderr).toContain('openssl rand -hex 32');
      expect(r.stderr).not.toContain(value);
      expect(r.stdout).toBe('');
    },
  );

  it.each(notRandom)('(%s) is refused from state.key, naming the file', async (_what, value) => {
    const d = stateDir(`${value}\n`);
    const r = await plan({ CONVERGE_STATE_DIR: d });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `the state key file ${path.join(d, 'state.key')} is not a usable state key: it does not look random`,
    );
    expect(r.stderr).not.toContain(value);
  });
});

describe('a strong key', () => {
  it.each([
    ['64 hex digits', randomBytes(32).toString('hex')],
    ['base64 of 32 bytes', randomBytes(32).toString('base64')],
    ['base64url of 48 bytes, no padding', randomBytes(48).toString('base64url')],
  ])('(%s) is accepted from CONVERGE_STATE_KEY and from state.key', async (_what, value) => {
    expect((await plan({ CONVERGE_STATE_DIR: stateDir(), CONVERGE_STATE_KEY: value })).code).toBe(0);
    expect((await plan({ CONVERGE_STATE_DIR: stateDir(`${value}\n`) })).code).toBe(0);
  });

  it('is generated as 32 random bytes in hex, mode 0600, when none is set', async () => {
    const d = stateDir();
    expect((await plan({ CONVERGE_STATE_DIR: d })).code).toBe(0);
    const file = path.join(d, 'state.key');
    expect(readFileSync(file, 'utf8')).toMatch(/^[0-9a-f]{64}\n$/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('creates no key file for a plan that needs none', async () => {
    const d = path.join(stateDir(), 'nested');
    mkdirSync(d);
    const r = await runCli(['plan', '-f', dir], { ...sandbox.env(), CONVERGE_STATE_DIR: d });
    expect(r.code).toBe(0);
    expect(() => statSync(path.join(d, 'state.key'))).toThrow();
  });
});
