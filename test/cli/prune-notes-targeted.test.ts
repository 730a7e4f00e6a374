/**
 * What `--prune` leaves of the inventory's own objects ("Not pruned": a job on a Connection whose
 * namespace the manifest no longer manages; "Not found": a role deleted by hand) under `--target` and
 * `--exclude`: listed when the patterns cover it, as the prune's deletions are, not dropped whenever
 * a pattern is given. `--target 'Job/**'` once said "No changes" and `out_of_scope: []` about the
 * job on Connection eu-sched it names. A pattern may also name such an object, as the plan prints it.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlanJson } from '../../src/planner/render/json.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

const EU_TOKEN = 'prune-notes-eu-token-6b02';
let home: RunningSandbox;
let eu: RunningSandbox;
let env: Record<string, string | undefined>;

const job = (connection?: string) => `apiVersion: converge/v1
kind: Job
metadata: { name: cache, namespace: default${connection ? `, connection: ${connection}` : ''} }
spec:
  Type: service
  Datacenters: [dc1]
  TaskGroups:
    - Name: cache
      Count: 1
      Tasks:
        - { Name: redis, Driver: docker, Config: { image: "redis:7" }, Resources: { CPU: 100, MemoryMB: 64 } }
`;
const role = (name: string) =>
  `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: ${name} }\nspec: { Description: ${name} }\n`;

function manifest(...docs: string[]): string {
  const dir = tempDir('converge-prune-notes-');
  const connection = `apiVersion: converge/v1\nkind: Connection\nmetadata: { name: eu-sched }\nspec: { service: scheduler, address: "${eu.url}", token: "\${env:EU_TOKEN}" }\n`;
  writeFileSync(path.join(dir, 'm.yaml'), [connection, ...docs].join('---\n'));
  return dir;
}

/** The manifest once the eu-sched job and the role deleted by hand have left it. */
let dropped: string;
const NOT_PRUNED = 'Job@eu-sched/default/cache';
const NOT_FOUND = 'AclRole/default/gone-by-hand';

async function plan(...flags: string[]) {
  const r = await runCli(['plan', '-f', dropped, '--prune', ...flags], env);
  expect(r.code, r.stdout + r.stderr).toBe(0);
  return r;
}
async function planJson(...flags: string[]): Promise<PlanJson> {
  return JSON.parse((await plan('--json', ...flags)).stdout) as PlanJson;
}

beforeAll(async () => {
  home = await startSandbox({ port: 0, token: 'prune-notes-home-token-1c9d' });
  eu = await startSandbox({ port: 0, token: EU_TOKEN });
  env = {
    ...home.env(),
    NO_COLOR: '1',
    CONVERGE_STATE_DIR: tempDir('converge-prune-notes-state-'),
    EU_TOKEN,
    CONVERGE_ALLOW_ENV: 'EU_TOKEN',
    CONVERGE_ALLOW_ADDRESSES: eu.url,
  };
  const all = manifest(job(), job('eu-sched'), role('kept'), role('gone-by-hand'));
  const applied = await runCli(['apply', '-f', all, '--auto-approve'], env);
  expect(applied.code, applied.stdout + applied.stderr).toBe(0);
  const found = await fetch(`${home.url}/v1/acl/role/name/gone-by-hand`, {
    headers: { 'X-Consul-Token': home.rootToken },
  });
  const { ID } = (await found.json()) as { ID: string };
  const deleted = await fetch(`${home.url}/v1/acl/role/${ID}`, {
    method: 'DELETE',
    headers: { 'X-Consul-Token': home.rootToken },
  });
  expect(deleted.status).toBe(200);
  dropped = manifest(job(), role('kept'));
});
afterAll(async () => {
  await Promise.all([home?.close(), eu?.close()]);
});

describe('--prune with patterns: the inventory objects the prune leaves', () => {
  it('lists the job out of reach on Connection eu-sched under --target Job/**, in text, JSON and markdown', async () => {
    const untargeted = await planJson();
    expect(untargeted.pruned.out_of_scope).toEqual([NOT_PRUNED]);
    expect(untargeted.pruned.not_found).toEqual([NOT_FOUND]);

    const text = await plan('--target', 'Job/**');
    expect(text.stdout).toContain(`Not pruned: 1 object the inventory records as created by Converge`);
    expect(text.stdout).toContain(`  ${NOT_PRUNED}\n`);
    const json = await planJson('--target', 'Job/**');
    expect(json.pruned.out_of_scope).toEqual([NOT_PRUNED]);
    // Roles are no kind the target names: neither listed nor said to be missing.
    expect(json.pruned.not_found).toEqual([]);
    const markdown = await plan('--target', 'Job/**', '--markdown');
    expect(markdown.stdout).toContain(`> - \`${NOT_PRUNED}\``);
  });

  it('lists what the patterns cover only: a role deleted by hand under --target AclRole/**, not the job', async () => {
    const json = await planJson('--target', 'AclRole/**');
    expect(json.pruned.not_found).toEqual([NOT_FOUND]);
    expect(json.pruned.out_of_scope).toEqual([]);
    // The role is no deletion left out: it was found missing, not live.
    expect(json.targeted?.prune_left_out).toEqual([]);
    const excluded = await planJson('--exclude', 'Job@eu-sched/**');
    expect(excluded.pruned.out_of_scope).toEqual([]);
    expect(excluded.pruned.not_found).toEqual([NOT_FOUND]);
  });

  it('takes a pattern that names only such an object, as the plan prints it', async () => {
    const text = await plan('--target', 'Job@eu-sched/**');
    // Not "left every object out" above the object the pattern named.
    expect(text.stdout).toContain(
      'Nothing was planned: the patterns select no object to change (see above), only what --prune leaves (listed below).',
    );
    expect(text.stdout).toContain(`  ${NOT_PRUNED}\n`);
    const markdown = await plan('--target', 'Job@eu-sched/**', '--markdown');
    expect(markdown.stdout).toContain('only what --prune leaves (listed above)');
    expect((await planJson('--target', NOT_FOUND)).pruned.not_found).toEqual([NOT_FOUND]);
    // A pattern that names nothing at all is still refused, naming what the prune lists too.
    const typo = await runCli(['plan', '-f', dropped, '--prune', '--target', 'Job@eu/**'], env);
    expect(typo.code).toBe(1);
    expect(typo.stderr).toContain('--target Job@eu/** matches no object of the manifest');
  });
});
