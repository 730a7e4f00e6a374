import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { CLI, converge, manifestDir } from './helpers.js';
import { forward, hostileServer } from '../support/hostile.js';
import { runCli } from '../support/run-cli.js';

let sandbox: RunningSandbox;
let env: Record<string, string>;
let bobEnv: Record<string, string>;

const ORG = 'acme';

function state(serial: number, lineage: string, resources = 1): string {
  return `${JSON.stringify(
    {
      version: 4,
      terraform_version: '1.9.8',
      serial,
      lineage,
      outputs: { url: { value: 'https://x.test', type: 'string' } },
      resources: Array.from({ length: resources }, (_, i) => ({
        mode: 'managed',
        type: 'null_resource',
        name: `r${i}`,
        provider: 'provider["registry.terraform.io/hashicorp/null"]',
        instances: [{ schema_version: 0, attributes: { id: String(i) } }],
      })),
    },
    null,
    2,
  )}\n`;
}

const LOCKS_ORG = 'acme-locks';

function workspace(name: string, spec: string, extra = '', org = ORG): string {
  return `apiVersion: converge/v1
kind: Workspace
metadata:
  name: ${name}
  namespace: ${org}
${extra}spec:
${spec
  .split('\n')
  .map((l) => `  ${l}`)
  .join('\n')}
`;
}

async function api(
  method: string,
  p: string,
  body?: unknown,
  token = sandbox.rootToken,
): Promise<{ status: number; json: { data: { id: string; attributes: Record<string, unknown> } } }> {
  const res = await fetch(`${sandbox.url}/api/v2${p}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/vnd.api+json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

async function find(name: string) {
  const r = await api('GET', `/organizations/${ORG}/workspaces/${name}`);
  return r.status === 200 ? r.json.data : undefined;
}

/** A workspace Converge made (as root), then locked by bob, with a reason or none. */
async function madeThenLockedByBob(name: string, spec: string, reason?: string): Promise<void> {
  const made = manifestDir({ 'ws.yaml': workspace(name, spec) });
  expect((await converge(['apply', '-f', made, '--auto-approve'], env)).code).toBe(0);
  const lock = ['workspace', 'lock', `${ORG}/${name}`, ...(reason === undefined ? [] : ['--reason', reason])];
  expect((await converge(lock, bobEnv)).code).toBe(0);
}

async function show(name: string) {
  const found = await find(name);
  if (!found) throw new Error(`workspace ${name} does not exist`);
  return found;
}

beforeAll(async () => {
  sandbox = await startSandbox({
    port: 0,
    config: {
      workspaces: {
        organizations: [
          {
            name: ORG,
            projects: ['platform'],
            agentPools: [{ name: 'pool-1', id: 'apool-1' }],
            teams: [{ name: 'devs', access: { '*': { runs: 'read', lock: true, stateVersions: 'write' } } }],
          },
          // Its own organization, so that its --prune sees no other test's workspaces.
          { name: LOCKS_ORG },
        ],
      },
      tokens: [{ name: 'bob', secret: 'bob-token', workspaces: { user: 'bob', teams: { [ORG]: ['devs'] } } }],
    },
  });
  env = { ...sandbox.env(), CONVERGE_WORKSPACES_ORGANIZATION: ORG };
  bobEnv = { ...env, CONVERGE_WORKSPACES_TOKEN: 'bob-token' };
});

afterAll(async () => {
  await sandbox?.close();
});

describe('Workspace objects', () => {
  it('creates workspaces, seeds state once, locks declaratively, then plans clean', async () => {
    const dir = manifestDir({
      'ws.yaml': [
        workspace(
          'cli-app',
          'description: app\nexecution-mode: local\ntag-names: [b, a]\nproject: { name: platform }\nstate: app.tfstate',
        ),
        workspace('cli-frozen', 'locked: true\nlock-reason: freeze'),
      ].join('---\n'),
      'app.tfstate': state(3, 'lineage-app'),
    });

    const plan = await converge(['plan', '-f', dir], env);
    expect(plan.code).toBe(0);
    expect(plan.stdout).toContain('+ Workspace/acme/cli-app');
    expect(plan.stdout).toContain('+ state');
    expect(plan.stdout).toContain('app.tfstate (serial 3, lineage lineage-app)');

    const applied = await converge(['apply', '-f', dir, '--auto-approve'], env);
    expect(applied.stderr).toBe('');
    expect(applied.code).toBe(0);

    const app = await show('cli-app');
    expect(app.attributes['source-name']).toBe('converge');
    expect(app.attributes['execution-mode']).toBe('local');
    expect(app.attributes['resource-count']).toBe(1);
    expect(app.attributes.locked).toBe(false);
    const frozen = await show('cli-frozen');
    expect(frozen.attributes.locked).toBe(true);

    const again = await converge(['plan', '-f', dir, '--detailed-exitcode'], env);
    expect(again.stdout).toContain('No changes.');
    expect(again.code).toBe(0);
  });

  it('reads many workspaces with one list request, and names projects with one project list', async () => {
    const docs = Array.from({ length: 12 }, (_, i) =>
      workspace(`cli-many-${i}`, 'project: { name: platform }'),
    );
    const dir = manifestDir({ 'ws.yaml': docs.join('---\n') });
    const plan = JSON.parse((await converge(['plan', '-f', dir, '--json'], env)).stdout);
    expect(plan.summary.create).toBe(12);
    // One project list (plan-time check) and one workspace list page.
    expect(plan.requests).toEqual({ workspaces: 2 });
  });

  it('shows a setting changed in the UI as drift and puts it back', async () => {
    const dir = manifestDir({ 'ws.yaml': workspace('cli-drift', 'description: d') });
    await converge(['apply', '-f', dir, '--auto-approve'], env);
    const live = await show('cli-drift');
    await api('PATCH', `/workspaces/${live.id}`, {
      data: { type: 'workspaces', attributes: { 'auto-apply': true } },
    });
    const plan = await converge(['plan', '-f', dir, '--json'], env);
    const change = JSON.parse(plan.stdout).changes[0];
    expect(change.action).toBe('update');
    expect(change.diffs).toEqual([{ path: 'auto-apply', op: 'change', before: true, after: false }]);
    expect((await converge(['apply', '-f', dir, '--auto-approve'], env)).code).toBe(0);
    expect((await show('cli-drift')).attributes['auto-apply']).toBe(false);
  });

  it('settles an agent workspace with assessments on: an unrelated change leaves both as declared', async () => {
    const spec = (description: string) =>
      `description: ${description}\nexecution-mode: agent\nagent-pool-id: apool-1\nassessments-enabled: true`;
    const dir = manifestDir({ 'ws.yaml': workspace('cli-agent', spec('first')) });
    expect((await converge(['apply', '-f', dir, '--auto-approve'], env)).code).toBe(0);
    // The pool is reported as a relationship: read as an attribute, every plan set it again.
    expect((await converge(['plan', '-f', dir, '--detailed-exitcode'], env)).code).toBe(0);
    // An update that left assessments-enabled out switched it off (its update default is false).
    const changed = manifestDir({ 'ws.yaml': workspace('cli-agent', spec('second')) });
    const plan = await converge(['plan', '-f', changed, '--json'], env);
    expect(JSON.parse(plan.stdout).changes[0].diffs).toEqual([
      { path: 'description', op: 'change', before: 'first', after: 'second' },
    ]);
    expect((await converge(['apply', '-f', changed, '--auto-approve'], env)).code).toBe(0);
    expect((await show('cli-agent')).attributes['assessments-enabled']).toBe(true);
    expect((await converge(['plan', '-f', changed, '--detailed-exitcode'], env)).code).toBe(0);
  });

  it('pushes a newer serial of the same lineage, refuses another lineage, and leaves the lock free', async () => {
    const dir = manifestDir({
      'ws.yaml': workspace('cli-seed', 'state: s.tfstate'),
      's.tfstate': state(5, 'L'),
    });
    expect((await converge(['apply', '-f', dir, '--auto-approve'], env)).code).toBe(0);

    writeFileSync(path.join(dir, 's.tfstate'), state(6, 'L', 2));
    const newer = await converge(['plan', '-f', dir, '--json'], env);
    expect(JSON.parse(newer.stdout).changes[0].diffs).toEqual([
      {
        path: 'state',
        op: 'change',
        before: 'serial 5, lineage L',
        after: 's.tfstate (serial 6, lineage L)',
      },
    ]);
    expect((await converge(['apply', '-f', dir, '--auto-approve'], env)).code).toBe(0);
    expect((await show('cli-seed')).attributes['resource-count']).toBe(2);
    expect((await show('cli-seed')).attributes.locked).toBe(false);

    const file = path.join(dir, 'ws.yaml');
    writeFileSync(path.join(dir, 's.tfstate'), state(9, 'other-lineage'));
    const other = await converge(['apply', '-f', dir, '--auto-approve'], env);
    expect(other.code).toBe(1);
    expect(other.stdout).toContain(
      `${file}:7:10: state file s.tfstate has lineage other-lineage, but the workspace's state has lineage L`,
    );

    writeFileSync(path.join(dir, 's.tfstate'), state(6, 'L', 3));
    const sameSerial = await converge(['plan', '-f', dir], env);
    expect(sameSerial.code).toBe(1);
    expect(sameSerial.stdout).toContain("has serial 6 like the workspace's state, but different content");
    expect((await show('cli-seed')).attributes['resource-count']).toBe(2);
  });

  it('releases a push lock its own user left on this host once that process is gone, and names one still running', async () => {
    const dir = manifestDir({
      'ws.yaml': workspace('cli-stale', 'state: s.tfstate'),
      's.tfstate': state(1, 'T'),
    });
    expect((await converge(['apply', '-f', dir, '--auto-approve'], env)).code).toBe(0);
    const id = (await show('cli-stale')).id;
    // A push quit at once between its lock and its unlock: the lock stays, with the push's reason.
    const child = spawn(process.execPath, ['-e', '0']);
    await once(child, 'exit');
    const namespace = /\d+/.exec(readlinkSync('/proc/self/ns/pid'))![0];
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const pushReason = (pid: number, ns: string | null = namespace, bootId = boot) =>
      `converge: pushing s.tfstate${ns ? ` (pid namespace ${ns}, boot ${bootId})` : ''} on host ${os.hostname()}, pid ${pid}, since 2026-01-01T00:00:00.000Z`;
    const lock = (reason: string) => api('POST', `/workspaces/${id}/actions/lock`, { reason });
    const unlock = () => api('POST', `/workspaces/${id}/actions/unlock`);

    // Gone, but named in another PID namespace (a container sharing the host name), on another
    // machine, or in none (an older Converge): its pid means nothing here, never taken for gone.
    writeFileSync(path.join(dir, 's.tfstate'), state(2, 'T', 2));
    // Another machine of the same host name has another boot id.
    const otherBoot = '00000000-0000-4000-8000-000000000000';
    for (const reason of [
      pushReason(child.pid!, '1'),
      pushReason(child.pid!, null),
      pushReason(child.pid!, namespace, otherBoot),
    ]) {
      expect((await lock(reason)).status).toBe(200);
      const kept = await converge(['apply', '-f', dir, '--auto-approve'], env);
      expect(kept.code, kept.stdout + kept.stderr).toBe(1);
      expect((await show('cli-stale')).attributes.locked).toBe(true);
      expect((await unlock()).status).toBe(200);
    }

    expect((await lock(pushReason(child.pid!))).status).toBe(200);
    const plan = await converge(['plan', '-f', dir], env);
    expect(plan.stdout).toMatch(
      /~ locked += true -> false +# left by a Converge state push that did not finish; its process is gone/,
    );
    const applied = await converge(['apply', '-f', dir, '--auto-approve'], env);
    expect(applied.code).toBe(0);
    expect((await show('cli-stale')).attributes['resource-count']).toBe(2);
    expect((await show('cli-stale')).attributes.locked).toBe(false);

    // The push had landed before its process went: nothing to push, the lock is released all the same.
    expect((await lock(pushReason(child.pid!))).status).toBe(200);
    expect((await converge(['plan', '-f', dir, '--detailed-exitcode'], env)).code).toBe(2);
    expect((await converge(['apply', '-f', dir, '--auto-approve'], env)).code).toBe(0);
    expect((await show('cli-stale')).attributes.locked).toBe(false);
    expect((await converge(['plan', '-f', dir, '--detailed-exitcode'], env)).code).toBe(0);

    // A holder still running (this test's own process) may be mid-push: its lock is left alone.
    expect((await lock(pushReason(process.pid))).status).toBe(200);
    writeFileSync(path.join(dir, 's.tfstate'), state(3, 'T', 3));
    const refused = await converge(['apply', '-f', dir, '--auto-approve'], env);
    expect(refused.code).toBe(1);
    expect(refused.stdout + refused.stderr).toContain(
      `Once that run is gone: \`converge workspace unlock ${ORG}/cli-stale\``,
    );
    expect((await show('cli-stale')).attributes['resource-count']).toBe(2);
    expect((await show('cli-stale')).attributes.locked).toBe(true);
  });

  it('plans no change, with a note, once the seeded workspace has moved on from the state file', async () => {
    const dir = manifestDir({
      'ws.yaml': workspace('cli-moved', 'state: seed.tfstate'),
      'seed.tfstate': state(3, 'M'),
      'later.tfstate': state(7, 'M', 2),
    });
    expect((await converge(['apply', '-f', dir, '--auto-approve'], env)).code).toBe(0);
    // The workspace's own runs continue the lineage; here `state push` stands in for them.
    const pushed = await converge(
      ['state', 'push', `${ORG}/cli-moved`, path.join(dir, 'later.tfstate')],
      env,
    );
    expect(pushed.code).toBe(0);

    const note =
      "state: the workspace's state (serial 7) has moved on from state file seed.tfstate (serial 3); the seed is not pushed again";
    const plan = await converge(['plan', '-f', dir], env);
    expect(plan.stderr).toBe('');
    expect(plan.code).toBe(0);
    expect(plan.stdout).toContain('No changes.');
    expect(plan.stdout).toContain('# Workspace "cli-moved" in organization acme is up to date');
    expect(plan.stdout).toMatch(/ {4}Workspace\/acme\/cli-moved {2}\(id ws-\w+\)\n/);
    expect(plan.stdout).toContain(`      # ${note}`);

    const detailed = await converge(['plan', '-f', dir, '--detailed-exitcode'], env);
    expect(detailed.code).toBe(0);
    const json = JSON.parse((await converge(['plan', '-f', dir, '--json'], env)).stdout);
    expect(json.changes[0]).toMatchObject({ action: 'noop', notes: [note] });
    expect(json.problems).toEqual([]);
    const applied = await converge(['apply', '-f', dir, '--auto-approve'], env);
    expect(applied.code).toBe(0);
    expect((await show('cli-moved')).attributes['resource-count']).toBe(2);
  });

  it('validate reads the state files objects name, without contacting a service', async () => {
    const dir = manifestDir({
      'ws.yaml': [workspace('v-a', 'state: missing.tfstate'), workspace('v-b', 'state: bad.tfstate')].join(
        '---\n',
      ),
      'bad.tfstate': '{"version": 3}',
    });
    const r = await converge(['validate', '-f', dir], { PATH: process.env.PATH });
    expect(r.code).toBe(1);
    const file = path.join(dir, 'ws.yaml');
    expect(r.stderr).toContain(`${file}:7:10: cannot read state file missing.tfstate: no such file`);
    expect(r.stderr).toMatch(new RegExp(`${file}:15:10: .*bad\\.tfstate`));
  });

  it('pushes state and releases its own lock through a saved plan, and refuses a state file edited after it', async () => {
    const dir = manifestDir({
      'ws.yaml': workspace('cli-saved', 'locked: true\nstate: s.tfstate'),
      's.tfstate': state(1, 'S'),
    });
    expect((await converge(['apply', '-f', dir, '--auto-approve'], env)).code).toBe(0);

    writeFileSync(path.join(dir, 'ws.yaml'), workspace('cli-saved', 'locked: false\nstate: s.tfstate'));
    writeFileSync(path.join(dir, 's.tfstate'), state(2, 'S', 2));
    const planFile = path.join(dir, 'p.plan');
    expect((await converge(['plan', '-f', dir, '-out', planFile], env)).code).toBe(0);
    const applied = await converge(['apply', planFile], env);
    expect(applied.stderr).toBe('');
    expect(applied.code).toBe(0);
    const ws = await show('cli-saved');
    expect(ws.attributes.locked).toBe(false);
    expect(ws.attributes['resource-count']).toBe(2);

    writeFileSync(path.join(dir, 's.tfstate'), state(3, 'S', 1));
    expect((await converge(['plan', '-f', dir, '-out', planFile], env)).code).toBe(0);
    writeFileSync(path.join(dir, 's.tfstate'), state(3, 'S', 5));
    const refused = await converge(['apply', planFile], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('the manifest asks for something else than when');
    expect((await show('cli-saved')).attributes['resource-count']).toBe(2);
  });

  it('refuses a saved plan whose state push someone overtook, whole, as stale', async () => {
    const manifest = (description: string) =>
      [
        workspace('cli-overtaken', 'state: s.tfstate'),
        workspace('cli-beside', `description: ${description}`),
      ].join('---\n');
    const dir = manifestDir({
      'ws.yaml': manifest('one'),
      's.tfstate': state(1, 'O'),
      'theirs.tfstate': state(3, 'O', 4),
    });
    expect((await converge(['apply', '-f', dir, '--auto-approve'], env)).code).toBe(0);
    writeFileSync(path.join(dir, 'ws.yaml'), manifest('two'));
    writeFileSync(path.join(dir, 's.tfstate'), state(2, 'O', 2));
    const planFile = path.join(dir, 'p.plan');
    expect((await converge(['plan', '-f', dir, '-out', planFile], env)).code).toBe(0);
    // A colleague pushes serial 3 before the reviewed plan (push serial 2, and a description beside)
    // is applied: the fresh plan no longer pushes the seed, which is not the saved push made.
    const pushed = await converge(
      ['state', 'push', `${ORG}/cli-overtaken`, path.join(dir, 'theirs.tfstate')],
      env,
    );
    expect(pushed.code, pushed.stderr).toBe(0);
    const applied = await converge(['apply', planFile], env);
    expect(applied.code, applied.stdout + applied.stderr).toBe(3);
    expect(applied.stdout + applied.stderr).not.toContain('already in effect');
    // Whole or not at all: the change beside it was not made either.
    expect((await show('cli-beside')).attributes.description).toBe('one');
    expect((await show('cli-overtaken')).attributes['resource-count']).toBe(4);
  });

  it('refuses as stale, not as a manifest problem, a saved plan whose workspace got another lineage meanwhile', async () => {
    const dir = manifestDir({
      'ws.yaml': workspace('cli-relineaged', 'description: one'),
      's.tfstate': state(1, 'MINE'),
      'theirs.tfstate': state(1, 'THEIRS', 3),
    });
    expect((await converge(['apply', '-f', dir, '--auto-approve'], env)).code).toBe(0);
    writeFileSync(
      path.join(dir, 'ws.yaml'),
      workspace('cli-relineaged', 'description: one\nstate: s.tfstate'),
    );
    const planFile = path.join(dir, 'p.plan');
    expect((await converge(['plan', '-f', dir, '-out', planFile], env)).code).toBe(0);
    const pushed = await converge(
      ['state', 'push', `${ORG}/cli-relineaged`, path.join(dir, 'theirs.tfstate')],
      env,
    );
    expect(pushed.code, pushed.stderr).toBe(0);
    const applied = await converge(['apply', planFile], env);
    expect(applied.code, applied.stdout + applied.stderr).toBe(3);
    expect(applied.stderr).toContain(
      `Workspace/${ORG}/cli-relineaged: STALE: it changed since the plan was saved (its problem above is new)`,
    );
    expect((await show('cli-relineaged')).attributes['resource-count']).toBe(3);
  });

  it('reports a missing state file and an unknown project at their lines', async () => {
    const dir = manifestDir({
      'ws.yaml': workspace('cli-bad', 'project: { name: nope }\nstate: missing.tfstate'),
    });
    const r = await converge(['plan', '-f', dir], env);
    expect(r.code).toBe(1);
    const file = path.join(dir, 'ws.yaml');
    expect(r.stdout).toContain(`${file}:8:10: cannot read state file missing.tfstate: no such file`);
    expect(r.stdout).toContain(`${file}:7:20: project "nope" does not exist in organization acme`);
  });

  it('reports an organization that does not exist at the namespace line, with one read per organization', async () => {
    const elsewhere = (name: string) =>
      workspace(name, 'description: x').replace(`namespace: ${ORG}`, 'namespace: nowhere');
    const dir = manifestDir({
      'ws.yaml': [
        elsewhere('cli-lost-a'),
        elsewhere('cli-lost-b'),
        workspace('cli-found', 'description: y'),
      ].join('---\n'),
    });
    const file = path.join(dir, 'ws.yaml');
    const plan = await converge(['plan', '-f', dir], env);
    expect(plan.code).toBe(1);
    const message = 'organization "nowhere" does not exist, or this token may not see it';
    expect(plan.stdout).toContain(`${file}:5:14: ${message}`);
    expect(plan.stdout).toContain(`${file}:13:14: ${message}`);
    expect(plan.stdout).not.toContain('cli-found: ');

    const json = JSON.parse((await converge(['plan', '-f', dir, '--json'], env)).stdout);
    // The full address, as the changes carry it (format 1.5; `Kind/name` before).
    expect(json.problems.map((p: { address: string }) => p.address)).toEqual([
      'Workspace/nowhere/cli-lost-a',
      'Workspace/nowhere/cli-lost-b',
    ]);
    // nowhere: one list, whose 404 says the organization is missing (no separate read); acme: one
    // organization read and one read of cli-found (a single workspace is read, not listed).
    expect(json.requests).toEqual({ workspaces: 3 });

    const refused = await converge(['apply', '-f', dir, '--auto-approve'], env);
    expect(refused.code).toBe(1);
    expect(await find('cli-found')).toBeUndefined();
  });

  it('points at the document when the missing organization comes from the environment', async () => {
    const noOrg = `apiVersion: converge/v1\nkind: Workspace\nmetadata: { name: cli-envorg }\nspec: { description: n }\n`;
    const dir = manifestDir({ 'ws.yaml': `# comment\n${noOrg}` });
    const r = await converge(['plan', '-f', dir], { ...env, CONVERGE_WORKSPACES_ORGANIZATION: 'gone' });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      `${path.join(dir, 'ws.yaml')}:3:1: organization "gone" (from CONVERGE_WORKSPACES_ORGANIZATION) does not exist`,
    );
  });

  it('releases a lock someone else holds only with --force-unlock', async () => {
    const dir = manifestDir({ 'ws.yaml': workspace('cli-theirs', 'locked: false') });
    await converge(['apply', '-f', dir, '--auto-approve'], env);
    expect(
      (await converge(['workspace', 'lock', `${ORG}/cli-theirs`, '--reason', 'mine'], bobEnv)).code,
    ).toBe(0);

    // Names, not ids: the plan reads the holder with include=locked_by, at no extra request. Without
    // the switch the plan counts no release (the apply would refuse it) and says why.
    const plan = await converge(['plan', '-f', dir, '--detailed-exitcode'], env);
    expect(plan.code).toBe(0);
    expect(plan.stdout).toContain(
      `# locked by user bob (reason: "mine"); the manifest says locked: false, but someone else's lock is released only with --force-unlock`,
    );
    expect(plan.stdout).not.toContain('locked = true -> false');
    const shownForced = await converge(['plan', '-f', dir, '--force-unlock', '--detailed-exitcode'], env);
    expect(shownForced.code).toBe(2);
    expect(shownForced.stdout).toContain(
      '~ locked = true -> false # locked by user bob (reason: "mine"): released by --force-unlock',
    );
    const json = JSON.parse((await converge(['plan', '-f', dir, '--json'], env)).stdout);
    expect(json.summary).toMatchObject({ update: 0, noop: 1 });
    expect(json.changes[0].before).toMatchObject({
      locked: true,
      'locked-by': 'user bob',
      'lock-reason': 'mine',
    });
    expect(json.requests).toEqual({ workspaces: 3 });

    // The apply does what the plan said: nothing, and no failure.
    const left = await converge(['apply', '-f', dir, '--auto-approve'], env);
    expect(left.code).toBe(0);
    expect((await show('cli-theirs')).attributes.locked).toBe(true);
    const shown = await converge(['workspace', 'show', `${ORG}/cli-theirs`], env);
    expect(shown.stdout).toMatch(/Locked\s+by user bob\n/);
    expect(shown.stdout).toMatch(/Lock reason\s+mine\n/);
    const shownJson = JSON.parse(
      (await converge(['workspace', 'show', `${ORG}/cli-theirs`, '--json'], env)).stdout,
    );
    expect(shownJson).toMatchObject({ lockedByName: 'bob', lockReason: 'mine', lockedBy: { type: 'users' } });
    const list = await converge(['workspace', 'list', '--search', 'cli-theirs'], env);
    expect(list.stdout).toMatch(/cli-theirs\s+ws-\w+\s+Default Project\s+remote\s+by user bob\s/);

    // A plan saved with the switch keeps it: its apply releases the lock, as the plan showed, and a
    // switch given to the apply of a saved plan is refused (it would change what was reviewed).
    const saved = path.join(manifestDir({}), 'forced.plan');
    expect((await converge(['plan', '-f', dir, '--force-unlock', '-out', saved], env)).code).toBe(0);
    const doubled = await converge(['apply', saved, '--force-unlock'], env);
    expect(doubled.code).toBe(1);
    expect(doubled.stderr).toContain('a saved plan keeps the switches it was made with (--force-unlock)');
    expect((await show('cli-theirs')).attributes.locked).toBe(true);
    const forced = await converge(['apply', saved], env);
    expect(forced.code).toBe(0);
    expect((await show('cli-theirs')).attributes.locked).toBe(false);
  });

  it("applies a workspace's settings while leaving someone else's lock that only --force-unlock releases", async () => {
    await madeThenLockedByBob('cli-held', 'description: one', 'hotfix');
    const dir = manifestDir({ 'ws.yaml': workspace('cli-held', 'description: two\nlocked: false') });
    const plan = await converge(['plan', '-f', dir], env);
    expect(plan.stdout).toContain('~ description = "one" -> "two"');
    expect(plan.stdout).not.toContain('~ locked');
    const applied = await converge(['apply', '-f', dir, '--auto-approve'], env);
    expect(applied.code).toBe(0);
    expect((await show('cli-held')).attributes).toMatchObject({ description: 'two', locked: true });
    // A saved plan made without the switch is not given it at apply time.
    const saved = path.join(manifestDir({}), 'plain.plan');
    expect((await converge(['plan', '-f', dir, '-out', saved], env)).code).toBe(0);
    const refused = await converge(['apply', saved, '--force-unlock'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      'this one was made without --force-unlock: give --force-unlock to `plan`',
    );
    expect((await show('cli-held')).attributes.locked).toBe(true);
  });

  it('holds a state push back while someone else holds the lock, and pushes once it is released', async () => {
    await madeThenLockedByBob('cli-push-held', 'description: p', 'hotfix');
    const dir = manifestDir({
      'ws.yaml': workspace('cli-push-held', 'description: p\nstate: s.tfstate'),
      's.tfstate': state(2, 'held'),
    });
    const plan = await converge(['plan', '-f', dir, '--detailed-exitcode'], env);
    expect(plan.code).toBe(0);
    expect(plan.stdout).toContain(
      '# state: not pushed while user bob (reason: "hotfix") holds the lock (a push needs it); it is pushed once the lock is released',
    );
    // Nothing to apply, but not "in step": the headline and the object's heading say it differs.
    expect(plan.stdout).toContain(
      'No changes. Nothing to apply. 1 object still differs from the manifest in what Converge leaves alone on purpose',
    );
    expect(plan.stdout).not.toContain('Live state matches the manifest');
    expect(plan.stdout).toContain('is left as it is, though it differs from the manifest');
    const json = JSON.parse((await converge(['plan', '-f', dir, '--json'], env)).stdout);
    expect(json.changes[0]).toMatchObject({ action: 'noop', held_back: ['state'] });
    const markdown = (await converge(['plan', '-f', dir, '--markdown'], env)).stdout;
    expect(markdown).toContain('1 object still differs from the manifest');
    // Targeted at it alone, the same: it needs no change, but does not match.
    const two = manifestDir({
      'ws.yaml': `${workspace('cli-push-held', 'description: p\nstate: s.tfstate')}---\n${workspace('cli-push-other', 'description: o')}`,
      's.tfstate': state(2, 'held'),
    });
    const targeted = await converge(['plan', '-f', two, '--target', 'Workspace/acme/cli-push-held'], env);
    expect(targeted.stdout).toContain('The 1 object planned needs no change; the other 1 was not compared.');
    expect(targeted.stdout).not.toContain('match');
    expect((await converge(['apply', '-f', dir, '--auto-approve'], env)).code).toBe(0);
    // Nothing was pushed: the next plan still holds it back.
    expect((await converge(['plan', '-f', dir], env)).stdout).toContain('# state: not pushed while user bob');

    // Released by its holder: the push is planned and made.
    expect((await converge(['workspace', 'unlock', `${ORG}/cli-push-held`], bobEnv)).code).toBe(0);
    expect((await converge(['plan', '-f', dir], env)).stdout).toContain('+ state');
    expect((await converge(['apply', '-f', dir, '--auto-approve'], env)).code).toBe(0);
    expect((await converge(['plan', '-f', dir, '--detailed-exitcode'], env)).code).toBe(0);

    // With locked: false and --force-unlock, their lock is released first and the state pushed.
    expect(
      (await converge(['workspace', 'lock', `${ORG}/cli-push-held`, '--reason', 'again'], bobEnv)).code,
    ).toBe(0);
    const forced = manifestDir({
      'ws.yaml': workspace('cli-push-held', 'description: p\nstate: s.tfstate\nlocked: false'),
      's.tfstate': state(3, 'held'),
    });
    const shown = await converge(['plan', '-f', forced, '--force-unlock'], env);
    expect(shown.stdout).toContain('~ state');
    const applied = await converge(['apply', '-f', forced, '--auto-approve', '--force-unlock'], env);
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    expect((await show('cli-push-held')).attributes.locked).toBe(false);
    expect((await converge(['plan', '-f', forced, '--detailed-exitcode'], env)).code).toBe(0);
  });

  it("pushes a seed under the manifest's own lock (locked: true) planned with another user's token", async () => {
    const first = manifestDir({ 'ws.yaml': workspace('cli-own-held', 'locked: true') });
    expect((await converge(['apply', '-f', first, '--auto-approve'], env)).code).toBe(0);
    const dir = manifestDir({
      'ws.yaml': workspace('cli-own-held', 'locked: true\nstate: s.tfstate'),
      's.tfstate': state(1, 'own'),
    });
    // CI: the plan job's token (bob) is not the apply job's, which holds the manifest's lock.
    const planned = await converge(['plan', '-f', dir], bobEnv);
    expect(planned.stdout).toContain('+ state');
    expect(planned.stdout).not.toContain('not pushed while');
  });

  it("refuses a saved release the applying token cannot make as its own, and re-applies a saved plan beside someone else's lock as done", async () => {
    await madeThenLockedByBob('cli-two-users', 'description: a', 'bobs');
    // Planned by bob, who holds the lock: his own release. Applied by another token, it is not.
    const unlock = manifestDir({ 'ws.yaml': workspace('cli-two-users', 'description: a\nlocked: false') });
    const bobsPlan = path.join(unlock, 'bobs.plan');
    expect((await converge(['plan', '-f', unlock, '-out', bobsPlan], bobEnv)).code).toBe(0);
    const refused = await converge(['apply', bobsPlan], {
      ...bobEnv,
      CONVERGE_WORKSPACES_TOKEN: env.CONVERGE_WORKSPACES_TOKEN!,
    });
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(
      /Workspace\/acme\/cli-two-users: STALE: the plan was to change locked, which this run leaves as it is \(`converge plan` with this run.s token says why\)/,
    );
    expect((await show('cli-two-users')).attributes.locked).toBe(true);

    // A description change beside bob's lock: applied, and applied again it is already in effect.
    const described = manifestDir({ 'ws.yaml': workspace('cli-two-users', 'description: b\nlocked: false') });
    const planFile = path.join(described, 'b.plan');
    expect((await converge(['plan', '-f', described, '-out', planFile], env)).code).toBe(0);
    expect((await converge(['apply', planFile], env)).code).toBe(0);
    const again = await converge(['apply', planFile], env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('already in effect');
  });

  it("releases the manifest's lock in a CI pipeline whose plan job's token is not the apply job's, planned with --force-unlock", async () => {
    // The apply job's token took the lock the manifest asked for.
    const locked = manifestDir({ 'ws.yaml': workspace('cli-ci-lock', 'locked: true') });
    expect((await converge(['apply', '-f', locked, '--auto-approve'], env)).code).toBe(0);
    // The manifest now says unlocked; to the plan job (bob's token) that lock is someone else's.
    const unlocked = manifestDir({ 'ws.yaml': workspace('cli-ci-lock', 'locked: false') });
    const plain = await converge(['plan', '-f', unlocked], bobEnv);
    expect(plain.stdout).toContain('a plan made with another token than the one that applies sees');
    const planFile = path.join(unlocked, 'ci.plan');
    const planned = await converge(['plan', '-f', unlocked, '--force-unlock', '-out', planFile], bobEnv);
    expect(planned.code).toBe(0);
    // The apply job applies the plan as saved, switch included: released.
    const applied = await converge(['apply', planFile], env);
    expect(applied.code, applied.stderr).toBe(0);
    expect((await show('cli-ci-lock')).attributes.locked).toBe(false);
  });

  it("under locked: true, takes a lock with the manifest's reason for the manifest's: plan and apply agree, and the push fails naming the holder", async () => {
    const first = manifestDir({ 'ws.yaml': workspace('cli-same-reason', 'description: d') });
    expect((await converge(['apply', '-f', first, '--auto-approve'], env)).code).toBe(0);
    // Bob's lock has no reason, as the manifest's lock would have none: no plan can tell them apart.
    expect((await converge(['workspace', 'lock', `${ORG}/cli-same-reason`], bobEnv)).code).toBe(0);
    const dir = manifestDir({
      'ws.yaml': workspace('cli-same-reason', 'description: d\nlocked: true\nstate: s.tfstate'),
      's.tfstate': state(1, 'same'),
    });
    expect((await converge(['plan', '-f', dir], env)).stdout).toContain('+ state');
    const applied = await converge(['apply', '-f', dir, '--auto-approve'], env);
    expect(applied.stdout).toContain('+ state');
    expect(applied.code).toBe(1);
    expect(applied.stdout + applied.stderr).toContain('is locked by user bob');
  });

  it('applies a saved plan whose workspaces address is given with or without /api/v2 alike', async () => {
    const dir = manifestDir({ 'ws.yaml': workspace('cli-api-path', 'description: d') });
    const saved = path.join(dir, 'bare.plan');
    expect((await converge(['plan', '-f', dir, '-out', saved], env)).code).toBe(0);
    const withPath = {
      ...env,
      CONVERGE_WORKSPACES_ADDR: `${env.CONVERGE_WORKSPACES_ADDR!.replace(/\/+$/, '')}/api/v2/`,
    };
    const applied = await converge(['apply', saved], withPath);
    expect(applied.code, applied.stderr).toBe(0);
  });

  it('writes a saved plan inert: a control character a service wrote is escaped in the file', async () => {
    const first = manifestDir({ 'ws.yaml': workspace('cli-inert', 'description: a') });
    expect((await converge(['apply', '-f', first, '--auto-approve'], env)).code).toBe(0);
    const reason = 'csi\u009b31m and \u202e';
    expect((await converge(['workspace', 'lock', `${ORG}/cli-inert`, '--reason', reason], bobEnv)).code).toBe(
      0,
    );
    const dir = manifestDir({ 'ws.yaml': workspace('cli-inert', 'description: b') });
    const saved = path.join(dir, 'inert.plan');
    expect((await converge(['plan', '-f', dir, '-out', saved], env)).code).toBe(0);
    const text = readFileSync(saved, 'utf8');
    expect(text).toContain('\\u009b31m');
    expect(text).not.toMatch(/[\u0080-\u009f\u202e]/);
    expect((await converge(['apply', saved], env)).code).toBe(0);
  });

  it("holds a push back under locked: true while someone else's lock (another reason) is there", async () => {
    await madeThenLockedByBob('cli-their-push', 'description: d', 'hotfix');
    const dir = manifestDir({
      'ws.yaml': workspace('cli-their-push', 'description: d\nlocked: true\nstate: s.tfstate'),
      's.tfstate': state(1, 'theirs'),
    });
    const plan = await converge(['plan', '-f', dir], env);
    expect(plan.stdout).toContain('# state: not pushed while user bob (reason: "hotfix") holds the lock');
    expect((await converge(['apply', '-f', dir, '--auto-approve'], env)).code).toBe(0);
  });

  it('refuses as stale a saved lock-reason change applied with a token whose lock it is not', async () => {
    const first = manifestDir({ 'ws.yaml': workspace('cli-reason-token', 'locked: true\nlock-reason: r1') });
    expect((await converge(['apply', '-f', first, '--auto-approve'], env)).code).toBe(0);
    const dir = manifestDir({ 'ws.yaml': workspace('cli-reason-token', 'locked: true\nlock-reason: r2') });
    const saved = path.join(dir, 'reason.plan');
    expect((await converge(['plan', '-f', dir, '-out', saved], env)).code).toBe(0);
    const byBob = await converge(['apply', saved], bobEnv);
    expect(byBob.code).toBe(3);
    expect(byBob.stderr).toContain(
      'STALE: the plan was to change lock-reason, which this run leaves as it is',
    );
    const shown = JSON.parse(
      (await converge(['workspace', 'show', `${ORG}/cli-reason-token`, '--json'], env)).stdout,
    );
    expect(shown.lockReason).toBe('r1');
  });

  it('says what moved when a saved plan of a workspace is stale', async () => {
    const first = manifestDir({ 'ws.yaml': workspace('cli-moved', 'description: one') });
    expect((await converge(['apply', '-f', first, '--auto-approve'], env)).code).toBe(0);
    const dir = manifestDir({ 'ws.yaml': workspace('cli-moved', 'description: two') });
    const saved = path.join(dir, 'moved.plan');
    expect((await converge(['plan', '-f', dir, '-out', saved], env)).code).toBe(0);
    expect(
      (await converge(['workspace', 'lock', `${ORG}/cli-moved`, '--reason', 'freeze'], bobEnv)).code,
    ).toBe(0);
    const stale = await converge(['apply', saved], env);
    expect(stale.code).toBe(3);
    expect(stale.stderr + stale.stdout).toMatch(
      /Workspace\/acme\/cli-moved: STALE: it changed since the plan \(lock unlocked → users\/[\w-]+; lock reason \(none\) → freeze\)/,
    );
  });

  it("says that deleting a workspace releases this token's own lock, taken by hand or not", async () => {
    const first = manifestDir({ 'ws.yaml': workspace('cli-own-lock', 'description: d') });
    expect((await converge(['apply', '-f', first, '--auto-approve'], env)).code).toBe(0);
    expect(
      (await converge(['workspace', 'lock', `${ORG}/cli-own-lock`, '--reason', 'hotfix in progress'], env))
        .code,
    ).toBe(0);
    const absent = manifestDir({
      'ws.yaml': workspace('cli-own-lock', 'description: d').replace(
        'name: cli-own-lock',
        'name: cli-own-lock\n  ensure: absent',
      ),
    });
    const plan = await converge(['plan', '-f', absent], env);
    expect(plan.stdout).toContain(
      '# its lock, held by this token (reason: "hotfix in progress"), is released for the deletion (taken again if the service refuses it)',
    );
  });

  it('keeps a workspace declared without an organization out of the prune (it lives in the default one)', async () => {
    const noOrg = `apiVersion: converge/v1\nkind: Workspace\nmetadata: { name: cli-noorg }\nspec: { description: n }\n`;
    const dir = manifestDir({ 'ws.yaml': `${workspace('cli-withorg', 'description: w')}---\n${noOrg}` });
    expect((await converge(['apply', '-f', dir, '--auto-approve'], env)).code).toBe(0);
    const plan = JSON.parse((await converge(['plan', '-f', dir, '--prune', '--json'], env)).stdout);
    const mine = plan.changes.filter(
      (c: { name: string }) => c.name.startsWith('cli-noorg') || c.name === 'cli-withorg',
    );
    expect(mine.map((c: { address: string; action: string }) => `${c.action} ${c.address}`)).toEqual([
      'noop Workspace/acme/cli-withorg',
      'noop Workspace/acme/cli-noorg',
    ]);
  });

  it('prunes only workspaces Converge created, and deletes declared-absent ones with force', async () => {
    const both = manifestDir({
      'ws.yaml': [workspace('cli-keep', 'description: k'), workspace('cli-gone', 'description: g')].join(
        '---\n',
      ),
    });
    await converge(['apply', '-f', both, '--auto-approve'], env);
    await api('POST', `/organizations/${ORG}/workspaces`, {
      data: { type: 'workspaces', attributes: { name: 'cli-handmade' } },
    });

    const one = manifestDir({ 'ws.yaml': workspace('cli-keep', 'description: k') });
    const plan = await converge(['plan', '-f', one, '--prune', '--json'], env);
    const deletes = JSON.parse(plan.stdout)
      .changes.filter((c: { action: string }) => c.action === 'delete')
      .map((c: { name: string }) => c.name);
    expect(deletes).toContain('cli-gone');
    expect(deletes).not.toContain('cli-handmade');
    expect(deletes).not.toContain('cli-keep');

    const seeded = manifestDir({
      'ws.yaml': workspace('cli-force', 'state: s.tfstate'),
      's.tfstate': state(1, 'F'),
    });
    await converge(['apply', '-f', seeded, '--auto-approve'], env);
    writeFileSync(
      path.join(seeded, 'ws.yaml'),
      workspace('cli-force', 'deletion: force', '  ensure: absent\n'),
    );
    const gone = await converge(['apply', '-f', seeded, '--auto-approve'], env);
    expect(gone.stdout).toContain('declared absent in the manifest');
    expect(gone.code).toBe(0);
    expect(await find('cli-force')).toBeUndefined();
  });
});

describe('a lock-reason changed on a workspace that stays locked', () => {
  it("takes Converge's own lock again with the new reason, and plans clean after", async () => {
    const lock = (reason: string) =>
      manifestDir({ 'ws.yaml': workspace('cli-relock', `locked: true\nlock-reason: ${reason}`) });
    expect((await converge(['apply', '-f', lock('freeze'), '--auto-approve'], env)).code).toBe(0);
    const changed = lock('holiday freeze');
    const plan = await converge(['plan', '-f', changed, '--detailed-exitcode'], env);
    expect(plan.code, plan.stderr).toBe(2);
    expect(plan.stdout).toContain(
      '~ lock-reason = "freeze" -> "holiday freeze" # the lock is released and taken again with the new reason',
    );
    expect((await converge(['apply', '-f', changed, '--auto-approve'], env)).code).toBe(0);
    const ws = await show('cli-relock');
    expect(ws.attributes.locked).toBe(true);
    expect(ws.attributes['locked-reason']).toBe('holiday freeze');
    expect((await converge(['plan', '-f', changed, '--detailed-exitcode'], env)).code).toBe(0);
  });

  it('a state push refused by a lock the manifest declares names its reason, and does not advise lifting it', async () => {
    const dir = manifestDir({
      'ws.yaml': workspace('cli-frozen', 'locked: true\nlock-reason: release freeze'),
      'a.tfstate': state(1, 'F'),
    });
    expect((await converge(['apply', '-f', dir, '--auto-approve'], env)).code).toBe(0);
    const r = await converge(['state', 'push', `${ORG}/cli-frozen`, path.join(dir, 'a.tfstate')], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('with reason "release freeze"; the state was not pushed');
    expect(r.stderr).toContain('a lock a manifest declares with locked: true');
    expect(r.stderr).not.toContain('unlock the workspace if nothing is running');
    expect((await show('cli-frozen')).attributes['locked-reason']).toBe('release freeze');
  });

  it("leaves someone else's lock and its reason alone, and says the manifest's reason waits for Converge's lock", async () => {
    const dir = manifestDir({ 'ws.yaml': workspace('cli-their-lock', 'description: x') });
    expect((await converge(['apply', '-f', dir, '--auto-approve'], env)).code).toBe(0);
    expect(
      (await converge(['workspace', 'lock', `${ORG}/cli-their-lock`, '--reason', 'bob deploys'], bobEnv))
        .code,
    ).toBe(0);
    const locked = manifestDir({
      'ws.yaml': workspace('cli-their-lock', 'description: x\nlocked: true\nlock-reason: ours'),
    });
    const plan = await converge(['plan', '-f', locked, '--detailed-exitcode'], env);
    expect(plan.code, plan.stderr).toBe(0);
    // The holder's reason is said once, with the holder.
    expect(plan.stdout).toMatch(
      /# locked by user \S+ \(reason: "bob deploys"\): the manifest's lock-reason applies when Converge takes the lock\n/,
    );
  });
});

describe('a create-only attribute changed on an existing workspace', () => {
  it('plans no change and says the service keeps what it was created with', async () => {
    const url = (which: string) => `source-url: "https://ci.example/${which}"`;
    const created = manifestDir({ 'ws.yaml': workspace('cli-source', url('first')) });
    expect((await converge(['apply', '-f', created, '--auto-approve'], env)).code).toBe(0);
    expect((await show('cli-source')).attributes['source-url']).toBe('https://ci.example/first');
    const changed = manifestDir({ 'ws.yaml': workspace('cli-source', url('second')) });
    const r = await converge(['plan', '-f', changed, '--detailed-exitcode'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      '# source-url is set only when a workspace is created: the service keeps "https://ci.example/first", not "https://ci.example/second", and no change is planned',
    );
    // The same manifest as created: nothing to say.
    expect((await converge(['plan', '-f', created], env)).stdout).not.toContain('source-url');
  });
});

describe('deleting a workspace Converge locked', () => {
  const inLocksOrg = (name: string, spec: string, extra = '') => workspace(name, spec, extra, LOCKS_ORG);
  const find = async (name: string) => {
    const r = await api('GET', `/organizations/${LOCKS_ORG}/workspaces/${name}`);
    return r.status === 200 ? r.json.data : undefined;
  };
  const show = async (name: string) => (await find(name)) ?? expect.fail(`workspace ${name} does not exist`);

  it('releases its own lock before the safe delete, for ensure: absent and for --prune', async () => {
    const dir = manifestDir({
      'ws.yaml': [
        inLocksOrg('cli-own-lock', 'locked: true'),
        inLocksOrg('cli-own-lock-2', 'locked: true'),
      ].join('---\n'),
    });
    expect((await converge(['apply', '-f', dir, '--auto-approve'], env)).code).toBe(0);
    expect((await show('cli-own-lock')).attributes.locked).toBe(true);

    writeFileSync(
      path.join(dir, 'ws.yaml'),
      [
        inLocksOrg('cli-own-lock', 'locked: true', '  ensure: absent\n'),
        inLocksOrg('cli-keep-2', 'description: kept'),
      ].join('---\n'),
    );
    const gone = await converge(['apply', '-f', dir, '--auto-approve', '--prune'], env);
    expect(gone.stderr).toBe('');
    expect(gone.code).toBe(0);
    expect(await find('cli-own-lock')).toBeUndefined();
    expect(await find('cli-own-lock-2')).toBeUndefined();
  });

  it('locks it again, with its reason, when the safe delete is refused (it still manages resources)', async () => {
    const dir = manifestDir({
      'ws.yaml': inLocksOrg('cli-freeze', 'locked: true\nlock-reason: change freeze\nstate: s.tfstate'),
      's.tfstate': state(1, 'b6ad1e0c-0000-4000-8000-000000000001', 2),
    });
    const made = await converge(['apply', '-f', dir, '--auto-approve'], env);
    expect(made.code, made.stderr).toBe(0);
    writeFileSync(
      path.join(dir, 'ws.yaml'),
      inLocksOrg('cli-freeze', 'locked: true\nlock-reason: change freeze', '  ensure: absent\n'),
    );
    // The plan says beforehand how the deletion goes, and that the service will refuse it.
    const plan = await converge(['plan', '-f', dir], env);
    expect(plan.stdout).toContain(
      '# safe delete: the service refuses it while the workspace manages 2 resources (the apply then fails; `deletion: force` deletes it anyway)',
    );
    const forced = manifestDir({
      'ws.yaml': inLocksOrg('cli-freeze', 'deletion: force', '  ensure: absent\n'),
    });
    expect((await converge(['plan', '-f', forced], env)).stdout).toContain(
      '# force delete: the workspace goes with the 2 resources it manages',
    );
    const refused = await converge(['apply', '-f', dir, '--auto-approve'], env);
    expect(refused.code).toBe(1);
    expect(refused.stdout + refused.stderr).toMatch(/cannot be safely deleted/);
    // The change freeze is not lifted by an apply that deleted nothing.
    const after = await show('cli-freeze');
    expect(after.attributes.locked).toBe(true);
    expect(after.attributes['locked-reason']).toBe('change freeze');
  });
});

describe('converge workspace and state commands', () => {
  it('lists, shows, locks, unlocks and deletes', async () => {
    const dir = manifestDir({ 'ws.yaml': workspace('cli-ops', 'description: operated') });
    await converge(['apply', '-f', dir, '--auto-approve'], env);

    const list = await converge(['workspace', 'list', '--wildcard', 'cli-op*'], env);
    expect(list.code).toBe(0);
    expect(list.stdout.split('\n')[0]).toMatch(/^NAME\s+ID\s+PROJECT\s+MODE\s+LOCKED/);
    expect(list.stdout).toMatch(/cli-ops\s+ws-\w+\s+Default Project\s+remote\s+no/);

    const shown = await converge(['workspace', 'show', 'cli-ops'], env);
    expect(shown.stdout).toMatch(/Description\s+operated/);

    expect((await converge(['workspace', 'lock', `${ORG}/cli-ops`, '--reason', 'r'], env)).stdout).toContain(
      `${ORG}/cli-ops (ws-`,
    );
    expect((await converge(['workspace', 'show', 'cli-ops'], env)).stdout).toMatch(
      /Locked\s+by user root\nLock reason\s+r\n/,
    );
    // Locked already, or deleted while locked: who holds it and why, and what releases it.
    const twice = await converge(['workspace', 'lock', `${ORG}/cli-ops`, '--reason', 'again'], bobEnv);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain(`workspace ${ORG}/cli-ops is already locked by user root (reason: "r")`);
    const lockedDelete = await converge(['workspace', 'delete', `${ORG}/cli-ops`, '--yes'], env);
    expect(lockedDelete.code).toBe(1);
    expect(lockedDelete.stderr).toContain(
      `workspace ${ORG}/cli-ops is locked by user root (reason: "r"), so it was not deleted`,
    );
    expect(lockedDelete.stderr).toContain(`\`converge workspace unlock ${ORG}/cli-ops\``);
    const notMine = await converge(['workspace', 'unlock', `${ORG}/cli-ops`], bobEnv);
    expect(notMine.code).toBe(1);
    expect(notMine.stderr).toContain('409');
    expect((await converge(['workspace', 'unlock', `${ORG}/cli-ops`], env)).stdout).toContain('unlocked');
    const again = await converge(['workspace', 'force-unlock', `${ORG}/cli-ops`], env);
    expect(again.code).toBe(1);

    const refused = await converge(['workspace', 'delete', `${ORG}/cli-ops`], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('pass --yes');
    expect((await converge(['workspace', 'delete', `${ORG}/cli-ops`, '--auto-approve'], env)).code).toBe(0);
    expect(await find('cli-ops')).toBeUndefined();
  });

  it('takes a bare name that starts with ws- for a name, and an id by its shape', async () => {
    const dir = manifestDir({ 'ws.yaml': workspace('ws-a', 'description: named like an id') });
    expect((await converge(['apply', '-f', dir, '--auto-approve'], env)).code).toBe(0);
    const shown = await converge(['workspace', 'show', 'ws-a'], env);
    expect(shown.stderr).toBe('');
    expect(shown.stdout).toMatch(/Description\s+named like an id/);
    const id = /\b(ws-[A-Za-z0-9]{16})\b/.exec(shown.stdout)?.[1];
    expect(id).toBeDefined();
    expect((await converge(['workspace', 'show', id!], env)).stdout).toMatch(
      /Description\s+named like an id/,
    );
  });

  it('pushes, lists, shows and pulls state, and releases the lock when a push is refused', async () => {
    const dir = manifestDir({
      'ws.yaml': workspace('cli-state', 'description: s'),
      'a.tfstate': state(2, 'P', 3),
      'old.tfstate': state(1, 'P'),
    });
    await converge(['apply', '-f', dir, '--auto-approve'], env);

    const pushed = await converge(['state', 'push', `${ORG}/cli-state`, path.join(dir, 'a.tfstate')], env);
    expect(pushed.code).toBe(0);
    const sv = /state version (sv-\w+)/.exec(pushed.stdout)?.[1];
    expect(sv).toBeDefined();
    // The same file again (a CI job run again): nothing to push, not a refusal that asks for --force.
    const again = await converge(['state', 'push', `${ORG}/cli-state`, path.join(dir, 'a.tfstate')], env);
    expect(again.stderr).toBe('');
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(
      `is already the current state of ${ORG}/cli-state (state version ${sv}, serial 2`,
    );
    expect((await show('cli-state')).attributes.locked).toBe(false);

    const list = await converge(['state', 'list', `${ORG}/cli-state`], env);
    expect(list.stdout).toMatch(new RegExp(`${sv}\\s+2\\s+3\\s+1\\.9\\.8`));
    // A workspace that is not there is said as pull and push say it, not as a raw 404 of the list.
    const missing = await converge(['state', 'list', `${ORG}/cli-no-such`], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr.trim()).toBe(
      `Error: workspace ${ORG}/cli-no-such not found (or this token may not read it)`,
    );
    // Filters that match nothing are not an empty organization.
    const none = await converge(['workspace', 'list', '--search', 'cli-matches-nothing'], env);
    expect(none.stdout.trim()).toBe(`No workspaces in ${ORG} match the filters.`);

    const shown = await converge(['state', 'show', sv!], env);
    expect(shown.stdout).toMatch(/Serial\s+2/);
    expect(shown.stdout).toContain('null_resource.r0');
    expect(shown.stdout).toContain('url = "https://x.test"');

    const out = path.join(dir, 'pulled.tfstate');
    writeFileSync(out, 'older, world-readable', { mode: 0o644 });
    // A file that exists is kept unless --force says to replace it: it may be the state to push.
    const kept = await converge(['state', 'pull', `${ORG}/cli-state`, '-o', out], env);
    expect(kept.code).toBe(1);
    expect(kept.stderr).toContain(`${out} exists: pull to another file, or pass --force to replace it`);
    expect(readFileSync(out, 'utf8')).toBe('older, world-readable');
    expect((await converge(['state', 'pull', `${ORG}/cli-state`, '-o', out, '--force'], env)).code).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe(readFileSync(path.join(dir, 'a.tfstate'), 'utf8'));
    const fresh = path.join(dir, 'fresh.tfstate');
    expect((await converge(['state', 'pull', `${ORG}/cli-state`, '-o', fresh], env)).code).toBe(0);
    expect(readFileSync(fresh, 'utf8')).toBe(readFileSync(path.join(dir, 'a.tfstate'), 'utf8'));
    expect(statSync(fresh).mode & 0o777).toBe(0o600);
    expect(statSync(out).mode & 0o777).toBe(0o600);

    const old = path.join(dir, 'old.tfstate');
    const refused = await converge(['state', 'push', `${ORG}/cli-state`, old], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`If ${old} should replace the workspace's state anyway`);
    expect(refused.stderr).toContain('run again with --force.');
    expect((await show('cli-state')).attributes.locked).toBe(false);

    const forced = await converge(['state', 'push', `${ORG}/cli-state`, old, '--force'], env);
    expect(forced.stderr).toBe('');
    expect(forced.code).toBe(0);
    expect(forced.stdout).toContain('(serial 1, lineage P)');
    expect((await show('cli-state')).attributes.locked).toBe(false);
    expect((await show('cli-state')).attributes['resource-count']).toBe(1);
    const otherLineage = path.join(dir, 'other.tfstate');
    writeFileSync(otherLineage, state(5, 'Q'));
    expect((await converge(['state', 'push', `${ORG}/cli-state`, otherLineage], env)).code).toBe(1);
    expect((await converge(['state', 'push', `${ORG}/cli-state`, otherLineage, '--force'], env)).code).toBe(
      0,
    );

    const help = await converge(['state', 'push', '--help'], env);
    expect(help.stdout).toMatch(/--force\s+replace the state even if the file does not continue it/);
  });
});

describe('Ctrl-C during a state push whose unlock then fails', () => {
  // Was: "interrupted: the workspace lock was released", of a workspace the failed unlock left locked.
  it('says the lock stays, not that it was released', async () => {
    const sb = await startSandbox({ port: 0 });
    let uploads = 0;
    const proxy = await hostileServer((req, res, body) => {
      const url = req.url ?? '/';
      if (url.endsWith('/actions/unlock')) {
        res.writeHead(400, { 'content-type': 'application/vnd.api+json' });
        res.end(JSON.stringify({ errors: [{ status: '400', title: 'bad request' }] }));
        return;
      }
      // The interrupt comes while the upload is on its way.
      if (url.endsWith('/state-versions') && req.method === 'POST' && uploads++ === 0)
        process.emit('SIGINT', 'SIGINT');
      forward(req, res, body, sb.url);
    });
    try {
      const created = await fetch(`${sb.url}/api/v2/organizations/sandbox/workspaces`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${sb.rootToken}`, 'Content-Type': 'application/vnd.api+json' },
        body: JSON.stringify({ data: { type: 'workspaces', attributes: { name: 'stays-locked' } } }),
      });
      expect(created.status).toBe(201);
      const dir = manifestDir({ 's.tfstate': state(1, 'L') });
      const r = await runCli(['state', 'push', 'sandbox/stays-locked', path.join(dir, 's.tfstate')], {
        ...sb.env(),
        CONVERGE_WORKSPACES_ADDR: proxy.url,
        NO_COLOR: '1',
      });
      expect(r.code).toBe(130);
      expect(r.stderr).not.toContain('lock was released');
      expect(r.stderr).toContain('it stays locked until unlocked');
      const ws = await fetch(`${sb.url}/api/v2/organizations/sandbox/workspaces/stays-locked`, {
        headers: { Authorization: `Bearer ${sb.rootToken}` },
      });
      expect(
        ((await ws.json()) as { data: { attributes: { locked: boolean } } }).data.attributes.locked,
      ).toBe(true);
    } finally {
      await proxy.close();
      await sb.close();
    }
  });
});

describe('Ctrl-C during a state push', () => {
  it('aborts the upload, releases the lock, and says so', async () => {
    let sawLock: () => void = () => {};
    const locked = new Promise<void>((resolve) => {
      sawLock = resolve;
    });
    // Every answer takes 600 ms, so the upload is still in flight when the signal arrives.
    const slow = await startSandbox({
      port: 0,
      config: { faults: { latencyMs: 600 } },
      log: (line) => {
        if (/^POST \/api\/v2\/workspaces\/ws-\w+\/actions\/lock 200/.test(line)) sawLock();
      },
    });
    try {
      const slowEnv = slow.env();
      const created = await fetch(`${slow.url}/api/v2/organizations/sandbox/workspaces`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${slow.rootToken}`, 'Content-Type': 'application/vnd.api+json' },
        body: JSON.stringify({ data: { type: 'workspaces', attributes: { name: 'interrupted' } } }),
      });
      expect(created.status).toBe(201);
      const dir = manifestDir({ 's.tfstate': state(1, 'I') });
      const child = spawn(
        process.execPath,
        [CLI, 'state', 'push', 'sandbox/interrupted', path.join(dir, 's.tfstate')],
        {
          env: { PATH: process.env.PATH, ...slowEnv },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let stderr = '';
      child.stderr.on('data', (d) => {
        stderr += d;
      });
      await locked;
      child.kill('SIGINT');
      const [code] = await once(child, 'exit');
      // 130, as every interrupted command exits: a script tells it from a failure.
      expect(code).toBe(130);
      expect(stderr).toContain('interrupted: the workspace lock was released');
      const ws = await fetch(`${slow.url}/api/v2/organizations/sandbox/workspaces/interrupted`, {
        headers: { Authorization: `Bearer ${slow.rootToken}` },
      });
      expect(
        ((await ws.json()) as { data: { attributes: { locked: boolean } } }).data.attributes.locked,
      ).toBe(false);
    } finally {
      await slow.close();
    }
  });
});
