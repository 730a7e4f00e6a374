/**
 * The engine and the HTTP layer are a library with more than one front end, so the setting an error
 * asks to change is named as the caller spells it: a program calling the engine reads its option's
 * name, a `converge` user reads the flag. Each failure is produced once through the library and once
 * through the CLI, against the same sandbox and the same inventory.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  apply,
  EngineError,
  exportedDocument,
  loadManifest,
  lockInventory,
  plan,
} from '../../src/engine/index.js';
import { readPlanFile, verifyPlanFile } from '../../src/engine/plan-file.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

let sandbox: RunningSandbox;
let env: Record<string, string | undefined>;
let dir: string;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
  env = { ...sandbox.env(), CONVERGE_STATE_DIR: tempDir('converge-settings-') };
  dir = tempDir('converge-settings-manifest-');
  writeFileSync(
    path.join(dir, 'roles.yaml'),
    'apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: web-readers }\nspec: { Description: web readers }\n',
  );
});
afterAll(async () => sandbox?.close());

describe('a target that matches nothing', () => {
  it('names the `targets` option to a library caller', async () => {
    const failure = await plan([dir], { env, targets: ['AclRole/web-raeders'] }).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(failure?.message).toContain('targets AclRole/web-raeders matches no object of the manifest');
    expect(failure?.message).not.toContain('--');
  });

  it('names --target to a CLI user', async () => {
    const r = await runCli(['plan', '-f', dir, '--target', 'AclRole/web-raeders'], env);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('--target AclRole/web-raeders matches no object of the manifest');
  });
});

describe('an inventory lock held by another run', () => {
  it('names the lock wait as lockInventory takes it to a library caller, and --lock-timeout to a CLI user', async () => {
    const held = await lockInventory({ env, command: 'a long apply', timeoutMs: 1_000 });
    try {
      const library = await lockInventory({ env, command: 'a second apply', timeoutMs: 0 }).then(
        () => undefined,
        (error: unknown) => error as Error,
      );
      expect(library?.message).toContain('wait longer (timeoutMs)');
      expect(library?.message).not.toContain('--lock-timeout');

      const cli = await runCli(
        ['inventory', 'forget', 'AclRole/default/web-readers', '--lock-timeout', '0'],
        env,
      );
      expect(cli.code).not.toBe(0);
      expect(cli.stderr).toContain('wait longer (--lock-timeout SECONDS)');
      expect(cli.stderr).toContain('a long apply');
    } finally {
      await held.release();
    }
  });
});

describe('a plan that deletes more than allowed', () => {
  it('names limits.maxDeletes to a library caller and --max-deletes to a CLI user', async () => {
    const gone = tempDir('converge-settings-delete-');
    const role = (ensure: string) =>
      `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: old-readers${ensure} }\nspec: { Description: old }\n`;
    writeFileSync(path.join(gone, 'roles.yaml'), role(''));
    const created = await plan([gone], { env });
    try {
      await apply(created);
    } finally {
      await created.connections.close();
    }
    writeFileSync(path.join(gone, 'roles.yaml'), role(', ensure: absent'));

    const run = await plan([gone], { env, limits: { maxDeletes: 0 } });
    await run.connections.close();
    const messages = run.plan.problems.map((p) => p.message).join('\n');
    expect(messages).toContain('more than limits.maxDeletes 0 allows');
    expect(messages).not.toContain('--');

    const r = await runCli(['plan', '-f', gone, '--max-deletes', '0'], env);
    expect(r.stdout + r.stderr).toContain('more than --max-deletes 0 allows');
  });
});

describe('an environment variable the manifest may not read', () => {
  it('names the allowEnv option to a library caller and --allow-env to a CLI user', async () => {
    const secretDir = tempDir('converge-settings-env-');
    writeFileSync(
      path.join(secretDir, 'roles.yaml'),
      'apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: env-reader }\nspec: { Description: "${env:TEAM_NAME}" }\n',
    );
    const withVariable = { ...env, TEAM_NAME: 'web' };
    const failure = await loadManifest([secretDir], { env: withVariable }).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(failure?.message).toContain('allow it with allowEnv TEAM_NAME or CONVERGE_ALLOW_ENV=TEAM_NAME');
    expect(failure?.message).not.toContain('--');

    const r = await runCli(['validate', '-f', secretDir], withVariable);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('allow it with --allow-env TEAM_NAME or CONVERGE_ALLOW_ENV=TEAM_NAME');
  });
});

describe('a secret left out of an export', () => {
  it('names allowEnv in the written file for a library caller', () => {
    const text = exportedDocument({
      key: { kind: 'LdapConfig', name: 'ldap' },
      namespaceField: 'namespace',
      spec: { bindpass: '${env:LDAPCONFIG_LDAP_BINDPASS}' },
      placeholders: [{ path: 'bindpass', variable: 'LDAPCONFIG_LDAP_BINDPASS' }],
    });
    expect(text).toContain(
      '# bindpass is secret and not exported: set LDAPCONFIG_LDAP_BINDPASS and allow it with allowEnv LDAPCONFIG_LDAP_BINDPASS (or CONVERGE_ALLOW_ENV)',
    );
    expect(text).not.toContain('--allow-env');
  });
});

describe('a prune scope the manifest declares nothing in', () => {
  it('names the prune option to a library caller and --prune to a CLI user', async () => {
    const scoped = tempDir('converge-settings-scope-');
    const scope =
      'apiVersion: converge/v1\nkind: PruneScope\nmetadata: { name: ps }\nspec: { kind: AclRole, namePrefix: ps- }\n';
    writeFileSync(
      path.join(scoped, 'roles.yaml'),
      `${scope}---\napiVersion: converge/v1\nkind: AclRole\nmetadata: { name: ps-stray }\nspec: { Description: x }\n`,
    );
    expect((await runCli(['apply', '-f', scoped, '--auto-approve'], env)).code).toBe(0);
    writeFileSync(path.join(scoped, 'roles.yaml'), scope);

    const run = await plan([scoped], { env, prune: true });
    await run.connections.close();
    const messages = run.plan.problems.map((p) => p.message).join('\n');
    expect(messages).toContain('the manifest declares no object in it, so prune would delete the 1 object');
    expect(messages).not.toContain('--');

    const r = await runCli(['plan', '-f', scoped, '--prune'], env);
    expect(r.stdout + r.stderr).toContain('so --prune would delete the 1 object');
  });
});

describe('a saved plan that no longer verifies', () => {
  it('says how to make it again in library words; the CLI gives the command', async () => {
    const planDir = tempDir('converge-settings-saved-');
    const planFile = path.join(planDir, 'p.plan');
    writeFileSync(
      planFile,
      JSON.stringify({
        format: 'converge-plan',
        format_version: 3,
        manifest: [dir],
        prune: true,
        targets: ['AclRole/*'],
        changes: [],
      }),
    );
    const saved = await readPlanFile(planFile).catch((error: unknown) => error as Error);
    const failure = (() => {
      try {
        if (saved instanceof Error) return saved;
        verifyPlanFile(saved, planFile, undefined, 'no key');
        return undefined;
      } catch (error) {
        return error as EngineError;
      }
    })();
    expect(failure?.message).toContain('carries no MAC');
    expect(failure?.message).toContain('plan it again as it was made');
    expect(failure?.message).not.toContain('converge plan');
    expect(failure?.message).not.toContain('--');
    // What the unverified file says (its manifest, --prune, its targets) is not repeated as advice.
    expect((failure as EngineError).remedy).toMatchObject({
      manifest: [],
      prune: false,
      targets: [],
      file: planFile,
      verified: false,
    });

    const r = await runCli(['apply', planFile], env);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(
      `With the manifest you mean to apply: \`converge plan -f PATH -out ${planFile}\``,
    );
    // Said once: the engine's words say to plan again and review; the CLI adds only the command.
    expect(r.stderr.match(/review it/g)).toHaveLength(1);
    expect(r.stderr).not.toContain('--prune');
    expect(r.stderr).not.toContain('AclRole/*');
    expect(r.stderr).not.toContain(dir);
  });
  it('repeats none of the hostile paths an unverified file names', async () => {
    const planDir = tempDir('converge-settings-hostile-');
    const planFile = path.join(planDir, 'p.plan');
    writeFileSync(
      planFile,
      JSON.stringify({
        format: 'converge-plan',
        format_version: 3,
        manifest: ['infra\u001b[2J\u001b]0;owned\u0007\nfake: line'],
        changes: [],
      }),
    );
    const r = await runCli(['apply', planFile], env);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('`converge plan -f PATH -out');
    expect(r.stderr).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
    expect(r.stderr).not.toContain('fake: line');
  });
});

describe('a workspace inventory locked by another run', () => {
  it('names no command to a library caller; the CLI adds `converge inventory unlock`', async () => {
    const org = sandbox.env().CONVERGE_WORKSPACES_ORGANIZATION!;
    const inWorkspace = { ...env, CONVERGE_INVENTORY: `workspace:${org}/settings-inv` };
    const held = await lockInventory({ env: inWorkspace, command: 'a long apply', timeoutMs: 1_000 });
    try {
      const library = await lockInventory({ env: inWorkspace, command: 'a second', timeoutMs: 0 }).then(
        () => undefined,
        (error: unknown) => error as EngineError,
      );
      expect(library?.message).toContain('is locked by another run');
      expect(library?.message).toContain('if that run is gone, release the lock.');
      expect(library?.message).not.toContain('converge');
      expect(library?.remedy).toBe('release-inventory-lock');

      const cli = await runCli(
        ['inventory', 'forget', 'AclRole/default/web-readers', '--lock-timeout', '0'],
        inWorkspace,
      );
      expect(cli.code).not.toBe(0);
      expect(cli.stderr).toContain('Release it with `converge inventory unlock`.');
    } finally {
      await held.release();
    }
  });
});
