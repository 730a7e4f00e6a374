/**
 * The fault run at small N: `converge apply` of objects of every kind against services that
 * answer 10% of requests with a 503 and drop 5% of connections (half of them after acting), with a
 * fixed seed so the run repeats. Every object is applied once, none fails, none is duplicated, and a
 * plan afterwards has nothing to do. In-process against the sandbox.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

const times = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i));

const ROLES = 8;
const WORKSPACES = 4;
const GROUPS = 4;
const USERS = 4;
const JOBS = 2;
const OBJECTS = ROLES + WORKSPACES + 1 + GROUPS + USERS + JOBS;

function writeManifest(dir: string): void {
  writeFileSync(
    path.join(dir, 'roles.yaml'),
    times(
      ROLES,
      (i) =>
        `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: fr-${i} }\nspec:\n  Description: r${i}\n`,
    ).join('---\n'),
  );
  writeFileSync(
    path.join(dir, 'workspaces.yaml'),
    times(
      WORKSPACES,
      (i) =>
        `apiVersion: converge/v1\nkind: Workspace\nmetadata: { name: fw-${i}, namespace: sandbox }\nspec:\n  description: w${i}\n`,
    ).join('---\n'),
  );
  writeFileSync(
    path.join(dir, 'directory.yaml'),
    [
      `apiVersion: converge/v1\nkind: LdapConfig\nmetadata: { name: ldap }\nspec: { url: 'ldap://ldap.test', userdn: 'ou=people,dc=t', groupdn: 'ou=groups,dc=t' }\n`,
      ...times(
        GROUPS,
        (i) =>
          `apiVersion: converge/v1\nkind: LdapGroup\nmetadata: { name: g-${i} }\nspec: { policies: [p${i}] }\n`,
      ),
      ...times(
        USERS,
        (i) =>
          `apiVersion: converge/v1\nkind: LdapUser\nmetadata: { name: u-${i} }\nspec: { policies: [u${i}], groups: [g-${i % GROUPS}] }\n`,
      ),
    ].join('---\n'),
  );
  writeFileSync(
    path.join(dir, 'jobs.yaml'),
    times(
      JOBS,
      (i) => `apiVersion: converge/v1
kind: Job
metadata: { name: fj-${i} }
spec:
  Type: service
  Datacenters: [dc1]
  TaskGroups:
    - Name: app
      Count: 1
      Tasks:
        - { Name: app, Driver: docker, Config: { image: "app:${i}" }, Resources: { CPU: 10, MemoryMB: 10 } }
`,
    ).join('---\n'),
  );
}

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({
    port: 0,
    config: { faults: { failRate: 0.1, resetRate: 0.05, seed: 1 } },
  });
});
afterAll(async () => {
  await sandbox?.close();
});

/** The sandbox's environment with a fresh state folder (an inventory of its own). */
function faultyEnv(statePrefix: string): Record<string, string> {
  return { ...sandbox.env(), CONVERGE_STATE_DIR: tempDir(statePrefix), NO_COLOR: '1' };
}

/** A read of the role list that itself goes through the faults: bounded tries until one is answered. */
async function roleNames(): Promise<string[]> {
  for (let i = 0; i < 20; i++) {
    try {
      const res = await fetch(`${sandbox.url}/v1/acl/roles`, {
        headers: { authorization: `Bearer ${sandbox.rootToken}` },
        signal: AbortSignal.timeout(5_000),
      });
      if (res.ok) return ((await res.json()) as { Name: string }[]).map((r) => r.Name);
    } catch {
      // a dropped connection: try again
    }
  }
  throw new Error('no answer to the role list in 20 tries');
}

describe('an apply of every kind under 10% 503s and 5% dropped connections (seed 1, one request at a time so the seed decides which request fails)', () => {
  it('applies every object once, fails none, and leaves nothing to plan', async () => {
    const dir = tempDir('converge-faults-');
    writeManifest(dir);
    const env = faultyEnv('converge-faults-state-');
    const applied = await runCli(['apply', '-f', dir, '--auto-approve', '--parallelism', '1'], env);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toContain(`${OBJECTS} applied, 0 failed`);
    // The faults the run went through, counted after the counts: the retry lines have scrolled away.
    const along = /Along the way: (\d+) requests? sent again/.exec(applied.stdout);
    // Each request the HTTP layer sent again, and each create the applier sent again after reading
    // it back: both are lines of their own, and both are requests sent again.
    const output = (applied.stdout + applied.stderr).split('\n');
    const retried = output.filter((l) => / failed \(.*\); retrying /.test(l)).length;
    const resent = output.filter((l) => /not found by its key, so it is sent again/.test(l)).length;
    expect(Number(along?.[1])).toBe(retried + resent);

    const after = await runCli(['plan', '-f', dir, '--detailed-exitcode', '--parallelism', '1'], env);
    expect(after.code, after.stdout + after.stderr).toBe(0);

    // Roles get their ID from the service, so a resent create would show as a second role by name.
    const names = (await roleNames()).filter((n) => n.startsWith('fr-'));
    expect(names.sort()).toEqual(times(ROLES, (i) => `fr-${i}`).sort());
  });

  it('updates every object under the same faults: a workspace PATCH and a job register are sent again too', async () => {
    const dir = tempDir('converge-faults-update-');
    writeManifest(dir);
    const env = faultyEnv('converge-faults-update-state-');
    const made = await runCli(['apply', '-f', dir, '--auto-approve', '--parallelism', '1'], env);
    expect(made.code, made.stderr).toBe(0);
    // Every workspace, job and role changes, several times over, so that faults land on their writes.
    for (const round of [1, 2, 3]) {
      for (const file of ['workspaces.yaml', 'jobs.yaml', 'roles.yaml']) {
        const text = readFileSync(path.join(dir, file), 'utf8');
        writeFileSync(
          path.join(dir, file),
          text
            .replace(/description: w(\d+)(-\d+)?/g, `description: w$1-${round}`)
            .replace(/image: "app:(\d+)(-\d+)?"/g, `image: "app:$1-${round}"`)
            .replace(/Description: r(\d+)(-\d+)?/g, `Description: r$1-${round}`),
        );
      }
      const applied = await runCli(['apply', '-f', dir, '--auto-approve', '--parallelism', '1'], env);
      expect(applied.code, applied.stdout + applied.stderr).toBe(0);
      expect(applied.stdout).toContain(`${ROLES + WORKSPACES + JOBS} applied, 0 failed`);
    }
    const after = await runCli(['plan', '-f', dir, '--detailed-exitcode', '--parallelism', '1'], env);
    expect(after.code, after.stdout + after.stderr).toBe(0);
  });
});
