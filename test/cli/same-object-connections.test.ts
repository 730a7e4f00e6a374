/**
 * Two Connections to one service (addresses that differ by a trailing slash, or a Connection to the
 * environment's own service) make one live object two to Converge: refused at plan time, before
 * anything is sent, naming both addresses. Found by a new user whose applies flipped a role between
 * two documents and whose prune then planned the update and the deletion of one id.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

const TOKEN = 'same-object-token-5c1e';
let sandbox: RunningSandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, token: TOKEN });
});
afterAll(async () => {
  await sandbox?.close();
});

const connection = (name: string, address: string) =>
  `apiVersion: converge/v1\nkind: Connection\nmetadata: { name: ${name} }\nspec:\n  service: registry\n  address: "${address}"\n  token: ${TOKEN}\n`;
const role = (name: string, description: string, connection?: string) =>
  `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: ${name}${connection ? `, connection: ${connection}` : ''} }\nspec: { Description: ${description} }\n`;

function project(files: Record<string, string>) {
  const dir = tempDir('converge-same-object-');
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  const env = {
    ...sandbox.env(),
    NO_COLOR: '1',
    CONVERGE_STATE_DIR: tempDir('converge-same-object-state-'),
    CONVERGE_ALLOW_ADDRESSES: `${sandbox.url}/`,
  };
  return { dir, env };
}

async function roleCount(name: string): Promise<number> {
  const res = await fetch(`${sandbox.url}/v1/acl/roles`, { headers: { 'X-Consul-Token': TOKEN } });
  const roles = (await res.json()) as { Name: string }[];
  return roles.filter((r) => r.Name === name).length;
}

describe('one object under two connections', () => {
  it('refuses two creates of one role through two connections to the same registry, sending nothing', async () => {
    const { dir, env } = project({
      'conn.yaml': `${connection('eu', sandbox.url)}---\n${connection('eu2', `${sandbox.url}/`)}`,
      'roles.yaml': `${role('web-twice', 'on eu', 'eu')}---\n${role('web-twice', 'on eu2', 'eu2')}`,
    });
    const plan = await runCli(['plan', '-f', dir], env);
    expect(plan.code).toBe(1);
    expect(plan.stderr + plan.stdout).toContain(
      'AclRole@eu2/default/web-twice and AclRole@eu/default/web-twice are one object: both connections reach the same registry service',
    );
    expect(plan.stderr + plan.stdout).toMatch(/roles\.yaml:\d+/);
    const apply = await runCli(['apply', '-f', dir, '--auto-approve'], env);
    expect(apply.code).toBe(1);
    expect(await roleCount('web-twice')).toBe(0);
  });

  it('refuses a role on a Connection to the environment’s own registry beside the same role without one', async () => {
    const { dir, env } = project({
      'conn.yaml': connection('again', sandbox.url),
      'roles.yaml': `${role('api-twice', 'plain')}---\n${role('api-twice', 'through again', 'again')}`,
    });
    const made = project({ 'roles.yaml': role('api-twice', 'plain') });
    expect((await runCli(['apply', '-f', made.dir, '--auto-approve'], made.env)).code).toBe(0);
    const plan = await runCli(['plan', '-f', dir, '--json'], env);
    expect(plan.code).toBe(1);
    const json = JSON.parse(plan.stdout) as { problems: { message: string }[] };
    expect(json.problems.map((p) => p.message).join('\n')).toMatch(
      /AclRole@again\/default\/api-twice and AclRole\/default\/api-twice are one object: .*, where it has id [0-9a-f-]{36}/,
    );
  });
});

describe('objects that only look alike', () => {
  let namespaced: RunningSandbox;
  beforeAll(async () => {
    namespaced = await startSandbox({ port: 0, config: { scheduler: { namespaces: ['prod'] } } });
  });
  afterAll(async () => {
    await namespaced?.close();
  });

  it('plans two jobs of one name in two namespaces, and a role of one name in two namespaces', async () => {
    const dir = tempDir('converge-same-name-');
    const job = (namespace: string) =>
      `apiVersion: converge/v1\nkind: Job\nmetadata: { name: cache, namespace: ${namespace} }\nspec:\n  Type: service\n  Datacenters: [dc1]\n  TaskGroups:\n    - Name: web\n      Tasks: [{ Name: app, Driver: docker, Config: { image: "redis:7" } }]\n`;
    const prodRole = `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: twin, namespace: prod }\nspec: { Description: prod }\n`;
    writeFileSync(path.join(dir, 'jobs.yaml'), `${job('default')}---\n${job('prod')}`);
    writeFileSync(path.join(dir, 'roles.yaml'), `${role('twin', 'default')}---\n${prodRole}`);
    const env = {
      ...namespaced.env(),
      NO_COLOR: '1',
      CONVERGE_STATE_DIR: tempDir('converge-same-name-state-'),
    };
    const applied = await runCli(['apply', '-f', dir, '--auto-approve'], env);
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    // Read back by id now: the same job name in two namespaces is two jobs.
    const plan = await runCli(['plan', '-f', dir, '--detailed-exitcode'], env);
    expect(plan.code, plan.stdout + plan.stderr).toBe(0);
    expect(plan.stdout).toContain('No changes.');
  });
});
