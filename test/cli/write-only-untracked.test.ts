/**
 * A write-only value the manifest leaves out, that this Converge never recorded, and that the
 * service most likely holds (a bind password where a bind DN is set): a fresh runner cannot tell,
 * and the plan says so, with how to clear it, rather than "matches" without a word while a runner
 * with the inventory plans to clear it.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
});
afterAll(async () => sandbox?.close());

/** The sandbox's environment with bind password `bp` exposed as BP, for runs with the state in `stateDir`. */
const envWith = (bp: string) => (stateDir: string) => ({
  ...sandbox.env(),
  NO_COLOR: '1',
  BP: bp,
  CONVERGE_ALLOW_ENV: 'BP',
  CONVERGE_STATE_DIR: stateDir,
});

const config = (extra: string) =>
  `apiVersion: converge/v1\nkind: LdapConfig\nmetadata: { name: ldap }\nspec: { url: "ldap://dir.example:389", binddn: "cn=svc"${extra} }\n`;

it('notes a bind password left out and never recorded, and clears it when asked with ""', async () => {
  const dir = tempDir('converge-untracked-');
  const file = path.join(dir, 'ldap.yaml');
  const env = envWith('bind-secret-1');
  writeFileSync(file, config(', bindpass: "${env:BP}"'));
  const laptop = tempDir('converge-untracked-laptop-');
  expect((await runCli(['apply', '-f', dir, '--auto-approve'], env(laptop))).code).toBe(0);

  writeFileSync(file, config(''));
  // With the inventory: the value it set is cleared.
  const recorded = await runCli(['plan', '-f', dir], env(laptop));
  expect(recorded.stdout).toContain('no longer in the manifest: it will be cleared');
  // A fresh runner: nothing to compare, and the plan says what is left as it is.
  const fresh = await runCli(['plan', '-f', dir, '--detailed-exitcode'], env(tempDir('converge-fresh-')));
  expect(fresh.code, fresh.stderr).toBe(0);
  expect(fresh.stdout).toContain(
    '# bindpass is not in the manifest and this Converge has no record of setting it: the service most likely holds one (it never shows it), which is left as it is (write bindpass: "" to clear it)',
  );
  const json = await runCli(['plan', '-f', dir, '--json'], env(tempDir('converge-fresh-')));
  expect(JSON.parse(json.stdout).changes[0].notes.join('\n')).toContain('bindpass is not in the manifest');
  // As the note says: "" is set once.
  writeFileSync(file, config(', bindpass: ""'));
  const clear = await runCli(['plan', '-f', dir, '--detailed-exitcode'], env(tempDir('converge-fresh-')));
  expect(clear.code).toBe(2);
  expect(clear.stdout).toMatch(/~ bindpass += \(sensitive value changed\)/);
});

it('lists the write-only values a deletion clears, values never shown, whether recorded or likely held', async () => {
  const dir = tempDir('converge-absent-');
  const file = path.join(dir, 'ldap.yaml');
  const env = envWith('bind-secret-2');
  const absent = 'apiVersion: converge/v1\nkind: LdapConfig\nmetadata: { name: ldap, ensure: absent }\n';
  // A bind password with a bind DN: a fresh runner reads it as held from the DN alone.
  writeFileSync(file, config(', bindpass: "${env:BP}"'));
  const laptop = tempDir('converge-absent-laptop-');
  const applied = await runCli(['apply', '-f', dir, '--auto-approve'], env(laptop));
  expect(applied.code, applied.stderr).toBe(0);
  writeFileSync(file, absent);
  for (const state of [laptop, tempDir('converge-absent-fresh-')]) {
    const plan = await runCli(['plan', '-f', dir], env(state));
    expect(plan.stdout).toMatch(/- bindpass += \(sensitive value\)/);
    expect(plan.stdout).not.toContain('bind-secret-2');
  }
  // Without a bind DN only the inventory knows of one: the laptop says so, a fresh runner cannot.
  writeFileSync(
    file,
    'apiVersion: converge/v1\nkind: LdapConfig\nmetadata: { name: ldap }\nspec: { url: "ldap://dir.example:389", bindpass: "${env:BP}" }\n',
  );
  const again = await runCli(['apply', '-f', dir, '--auto-approve'], env(laptop));
  expect(again.code, again.stderr).toBe(0);
  writeFileSync(file, absent);
  const recorded = await runCli(['plan', '-f', dir, '--json'], env(laptop));
  expect(JSON.parse(recorded.stdout).changes[0].before).toMatchObject({ bindpass: '(sensitive value)' });
  const fresh = await runCli(['plan', '-f', dir, '--json'], env(tempDir('converge-absent-fresh-')));
  expect(JSON.parse(fresh.stdout).changes[0].before).not.toHaveProperty('bindpass');
});
