/**
 * `converge import ADDRESS` and `apply --import ADDRESS` against the sandbox: an object made outside
 * Converge, declared in the manifest, is recorded in the inventory with its live id; one the manifest
 * does not declare, or that does not exist, is refused with a reason, and nothing is recorded.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { registryService } from '../../src/clients/registry/definition.js';
import { schedulerService } from '../../src/clients/scheduler/definition.js';
import { workspacesService } from '../../src/clients/workspaces/definition.js';
import { connect } from '../../src/engine/workflow.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

let sandbox: RunningSandbox;
let env: Record<string, string | undefined>;
let dir: string;
let liveId: string;

const role = (name: string, description: string) =>
  `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: ${name} }\nspec: { Description: ${description} }\n`;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, token: 'import-root-token-3c81fe' });
  const connections = connect(undefined, { env: sandbox.env() });
  try {
    const created = await connections.client(registryService).createRole(
      {
        Name: 'by-hand',
        Description: 'made by hand',
        Policies: [],
        ServiceIdentities: [],
        NodeIdentities: [],
      },
      { namespace: 'default' },
    );
    liveId = created.ID;
  } finally {
    await connections.close();
  }
  dir = tempDir('converge-import-');
  writeFileSync(
    path.join(dir, 'roles.yaml'),
    `${role('by-hand', 'managed now')}---\n${role('not-yet', 'x')}`,
  );
});
afterAll(async () => {
  await sandbox?.close();
});
beforeEach(() => {
  env = {
    ...sandbox.env(),
    NO_COLOR: '1',
    CONVERGE_STATE_DIR: tempDir('converge-import-state-'),
  };
});

/** The objects the inventory records as Converge's own (what prune may delete), by address. */
function managed(): Record<string, { kind: string; id?: string }> {
  const file = path.join(env.CONVERGE_STATE_DIR!, 'inventory.json');
  if (!existsSync(file)) return {};
  type Entry = { kind: string; id?: string; owned: boolean };
  const objects =
    (JSON.parse(readFileSync(file, 'utf8')) as { objects?: Record<string, Entry> }).objects ?? {};
  return Object.fromEntries(Object.entries(objects).filter(([, e]) => e.owned));
}

describe('converge import', () => {
  it('records a declared live object with its id, once', async () => {
    const r = await runCli(['import', 'AclRole/default/by-hand', '-f', dir], env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Imported AclRole/default/by-hand (id ${liveId}): Converge now manages it.`);
    // The next command as it can be run: plan needs the manifest (it has no default).
    expect(r.stdout).toContain(`Run \`converge plan -f ${dir}\` to see how the live objects differ`);
    expect(managed()['AclRole/default/by-hand']).toMatchObject({ kind: 'AclRole', id: liveId });

    const again = await runCli(['import', 'AclRole/default/by-hand', '-f', dir], env);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('AclRole/default/by-hand (id');
    expect(again.stdout).toContain('is already in the inventory');
  });

  it('refuses an object the manifest does not declare, naming the closest', async () => {
    const r = await runCli(['import', 'AclRole/default/by-hnd', '-f', dir], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('cannot import AclRole/default/by-hnd: the manifest does not declare it');
    expect(r.stderr).toContain('Declared addresses closest to it: AclRole/default/by-hand');
    expect(r.stderr).toContain('`converge export` writes live objects as manifest documents.');
    expect(managed()).toEqual({});
  });

  it('refuses an object that does not exist', async () => {
    const r = await runCli(['import', 'AclRole/default/not-yet', '-f', dir], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      'cannot import AclRole/default/not-yet: no such object on the registry service',
    );
    expect(managed()).toEqual({});
  });

  it('takes globs as --target does: imports what is live, leaves what is not there yet', async () => {
    const r = await runCli(['import', 'AclRole/default/*', '-f', dir], env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Imported AclRole/default/by-hand (id ${liveId}): Converge now manages it.`);
    expect(r.stdout).toContain(
      'Left AclRole/default/not-yet: no such object on its service yet (an apply creates it).',
    );
    expect(Object.keys(managed())).toEqual(['AclRole/default/by-hand']);
    const none = await runCli(['import', 'Job/**', '-f', dir], env);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(
      'cannot import Job/**: the pattern matches no object the manifest declares',
    );
  });

  it('treats a hostile address as an undeclared one', async () => {
    const r = await runCli(['import', '../../__proto__/constructor', '-f', dir], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('the manifest does not declare it');
    expect(managed()).toEqual({});
  });
});

describe('apply --import', () => {
  it('adopts before planning, then applies the manifest to the adopted object', async () => {
    const r = await runCli(
      [
        'apply',
        '-f',
        dir,
        '--auto-approve',
        '--import',
        'AclRole/default/by-hand',
        '--target',
        'AclRole/default/by-hand',
      ],
      env,
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Imported AclRole/default/by-hand (id ${liveId}).`);
    expect(r.stdout).toContain('~ AclRole/default/by-hand');
    expect(managed()['AclRole/default/by-hand']?.id).toBe(liveId);
  });
});

describe('converge import of objects made outside Converge, on services that mark what Converge owns', () => {
  const JOB =
    'job "imp-job" {\n  datacenters = ["dc1"]\n  group "g" {\n    task "t" {\n      driver = "exec"\n      config { command = "/bin/true" }\n    }\n  }\n}\n';
  let jobDir: string;

  beforeAll(async () => {
    const connections = connect(undefined, { env: sandbox.env() });
    try {
      const scheduler = connections.client(schedulerService);
      await scheduler.registerJob(await scheduler.parseJob(JOB), { namespace: 'default' });
      await connections
        .client(workspacesService)
        .createWorkspace(sandbox.env().CONVERGE_WORKSPACES_ORGANIZATION!, {
          name: 'imp-ws',
          description: 'made by hand',
          'execution-mode': 'local',
        });
    } finally {
      await connections.close();
    }
    jobDir = tempDir('converge-import-job-');
    writeFileSync(path.join(jobDir, 'imp-job.nomad.hcl'), JOB);
    writeFileSync(
      path.join(jobDir, 'm.yaml'),
      `apiVersion: converge/v1\nkind: Job\nmetadata: { name: imp-job, namespace: default }\nspec: { specFile: imp-job.nomad.hcl }\n---\n` +
        `apiVersion: converge/v1\nkind: Workspace\nmetadata: { name: imp-ws }\nspec: { description: made by hand, execution-mode: local }\n`,
    );
  });

  it('says the next plan adds the ownership marker to a job, which that plan then shows and its apply writes', async () => {
    const r = await runCli(['import', 'Job/default/imp-job', '-f', jobDir], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      "It lacks Converge's ownership marker: the next plan adds Meta.converge-managed (an update), and that apply writes it.",
    );
    const plan = await runCli(
      ['plan', '-f', jobDir, '--target', 'Job/default/imp-job', '--detailed-exitcode'],
      env,
    );
    expect(plan.code, plan.stdout + plan.stderr).toBe(2);
    expect(plan.stdout).toContain('~ Job/default/imp-job');
    expect(plan.stdout).toContain('converge-managed');
    const applied = await runCli(
      ['apply', '-f', jobDir, '--target', 'Job/default/imp-job', '--auto-approve'],
      env,
    );
    expect(applied.code, applied.stderr).toBe(0);
    const after = await runCli(
      ['plan', '-f', jobDir, '--target', 'Job/default/imp-job', '--detailed-exitcode'],
      env,
    );
    expect(after.code, after.stdout).toBe(0);
    // Marked now: a second import has nothing more to say about it.
    const again = await runCli(['import', 'Job/default/imp-job', '-f', jobDir], env);
    expect(again.stdout).not.toContain('ownership marker');
  });

  it('says a workspace made elsewhere keeps no marker, and prunes it through the inventory once dropped', async () => {
    const org = sandbox.env().CONVERGE_WORKSPACES_ORGANIZATION!;
    const r = await runCli(['import', `Workspace/${org}/imp-ws`, '-f', jobDir], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('which only a create sets: the inventory records it as adopted');
    // The manifest drops the workspace (the job stays): the adopted, unmarked workspace is pruned.
    const dropped = tempDir('converge-import-ws-dropped-');
    writeFileSync(path.join(dropped, 'imp-job.nomad.hcl'), JOB);
    writeFileSync(
      path.join(dropped, 'm.yaml'),
      `apiVersion: converge/v1\nkind: Job\nmetadata: { name: imp-job, namespace: default }\nspec: { specFile: imp-job.nomad.hcl }\n`,
    );
    // Another project, with its own inventory, created a workspace in the same organization: it
    // carries the ownership marker, but the import's scope is for the imported workspace alone.
    const other = tempDir('converge-import-other-project-');
    writeFileSync(
      path.join(other, 'm.yaml'),
      `apiVersion: converge/v1\nkind: Workspace\nmetadata: { name: other-team-ws }\nspec: { description: theirs }\n`,
    );
    const theirs = await runCli(['apply', '-f', other, '--auto-approve'], {
      ...env,
      CONVERGE_STATE_DIR: tempDir('converge-import-other-state-'),
    });
    expect(theirs.code, theirs.stderr).toBe(0);
    const plan = await runCli(['plan', '-f', dropped, '--prune', '--allow-empty', '--json'], env);
    const json = JSON.parse(plan.stdout) as {
      changes: { address: string; action: string; reason?: string }[];
    };
    const deletion = json.changes.find((c) => c.address === `Workspace/${org}/imp-ws`);
    expect(deletion?.action).toBe('delete');
    expect(deletion?.reason).toContain('adopted by import (inventory)');
    expect(json.changes.filter((c) => c.action === 'delete').map((c) => c.address)).toEqual([
      `Workspace/${org}/imp-ws`,
    ]);
    // The imported job took the marker on its apply (the first test): dropped, it is still the
    // import's, and its reason says so rather than the marker's namespace-wide one.
    expect((await runCli(['import', 'Job/default/imp-job', '-f', jobDir], env)).code).toBe(0);
    const noJob = tempDir('converge-import-job-dropped-');
    writeFileSync(
      path.join(noJob, 'm.yaml'),
      `apiVersion: converge/v1\nkind: Workspace\nmetadata: { name: imp-ws }\nspec: { description: made by hand, execution-mode: local }\n`,
    );
    const jobPlan = await runCli(['plan', '-f', noJob, '--prune', '--allow-empty', '--json'], env);
    const jobDeletion = (
      JSON.parse(jobPlan.stdout) as { changes: { address: string; action: string; reason?: string }[] }
    ).changes.find((c) => c.address === 'Job/default/imp-job');
    expect(jobDeletion?.action).toBe('delete');
    expect(jobDeletion?.reason).toContain('adopted by import (inventory)');
  });

  it('says nothing of a marker for a kind that has none (roles are known by the inventory alone)', async () => {
    const r = await runCli(['import', 'AclRole/default/by-hand', '-f', dir], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toContain('marker');
  });
});

describe('how an owned object came to be Converge’s', () => {
  it('is "adopted with converge import" in inventory show and the prune reason, not "created by Converge"', async () => {
    expect((await runCli(['import', 'AclRole/default/by-hand', '-f', dir], env)).code).toBe(0);
    const shown = await runCli(['inventory', 'show', 'AclRole/default/by-hand'], env);
    expect(shown.stdout).toContain('yes: adopted with `converge import`, --prune may delete it');
    expect(shown.stdout).not.toContain('created by Converge');
    const json = JSON.parse(
      (await runCli(['inventory', 'show', 'AclRole/default/by-hand', '--json'], env)).stdout,
    );
    expect(json.origin).toBe('imported');

    // A manifest that no longer declares it, but still declares roles.
    const without = tempDir('converge-import-dropped-');
    writeFileSync(path.join(without, 'roles.yaml'), role('not-yet', 'x'));
    const plan = await runCli(['plan', '-f', without, '--prune'], env);
    expect(plan.stdout).toContain('(adopted by import (inventory) and no longer in the manifest)');
    expect(plan.stdout).not.toContain('created by Converge (inventory)');
  });

  it('reads an owned entry recorded before origins were as "created by Converge"', async () => {
    const file = path.join(env.CONVERGE_STATE_DIR!, 'inventory.json');
    const key = { kind: 'AclRole', name: 'old-entry', namespace: 'default' };
    writeFileSync(
      file,
      JSON.stringify({
        format: 'converge-inventory',
        format_version: 2,
        objects: { 'AclRole/default/old-entry': { kind: 'AclRole', key, owned: true, writeOnly: {} } },
      }),
    );
    const shown = await runCli(['inventory', 'show', 'AclRole/default/old-entry'], env);
    expect(shown.stdout).toContain('yes: created by Converge, --prune may delete it');
  });

  it('refuses an inventory whose origin is anything else', async () => {
    const file = path.join(env.CONVERGE_STATE_DIR!, 'inventory.json');
    const key = { kind: 'AclRole', name: 'odd', namespace: 'default' };
    writeFileSync(
      file,
      JSON.stringify({
        format: 'converge-inventory',
        format_version: 2,
        objects: {
          'AclRole/default/odd': { kind: 'AclRole', key, owned: true, origin: '<script>', writeOnly: {} },
        },
      }),
    );
    const r = await runCli(['inventory', 'show', 'AclRole/default/odd'], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('"origin" must be "created" or "imported"');
  });
});
