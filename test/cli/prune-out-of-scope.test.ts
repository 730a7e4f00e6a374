/**
 * `--prune` reaches only the organizations and namespaces the manifest manages. Workspaces Converge
 * created in an organization whose last workspace left the manifest stay, and the plan says so (every
 * form), rather than nothing: a PruneScope of the organization, with allowEmpty, then deletes them.
 * Roles likewise: a PruneScope declared for one namespace (as the emptied-kind refusal suggests)
 * limits the prune of roles to it, and the roles left outside it are listed, not silently kept.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlanJson } from '../../src/planner/render/json.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

let sandbox: RunningSandbox;
let env: Record<string, string | undefined>;

const workspace = (name: string) =>
  `apiVersion: converge/v1\nkind: Workspace\nmetadata: { name: ${name}, namespace: sandbox }\nspec: { description: ${name} }\n`;
const role =
  'apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: stays }\nspec: { Description: kept }\n';
const scope =
  'apiVersion: converge/v1\nkind: PruneScope\nmetadata: { name: old-workspaces }\nspec: { kind: Workspace, namespace: sandbox, allowEmpty: true }\n';

function manifest(...docs: string[]): string {
  const dir = tempDir('converge-out-of-scope-');
  writeFileSync(path.join(dir, 'manifest.yaml'), docs.join('---\n'));
  return dir;
}

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, token: 'out-of-scope-root-token' });
  env = { ...sandbox.env(), NO_COLOR: '1', CONVERGE_STATE_DIR: tempDir('converge-out-of-scope-state-') };
  const applied = await runCli(
    ['apply', '-f', manifest(role, workspace('ws-a'), workspace('ws-b')), '--auto-approve'],
    env,
  );
  expect(applied.code, applied.stderr).toBe(0);
});
afterAll(async () => sandbox?.close());

describe('workspaces Converge created in an organization the manifest no longer manages', () => {
  it('are listed as not pruned in the text plan, which deletes nothing', async () => {
    const r = await runCli(['plan', '-f', manifest(role), '--prune'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      [
        'Not pruned: 2 objects the inventory records as created by Converge, where the manifest declares no object of their kind any more on the same connection and in the same organization or namespace; --prune reaches only scopes the manifest manages.',
        '  Workspace/sandbox/ws-a',
        '  Workspace/sandbox/ws-b',
        "To delete them, declare a PruneScope of their kind, namespace and connection (with allowEmpty: true; a PruneScope limits the kind's prune to the scopes declared: declare one for every scope to prune); if one is gone or no longer Converge's, drop the record with `converge inventory forget ADDRESS --yes`.",
      ].join('\n'),
    );
    expect(r.stdout).toContain('0 to destroy');
  });

  it('are pruned.out_of_scope in --json and a note in --markdown', async () => {
    const json = await runCli(['plan', '-f', manifest(role), '--prune', '--json'], env);
    const doc = JSON.parse(json.stdout) as PlanJson;
    expect(doc.pruned.out_of_scope).toEqual(['Workspace/sandbox/ws-a', 'Workspace/sandbox/ws-b']);
    expect(doc.pruned.count).toBe(0);
    const md = await runCli(['plan', '-f', manifest(role), '--prune', '--markdown'], env);
    expect(md.stdout).toContain(
      '> - `Workspace/sandbox/ws-a`\n> - `Workspace/sandbox/ws-b`\n>\n> To delete them',
    );
  });

  it('are not mentioned while the organization still has a declared workspace: the prune reaches them', async () => {
    const r = await runCli(['plan', '-f', manifest(role, workspace('ws-a')), '--prune', '--json'], env);
    const doc = JSON.parse(r.stdout) as PlanJson;
    expect(doc.pruned.out_of_scope).toEqual([]);
    expect(doc.pruned.addresses).toEqual(['Workspace/sandbox/ws-b']);
  });

  it('are deleted once a PruneScope of the organization allows it, and no longer listed', async () => {
    const r = await runCli(['plan', '-f', manifest(role, scope), '--prune', '--json'], env);
    const doc = JSON.parse(r.stdout) as PlanJson;
    expect(doc.pruned.addresses.sort()).toEqual(['Workspace/sandbox/ws-a', 'Workspace/sandbox/ws-b']);
    expect(doc.pruned.out_of_scope).toEqual([]);
  });

  it('are deleted by an apply with that scope alone: its allowEmpty satisfies the emptied-kind guard, as the hint says', async () => {
    // The kind's last object left the manifest, which the guard refuses without --allow-empty; the
    // declared scope with allowEmpty: true is the reviewed form of that flag.
    const dir = manifest(role, scope);
    const plan = await runCli(['plan', '-f', dir, '--prune', '--detailed-exitcode'], env);
    expect(plan.code, plan.stdout + plan.stderr).toBe(2);
    expect(plan.stdout + plan.stderr).not.toContain('declares no Workspace any more');
    // Without the scope's allowEmpty, the guard still stands.
    const guarded = await runCli(
      ['plan', '-f', manifest(role, scope.replace(', allowEmpty: true', '')), '--prune'],
      env,
    );
    expect(guarded.code).toBe(1);
    const applied = await runCli(['apply', '-f', dir, '--prune', '--auto-approve'], env);
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    const after = await runCli(['plan', '-f', dir, '--prune', '--detailed-exitcode'], env);
    expect(after.code, after.stdout).toBe(0);
  });
});

describe("a PruneScope's namePrefix for a kind with an ownership marker", () => {
  it("keeps a prune to the prefix: another manifest's workspaces in the organization stay", async () => {
    const prefixed =
      'apiVersion: converge/v1\nkind: PruneScope\nmetadata: { name: imp-ws }\nspec: { kind: Workspace, namespace: sandbox, namePrefix: imp- }\n';
    const r = await runCli(
      ['plan', '-f', manifest(role, workspace('imp-a'), prefixed), '--prune', '--json'],
      env,
    );
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as PlanJson;
    // ws-a and ws-b carry Converge's marker and sit in the organization the manifest manages, but
    // not under imp-: the scope the manifest declared for its workspaces leaves them alone.
    expect(doc.pruned.addresses).toEqual([]);
    expect(doc.changes.filter((c) => c.action === 'delete')).toEqual([]);
  });
});

describe("roles Converge created in two namespaces, after one namespace's roles leave the manifest", () => {
  const aclRole = (name: string, namespace: string) =>
    `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: ${name}, namespace: ${namespace} }\nspec: { Description: ${name} }\n`;
  const team1Scope =
    'apiVersion: converge/v1\nkind: PruneScope\nmetadata: { name: team1-roles }\nspec: { kind: AclRole, namespace: team1, allowEmpty: true }\n';
  const kept = aclRole('nsr-keep', 'default');
  let roleEnv: Record<string, string | undefined>;
  beforeAll(async () => {
    // An inventory of its own: the workspaces above are not these tests' business.
    roleEnv = { ...env, CONVERGE_STATE_DIR: tempDir('converge-out-of-scope-roles-state-') };
    const all = [
      kept,
      aclRole('nsr-dropped', 'default'),
      aclRole('nsr-t1-a', 'team1'),
      aclRole('nsr-t1-b', 'team1'),
      aclRole('nsr-t2', 'team2'),
    ];
    const applied = await runCli(['apply', '-f', manifest(...all), '--auto-approve'], roleEnv);
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
  });

  it('are refused once per emptied namespace, each at its own address, with a hint that says a PruneScope limits the prune', async () => {
    const r = await runCli(['plan', '-f', manifest(kept), '--prune', '--json'], roleEnv);
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.stdout) as PlanJson;
    expect(doc.problems.map((p) => p.address)).toEqual(['Prune/AclRole/team1', 'Prune/AclRole/team2']);
    for (const p of doc.problems)
      expect(p.message).toContain(
        "allowEmpty: true; a PruneScope limits the kind's prune to the scopes declared: declare one for every scope to prune)",
      );
  });

  it('with the PruneScope the hint suggests, list the roles left outside it as not pruned rather than nothing', async () => {
    const dir = manifest(kept, team1Scope);
    // team2's roles are still refused by the guard: --allow-empty lets this plan show the rest.
    const text = await runCli(['plan', '-f', dir, '--prune', '--allow-empty'], roleEnv);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(
      [
        "Not pruned: 2 objects the inventory records as Converge's (created or imported), no longer in the manifest, outside every PruneScope the manifest declares for their kind; a PruneScope limits its kind's prune to the scopes declared.",
        '  AclRole/default/nsr-dropped',
        '  AclRole/team2/nsr-t2',
        'To delete them, declare a PruneScope that covers them too',
      ].join('\n'),
    );
    expect(text.stdout).toContain('2 to destroy');

    const json = JSON.parse(
      (await runCli(['plan', '-f', dir, '--prune', '--allow-empty', '--json'], roleEnv)).stdout,
    ) as PlanJson;
    expect(json.pruned.addresses).toEqual(['AclRole/team1/nsr-t1-a', 'AclRole/team1/nsr-t1-b']);
    expect(json.pruned.out_of_scope).toEqual(['AclRole/default/nsr-dropped', 'AclRole/team2/nsr-t2']);

    const md = await runCli(['plan', '-f', dir, '--prune', '--allow-empty', '--markdown'], roleEnv);
    expect(md.stdout).toContain(
      "> Not pruned: 2 objects the inventory records as Converge's \\(created or imported\\), no longer in the manifest, outside every PruneScope",
    );
    expect(md.stdout).toContain(
      '> - `AclRole/default/nsr-dropped`\n> - `AclRole/team2/nsr-t2`\n>\n> To delete them',
    );
  });

  it('are no longer listed once PruneScopes cover every namespace to prune', async () => {
    const more =
      'apiVersion: converge/v1\nkind: PruneScope\nmetadata: { name: other-roles }\nspec: { kind: AclRole, namespace: default }\n---\napiVersion: converge/v1\nkind: PruneScope\nmetadata: { name: team2-roles }\nspec: { kind: AclRole, namespace: team2, allowEmpty: true }\n';
    const r = await runCli(['plan', '-f', manifest(kept, team1Scope, more), '--prune', '--json'], roleEnv);
    expect(r.code, r.stdout).toBe(0);
    const doc = JSON.parse(r.stdout) as PlanJson;
    expect(doc.pruned.out_of_scope).toEqual([]);
    expect(doc.pruned.addresses.sort()).toEqual([
      'AclRole/default/nsr-dropped',
      'AclRole/team1/nsr-t1-a',
      'AclRole/team1/nsr-t1-b',
      'AclRole/team2/nsr-t2',
    ]);
  });
});
