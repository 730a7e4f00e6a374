/**
 * The blast radius a plan shows under a change, against the sandbox: the users whose effective
 * policies change with a directory group's (from the manifest and from the service), and what the
 * scheduler would place per task group for a job; in the text plan, --json and --markdown alike.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlanJson } from '../../src/planner/render/json.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

const TOKEN = 'blast-root-token-5a9c07';
let sandbox: RunningSandbox;
let env: Record<string, string | undefined>;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, token: TOKEN });
  env = {
    ...sandbox.env(),
    NO_COLOR: '1',
    CONVERGE_STATE_DIR: tempDir('converge-blast-state-'),
  };
});
afterAll(async () => sandbox?.close());

function folder(files: Record<string, string>): string {
  const dir = tempDir('converge-blast-');
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  return dir;
}

const doc = (kind: string, name: string, spec: string) =>
  `apiVersion: converge/v1\nkind: ${kind}\nmetadata: { name: ${name} }\nspec: ${spec}\n`;

/** A user written behind Converge's back: only the service knows it names the group. */
async function liveUser(name: string, groups: string): Promise<void> {
  const r = await fetch(`${sandbox.url}/v1/auth/ldap/users/${name}`, {
    method: 'POST',
    headers: { 'X-Secrets-Token': TOKEN, 'Content-Type': 'application/json' },
    body: JSON.stringify({ policies: '', groups }),
  });
  expect(r.status).toBe(204);
}

describe('a directory group whose policies change', () => {
  let dir: string;
  const address = 'LdapGroup/ldap/br-ops';

  beforeAll(async () => {
    const before = folder({
      'directory.yaml': [
        doc('LdapGroup', 'br-ops', '{ policies: [ops] }'),
        doc('LdapGroup', 'br-devs', '{ policies: [dev] }'),
        doc('LdapUser', 'alice', '{ groups: [br-ops] }'),
        doc('LdapUser', 'carol', '{ groups: [br-devs] }'),
      ].join('---\n'),
    });
    expect((await runCli(['apply', '-f', before, '--auto-approve'], env)).code).toBe(0);
    await liveUser('zed', 'other,br-ops');
    // The group gains a policy; bob, new in the manifest, will be a member too; carol is not one.
    dir = folder({
      'directory.yaml': [
        doc('LdapGroup', 'br-ops', '{ policies: [ops, audit] }'),
        doc('LdapGroup', 'br-devs', '{ policies: [dev] }'),
        doc('LdapUser', 'alice', '{ groups: [br-ops] }'),
        doc('LdapUser', 'bob', '{ groups: [br-ops] }'),
        doc('LdapUser', 'carol', '{ groups: [br-devs] }'),
      ].join('---\n'),
    });
  });

  it('lists the members from the manifest and the service under the change in the text plan', async () => {
    const r = await runCli(['plan', '-f', dir], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      `  ~ ${address}  (id auth/ldap/groups/br-ops)\n      # changes the effective policies of 3 users: alice, bob, zed\n`,
    );
    expect(r.stdout).not.toMatch(/effective policies of .*carol/);
  });

  it('carries it as impact in --json, and only on the changed group', async () => {
    const r = await runCli(['plan', '-f', dir, '--json'], env);
    const plan = JSON.parse(r.stdout) as PlanJson;
    const byAddress = new Map(plan.changes.map((c) => [c.address, c]));
    expect(byAddress.get(address)?.impact).toEqual([
      'changes the effective policies of 3 users: alice, bob, zed',
    ]);
    expect(byAddress.get('LdapGroup/ldap/br-devs')?.impact).toEqual([]);
  });

  it('lists it under "Blast radius" in --markdown', async () => {
    const r = await runCli(['plan', '-f', dir, '--markdown'], env);
    expect(r.stdout).toContain(
      `**Blast radius**\n\n- \`${address}\`: changes the effective policies of 3 users: alice, bob, zed\n`,
    );
  });

  it('leaves out a member the same plan deletes', async () => {
    // zed, who names the group on the service, is declared absent: the plan deletes him.
    const deleting = folder({
      'directory.yaml': [
        doc('LdapGroup', 'br-ops', '{ policies: [ops, audit] }'),
        doc('LdapGroup', 'br-devs', '{ policies: [dev] }'),
        doc('LdapUser', 'alice', '{ groups: [br-ops] }'),
        doc('LdapUser', 'bob', '{ groups: [br-ops] }'),
        doc('LdapUser', 'carol', '{ groups: [br-devs] }'),
        'apiVersion: converge/v1\nkind: LdapUser\nmetadata: { name: zed, ensure: absent }\nspec: {}\n',
      ].join('---\n'),
    });
    const plan = JSON.parse((await runCli(['plan', '-f', deleting, '--json'], env)).stdout) as PlanJson;
    const byAddress = new Map(plan.changes.map((c) => [c.address, c]));
    expect(byAddress.get('LdapUser/ldap/zed')?.action).toBe('delete');
    expect(byAddress.get(address)?.impact).toEqual(['changes the effective policies of 2 users: alice, bob']);
  });

  it('counts past ten names instead of listing them all', async () => {
    for (let i = 0; i < 12; i++) await liveUser(`many-${String(i).padStart(2, '0')}`, 'br-many');
    const group = (policies: string) =>
      folder({ 'g.yaml': doc('LdapGroup', 'br-many', `{ policies: [${policies}] }`) });
    expect((await runCli(['apply', '-f', group('a'), '--auto-approve'], env)).code).toBe(0);
    const r = await runCli(['plan', '-f', group('a, b'), '--json'], env);
    const [change] = (JSON.parse(r.stdout) as PlanJson).changes;
    expect(change?.impact).toEqual([
      'changes the effective policies of 12 users: many-00, many-01, many-02, many-03, many-04, many-05, many-06, many-07, many-08, many-09, and 2 more',
    ]);
  });
});

describe('a job change', () => {
  it("shows the scheduler's placements per task group as the change's impact", async () => {
    const hcl = (count: number) =>
      `job "br-web" {\n  datacenters = ["dc1"]\n  group "web" {\n    count = ${count}\n    task "server" {\n      driver = "docker"\n      config {\n        image = "nginx:1.27"\n      }\n    }\n  }\n}\n`;
    const dir = folder({ 'web.hcl': hcl(1), 'jobs.yaml': doc('Job', 'br-web', '{ specFile: web.hcl }') });
    expect((await runCli(['apply', '-f', dir, '--auto-approve'], env)).code).toBe(0);
    writeFileSync(path.join(dir, 'web.hcl'), hcl(3));
    const json = JSON.parse((await runCli(['plan', '-f', dir, '--json'], env)).stdout) as PlanJson;
    expect(json.changes[0]).toMatchObject({ address: 'Job/default/br-web', action: 'update' });
    expect(json.changes[0]?.impact).toEqual(['group web: 2 to place, 1 to update in place']);
    const md = (await runCli(['plan', '-f', dir, '--markdown'], env)).stdout;
    expect(md).toContain('- `Job/default/br-web`: group web: 2 to place, 1 to update in place');
  });

  it('says a parameterized or periodic job places nothing itself, created or changed', async () => {
    const hcl = (kind: string, count: number) =>
      `job "br-${kind}" {\n  datacenters = ["dc1"]\n  type = "batch"\n  ${kind === 'dispatch' ? 'parameterized {}' : 'periodic {\n    crons = ["*/15 * * * *"]\n  }'}\n  group "run" {\n    count = ${count}\n    task "t" {\n      driver = "docker"\n      config {\n        image = "tool:1"\n      }\n    }\n  }\n}\n`;
    for (const [kind, words] of [
      ['dispatch', 'a parameterized job runs only as the jobs dispatched from it'],
      ['cron', 'a periodic job runs only as the jobs launched from it'],
    ] as const) {
      const dir = folder({
        'job.hcl': hcl(kind, 1),
        'jobs.yaml': doc('Job', `br-${kind}`, '{ specFile: job.hcl }'),
      });
      const impact = async () =>
        (JSON.parse((await runCli(['plan', '-f', dir, '--json'], env)).stdout) as PlanJson).changes[0]
          ?.impact;
      expect(await impact()).toEqual([`no allocations of its own: ${words}`]);
      expect((await runCli(['apply', '-f', dir, '--auto-approve'], env)).code).toBe(0);
      writeFileSync(path.join(dir, 'job.hcl'), hcl(kind, 3));
      expect(await impact()).toEqual([`no allocations of its own: ${words}`]);
    }
  });
});
