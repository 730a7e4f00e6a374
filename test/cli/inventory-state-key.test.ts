/**
 * Runs that share an inventory but not a state key (a CI job without CONVERGE_STATE_KEY beside one
 * with it) cannot match each other's write-only digests: every such value shows as changed on every
 * run. The plan says why at the changed line, naming both keys by id, and an apply under the new key
 * records its digests under that key, so the next plan under it is clean again.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stateKeyId } from '../../src/engine/state-key.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
});
afterAll(async () => sandbox?.close());

const keyA = randomBytes(32);
const keyB = randomBytes(32);

function manifest(): string {
  const dir = tempDir('converge-shared-key-');
  writeFileSync(
    path.join(dir, 'ldap.yaml'),
    'apiVersion: converge/v1\nkind: LdapConfig\nmetadata: { name: ldap }\nspec: { url: "ldap://dir.example:389", bindpass: "${env:BP}" }\n',
  );
  return dir;
}

describe('an inventory shared by runs with different state keys', () => {
  it('says at the changed line that the digest was recorded under another key, until an apply records it again', async () => {
    const dir = manifest();
    const stateDir = tempDir('converge-shared-key-state-');
    const env = (key: Buffer) => ({
      ...sandbox.env(),
      BP: 'bind-secret',
      CONVERGE_ALLOW_ENV: 'BP',
      CONVERGE_STATE_DIR: stateDir,
      CONVERGE_STATE_KEY: key.toString('hex'),
      NO_COLOR: '1',
    });
    const applied = await runCli(['apply', '-f', dir, '--auto-approve'], env(keyA));
    expect(applied.code, applied.stderr).toBe(0);
    const inventory = JSON.parse(readFileSync(path.join(stateDir, 'inventory.json'), 'utf8'));
    expect(inventory.objects['LdapConfig/ldap'].writeOnlyKey).toBe(stateKeyId(keyA));

    // Same key: nothing to do.
    const same = await runCli(['plan', '-f', dir, '--detailed-exitcode'], env(keyA));
    expect(same.code, same.stdout + same.stderr).toBe(0);

    // Another key: the value shows as changed, and the plan says it is the key, naming both.
    const other = await runCli(['plan', '-f', dir, '--detailed-exitcode'], env(keyB));
    expect(other.code, other.stderr).toBe(2);
    expect(other.stdout).toContain('bindpass');
    expect(other.stdout).toContain(
      `recorded under another state key (${stateKeyId(keyA)}; this run's is ${stateKeyId(keyB)}, from CONVERGE_STATE_KEY)`,
    );
    expect(other.stdout).toContain('runs that share an inventory need the same CONVERGE_STATE_KEY');
    const json = await runCli(['plan', '-f', dir, '--json'], env(keyB));
    const diff = JSON.parse(json.stdout).changes[0].diffs.find(
      (d: { path: string }) => d.path === 'bindpass',
    );
    expect(diff.note).toContain('recorded under another state key');
    // Neither key is printed, only their ids.
    for (const r of [other, json]) {
      expect(r.stdout + r.stderr).not.toContain(keyA.toString('hex'));
      expect(r.stdout + r.stderr).not.toContain(keyB.toString('hex'));
    }

    // An apply under the new key sets the value once and records it under that key.
    const again = await runCli(['apply', '-f', dir, '--auto-approve'], env(keyB));
    expect(again.code, again.stderr).toBe(0);
    const clean = await runCli(['plan', '-f', dir, '--detailed-exitcode'], env(keyB));
    expect(clean.code, clean.stdout + clean.stderr).toBe(0);
  });

  it('does not add the note to a value that changed under the same key', async () => {
    const dir = manifest();
    const stateDir = tempDir('converge-shared-key-state-');
    const env = (bp: string) => ({
      ...sandbox.env(),
      BP: bp,
      CONVERGE_ALLOW_ENV: 'BP',
      CONVERGE_STATE_DIR: stateDir,
      CONVERGE_STATE_KEY: keyA.toString('hex'),
      NO_COLOR: '1',
    });
    expect((await runCli(['apply', '-f', dir, '--auto-approve'], env('first'))).code).toBe(0);
    const rotated = await runCli(['plan', '-f', dir, '--detailed-exitcode'], env('second'));
    expect(rotated.code, rotated.stderr).toBe(2);
    expect(rotated.stdout).toContain('(sensitive value changed)');
    expect(rotated.stdout).not.toContain('another state key');
  });

  it('refuses an inventory whose key id is not one', async () => {
    const stateDir = tempDir('converge-shared-key-state-');
    writeFileSync(
      path.join(stateDir, 'inventory.json'),
      JSON.stringify({
        format: 'converge-inventory',
        format_version: 2,
        objects: {
          'LdapConfig/ldap': {
            kind: 'LdapConfig',
            key: { kind: 'LdapConfig', name: 'ldap' },
            owned: false,
            writeOnly: {},
            writeOnlyKey: '\u001b[2J not an id',
          },
        },
      }),
    );
    const r = await runCli(['plan', '-f', manifest()], {
      ...sandbox.env(),
      BP: 'x',
      CONVERGE_ALLOW_ENV: 'BP',
      CONVERGE_STATE_DIR: stateDir,
      CONVERGE_STATE_KEY: keyA.toString('hex'),
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('"writeOnlyKey" must be a state key id (16 hex digits)');
    expect(r.stderr).not.toContain('\u001b');
  });
});
