/**
 * Converge under GitHub Actions (`GITHUB_ACTIONS=true`), run in-process against the sandbox: problems
 * as `::error` workflow commands (ranked, capped, escaped so a manifest or a service cannot forge
 * another command), the plan's Markdown appended to `$GITHUB_STEP_SUMMARY`, and nothing of either
 * outside Actions.
 */
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { annotationCommands } from '../../src/cli/ci/github.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

let sandbox: RunningSandbox;
let base: Record<string, string | undefined>;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, token: 'gha-root-token-8d2e41' });
  base = {
    ...sandbox.env(),
    NO_COLOR: '1',
    CONVERGE_STATE_DIR: tempDir('converge-gha-state-'),
  };
});
afterAll(async () => sandbox?.close());

function folder(files: Record<string, string>): string {
  const dir = tempDir('converge-gha-');
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  return dir;
}

/** Every line a runner would read as a workflow command (it reads stdout and stderr alike). */
function commands(r: { stdout: string; stderr: string }): string[] {
  return `${r.stdout}\n${r.stderr}`.split(/\r\n|\r|\n/).filter((l) => l.startsWith('::'));
}

const badGroup = (name: string) =>
  `apiVersion: converge/v1\nkind: LdapGroup\nmetadata: { name: ${name} }\nspec: { policies: [ops] }\n`;

describe('validation problems as annotations', () => {
  it('annotates at most ten, validation problems ranked by file and line, and counts the rest', async () => {
    // Six bad names in each of two files; b.yaml comes first on disk order but not in the ranking.
    const six = (prefix: string) =>
      Array.from({ length: 6 }, (_, i) => badGroup(`${prefix}${i}`)).join('---\n');
    const dir = folder({ 'b.yaml': six('B'), 'a.yaml': six('A') });
    const r = await runCli(['validate', '-f', dir], {
      ...base,
      GITHUB_ACTIONS: 'true',
      GITHUB_WORKSPACE: dir,
    });
    expect(r.code).toBe(1);
    const cmds = commands(r);
    const errors = cmds.filter((c) => c.startsWith('::error '));
    expect(errors).toHaveLength(10);
    const places = errors.map((e) => /file=([^,]+),line=(\d+)/.exec(e)!.slice(1, 3).join(':'));
    expect(places).toEqual([
      'a.yaml:3',
      'a.yaml:8',
      'a.yaml:13',
      'a.yaml:18',
      'a.yaml:23',
      'a.yaml:28',
      'b.yaml:3',
      'b.yaml:8',
      'b.yaml:13',
      'b.yaml:18',
    ]);
    expect(errors[0]).toMatch(
      /^::error file=a\.yaml,line=3,col=\d+,title=Converge%3A invalid manifest::invalid LdapGroup name "A0"/,
    );
    expect(cmds.at(-1)).toBe('::notice::2 more problems are not annotated; the log above lists them all');
    // The ordinary error report is still there, every problem of it.
    expect(r.stderr).toContain('Error: the manifest has 12 problems:');
  });

  it('escapes a hostile field name and file name: no forged command, no broken property', async () => {
    const dir = folder({
      'we,ird:name.yaml':
        'apiVersion: converge/v1\nkind: LdapGroup\nmetadata: { name: ops }\n' +
        'spec: { policies: [ops], "x\\n::warning::forged\\r::error::also%0Aforged,a:b": 1 }\n',
    });
    const r = await runCli(['validate', '-f', dir], {
      ...base,
      GITHUB_ACTIONS: 'true',
      GITHUB_WORKSPACE: dir,
    });
    expect(r.code).toBe(1);
    const cmds = commands(r);
    expect(cmds).toHaveLength(1);
    const [error] = cmds;
    // `:` and `,` of the file name are escaped in the property; `%` is escaped before anything else,
    // so a literal `%0A` in the manifest stays text and is not decoded into a line break.
    expect(error).toMatch(
      /^::error file=we%2Cird%3Aname\.yaml,line=4,col=\d+,title=Converge%3A invalid manifest::/,
    );
    expect(error).toContain('x\\n::warning::forged\\r::error::also%250Aforged,a:b');
    expect(error).not.toMatch(/[\r\n]/);
  });

  it('leaves a path outside the workspace as it is', async () => {
    const dir = folder({ 'a.yaml': badGroup('Upper') });
    const elsewhere = tempDir('converge-gha-ws-');
    const r = await runCli(['validate', '-f', dir], {
      ...base,
      GITHUB_ACTIONS: 'true',
      GITHUB_WORKSPACE: elsewhere,
    });
    expect(commands(r)[0]).toContain(`file=${path.join(dir, 'a.yaml').replace(/:/g, '%3A')},line=3`);
  });

  it('says so in plan --help', async () => {
    const r = await runCli(['plan', '--help'], base);
    expect(r.stdout).toContain(
      'Under GitHub Actions (GITHUB_ACTIONS=true) problems are also printed as ::error',
    );
  });

  it('prints no workflow command outside GitHub Actions', async () => {
    const dir = folder({ 'a.yaml': badGroup('Upper') });
    const r = await runCli(['validate', '-f', dir], { ...base, GITHUB_WORKSPACE: dir });
    expect(r.code).toBe(1);
    expect(commands(r)).toEqual([]);
  });
});

describe('plan problems as annotations', () => {
  it('annotates a problem found while planning at its manifest line, relative to the workspace', async () => {
    const root = tempDir('converge-gha-repo-');
    const dir = path.join(root, 'infra');
    mkdirSync(dir);
    writeFileSync(
      path.join(dir, 'directory.yaml'),
      `apiVersion: converge/v1\nkind: LdapGroup\nmetadata: { name: ops, mount: nosuch }\nspec: { policies: [ops] }\n`,
    );
    const r = await runCli(['plan', '-f', dir], { ...base, GITHUB_ACTIONS: 'true', GITHUB_WORKSPACE: root });
    expect(r.code).toBe(1);
    const errors = commands(r).filter((c) => c.startsWith('::error'));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(
      /^::error file=infra\/directory\.yaml,line=3,col=\d+,title=Converge plan%3A LdapGroup\/nosuch\/ops::.*nothing is mounted at auth\/nosuch/,
    );
  });
});

describe('apply under GitHub Actions', () => {
  it('annotates the plan problems that stop it', async () => {
    const dir = folder({
      'directory.yaml': `apiVersion: converge/v1\nkind: LdapGroup\nmetadata: { name: ops, mount: nosuch }\nspec: { policies: [ops] }\n`,
    });
    const r = await runCli(['apply', '-f', dir, '--auto-approve'], {
      ...base,
      GITHUB_ACTIONS: 'true',
      GITHUB_WORKSPACE: dir,
    });
    expect(r.code).toBe(1);
    expect(commands(r)).toEqual([
      expect.stringMatching(
        /^::error file=directory\.yaml,line=3,col=\d+,title=Converge plan%3A LdapGroup\/nosuch\/ops::/,
      ),
    ]);
  });
});

describe('the step summary', () => {
  const roles = (description: string) =>
    folder({
      'roles.yaml': `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: gha-summary-role }\nspec: { Description: "${description}" }\n`,
    });

  it('appends the plan as Markdown to the file the runner names, keeping what was there', async () => {
    const summary = path.join(tempDir('converge-gha-sum-'), 'step_summary');
    writeFileSync(summary, '## An earlier step\n\n');
    const dir = roles('first');
    const env = { ...base, GITHUB_ACTIONS: 'true', GITHUB_STEP_SUMMARY: summary };
    const r = await runCli(['plan', '-f', dir], env);
    expect(r.code).toBe(0);
    const markdown = (await runCli(['plan', '-f', dir, '--markdown'], { ...base })).stdout;
    const written = readFileSync(summary, 'utf8');
    expect(written.startsWith('## An earlier step\n\n### Converge plan\n')).toBe(true);
    // The same Markdown `plan --markdown` prints: the headline, the table per kind, the details.
    expect(written).toContain(markdown);
    expect(written).toContain('| Kind | Add | Change | Replace | Destroy | Unchanged |');
    expect(written).toContain('| AclRole | 1 | 0 | 0 | 0 | 0 |');
    expect(written).toContain('<details><summary>Attribute changes</summary>');
    // A second step appends again.
    await runCli(['plan', '-f', dir], env);
    expect(readFileSync(summary, 'utf8').split('### Converge plan')).toHaveLength(3);
  });

  it('refuses a symlink, leaving its target untouched, and says so', async () => {
    const tmp = tempDir('converge-gha-link-');
    const target = path.join(tmp, 'precious');
    writeFileSync(target, 'do not touch\n');
    const link = path.join(tmp, 'step_summary');
    symlinkSync(target, link);
    const r = await runCli(['plan', '-f', roles('x')], {
      ...base,
      GITHUB_ACTIONS: 'true',
      GITHUB_STEP_SUMMARY: link,
    });
    expect(r.code).toBe(0);
    expect(readFileSync(target, 'utf8')).toBe('do not touch\n');
    expect(r.stderr).toContain(`Warning: not writing the step summary to ${link}: it is a symbolic link`);
  });

  it('creates no file the runner did not make, and writes nothing outside Actions', async () => {
    const tmp = tempDir('converge-gha-none-');
    const missing = path.join(tmp, 'missing');
    const r = await runCli(['plan', '-f', roles('x')], {
      ...base,
      GITHUB_ACTIONS: 'true',
      GITHUB_STEP_SUMMARY: missing,
    });
    expect(r.code).toBe(0);
    expect(existsSync(missing)).toBe(false);
    const present = path.join(tmp, 'present');
    writeFileSync(present, '');
    await runCli(['plan', '-f', roles('x')], { ...base, GITHUB_STEP_SUMMARY: present });
    expect(readFileSync(present, 'utf8')).toBe('');
  });
});

describe('ranking validation and plan problems together', () => {
  it('puts every validation problem before any plan problem, and unplaced plan problems last', () => {
    const lines = annotationCommands(
      [
        { stage: 'plan', title: 'p-unplaced', message: 'm' },
        { stage: 'plan', title: 'p-b1', message: 'm', file: '/ws/b.yaml', line: 1, col: 1 },
        { stage: 'validation', title: 'v-b9', message: 'm', file: '/ws/b.yaml', line: 9, col: 1 },
        { stage: 'validation', title: 'v-a2', message: 'm', file: '/ws/a.yaml', line: 2, col: 5 },
        { stage: 'validation', title: 'v-a2-col1', message: 'm', file: '/ws/a.yaml', line: 2, col: 1 },
      ],
      { GITHUB_WORKSPACE: '/ws' },
    );
    expect(lines.map((l) => /title=([^:]+)::/.exec(l)![1])).toEqual([
      'v-a2-col1',
      'v-a2',
      'v-b9',
      'p-b1',
      'p-unplaced',
    ]);
    expect(lines[4]).toBe('::error title=p-unplaced::m');
  });
});
