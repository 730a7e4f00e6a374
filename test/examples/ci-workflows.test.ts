/**
 * The example CI files (examples/ci/) run as far as a runner allows: each job's `converge` commands,
 * in order, in-process against the sandbox with the environment the CI would give them. A pull
 * request plans with changes (2), the default branch applies exactly the saved plan (0) in a job of
 * its own (a fresh runner: only the state key and the folder's workspace inventory are shared), the
 * nightly drift check finds nothing (0) until a role is changed behind Converge's back (2), and a
 * role dropped from a folder's manifest is pruned on main from that folder's inventory alone.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import {
  type CiCommand,
  githubJobCommands,
  githubJobNames,
  githubMatrix,
  gitlabJobCommands,
} from '../support/ci-workflow.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

const EXAMPLES = path.resolve(import.meta.dirname, '../../examples/ci');
const githubWorkflow = readFileSync(path.join(EXAMPLES, 'github-actions.yml'), 'utf8');
const gitlabCi = readFileSync(path.join(EXAMPLES, 'gitlab-ci.yml'), 'utf8');
const FOLDERS = ['platform', 'data'];

let sandbox: RunningSandbox;
let repo: string;

beforeEach(async () => {
  sandbox = await startSandbox({ port: 0, token: `ci-root-${randomBytes(8).toString('hex')}` });
  // A repository with one manifest folder per team, as the matrix expects.
  repo = tempDir('converge-ci-repo-');
  for (const folder of FOLDERS) {
    mkdirSync(path.join(repo, 'infra', folder), { recursive: true });
    writeFileSync(
      path.join(repo, 'infra', folder, 'roles.yaml'),
      `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: ${folder}-readers }\nspec: { Description: "${folder} team" }\n`,
    );
  }
});
afterEach(async () => sandbox?.close());

/** Runs commands in order and returns their exit codes; a runner stops at the first failure. */
async function run(commands: readonly CiCommand[], extra: Record<string, string> = {}): Promise<number[]> {
  const codes: number[] = [];
  for (const c of commands) {
    const r = await runCli(c.args, { ...c.env, NO_COLOR: '1', ...extra });
    codes.push(r.code);
    if (r.code !== 0 && r.code !== 2)
      throw new Error(`${c.origin}: converge ${c.args.join(' ')}\n${r.stderr}`);
  }
  return codes;
}

async function roleExists(name: string): Promise<boolean> {
  const r = await fetch(`${sandbox.url}/v1/acl/role/name/${name}`, {
    headers: { Authorization: `Bearer ${sandbox.rootToken}` },
  });
  return r.status === 200;
}

/** The addresses a job's inventory holds, as `converge inventory list` shows them on that runner. */
async function inventoryOf(command: CiCommand): Promise<string[]> {
  const r = await runCli(['inventory', 'list', '--json'], { ...command.env, NO_COLOR: '1' });
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { objects: { address: string; owned: boolean }[] }).objects
    .filter((o) => o.owned)
    .map((o) => o.address);
}

function declareRoles(folder: string, ...names: string[]): void {
  writeFileSync(
    path.join(repo, 'infra', folder, 'roles.yaml'),
    names
      .map(
        (n) =>
          `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: ${n} }\nspec: { Description: "${folder} team" }\n`,
      )
      .join('---\n'),
  );
}

/** A role edited by hand, as someone would behind Converge's back. */
async function editRole(name: string, description: string): Promise<void> {
  const auth = { Authorization: `Bearer ${sandbox.rootToken}` };
  const live = (await (await fetch(`${sandbox.url}/v1/acl/role/name/${name}`, { headers: auth })).json()) as {
    ID: string;
  };
  const r = await fetch(`${sandbox.url}/v1/acl/role/${live.ID}`, {
    method: 'PUT',
    headers: { ...auth, 'Content-Type': 'application/json' },
    body: JSON.stringify({ ID: live.ID, Name: name, Description: description }),
  });
  expect(r.status).toBe(200);
}

describe('examples/ci/github-actions.yml', () => {
  const stateKey = randomBytes(32).toString('hex');
  const secrets = (): Record<string, string> => ({
    REGISTRY_PLAN_TOKEN: sandbox.rootToken,
    SECRETS_PLAN_TOKEN: sandbox.rootToken,
    SCHEDULER_PLAN_TOKEN: sandbox.rootToken,
    WORKSPACES_PLAN_TOKEN: sandbox.rootToken,
    REGISTRY_TOKEN: sandbox.rootToken,
    SECRETS_TOKEN: sandbox.rootToken,
    SCHEDULER_TOKEN: sandbox.rootToken,
    WORKSPACES_TOKEN: sandbox.rootToken,
    CONVERGE_STATE_KEY: stateKey,
  });
  /** One job of the workflow for one folder, on a runner of its own. */
  const job = (name: string, folder: string): CiCommand[] =>
    githubJobCommands(githubWorkflow, name, {
      repo,
      matrix: { folder },
      secrets: secrets(),
      vars: sandbox.env(),
      runnerTemp: tempDir(`converge-ci-runner-${name}-`),
    });
  const actions = (): Record<string, string> => {
    const summary = path.join(tempDir('converge-ci-summary-'), 'summary.md');
    writeFileSync(summary, '');
    return { GITHUB_ACTIONS: 'true', GITHUB_WORKSPACE: repo, GITHUB_STEP_SUMMARY: summary };
  };

  it('has the jobs the README describes, each over the matrix of folders', () => {
    expect(githubJobNames(githubWorkflow)).toEqual(['plan', 'plan-main', 'apply', 'drift']);
    for (const name of ['plan', 'plan-main', 'apply', 'drift'])
      expect(githubMatrix(githubWorkflow, name)).toEqual(FOLDERS.map((folder) => ({ folder })));
  });

  it('plans a pull request with changes, applies the saved plan on main, and finds drift at night', async () => {
    for (const folder of FOLDERS) {
      // Pull request: the action's plan, with changes; Converge writes the step summary.
      const pr = job('plan', folder);
      expect(pr.map((c) => c.args.slice(0, 2))).toEqual([['plan', '-f']]);
      expect(pr[0]!.args).toEqual(expect.arrayContaining(['--prune', '--max-deletes', '10']));
      const env = actions();
      expect(await run(pr, env)).toEqual([2]);
      expect(readFileSync(env.GITHUB_STEP_SUMMARY!, 'utf8')).toContain(
        `| \`+\` create | AclRole | ${folder}-readers |`,
      );

      // Merge to main: plan -out in one job, apply that file in another runner's job.
      const saved = job('plan-main', folder);
      expect(saved.map((c) => c.args[0])).toEqual(['plan']);
      expect(await run(saved, actions())).toEqual([0]);
      const apply = job('apply', folder);
      expect(apply.map((c) => c.args)).toEqual([['apply', path.join(repo, `plan-${folder}.bin`)]]);
      expect(await run(apply)).toEqual([0]);

      // Nightly: nothing to do right after the apply.
      const drift = job('drift', folder);
      expect(drift.map((c) => c.args.slice(0, 2))).toEqual([['plan', '-f']]);
      expect(drift[0]!.args).toContain('--detailed-exitcode');
      expect(await run(drift, actions())).toEqual([0]);
    }
    // Someone edits a role by hand: the next night's check for that folder exits 2, the other's 0.
    await editRole('data-readers', 'changed by hand');
    expect(await run(job('drift', 'data'), actions())).toEqual([2]);
    expect(await run(job('drift', 'platform'), actions())).toEqual([0]);
  });

  it('keeps one workspace inventory per folder that every fresh runner reads, so main prunes what a folder dropped', async () => {
    for (const folder of FOLDERS) {
      expect(await run(job('plan-main', folder))).toEqual([0]);
      expect(await run(job('apply', folder))).toEqual([0]);
    }
    // Another runner (a fresh state folder) sees what the apply recorded, each folder only its own.
    const [platform] = job('drift', 'platform');
    expect(platform!.env.CONVERGE_INVENTORY).toBe(
      `workspace:${sandbox.env().CONVERGE_WORKSPACES_ORGANIZATION}/converge-platform`,
    );
    expect(await inventoryOf(platform!)).toEqual(['AclRole/default/platform-readers']);
    expect(await inventoryOf(job('drift', 'data')[0]!)).toEqual(['AclRole/default/data-readers']);

    // The platform team renames its role: the pull request's plan shows the deletion to reviewers,
    // and main's plan (on yet another runner) prunes the old one.
    declareRoles('platform', 'platform-viewers');
    const env = actions();
    expect(await run(job('plan', 'platform'), env)).toEqual([2]);
    const summary = readFileSync(env.GITHUB_STEP_SUMMARY!, 'utf8');
    expect(summary).toContain('To prune: 1 object Converge manages that the manifest no longer declares');
    expect(summary).toContain('`AclRole/default/platform-readers`');
    expect(await run(job('plan-main', 'platform'))).toEqual([0]);
    expect(await run(job('apply', 'platform'))).toEqual([0]);
    expect(await roleExists('platform-readers')).toBe(false);
    expect(await roleExists('platform-viewers')).toBe(true);
    expect(await roleExists('data-readers')).toBe(true);
    expect(await inventoryOf(job('drift', 'platform')[0]!)).toEqual(['AclRole/default/platform-viewers']);
    expect(await run(job('drift', 'platform'), actions())).toEqual([0]);
  });

  it('refuses on main a saved plan signed with another key', async () => {
    expect(await run(job('plan-main', 'platform'))).toEqual([0]);
    const [apply] = job('apply', 'platform');
    const r = await runCli(apply!.args, {
      ...apply!.env,
      CONVERGE_STATE_KEY: randomBytes(32).toString('hex'),
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/was signed with state key \w+ .*but this run.s state key is/);
  });

  it("the action's run step, run as GitHub runs it (bash -eo pipefail), writes its outputs whatever Converge exits with", () => {
    const action = parse(readFileSync(path.resolve(EXAMPLES, '../../action.yml'), 'utf8')) as {
      runs: { steps: { id?: string; run?: string }[] };
    };
    const script = action.runs.steps.find((s) => s.id === 'run')!.run!;
    for (const converge of [0, 1, 2]) {
      const dir = tempDir('converge-action-step-');
      const stub = path.join(dir, 'converge');
      writeFileSync(stub, `#!/bin/sh\necho "plan output"\nexit ${converge}\n`, { mode: 0o755 });
      const step = path.join(dir, 'step.sh');
      writeFileSync(step, script);
      const output = path.join(dir, 'github-output');
      writeFileSync(output, '');
      const r = spawnSync('bash', ['--noprofile', '--norc', '-eo', 'pipefail', step], {
        encoding: 'utf8',
        env: {
          PATH: process.env.PATH ?? '',
          CONVERGE: stub,
          INPUT_COMMAND: 'plan',
          INPUT_PATH: 'infra',
          INPUT_PLAN_FILE: '',
          INPUT_ARGS: '',
          INPUT_STATE_KEY: '',
          RUNNER_TEMP: dir,
          GITHUB_OUTPUT: output,
          GITHUB_RUN_ID: '7',
          GITHUB_RUN_ATTEMPT: '1',
        },
      });
      // A plan with changes (2) is a success of the step; the outputs are there in every case.
      expect(r.status, r.stderr).toBe(converge === 2 ? 0 : converge);
      expect(readFileSync(output, 'utf8')).toContain(`exitcode=${converge}`);
      expect(readFileSync(output, 'utf8')).toContain('markdown-file=');
      expect(r.stdout).toContain('plan output');
    }
  });

  it("the action's run step holds the commands this test runs for it", () => {
    const action = readFileSync(path.resolve(EXAMPLES, '../../action.yml'), 'utf8');
    expect(action).toContain(
      '$CONVERGE plan -f "$INPUT_PATH" --detailed-exitcode --markdown "${out[@]}" "${extra[@]}"',
    );
    expect(action).toContain('read -ra extra <<< "$INPUT_ARGS"');
    expect(action).toContain('$CONVERGE validate -f "$INPUT_PATH"');
    expect(action).toContain('$CONVERGE apply "$INPUT_PLAN_FILE"');
    expect(action).toContain('<!-- converge-plan: ${where} -->');
    expect(action).toContain('echo "::add-mask::$INPUT_STATE_KEY"');
  });
});

describe('examples/ci/gitlab-ci.yml', () => {
  const stateKey = randomBytes(32).toString('hex');
  const job = (name: string): CiCommand[] => {
    // Each job starts from a clean checkout: the state folder of the last job is gone.
    rmSync(path.join(repo, '.converge-ci'), { recursive: true, force: true });
    return gitlabJobCommands(gitlabCi, name, {
      repo,
      // Masked CI/CD variables: the addresses, tokens and the state key; and GitLab's own.
      variables: {
        ...sandbox.env(),
        CONVERGE_STATE_KEY: stateKey,
        CI_PROJECT_PATH_SLUG: 'acme-infra',
        CI_BUILDS_DIR: '/builds',
        CI_PROJECT_PATH: 'acme/infra',
      },
    });
  };

  it('validates and plans a merge request, applies the saved plan on the default branch, finds drift', async () => {
    expect(job('validate').map((c) => c.args)).toEqual([['validate', '-f', path.join(repo, 'infra')]]);
    expect(await run(job('validate'))).toEqual([0]);
    expect(await run(job('plan:mr'))).toEqual([2]);
    expect(await run(job('plan:main'))).toEqual([0]);
    expect(job('apply').map((c) => c.args)).toEqual([['apply', path.join(repo, 'plan.bin')]]);
    expect(await run(job('apply'))).toEqual([0]);
    expect(await run(job('drift'))).toEqual([0]);
    await editRole('platform-readers', 'changed by hand');
    expect(await run(job('drift'))).toEqual([2]);

    // The saved plan names the manifest by absolute path: both jobs check out to one fixed path.
    expect(job('plan:main')[0]!.env.GIT_CLONE_PATH).toBe('/builds/acme/infra');
    expect(job('apply')[0]!.env.GIT_CLONE_PATH).toBe('/builds/acme/infra');

    // The project's one workspace inventory: a role dropped from the manifest is pruned on main.
    expect(job('apply')[0]!.env.CONVERGE_INVENTORY).toBe(
      `workspace:${sandbox.env().CONVERGE_WORKSPACES_ORGANIZATION}/converge-acme-infra`,
    );
    rmSync(path.join(repo, 'infra', 'data'), { recursive: true });
    expect(await run(job('plan:main'))).toEqual([0]);
    expect(await run(job('apply'))).toEqual([0]);
    expect(await roleExists('data-readers')).toBe(false);
    expect(await roleExists('platform-readers')).toBe(true);
  });
});
