/**
 * Saved plans are tamper-evident: `plan -out` signs the file with the state key, and `apply FILE`
 * refuses a file edited after review, a file without a MAC, and a file made under another key, before
 * anything is sent. Against the sandbox, in-process.
 */
import { randomBytes } from 'node:crypto';
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stateKeyId } from '../../src/engine/state-key.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { apiFor, type RoleJson } from '../sandbox/helpers.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

let sandbox: RunningSandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
});
afterAll(async () => sandbox?.close());

function tmp(prefix: string): string {
  return tempDir(prefix);
}

async function role(name: string): Promise<RoleJson | undefined> {
  const res = await apiFor(sandbox)('GET', `/v1/acl/role/name/${name}`);
  return res.status === 404 ? undefined : res.json<RoleJson>();
}

/** A role that exists with Description "reviewed-before", and a plan that updates it. */
async function savedUpdate(name: string, env: Record<string, string>): Promise<string> {
  const create = await apiFor(sandbox)('PUT', '/v1/acl/role', {
    body: { Name: name, Description: 'reviewed-before' },
  });
  expect(create.status).toBe(200);
  const dir = tmp('converge-mac-');
  writeFileSync(
    path.join(dir, 'r.yaml'),
    `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: ${name} }\nspec: { Description: reviewed-after }\n`,
  );
  const planFile = path.join(dir, 'reviewed.plan');
  const plan = await runCli(['plan', '-f', dir, '-out', planFile], env);
  expect(plan.code, plan.stderr).toBe(0);
  return planFile;
}

function envWith(extra: Record<string, string> = {}): Record<string, string> {
  return { ...sandbox.env(), CONVERGE_STATE_DIR: tmp('converge-mac-state-'), NO_COLOR: '1', ...extra };
}

function edit(file: string, change: (plan: Record<string, unknown>) => void): void {
  const plan = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  change(plan);
  writeFileSync(file, JSON.stringify(plan, null, 2));
}

type SavedChanges = { changes: { action: string; diffs: { after?: unknown }[] }[] };

describe('apply FILE checks the saved plan’s MAC first', () => {
  it('applies an untouched saved plan', async () => {
    const env = envWith();
    const planFile = await savedUpdate('mac-untouched', env);
    const saved = JSON.parse(readFileSync(planFile, 'utf8')) as Record<string, unknown>;
    expect(saved.mac).toMatch(/^[0-9a-f]{64}$/);
    expect(saved.key_source).toBe(path.join(env.CONVERGE_STATE_DIR!, 'state.key'));
    const r = await runCli(['apply', planFile], env);
    expect(r.code, r.stderr).toBe(0);
    expect((await role('mac-untouched'))?.Description).toBe('reviewed-after');
  });

  it('refuses a plan whose update was turned into a delete after review; the role stays', async () => {
    const env = envWith();
    const planFile = await savedUpdate('mac-delete', env);
    edit(planFile, (p) => {
      (p as unknown as SavedChanges).changes[0]!.action = 'delete';
    });
    const r = await runCli(['apply', planFile], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${planFile} was changed after it was saved`);
    expect(r.stderr).toContain(`converge plan -f PATH -out ${planFile}`);
    expect(r.stdout).toBe('');
    expect((await role('mac-delete'))?.Description).toBe('reviewed-before');
  });

  it('refuses a plan whose attribute was changed after review', async () => {
    const env = envWith();
    const planFile = await savedUpdate('mac-attribute', env);
    edit(planFile, (p) => {
      (p as unknown as SavedChanges).changes[0]!.diffs[0]!.after = 'something else';
    });
    const r = await runCli(['apply', planFile], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('was changed after it was saved');
    expect((await role('mac-attribute'))?.Description).toBe('reviewed-before');
  });

  it('refuses a plan without a MAC', async () => {
    const env = envWith();
    const planFile = await savedUpdate('mac-missing', env);
    edit(planFile, (p) => {
      delete p.mac;
    });
    const r = await runCli(['apply', planFile], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${planFile} carries no MAC`);
    expect((await role('mac-missing'))?.Description).toBe('reviewed-before');
  });

  it('shows a forged key id inert and short, never as a line of its own', async () => {
    const env = envWith();
    const planFile = await savedUpdate('mac-forged-key', env);
    edit(planFile, (p) => {
      p.key_id = `abc\nApply it with: converge apply -f /tmp/EVIL --auto-approve${'x'.repeat(5000)}`;
    });
    const r = await runCli(['apply', planFile], env);
    expect(r.code).toBe(1);
    expect(r.stderr).not.toContain('\nApply it with');
    expect(r.stderr).toContain('abc\\nApply it with');
    expect(r.stderr).not.toContain('x'.repeat(200));
  });

  it('refuses a plan made under another state key, naming both keys and how to share one', async () => {
    const planKey = randomBytes(32);
    const applyKey = randomBytes(32);
    const planFile = await savedUpdate(
      'mac-other-key',
      envWith({ CONVERGE_STATE_KEY: planKey.toString('hex') }),
    );
    const r = await runCli(['apply', planFile], envWith({ CONVERGE_STATE_KEY: applyKey.toString('base64') }));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `was signed with state key ${stateKeyId(planKey)} (from CONVERGE_STATE_KEY), but this run's state key is ${stateKeyId(applyKey)} (from CONVERGE_STATE_KEY)`,
    );
    expect(r.stderr).toContain('must share CONVERGE_STATE_KEY');
    expect(r.stderr).not.toContain(planKey.toString('hex'));
    expect((await role('mac-other-key'))?.Description).toBe('reviewed-before');
  });

  it('applies in another job that shares CONVERGE_STATE_KEY (the key as hex or as base64)', async () => {
    const key = randomBytes(32);
    const planFile = await savedUpdate('mac-shared', envWith({ CONVERGE_STATE_KEY: key.toString('hex') }));
    const r = await runCli(['apply', planFile], envWith({ CONVERGE_STATE_KEY: key.toString('base64') }));
    expect(r.code, r.stderr).toBe(0);
    expect((await role('mac-shared'))?.Description).toBe('reviewed-after');
  });

  it('refuses when the applying job has no state key at all', async () => {
    const planFile = await savedUpdate('mac-no-key', envWith());
    const env = envWith();
    const r = await runCli(['apply', planFile], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `this run has no state key (CONVERGE_STATE_KEY is not set and ${path.join(env.CONVERGE_STATE_DIR!, 'state.key')} does not exist)`,
    );
    expect((await role('mac-no-key'))?.Description).toBe('reviewed-before');
  });
});

describe('apply FILE in another checkout', () => {
  it('says that the manifest is not at the path the plan was made from, and what to do; nothing is sent', async () => {
    const key = randomBytes(32).toString('hex');
    const planFile = await savedUpdate('moved-checkout', envWith({ CONVERGE_STATE_KEY: key }));
    // The apply job's checkout is elsewhere: the plan file came as an artifact, the planning one is gone.
    const elsewhere = path.join(tmp('converge-other-checkout-'), 'reviewed.plan');
    copyFileSync(planFile, elsewhere);
    rmSync(path.dirname(planFile), { recursive: true, force: true });
    const r = await runCli(['apply', elsewhere], envWith({ CONVERGE_STATE_KEY: key }));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `${elsewhere} was planned from the manifest at ${path.dirname(planFile)}, which is not there: a saved plan applies only where its manifest has the path it was planned from (in CI, check out to one fixed path in the plan and the apply jobs: GitLab's GIT_CLONE_PATH`,
    );
    expect((await role('moved-checkout'))?.Description).toBe('reviewed-before');
  });
});
