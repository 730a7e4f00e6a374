/**
 * A saved plan records the inventory it was made with (its file, or its workspace and the workspaces
 * service's address), and `apply FILE` refuses to apply it with another: before, the fresh plan read
 * with the other inventory disagreed with the saved one ("STALE: it changed since the plan was
 * saved", exit 3) though nothing had changed on any service. Against the sandbox, in-process.
 */
import { createHmac } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/resources/compare.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { apiFor } from '../sandbox/helpers.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

let sandbox: RunningSandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
});
afterAll(async () => sandbox?.close());

const role = (name: string) =>
  `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: ${name} }\nspec: { Description: kept }\n`;

async function roleExists(name: string): Promise<boolean> {
  return (await apiFor(sandbox)('GET', `/v1/acl/role/name/${name}`)).status === 200;
}

async function workspaceExists(name: string): Promise<boolean> {
  const org = sandbox.env().CONVERGE_WORKSPACES_ORGANIZATION!;
  return (await apiFor(sandbox)('GET', `/api/v2/organizations/${org}/workspaces/${name}`)).status === 200;
}

/**
 * Two roles applied (recorded in the inventory `env` names), then the manifest drops `gone`: the plan
 * saved with --prune deletes it, as that inventory recorded it as Converge's.
 */
async function savedPrune(
  prefix: string,
  env: Record<string, string>,
): Promise<{ planFile: string; kept: string; gone: string }> {
  const dir = tempDir('converge-plan-inv-');
  const kept = `${prefix}-kept`;
  const gone = `${prefix}-gone`;
  writeFileSync(path.join(dir, 'r.yaml'), `${role(kept)}---\n${role(gone)}`);
  const first = await runCli(['apply', '-f', dir, '--auto-approve'], env);
  expect(first.code, first.stderr).toBe(0);
  writeFileSync(path.join(dir, 'r.yaml'), role(kept));
  const planFile = path.join(dir, 'prune.plan');
  const plan = await runCli(['plan', '-f', dir, '--prune', '-out', planFile], env);
  expect(plan.code, plan.stderr).toBe(0);
  expect(plan.stdout).toContain(`AclRole/default/${gone}`);
  return { planFile, kept, gone };
}

function envWith(extra: Record<string, string> = {}): Record<string, string> {
  const { CONVERGE_INVENTORY: _unset, ...base } = sandbox.env();
  return { ...base, CONVERGE_STATE_DIR: tempDir('converge-plan-inv-state-'), NO_COLOR: '1', ...extra };
}

describe('apply FILE with another inventory than the plan was made with', () => {
  it('refuses, naming both inventories, before anything is locked or applied', async () => {
    const env = envWith();
    const planned = path.join(env.CONVERGE_STATE_DIR!, 'inventory.json');
    const { planFile, gone } = await savedPrune('inv-file', env);
    const emptyDir = tempDir('converge-plan-inv-empty-');
    const empty = path.join(emptyDir, 'empty.json');
    const before = readFileSync(planned, 'utf8');

    const r = await runCli(['apply', planFile], { ...env, CONVERGE_INVENTORY: `file:${empty}` });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `${planFile} was planned with the inventory file ${planned} (the default under CONVERGE_STATE_DIR), but this run's is file ${empty} (CONVERGE_INVENTORY): a saved plan is applied only with the inventory it was planned with`,
    );
    expect(r.stderr).toContain(`Apply it with CONVERGE_INVENTORY=file:${planned}, or plan again`);
    expect(r.stderr).not.toContain('STALE');
    expect(r.stdout).toBe('');
    // Nothing applied, nothing locked or written: neither inventory, nor a lock beside the other.
    expect(await roleExists(gone)).toBe(true);
    expect(readdirSync(emptyDir)).toEqual([]);
    expect(readFileSync(planned, 'utf8')).toBe(before);

    // A workspace inventory is refused as well, and not made (taking its lock would make it).
    const org = sandbox.env().CONVERGE_WORKSPACES_ORGANIZATION!;
    const ws = await runCli(['apply', planFile], {
      ...env,
      CONVERGE_INVENTORY: `workspace:${org}/inv-file-other`,
    });
    expect(ws.code).toBe(1);
    expect(ws.stderr).toContain(
      `${planFile} was planned with the inventory file ${planned} (the default under CONVERGE_STATE_DIR), but this run's is workspace ${org}/inv-file-other at ${sandbox.url}/api/v2 (CONVERGE_INVENTORY and CONVERGE_WORKSPACES_ADDR)`,
    );
    expect(ws.stderr).not.toContain(sandbox.rootToken);
    expect(await workspaceExists('inv-file-other')).toBe(false);
    expect(await roleExists(gone)).toBe(true);
  });

  it('refuses a plan made with a workspace inventory applied with the local file', async () => {
    const org = sandbox.env().CONVERGE_WORKSPACES_ORGANIZATION!;
    const inWorkspace = envWith({ CONVERGE_INVENTORY: `workspace:${org}/inv-reverse` });
    const { planFile, gone } = await savedPrune('inv-reverse', inWorkspace);
    const { CONVERGE_INVENTORY: _unset, ...local } = inWorkspace;
    const localFile = path.join(local.CONVERGE_STATE_DIR!, 'inventory.json');

    const r = await runCli(['apply', planFile], local);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `${planFile} was planned with the inventory workspace ${org}/inv-reverse at ${sandbox.url}/api/v2, but this run's is file ${localFile} (the default under CONVERGE_STATE_DIR: CONVERGE_INVENTORY is not set)`,
    );
    expect(r.stderr).toContain(
      `Apply it with CONVERGE_INVENTORY=workspace:${org}/inv-reverse and CONVERGE_WORKSPACES_ADDR pointing at ${sandbox.url}/api/v2, or plan again`,
    );
    expect(r.stderr).not.toContain(sandbox.rootToken);
    expect(await roleExists(gone)).toBe(true);
    expect(existsSync(localFile)).toBe(false);

    // The same workspace on another address of the service is another inventory to a saved plan.
    const r2 = await runCli(['apply', planFile], {
      ...inWorkspace,
      CONVERGE_WORKSPACES_ADDR: sandbox.url.replace('127.0.0.1', 'localhost'),
    });
    expect(r2.code).toBe(1);
    expect(r2.stderr).toContain(`but this run's is workspace ${org}/inv-reverse at http://localhost:`);
    expect(await roleExists(gone)).toBe(true);

    // With the inventory it was made with, it applies: the pruned role is deleted.
    const ok = await runCli(['apply', planFile], inWorkspace);
    expect(ok.code, ok.stderr).toBe(0);
    expect(await roleExists(gone)).toBe(false);
  });
});

describe('apply FILE with the inventory the plan was made with', () => {
  it('records the inventory in the plan and applies, however the same file is named', async () => {
    const env = envWith();
    const planned = path.join(env.CONVERGE_STATE_DIR!, 'inventory.json');
    const { planFile, kept, gone } = await savedPrune('inv-same', env);
    const saved = JSON.parse(readFileSync(planFile, 'utf8')) as { inventory?: unknown };
    expect(saved.inventory).toEqual({ type: 'file', path: planned, default: true });

    // Named through a symbolic link to the state folder: the same file, so the same inventory.
    const links = tempDir('converge-plan-inv-link-');
    mkdirSync(path.join(links, 'sub'));
    symlinkSync(env.CONVERGE_STATE_DIR!, path.join(links, 'sub', 'state'));
    const r = await runCli(['apply', planFile], {
      ...env,
      CONVERGE_INVENTORY: `file:${path.join(links, 'sub', 'state', 'inventory.json')}`,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(await roleExists(gone)).toBe(false);
    expect(await roleExists(kept)).toBe(true);
  });
});

describe('a saved plan from before the inventory was recorded', () => {
  it('is read and applied as before: no inventory to compare', async () => {
    const env = envWith();
    const { planFile, gone } = await savedPrune('inv-old', env);
    // As an older Converge wrote it: no `inventory`, signed with the same state key.
    const {
      mac: _mac,
      inventory,
      ...content
    } = JSON.parse(readFileSync(planFile, 'utf8')) as Record<string, unknown>;
    expect(inventory).toBeDefined();
    const key = Buffer.from(
      readFileSync(path.join(env.CONVERGE_STATE_DIR!, 'state.key'), 'utf8').trim(),
      'hex',
    );
    const mac = createHmac('sha256', key)
      .update('converge plan file mac\u0000')
      .update(canonicalJson(content))
      .digest('hex');
    writeFileSync(planFile, JSON.stringify({ ...content, mac }, null, 2));
    const r = await runCli(['apply', planFile], env);
    expect(r.code, r.stderr).toBe(0);
    expect(await roleExists(gone)).toBe(false);
  });
});
