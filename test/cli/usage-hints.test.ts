/**
 * Command lines brought from other tools get the command that works: a manifest given as an
 * argument (`converge plan examples/demo`) instead of with -f, and Terraform's single-dash long
 * options (`-auto-approve`, `-target=ADDR`). A new user's trial got `too many arguments for 'plan'`
 * and `unknown option '-auto-approve'` with nothing more, and `-force-unlock` was read as
 * `-f orce-unlock`, `-verbose` as `-v` (the version).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';
import { role } from './helpers.js';

const base = { PATH: process.env.PATH, CONVERGE_STATE_DIR: tempDir('converge-usage-state-') };

/** A manifest folder (with one role), in a folder whose name needs quoting in a shell. */
function manifestFolder(): { dir: string; file: string } {
  const dir = path.join(tempDir('converge-usage-'), 'my manifests');
  mkdirSync(dir);
  const file = path.join(dir, 'roles.yaml');
  writeFileSync(file, role('usage-hint', 'Description: hint'));
  return { dir, file };
}

const hint = 'Manifest files and folders are given with -f; did you mean: ';

describe('a manifest given as an argument', () => {
  it.each([
    [['plan'], ['--prune', '--max-deletes', '3']],
    [['validate'], []],
    [['reconcile'], ['--interval', '5m']],
    [['export', '-o', '/nonexistent/out'], []],
  ])('%j says the command with -f, the other flags kept', async (command, rest) => {
    const { dir } = manifestFolder();
    const r = await runCli([...command, dir, ...rest], base);
    expect(r.code).toBe(1);
    const name = command[0]!;
    expect(r.stderr).toContain(`error: too many arguments for '${name}'. Expected 0 arguments but got 1.`);
    expect(r.stderr).toContain(
      `${hint}converge ${command.join(' ')} -f '${dir}'${rest.map((a) => ` ${a}`).join('')}\n`,
    );
    expect(r.stderr).toContain('(run with --help for usage)');
  });

  it('gives each of several arguments its own -f', async () => {
    const r = await runCli(['plan', '-f', 'a.yaml', 'b.yaml', 'c'], base);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${hint}converge plan -f a.yaml -f b.yaml -f c\n`);
  });

  it('export FOLDER: the folder written to is given with -o, and said so', async () => {
    const r = await runCli(['export', '--kind', 'Job', 'exp1'], base);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("error: required option '-o, --out <dir>' not specified\n");
    expect(r.stderr).toContain(
      'The folder is given with -o; did you mean: converge export --kind Job -o exp1\n',
    );
  });

  it('suggests nothing for an argument after --, where -f would be an argument too', async () => {
    const { dir } = manifestFolder();
    const r = await runCli(['plan', '--', dir], base);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("error: too many arguments for 'plan'");
    expect(r.stderr).not.toContain('did you mean');
  });

  it('apply FOLDER or apply FILE.yaml: refused as no saved plan, with the -f command', async () => {
    const { dir, file } = manifestFolder();
    const folder = await runCli(['apply', dir, '--auto-approve'], base);
    expect(folder.code).toBe(1);
    expect(folder.stderr.trim()).toBe(
      `Error: ${dir} is a manifest folder, not a plan saved with \`converge plan -out FILE\`. ${hint}converge apply -f '${dir}' --auto-approve`,
    );
    const yaml = await runCli(['apply', file], base);
    expect(yaml.code).toBe(1);
    expect(yaml.stderr).toContain(`${file} is a manifest file, not a plan saved with`);
    expect(yaml.stderr).toContain(`${hint}converge apply -f '${file}'`);
    // Two arguments: commander's own refusal, and both taken as the manifest they are.
    const two = await runCli(['apply', dir, file], base);
    expect(two.stderr).toContain("too many arguments for 'apply'");
    expect(two.stderr).toContain(`${hint}converge apply -f '${dir}' -f '${file}'`);
  });

  it('import ADDRESS FOLDER: the folder is no address', async () => {
    const { dir } = manifestFolder();
    const r = await runCli(['import', '**', dir, '--allow-env', 'TEAM_*'], base);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      `Error: no manifest given: pass -f FILE or -f FOLDER. ${hint}converge import '**' -f '${dir}' --allow-env 'TEAM_*'`,
    );
    // Nothing that is a manifest: the usual message alone.
    const plain = await runCli(['import', 'AclRole/default/x'], base);
    expect(plain.stderr.trim()).toBe('Error: no manifest given: pass -f FILE or -f FOLDER');
  });
});

describe('a saved plan given as the argument of apply', () => {
  let sandbox: RunningSandbox;
  let env: Record<string, string | undefined>;

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0 });
    env = { ...base, ...sandbox.env(), CONVERGE_STATE_DIR: tempDir('converge-usage-saved-') };
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  it('keeps working, also when the plan file is named .yaml', async () => {
    const { dir } = manifestFolder();
    for (const name of ['plan.bin', 'plan.yaml']) {
      const saved = path.join(tempDir('converge-usage-plan-'), name);
      const plan = await runCli(['plan', '-f', dir, '-out', saved], env);
      expect(plan.code, plan.stderr).toBe(0);
      const apply = await runCli(['apply', saved], env);
      expect(apply.stderr).not.toContain('did you mean');
      expect(apply.code, apply.stderr).toBe(0);
    }
  });
});

describe('a single-dash word after a short option that takes no value', () => {
  // Terraform's -var and -var-file, -verbose: commander read `-v` in them and printed the version,
  // exit 0, in place of a plan or an apply.
  it.each([
    [['plan', '-f', '/nonexistent/usage', '-var', 'env=prod'], '-var'],
    [['apply', '-f', '/nonexistent/usage', '--auto-approve', '-var-file=prod.tfvars'], '-var-file'],
    [['plan', '-f', '/nonexistent/usage', '-vx'], '-vx'],
  ])('%j is refused, not read as -v', async (args, word) => {
    const r = await runCli(args, base);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`error: unknown option '${word}'\n(run with --help for usage)\n`);
  });

  // The program's -v read a value that begins with it anywhere on the line: the version, exit 0, in
  // place of the command (a CI step green having done nothing).
  it.each([
    [['plan', '-f', '/nonexistent/usage', '--exclude', '-v']],
    [['plan', '-f', '/nonexistent/usage', '--target', '-vx']],
  ])('%j takes a value that begins with -v as the value', async (args) => {
    const r = await runCli(args, base);
    expect(r.stdout).not.toMatch(/^\d+\.\d+\.\d+/);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('/nonexistent/usage');
  });

  it('leaves -v, --version and -version (the version, as before) as they are', async () => {
    for (const flag of ['-v', '--version', '-version']) {
      const r = await runCli([flag], base);
      expect(r.code, flag).toBe(0);
      expect(r.stdout, flag).toMatch(/^\d+\.\d+\.\d+/);
    }
  });
});

describe('a long option spelt with one dash', () => {
  it.each([
    [['apply', '-auto-approve'], '-auto-approve', '--auto-approve'],
    // The value is not repeated: it may be a secret (`-token=…`), in a CI log.
    [['plan', '-target=AclRole/default/web'], '-target', '--target=…'],
    [['apply', '-exclude=AclRole/**'], '-exclude', '--exclude=…'],
    [['sandbox', '-token=planted-secret-9f2c'], '-token', '--token=…'],
    [['plan', '-prune'], '-prune', '--prune'],
    [['plan', '-json'], '-json', '--json'],
    [['plan', '-detailed-exitcode'], '-detailed-exitcode', '--detailed-exitcode'],
    [['plan', '-max-deletes', '3'], '-max-deletes', '--max-deletes'],
    // Read as `-f orce-unlock` (a manifest of that name) before.
    [['apply', '-force-unlock'], '-force-unlock', '--force-unlock'],
    // Read as `-v`: the version was printed, exit 0.
    [['job', 'plan', 'web.hcl', '-verbose'], '-verbose', '--verbose'],
  ])('%j is refused with the spelling meant', async (args, given, meant) => {
    // `sandbox` reads no manifest: the -f below is then one more unknown word, after the first.
    const r = await runCli([...args, '-f', '/nonexistent/usage'], base);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      `error: unknown option '${given}' (did you mean ${meant}?)\n(run with --help for usage)\n`,
    );
  });

  it('leaves -out (accepted on purpose), option values and options no command has alone', async () => {
    const out = await runCli(['plan', '-f', '/nonexistent/usage', '-out', 'x.plan'], base);
    expect(out.stderr).not.toContain('unknown option');
    expect(out.stderr).toContain('/nonexistent/usage');
    // A value that looks like one: the message of a scaling event.
    const value = await runCli(['job', 'scale', 'web', 'group', '--message', '-prune'], base);
    expect(value.stderr).not.toContain('unknown option');
    // Terraform's -lock=false: no such option here, commander's own message (its value not repeated).
    const unknown = await runCli(['plan', '-f', '/nonexistent/usage', '-lock=false'], base);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("error: unknown option '-lock=…'\n");
  });
});

describe("a command's option given before the command's name", () => {
  it('says where it goes, without repeating its value', async () => {
    const { dir } = manifestFolder();
    const r = await runCli(['-f', dir, 'plan'], base);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("error: unknown option '-f'");
    expect(r.stderr).toContain('Options of a command go after its name: converge plan -f …');
    expect(r.stderr).not.toContain(dir);
    const nested = await runCli(['--namespace', 'ops', 'job', 'status', 'web'], base);
    expect(nested.stderr).toContain(
      'Options of a command go after its name: converge job status --namespace …',
    );
    const flag = await runCli(['--json', 'job', 'status', 'web'], base);
    expect(flag.stderr).toContain('Options of a command go after its name: converge job status --json\n');
  });

  it("does not repeat a value given with = to an option it does not know (a typo's value may be a secret)", async () => {
    const secret = 'https://user:s3cret-7f2a@vault.example';
    for (const args of [
      [`--allow-address=${secret}`, 'plan'],
      ['plan', `--allow-addres=${secret}`],
      // A quote or a line break inside the value does not end what is left out.
      ['plan', `--allow-addres=a'b:${secret}`],
      ['plan', `--allow-addres=a\nb'${secret}'`],
      ['plan', `--allow-'addres=${secret}`],
    ]) {
      const r = await runCli(args, base);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/error: unknown option '--allow-'?address?=…'\n/);
      expect(r.stderr).not.toContain('s3cret-7f2a');
    }
  });

  it('says nothing more for an option no command named there takes', async () => {
    const r = await runCli(['--bogus', 'plan'], base);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("error: unknown option '--bogus'");
    expect(r.stderr).not.toContain('go after its name');
  });
});

describe('withoutOptionValue', () => {
  it("keeps commander's suggestion line and Converge's own single-dash message", async () => {
    const { withoutOptionValue } = await import('../../src/cli/program.js');
    expect(withoutOptionValue("error: unknown option '--x=s3cret'\n(Did you mean --y?)\n")).toBe(
      "error: unknown option '--x=…'\n(Did you mean --y?)\n",
    );
    const own = "error: unknown option '-target' (did you mean --target=…?)\n";
    expect(withoutOptionValue(own)).toBe(own);
    expect(withoutOptionValue("error: unknown command 'x=y'\n")).toBe("error: unknown command 'x=y'\n");
  });
});
