/**
 * Two manifests in one organization and namespace, each with its own inventory (the CI example's
 * folders): the ownership marker says a Converge made a workspace or job, not which manifest did.
 * `--prune` of one folder planned to delete the other's workspaces and stop its jobs, calling them
 * "created by Converge (ownership marker)"; and a job made by hand, adopted by one folder's update
 * (which adds the marker), was stopped by the other folder's prune. Only what the folder's own
 * inventory records is pruned; the rest is listed as not pruned.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlanJson } from '../../src/planner/render/json.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
});
afterAll(async () => sandbox?.close());

const workspace = (name: string) =>
  `apiVersion: converge/v1\nkind: Workspace\nmetadata: { name: ${name}, namespace: sandbox }\nspec: { description: ${name} }\n`;
const job = (name: string) => `apiVersion: converge/v1
kind: Job
metadata: { name: ${name}, namespace: default }
spec:
  Type: service
  Datacenters: [dc1]
  TaskGroups:
    - Name: g
      Count: 1
      Tasks:
        - { Name: t, Driver: docker, Config: { image: "app:1" }, Resources: { CPU: 10, MemoryMB: 10 } }
`;

/** A job registered by hand, outside Converge (no ownership marker). */
async function registerByHand(id: string): Promise<void> {
  const registered = await fetch(`${sandbox.url}/v1/jobs`, {
    method: 'POST',
    headers: { 'X-Nomad-Token': sandbox.rootToken, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      Job: {
        ID: id,
        Name: id,
        Type: 'service',
        Datacenters: ['dc1'],
        TaskGroups: [
          { Name: 'g', Count: 1, Tasks: [{ Name: 't', Driver: 'docker', Config: { image: 'a' } }] },
        ],
      },
    }),
  });
  expect(registered.status).toBe(200);
}

/** A folder of its own, with its own state folder (inventory), as one matrix entry of the CI example. */
function folder(name: string) {
  const dir = tempDir(`converge-${name}-`);
  const env = { ...sandbox.env(), NO_COLOR: '1', CONVERGE_STATE_DIR: tempDir(`converge-${name}-state-`) };
  const write = (...docs: string[]) => writeFileSync(path.join(dir, 'm.yaml'), docs.join('---\n'));
  const converge = async (...args: string[]) => {
    const r = await runCli([...args, '-f', dir], env);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    return r;
  };
  return { dir, write, converge };
}

describe('--prune with two inventories in one organization and namespace', () => {
  it("leaves the other folder's workspaces and jobs, and a hand-made job the other adopted, and lists them", async () => {
    const platform = folder('platform');
    const data = folder('data');
    platform.write(
      workspace('platform-web'),
      workspace('platform-api'),
      job('platform-worker'),
      job('platform-cron'),
    );
    await platform.converge('apply', '--auto-approve');

    // A job registered by hand, declared by `data` once (its update adds the marker), then dropped.
    await registerByHand('hand-job');
    data.write(workspace('data-lake'), job('hand-job'), job('data-etl'));
    await data.converge('apply', '--auto-approve');
    data.write(workspace('data-lake'), job('data-etl'));

    const json = JSON.parse((await data.converge('plan', '--prune', '--json')).stdout) as PlanJson;
    expect(json.summary.delete).toBe(0);
    expect(json.pruned.addresses).toEqual([]);
    // The hand-made job is in data's inventory as only updated: never its to delete, nor to list.
    expect(json.pruned.not_recorded).toEqual([
      'Job/default/platform-cron',
      'Job/default/platform-worker',
      'Workspace/sandbox/platform-api',
      'Workspace/sandbox/platform-web',
    ]);
    const text = (await data.converge('plan', '--prune')).stdout;
    expect(text).toContain(
      "Not pruned: 4 objects with Converge's ownership marker that this inventory does not record as Converge's",
    );
    expect(text).toContain('  Workspace/sandbox/platform-web\n');
    expect(text).not.toMatch(/will be deleted/);
    const markdown = (await data.converge('plan', '--prune', '--markdown')).stdout;
    expect(markdown).toContain('`Workspace/sandbox/platform-web`');

    // Each folder still prunes what its own inventory records.
    platform.write(workspace('platform-web'), job('platform-cron'));
    const own = JSON.parse((await platform.converge('plan', '--prune', '--json')).stdout) as PlanJson;
    expect(own.pruned.addresses).toEqual(['Job/default/platform-worker', 'Workspace/sandbox/platform-api']);
    const reasons = own.changes.filter((c) => c.action === 'delete').map((c) => c.reason);
    expect(reasons).toEqual([
      expect.stringMatching(/^created by Converge \(inventory and ownership marker\), among /),
      expect.stringMatching(/^created by Converge \(inventory and ownership marker\), among /),
    ]);
    // The other folder's objects are listed, not deleted, from this side too; so is the hand-made
    // job, marked by the other folder's update (it was stopped as "created by Converge").
    expect(own.pruned.not_recorded).toEqual([
      'Job/default/data-etl',
      'Job/default/hand-job',
      'Workspace/sandbox/data-lake',
    ]);
  });

  it('after an import, still prunes the jobs the folder created, and still lists the others', async () => {
    const other = folder('other');
    other.write(job('other-job'));
    await other.converge('apply', '--auto-approve');
    await registerByHand('adopted-job');
    const team = folder('importer');
    team.write(job('made-1'), job('made-2'), job('adopted-job'));
    await team.converge('apply', '--auto-approve', '--import', 'Job/default/adopted-job');
    // Both dropped, one job still declared in the namespace: the import's scope for its objects once
    // replaced the namespace's own, and made-1 was neither deleted nor listed.
    team.write(job('made-2'));
    const json = JSON.parse((await team.converge('plan', '--prune', '--json')).stdout) as PlanJson;
    expect(json.pruned.addresses).toEqual(['Job/default/adopted-job', 'Job/default/made-1']);
    expect(json.pruned.not_recorded).toContain('Job/default/other-job');
  });

  it("warns when an import adopts an object another inventory's Converge marked", async () => {
    const owner = folder('owner');
    owner.write(workspace('owner-ws'), job('owner-job'));
    await owner.converge('apply', '--auto-approve');
    const taker = folder('taker');
    taker.write(job('owner-job'));
    const imported = await taker.converge('import', 'Job/default/owner-job');
    expect(imported.stdout).toContain(
      "Warning: it carries Converge's ownership marker, but this inventory does not record it as Converge's: another manifest, with its own inventory, may manage it.",
    );
    expect(imported.stdout).toContain('converge inventory forget Job/default/owner-job --yes');
    // apply --import says the same.
    const other = folder('taker-2');
    other.write(workspace('owner-ws'));
    const applied = await other.converge('apply', '--auto-approve', '--import', 'Workspace/sandbox/owner-ws');
    expect(applied.stdout).toContain(
      "Warning: it carries Converge's ownership marker, but this inventory does not record it as Converge's",
    );
    // Its own folder's import of what it made says nothing of the kind.
    owner.write(workspace('owner-ws'), job('owner-job'));
    const own = await owner.converge('import', 'Job/default/owner-job');
    expect(own.stdout).not.toContain('Warning');
  });

  it("refuses to delete another folder's inventory workspace from a manifest", async () => {
    const dir = tempDir('converge-inventory-home-');
    writeFileSync(path.join(dir, 'm.yaml'), workspace('kept-by-d'));
    const d = {
      ...sandbox.env(),
      NO_COLOR: '1',
      CONVERGE_STATE_DIR: tempDir('converge-d-state-'),
      CONVERGE_INVENTORY: 'workspace:sandbox/converge-d',
    };
    const applied = await runCli(['apply', '-f', dir, '--auto-approve'], d);
    expect(applied.code, applied.stderr).toBe(0);
    const other = folder('c');
    other.write(
      'apiVersion: converge/v1\nkind: Workspace\nmetadata: { name: converge-d, namespace: sandbox, ensure: absent }\nspec: { deletion: force }\n',
    );
    const plan = await runCli(['plan', '-f', other.dir], { ...sandbox.env(), NO_COLOR: '1' });
    expect(plan.code).toBe(1);
    expect(plan.stdout + plan.stderr).toContain(
      'workspace converge-d holds a Converge inventory (its description says so): deleting it from a manifest drops the records',
    );
    const apply = await runCli(['apply', '-f', other.dir, '--auto-approve'], {
      ...sandbox.env(),
      NO_COLOR: '1',
    });
    expect(apply.code).toBe(1);
    const list = await runCli(['inventory', 'list'], d);
    expect(list.stdout).toContain('Workspace/sandbox/kept-by-d');
    // Adopted by another folder and then dropped: its prune lists it, and still prunes the rest.
    const adopter = folder('adopter');
    // Declared without a description: the one the inventory wrote is what marks it.
    adopter.write(
      'apiVersion: converge/v1\nkind: Workspace\nmetadata: { name: converge-d, namespace: sandbox }\nspec: {}\n',
      workspace('adopter-ws'),
      workspace('adopter-old'),
    );
    await adopter.converge('apply', '--auto-approve', '--import', 'Workspace/sandbox/converge-d');
    adopter.write(workspace('adopter-ws'));
    const pruned = JSON.parse((await adopter.converge('plan', '--prune', '--json')).stdout) as PlanJson;
    // (This sandbox's other tests left a workspace this folder made too: only its own are pruned.)
    expect(pruned.pruned.addresses).toContain('Workspace/sandbox/adopter-old');
    expect(pruned.pruned.addresses).not.toContain('Workspace/sandbox/converge-d');
    expect(pruned.pruned.refused).toEqual(['Workspace/sandbox/converge-d']);
    const text = (await adopter.converge('plan', '--prune')).stdout;
    expect(text).toContain('no manifest may delete (a workspace that holds a Converge inventory');
    expect(text).toContain('converge inventory forget ADDRESS --yes');
  });

  it('lists a job and a workspace deleted by hand under Not found', async () => {
    const team = folder('gone');
    team.write(workspace('gone-ws'), workspace('gone-ws-kept'), job('gone-job'), job('gone-job-kept'));
    await team.converge('apply', '--auto-approve');
    const headers = {
      Authorization: `Bearer ${sandbox.rootToken}`,
      'Content-Type': 'application/vnd.api+json',
    };
    const deleted = await fetch(`${sandbox.url}/api/v2/organizations/sandbox/workspaces/gone-ws`, {
      method: 'DELETE',
      headers,
    });
    expect(deleted.status).toBe(204);
    const purged = await fetch(`${sandbox.url}/v1/job/gone-job?purge=true`, {
      method: 'DELETE',
      headers: { 'X-Nomad-Token': sandbox.rootToken },
    });
    expect(purged.status).toBe(200);
    team.write(workspace('gone-ws-kept'), job('gone-job-kept'));
    const json = JSON.parse((await team.converge('plan', '--prune', '--json')).stdout) as PlanJson;
    expect(json.pruned.not_found).toEqual(['Job/default/gone-job', 'Workspace/sandbox/gone-ws']);
    expect(json.pruned.addresses).toEqual([]);
    // Made again under the name, marked as a Converge's, by another: another id, so Not found, and
    // listed there alone.
    const remade = await fetch(`${sandbox.url}/api/v2/organizations/sandbox/workspaces`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        data: { type: 'workspaces', attributes: { name: 'gone-ws', 'source-name': 'converge' } },
      }),
    });
    expect(remade.status).toBe(201);
    const again = JSON.parse((await team.converge('plan', '--prune', '--json')).stdout) as PlanJson;
    expect(again.pruned.not_found).toContain('Workspace/sandbox/gone-ws');
    expect(again.pruned.not_recorded).not.toContain('Workspace/sandbox/gone-ws');
    expect(again.pruned.addresses).toEqual([]);
  });

  it("lists a job gone by hand once: Not found when an import's scope reached it, Not pruned when none did", async () => {
    await registerByHand('solo-imported');
    const solo = folder('solo');
    solo.write(workspace('solo-ws'), job('solo-imported'), job('solo-made'));
    await solo.converge('apply', '--auto-approve', '--import', 'Job/default/solo-imported');
    for (const id of ['solo-imported', 'solo-made']) {
      const purged = await fetch(`${sandbox.url}/v1/job/${id}?purge=true`, {
        method: 'DELETE',
        headers: { 'X-Nomad-Token': sandbox.rootToken },
      });
      expect(purged.status).toBe(200);
    }
    // No job declared in the namespace any more: only the import's scope, for imported objects, is left.
    solo.write(workspace('solo-ws'));
    const json = JSON.parse((await solo.converge('plan', '--prune', '--json')).stdout) as PlanJson;
    expect(json.pruned.not_found).toEqual(['Job/default/solo-imported']);
    expect(json.pruned.out_of_scope).toEqual(['Job/default/solo-made']);
  });

  it('a runner without the inventory prunes no marked object: it lists them', async () => {
    const team = folder('team');
    team.write(workspace('team-a'), workspace('team-b'));
    await team.converge('apply', '--auto-approve');
    const fresh = folder('team');
    fresh.write(workspace('team-a'));
    const json = JSON.parse((await fresh.converge('plan', '--prune', '--json')).stdout) as PlanJson;
    expect(json.pruned.addresses).toEqual([]);
    expect(json.pruned.not_recorded).toContain('Workspace/sandbox/team-b');
  });
});
