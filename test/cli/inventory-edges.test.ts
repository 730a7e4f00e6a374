/**
 * Edges of the inventory from the command line, in-process against the sandbox: a workspace whose
 * state is not a Converge inventory is refused by name (never overwritten), `inventory migrate`
 * moves a workspace inventory back into a file, and an object Converge created that someone deleted
 * by hand neither fails a plan nor is "deleted" again by --prune.
 */
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

const ORG = 'edge-org';
let sandbox: RunningSandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, config: { workspaces: { organizations: [{ name: ORG }] } } });
});
afterAll(async () => {
  await sandbox?.close();
});

const tmp = (prefix: string) => tempDir(prefix);

function roles(...names: string[]): string {
  const dir = tmp('converge-edge-manifest-');
  const docs = names.map(
    (n) => `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: ${n} }\nspec: { Description: edge }\n`,
  );
  writeFileSync(path.join(dir, 'roles.yaml'), docs.join('---\n'));
  return dir;
}

/** Registers a small service job straight on the scheduler, without Converge's marker. */
function registerByHand(id: string, image: string): Promise<Response> {
  return fetch(`${sandbox.url}/v1/jobs`, {
    method: 'POST',
    headers: { 'X-Nomad-Token': sandbox.rootToken },
    body: JSON.stringify({
      Job: {
        ID: id,
        Name: id,
        Type: 'service',
        Datacenters: ['dc1'],
        TaskGroups: [{ Name: 'web', Count: 1, Tasks: [{ Name: 't', Driver: 'docker', Config: { image } }] }],
      },
    }),
  });
}

/** A small service job's document, as a manifest declares it. */
function job(name: string): string {
  return `apiVersion: converge/v1\nkind: Job\nmetadata: { name: ${name} }\nspec:\n  Type: service\n  Datacenters: [dc1]\n  TaskGroups: [{ Name: web, Count: 1, Tasks: [{ Name: t, Driver: docker, Config: { image: "nginx:1" } }] }]\n`;
}

function env(extra: Record<string, string> = {}): Record<string, string> {
  return { ...sandbox.env(), CONVERGE_STATE_DIR: tmp('converge-edge-state-'), NO_COLOR: '1', ...extra };
}

async function roleId(name: string): Promise<string | undefined> {
  const res = await fetch(`${sandbox.url}/v1/acl/role/name/${name}`, {
    headers: { 'X-Consul-Token': sandbox.rootToken },
  });
  return res.status === 200 ? ((await res.json()) as { ID: string }).ID : undefined;
}

async function api(p: string): Promise<{ id: string; attributes: Record<string, unknown> }> {
  const res = await fetch(`${sandbox.url}/api/v2${p}`, {
    headers: { Authorization: `Bearer ${sandbox.rootToken}` },
  });
  expect(res.status, p).toBe(200);
  return ((await res.json()) as { data: { id: string; attributes: Record<string, unknown> } }).data;
}

/** Pushes a state file of anyone's making into a workspace, as `converge state push` does. */
async function pushState(workspace: string, doc: unknown): Promise<void> {
  const file = path.join(tmp('converge-edge-statefile-'), 'state.json');
  writeFileSync(file, JSON.stringify(doc));
  const created = await runCli(['workspace', 'show', `${ORG}/${workspace}`], env());
  if (created.code !== 0) {
    const res = await fetch(`${sandbox.url}/api/v2/organizations/${ORG}/workspaces`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${sandbox.rootToken}`,
        'Content-Type': 'application/vnd.api+json',
      },
      body: JSON.stringify({ data: { type: 'workspaces', attributes: { name: workspace } } }),
    });
    expect(res.status).toBe(201);
  }
  const pushed = await runCli(['state', 'push', `${ORG}/${workspace}`, file, '--force'], env());
  expect(pushed.code, pushed.stderr).toBe(0);
}

const terraformState = (extra: Record<string, unknown> = {}) => ({
  version: 4,
  serial: 3,
  lineage: '0f3c1c2e-0000-4000-8000-000000000001',
  outputs: {},
  resources: [],
  ...extra,
});

describe('a workspace that is not a Converge inventory', () => {
  it('is refused by name, by list, plan and apply alike, and is left as it was', async () => {
    await pushState('someone-elses', terraformState());
    const e = env({ CONVERGE_INVENTORY: `workspace:${ORG}/someone-elses` });
    for (const args of [
      ['inventory', 'list'],
      ['plan', '-f', roles('edge-x'), '--prune'],
      ['apply', '-f', roles('edge-x'), '--auto-approve'],
    ]) {
      const r = await runCli(args, e);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr + r.stdout).toContain(
        `workspace ${ORG}/someone-elses holds a state that is not a Converge inventory`,
      );
    }
    expect(await roleId('edge-x')).toBeUndefined();
    // Neither locked nor written: the state is still the one pushed above.
    const ws = await api(`/organizations/${ORG}/workspaces/someone-elses`);
    expect(ws.attributes.locked).toBe(false);
    const current = await api(`/workspaces/${ws.id}/current-state-version`);
    expect(current.attributes.serial).toBe(3);
  });

  it('refuses an inventory field of the wrong shape, naming the workspace', async () => {
    await pushState('forged', terraformState({ converge_inventory: { version: 2, objects: 'all of them' } }));
    const r = await runCli(['inventory', 'list'], env({ CONVERGE_INVENTORY: `workspace:${ORG}/forged` }));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`workspace ${ORG}/forged`);
  });
});

describe('a workspace inventory whose state the service answers with hostile fields', () => {
  it('refuses a lineage that is not a short text, naming the workspace, and writes nothing', async () => {
    await pushState(
      'long-lineage',
      terraformState({
        lineage: 'x'.repeat(5000),
        converge_inventory: { format: 'converge-inventory', format_version: 2, objects: {} },
      }),
    );
    const e = env({ CONVERGE_INVENTORY: `workspace:${ORG}/long-lineage` });
    const r = await runCli(['apply', '-f', roles('edge-lineage'), '--auto-approve'], e);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `workspace ${ORG}/long-lineage: its current state has a lineage that is not a short text`,
    );
    expect(await roleId('edge-lineage')).toBeUndefined();
  });
});

describe('converge inventory migrate --to file:PATH', () => {
  it('copies a workspace inventory into a file that later runs use', async () => {
    const shared = env({ CONVERGE_INVENTORY: `workspace:${ORG}/edge-back` });
    expect((await runCli(['apply', '-f', roles('edgem-a', 'edgem-b'), '--auto-approve'], shared)).code).toBe(
      0,
    );
    const file = path.join(tmp('converge-edge-file-'), 'inventory.json');
    const migrated = await runCli(['inventory', 'migrate', '--to', `file:${file}`], shared);
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(migrated.stdout).toContain('Copied 2 objects');

    const local = env({ CONVERGE_INVENTORY: `file:${file}` });
    const list = JSON.parse((await runCli(['inventory', 'list', '--json'], local)).stdout);
    expect(list.objects.map((o: { address: string }) => o.address)).toEqual([
      'AclRole/default/edgem-a',
      'AclRole/default/edgem-b',
    ]);
    // `show --json` prints an object as `list --json` does: one shape, the same field names.
    const shown = JSON.parse(
      (await runCli(['inventory', 'show', 'AclRole/default/edgem-a', '--json'], local)).stdout,
    ) as Record<string, unknown>;
    expect(shown).toEqual(list.objects[0]);
    expect(Object.keys(shown)).toEqual([
      'address',
      'kind',
      'key',
      'id',
      'owned',
      'origin',
      'write_only',
      'write_only_key',
    ]);
    const pruned = await runCli(['apply', '-f', roles('edgem-a'), '--prune', '--auto-approve'], local);
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(await roleId('edgem-b')).toBeUndefined();
  });
});

describe('an inventory workspace in an organization that does not exist', () => {
  it('is refused with the organization named, by migrate and apply alike, and nothing is written', async () => {
    const local = env();
    const dir = roles('edge-noorg');
    expect((await runCli(['apply', '-f', dir, '--auto-approve'], local)).code).toBe(0);
    const expected = `cannot create workspace no-such-org/inv to keep the inventory in: the workspaces service has no organization "no-such-org" this token can see (404)`;
    const migrated = await runCli(['inventory', 'migrate', '--to', 'workspace:no-such-org/inv'], local);
    expect([migrated.code, migrated.stderr]).toEqual([1, expect.stringContaining(expected)]);
    const applied = await runCli(
      ['apply', '-f', roles('edge-noorg-2'), '--auto-approve'],
      env({ CONVERGE_INVENTORY: 'workspace:no-such-org/inv' }),
    );
    expect([applied.code, applied.stderr]).toEqual([1, expect.stringContaining(expected)]);
    expect(await roleId('edge-noorg-2')).toBeUndefined();
  });
});

describe('converge inventory migrate between two files of one folder', () => {
  it('takes their one shared lock once, rather than waiting for itself on it', async () => {
    const folder = tmp('converge-edge-same-folder-');
    const [a, b] = [path.join(folder, 'a.json'), path.join(folder, 'b.json')];
    const fromA = env({ CONVERGE_INVENTORY: `file:${a}` });
    expect((await runCli(['apply', '-f', roles('edges-a'), '--auto-approve'], fromA)).code).toBe(0);
    const started = Date.now();
    const migrated = await runCli(
      ['inventory', 'migrate', '--to', `file:${b}`, '--lock-timeout', '5'],
      fromA,
    );
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(migrated.stdout).toContain('Copied 1 object');
    // Not the lock timeout waited out: the run never waited for a lock it held itself.
    expect(Date.now() - started).toBeLessThan(4_000);
    const list = await runCli(['inventory', 'list', '--json'], env({ CONVERGE_INVENTORY: `file:${b}` }));
    expect(JSON.parse(list.stdout).objects.map((o: { address: string }) => o.address)).toEqual([
      'AclRole/default/edges-a',
    ]);
    // The shared lock is released once the migration is over.
    expect(existsSync(path.join(folder, 'apply.lock'))).toBe(false);

    // The same folder through a symbolic link is the same lock.
    const link = path.join(tmp('converge-edge-link-'), 'inv');
    symlinkSync(folder, link);
    const throughLink = await runCli(
      ['inventory', 'migrate', '--to', `file:${path.join(link, 'c.json')}`, '--lock-timeout', '5'],
      fromA,
    );
    expect(throughLink.code, throughLink.stderr).toBe(0);
    expect(existsSync(path.join(folder, 'c.json'))).toBe(true);
  });
});

describe('converge export with a workspace inventory', () => {
  it('leaves out the workspace that holds the inventory, saying so', async () => {
    const e = env({ CONVERGE_INVENTORY: `workspace:${ORG}/edge-home` });
    expect((await runCli(['apply', '-f', roles('edgex-a'), '--auto-approve'], e)).code).toBe(0);
    const out = path.join(tmp('converge-edge-export-'), 'out');
    const r = await runCli(['export', '-o', out, '--kind', 'Workspace'], e);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`Left out Workspace/${ORG}/edge-home: it holds Converge's inventory`);
    const workspaces = path.join(out, 'Workspace.yaml');
    expect(existsSync(workspaces) ? readFileSync(workspaces, 'utf8') : '').not.toContain('edge-home');
  });
});

describe('an object Converge created, deleted by hand', () => {
  it('does not fail the plan: --prune has nothing to delete and names the stale record with the command to drop it', async () => {
    const e = env();
    expect((await runCli(['apply', '-f', roles('edged-a', 'edged-b'), '--auto-approve'], e)).code).toBe(0);
    const id = await roleId('edged-b');
    const del = await fetch(`${sandbox.url}/v1/acl/role/${id}`, {
      method: 'DELETE',
      headers: { 'X-Consul-Token': sandbox.rootToken },
    });
    expect(del.status).toBe(200);

    const dir = roles('edged-a');
    const plan = await runCli(['plan', '-f', dir, '--prune'], e);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain('No changes.');
    expect(plan.stdout).toContain(
      "Not found: 1 object the inventory records as Converge's no longer exists (deleted outside Converge, or a job stopped?); nothing to delete.",
    );
    expect(plan.stdout).toContain('  AclRole/default/edged-b\n');
    expect(plan.stdout).toContain('converge inventory forget ADDRESS --yes');
    const json = JSON.parse((await runCli(['plan', '-f', dir, '--prune', '--json'], e)).stdout);
    expect(json.pruned).toMatchObject({ count: 0, not_found: ['AclRole/default/edged-b'] });
    const markdown = await runCli(['plan', '-f', dir, '--prune', '--markdown'], e);
    expect(markdown.stdout).toContain('> - `AclRole/default/edged-b`');

    // Still declared: the plan creates it again, and says nothing is missing.
    const again = await runCli(['plan', '-f', roles('edged-a', 'edged-b'), '--prune'], e);
    expect(again.stdout).toContain('+ AclRole/default/edged-b');
    expect(again.stdout).not.toContain('Not found:');

    // Without --prune nothing was listed, so nothing is said.
    expect((await runCli(['plan', '-f', dir], e)).stdout).not.toContain('Not found:');

    // An apply with --prune goes through; forgetting the record ends the note.
    const applied = await runCli(['apply', '-f', dir, '--prune', '--auto-approve'], e);
    expect(applied.code, applied.stderr).toBe(0);
    expect((await runCli(['inventory', 'forget', 'AclRole/default/edged-b', '--yes'], e)).code).toBe(0);
    expect((await runCli(['plan', '-f', dir, '--prune'], e)).stdout).not.toContain('Not found:');
  });

  it("never prunes another's object that took the deleted one's name: the inventory's id is not its id", async () => {
    const e = env();
    expect((await runCli(['apply', '-f', roles('edger-a', 'edger-b'), '--auto-approve'], e)).code).toBe(0);
    const ours = await roleId('edger-b');
    const headers = { 'X-Consul-Token': sandbox.rootToken };
    expect((await fetch(`${sandbox.url}/v1/acl/role/${ours}`, { method: 'DELETE', headers })).status).toBe(
      200,
    );
    // Another team makes a role of the same name, by hand.
    const made = await fetch(`${sandbox.url}/v1/acl/role`, {
      method: 'PUT',
      headers,
      body: JSON.stringify({ Name: 'edger-b', Description: 'another team made this' }),
    });
    expect(made.status).toBe(200);
    const theirs = await roleId('edger-b');
    expect(theirs).not.toBe(ours);

    const dir = roles('edger-a');
    const plan = await runCli(['plan', '-f', dir, '--prune'], e);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).not.toContain('will be deleted');
    expect(plan.stdout).toContain("Not found: 1 object the inventory records as Converge's no longer exists");
    expect(plan.stdout).toContain('  AclRole/default/edger-b\n');
    const applied = await runCli(['apply', '-f', dir, '--prune', '--auto-approve'], e);
    expect(applied.code, applied.stderr).toBe(0);
    expect(await roleId('edger-b')).toBe(theirs);

    // Still declared, it is changed as the manifest says, and the plan says whose it is...
    const declared = roles('edger-a', 'edger-b');
    const plan2 = await runCli(['plan', '-f', declared], e);
    expect(plan2.stdout).toContain(
      `not the object the inventory records as Converge's (id ${ours}, gone): this one (id ${theirs}) was made outside Converge under the same name`,
    );
    expect((await runCli(['apply', '-f', declared, '--auto-approve'], e)).code).toBe(0);
    // ...but the apply does not make it Converge's: a later prune leaves it alone.
    const show = await runCli(['inventory', 'show', 'AclRole/default/edger-b'], e);
    expect(show.stdout + show.stderr).not.toContain(theirs);
    expect((await runCli(['apply', '-f', dir, '--prune', '--auto-approve'], e)).code).toBe(0);
    expect(await roleId('edger-b')).toBe(theirs);
  });
});

describe('a job made by hand that the manifest took over by updating it', () => {
  it('is never pruned: the update added the marker, and the inventory records Converge only updated it', async () => {
    const e = env();
    const token = { 'X-Nomad-Token': sandbox.rootToken };
    const made = await registerByHand('edge-hand-job', 'nginx:1');
    expect(made.status).toBe(200);
    const both = tmp('converge-edge-manifest-');
    writeFileSync(path.join(both, 'jobs.yaml'), `${job('edge-keep-job')}---\n${job('edge-hand-job')}`);
    const applied = await runCli(['apply', '-f', both, '--auto-approve'], e);
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    // The update gave it Converge's marker...
    const live = (await (await fetch(`${sandbox.url}/v1/job/edge-hand-job`, { headers: token })).json()) as {
      Meta?: Record<string, string>;
    };
    expect(live.Meta?.['converge-managed']).toBe('true');

    // ...but dropping it from the manifest does not delete it.
    const kept = tmp('converge-edge-manifest-');
    writeFileSync(path.join(kept, 'jobs.yaml'), job('edge-keep-job'));
    const plan = await runCli(['plan', '-f', kept, '--prune', '--json'], e);
    expect(plan.code, plan.stderr).toBe(0);
    const doc = JSON.parse(plan.stdout) as { changes: { address: string; action: string }[] };
    expect(doc.changes.filter((c) => c.action === 'delete').map((c) => c.address)).toEqual([]);
  });
});

describe('a saved plan that deletes a job someone registers again by hand before the apply', () => {
  it('is stale (exit 3), nothing applied: the job is still there, no longer one the plan would delete', async () => {
    const e = env();
    const both = tmp('converge-edge-manifest-');
    writeFileSync(path.join(both, 'jobs.yaml'), `${job('edge-saved-a')}---\n${job('edge-saved-b')}`);
    expect((await runCli(['apply', '-f', both, '--auto-approve'], e)).code).toBe(0);
    const less = tmp('converge-edge-manifest-');
    writeFileSync(path.join(less, 'jobs.yaml'), job('edge-saved-a'));
    const planFile = path.join(tmp('converge-edge-plan-'), 'p.plan');
    const planned = await runCli(['plan', '-f', less, '--prune', '-out', planFile], e);
    expect(planned.code, planned.stderr).toBe(0);
    expect(planned.stdout).toContain('- Job/default/edge-saved-b');

    // Someone registers it again by hand, without Converge's marker.
    const token = { 'X-Nomad-Token': sandbox.rootToken };
    const again = await registerByHand('edge-saved-b', 'theirs:2');
    expect(again.status).toBe(200);

    const applied = await runCli(['apply', planFile], e);
    expect(applied.code).toBe(3);
    expect(applied.stderr).toContain('Job/default/edge-saved-b: STALE: it changed since the plan was saved');
    expect(applied.stdout).not.toContain('Nothing left to delete');
    expect((await fetch(`${sandbox.url}/v1/job/edge-saved-b`, { headers: token })).status).toBe(200);
  });
});
