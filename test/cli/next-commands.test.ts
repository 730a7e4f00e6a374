/**
 * The commands Converge prints to run next work as printed: they repeat the `--allow-env` and
 * `--allow-address` the run was given. A new user's trial: `converge export -o exp1`, then
 * `converge import '**' -f exp1 --allow-env LDAPCONFIG_LDAP_BINDPASS` ended with
 * ``Run `converge plan -f exp1` ``, and that plan failed with `environment variable
 * LDAPCONFIG_LDAP_BINDPASS is not exposed`.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

const BINDPASS = 'next-commands-bindpass-41';

let sandbox: RunningSandbox;
let env: Record<string, string | undefined>;

/** A printed command line as argv: words split on spaces, single quotes as a shell reads them. */
function argv(command: string): string[] {
  const words = [...command.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g)].map((m) =>
    m[1] !== undefined ? m[1].replace(/'\\''/g, "'") : m[2]!,
  );
  expect(words[0]).toBe('converge');
  return words.slice(1);
}

/** The command between backquotes after `prefix`, or at the end of its line. */
function printed(text: string, prefix: string): string {
  const line = text.split('\n').find((l) => l.includes(prefix));
  expect(line, `a line with ${prefix} in:\n${text}`).toBeDefined();
  const after = line!.slice(line!.indexOf(prefix) + prefix.length);
  return after.startsWith('`') ? after.slice(1, after.indexOf('`', 1)) : after.trim();
}

beforeAll(async () => {
  // Port 0: a fixed port in the ephemeral range was taken by another file's client connection.
  sandbox = await startSandbox({ port: 0 });
  env = {
    PATH: process.env.PATH,
    ...sandbox.env(),
    CONVERGE_STATE_DIR: tempDir('converge-next-state-'),
  };
  // Live directory auth with a bind password, made by Converge from a manifest of its own.
  const setup = tempDir('converge-next-setup-');
  writeFileSync(
    path.join(setup, 'ldap.yaml'),
    'apiVersion: converge/v1\nkind: LdapConfig\nmetadata: { name: ldap }\nspec:\n  url: ldap://127.0.0.1:1\n  binddn: cn=svc,dc=example,dc=test\n  bindpass: ${env:SETUP_BINDPASS}\n  userdn: ou=people,dc=example,dc=test\n',
  );
  const applied = await runCli(['apply', '-f', setup, '--allow-env', 'SETUP_BINDPASS', '--auto-approve'], {
    ...env,
    SETUP_BINDPASS: BINDPASS,
    CONVERGE_STATE_DIR: tempDir('converge-next-setup-state-'),
  });
  expect([applied.code, applied.stderr]).toEqual([0, '']);
});

afterAll(async () => {
  await sandbox?.close();
});

describe('the command a run prints next', () => {
  it("import's plan line keeps the import's --allow-env, and runs as printed", async () => {
    const exp1 = path.join(tempDir('converge-next-export-'), 'exp1');
    const exported = await runCli(['export', '-o', exp1, '--kind', 'LdapConfig'], env);
    expect([exported.code, exported.stderr]).toEqual([0, '']);
    const withSecret = { ...env, LDAPCONFIG_LDAP_BINDPASS: BINDPASS };
    const imported = await runCli(
      ['import', '**', '-f', exp1, '--allow-env', 'LDAPCONFIG_LDAP_BINDPASS'],
      withSecret,
    );
    expect([imported.code, imported.stderr]).toEqual([0, '']);
    const plan = printed(imported.stdout, 'Run ');
    expect(plan).toBe(`converge plan -f ${exp1} --allow-env LDAPCONFIG_LDAP_BINDPASS`);
    // It plans (a change or not: the bind password, never shown, is sent once to be recorded).
    const planned = await runCli(argv(plan), withSecret);
    expect(planned.stderr).toBe('');
    expect(planned.code).toBe(0);
  });

  it("plan -out's apply line keeps the plan's --allow-env and --allow-address, and applies as printed", async () => {
    const dir = tempDir('converge-next-plan-');
    writeFileSync(
      path.join(dir, 'role.yaml'),
      'apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: next-team }\nspec:\n  Description: ${env:NEXT_TEAM}\n',
    );
    const saved = path.join(dir, 'team.plan');
    const vars = { ...env, NEXT_TEAM: 'team a' };
    const host = new URL(sandbox.url).host;
    const plan = await runCli(
      ['plan', '-f', dir, '--allow-env', 'NEXT_*', '--allow-address', host, '-out', saved],
      vars,
    );
    expect([plan.code, plan.stderr]).toEqual([0, '']);
    const apply = printed(plan.stdout, 'Apply exactly this plan with: ');
    expect(apply).toBe(`converge apply ${saved} --allow-env 'NEXT_*' --allow-address ${host}`);
    const applied = await runCli(argv(apply), vars);
    expect(applied.stderr).toBe('');
    expect(applied.code).toBe(0);
  });

  it("export's lines keep the export's own --allow-env and --allow-address, a variable given once", async () => {
    const out = tempDir('converge-next-export-');
    const r = await runCli(
      [
        'export',
        '-o',
        out,
        '--kind',
        'LdapConfig',
        '--allow-env',
        'LDAPCONFIG_LDAP_BINDPASS',
        '--allow-address',
        'vault.example:8200',
      ],
      env,
    );
    expect([r.code, r.stderr]).toEqual([0, '']);
    const given = '--allow-env LDAPCONFIG_LDAP_BINDPASS --allow-address vault.example:8200';
    expect(r.stdout).toContain(`\n  converge plan -f ${out} ${given}\n`);
    expect(r.stdout).toContain(
      `To have Converge manage them (so that --prune may delete one the manifest drops): converge import '**' -f ${out} ${given}\n`,
    );
  });
});
