/**
 * `converge export` against the sandbox: objects of every kind, applied by Converge or made behind
 * its back through the service clients, exported and planned again: no changes. Secrets come out as
 * `${env:…}` placeholders with a note, never as values; text from a service is never read as a
 * reference when the export is planned.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registryService } from '../../src/clients/registry/definition.js';
import { schedulerService } from '../../src/clients/scheduler/definition.js';
import { secretsService } from '../../src/clients/secrets/definition.js';
import { workspacesService } from '../../src/clients/workspaces/definition.js';
import { connect } from '../../src/engine/workflow.js';
import type { PlanJson } from '../../src/planner/render/json.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

const BINDPASS = 'planted-bindpass-6f0c2d9e41';
// Secrets a job made by hand carries in entries whose names say so: the service does not mark them.
const DB_PASSWORD = 'planted-db-password-93c1';
const META_TOKEN = 'planted-meta-token-5d7e';
const JOB_SECRETS = {
  JOB_DEFAULT_BY_HAND_META_API_TOKEN: META_TOKEN,
  JOB_DEFAULT_BY_HAND_TASKGROUPS_G_TASKS_T_ENV_DB_PASSWORD: DB_PASSWORD,
};
let sandbox: RunningSandbox;
let env: Record<string, string | undefined>;

const MANIFEST = `apiVersion: converge/v1
kind: LdapConfig
metadata: { name: ldap }
spec:
  url: ldap://127.0.0.1:1
  binddn: cn=svc,dc=example,dc=test
  bindpass: \${env:EXPORT_BINDPASS}
  userdn: ou=people,dc=example,dc=test
  token_ttl: 1h
---
apiVersion: converge/v1
kind: LdapGroup
metadata: { name: ops }
spec: { policies: [ops, Metrics-Read] }
---
apiVersion: converge/v1
kind: LdapUser
metadata: { name: alice }
spec: { policies: [oncall], groups: [ops] }
---
apiVersion: converge/v1
kind: AclRole
metadata: { name: web-readers }
spec:
  Description: Read access for the web tier
  Policies: [{ Name: service-read }]
  ServiceIdentities: [{ ServiceName: web, Datacenters: [dc2, dc1] }]
  NodeIdentities: [{ NodeName: web-node-1, Datacenter: dc1 }]
---
apiVersion: converge/v1
kind: Workspace
metadata: { name: web-prod }
spec:
  description: Production web tier
  auto-apply: true
  working-directory: envs/prod
  tag-names: [web, prod]
  trigger-prefixes: [modules/]
---
apiVersion: converge/v1
kind: Job
metadata: { name: report }
spec:
  Type: batch
  Datacenters: [dc1]
  Meta: { team: reports }
  TaskGroups:
    - Name: run
      Count: 2
      Tasks:
        - Name: report
          Driver: exec
          Config: { command: /usr/local/bin/report }
          Env: { MODE: nightly }
          Resources: { CPU: 100, MemoryMB: 128 }
`;

beforeAll(async () => {
  sandbox = await startSandbox({
    port: 0,
    token: 'export-root-token-0b7a55',
    config: {
      registry: {
        policies: [
          { Name: 'service-read', Description: 'read services' },
          { Name: 'node-read', Description: 'read nodes' },
        ],
      },
      // A mount with nothing on it: empty, which an export says, unlike one that is not there.
      secrets: { mounts: [{ path: 'empty-ldap' }] },
    },
  });
  env = {
    ...sandbox.env(),
    NO_COLOR: '1',
    CONVERGE_STATE_DIR: tempDir('converge-export-state-'),
    CONVERGE_ALLOW_ENV: 'EXPORT_BINDPASS',
    EXPORT_BINDPASS: BINDPASS,
  };
  const dir = tempDir('converge-export-src-');
  writeFileSync(path.join(dir, 'all.yaml'), MANIFEST);
  const applied = await runCli(['apply', '-f', dir, '--auto-approve'], env);
  expect(applied.stderr).toBe('');
  expect(applied.code).toBe(0);
});
afterAll(async () => {
  await sandbox?.close();
});

function outDir(): string {
  return path.join(tempDir('converge-export-out-'), 'exported');
}

function exportedText(dir: string): string {
  return readdirSync(dir)
    .map((f) => readFileSync(path.join(dir, f), 'utf8'))
    .join('\n');
}

/** Plans a folder as JSON; the exit code and every change that is not a noop. */
async function planOf(dir: string, extraEnv: Record<string, string> = {}) {
  const r = await runCli(['plan', '-f', dir, '--json', '--detailed-exitcode'], { ...env, ...extraEnv });
  expect(r.stderr).toBe('');
  const plan = JSON.parse(r.stdout) as PlanJson;
  return { code: r.code, plan, changed: plan.changes.filter((c) => c.action !== 'noop') };
}

describe('export of what Converge applied', () => {
  let dir: string;
  let stdout: string;
  beforeAll(async () => {
    dir = outDir();
    const r = await runCli(['export', '-o', dir], env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    stdout = r.stdout;
  });

  it("prints the import that makes them Converge's, which runs as printed", async () => {
    const line = stdout.split('\n').find((l) => l.startsWith('To have Converge manage them'));
    expect(line).toBeDefined();
    const command = /: converge (import '\*\*' -f \S+) --allow-env '([^']+)'$/.exec(line!);
    expect(command).not.toBeNull();
    const args = ['import', '**', '-f', dir, '--allow-env', command![2]!];
    const own = { ...env, CONVERGE_STATE_DIR: tempDir('converge-export-import-state-') };
    const variables = Object.fromEntries(command![2]!.split(',').map((v) => [v, 'x']));
    const r = await runCli(args, { ...own, ...variables });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Imported AclRole/default/web-readers');
  });

  it('writes one readable file per kind', () => {
    expect(readdirSync(dir).sort()).toEqual([
      'AclRole.yaml',
      'Job.yaml',
      'LdapConfig.yaml',
      'LdapGroup.yaml',
      'LdapUser.yaml',
      'Workspace.yaml',
    ]);
    const role = readFileSync(path.join(dir, 'AclRole.yaml'), 'utf8');
    expect(role).toContain('kind: AclRole\nmetadata:\n  name: web-readers\n  namespace: default\n');
    // No ids, indexes or ownership marker: what a user writes.
    const job = readFileSync(path.join(dir, 'Job.yaml'), 'utf8');
    expect(job).not.toMatch(/ModifyIndex|SubmitTime|converge-managed|Status:/);
    // Nor what the scheduler fills in for a job that does not say (its defaults).
    expect(job).not.toMatch(
      /Region: global|Priority: 50|NodePool: default|KillTimeout|LogConfig|EphemeralDisk|RestartPolicy|ReschedulePolicy/,
    );
    const workspace = readFileSync(path.join(dir, 'Workspace.yaml'), 'utf8');
    expect(workspace).not.toContain('Default Project');
    const group = readFileSync(path.join(dir, 'LdapGroup.yaml'), 'utf8');
    expect(group).toContain('mount: ldap');
  });

  /** `export --kind Job` to a folder of its own: the folder and its Job.yaml. */
  async function exportJobs(): Promise<{ out: string; text: string }> {
    const out = outDir();
    const r = await runCli(['export', '-o', out, '--kind', 'Job'], env);
    expect(r.code, r.stderr).toBe(0);
    return { out, text: readFileSync(path.join(out, 'Job.yaml'), 'utf8') };
  }

  /**
   * Runs `check` while a job `id` made by hand (not by Converge) runs, its one task shaped by
   * `shape`; purged after, so the other exports of this sandbox stay as they were.
   */
  async function withHandMadeJob(
    id: string,
    shape: (task: Record<string, unknown>) => void,
    check: () => Promise<void>,
  ): Promise<void> {
    const connections = connect(undefined, { env });
    try {
      const job = await connections
        .client(schedulerService)
        .parseJob(
          `job "${id}" {\n  datacenters = ["dc1"]\n  group "g" {\n    task "t" {\n      driver = "exec"\n      config { command = "/bin/true" }\n    }\n  }\n}\n`,
        );
      shape(job.TaskGroups![0]!.Tasks![0]!);
      await connections.client(schedulerService).registerJob(job, { namespace: 'default' });
    } finally {
      await connections.close();
    }
    try {
      await check();
    } finally {
      const cleanup = connect(undefined, { env });
      await cleanup
        .client(schedulerService)
        .stopJob(id, { namespace: 'default', purge: true })
        .finally(() => cleanup.close());
    }
  }

  it('names a secret entry whose name holds dots as a plan does: one quoted key', async () => {
    const secret = 'planted-dotted-secret-7a1b';
    await withHandMadeJob(
      'dotted',
      (task) => {
        task.Env = { 'spring.datasource.password': secret, MODE: 'x' };
      },
      async () => {
        const { text } = await exportJobs();
        expect(text).not.toContain(secret);
        expect(text).toContain(
          '# TaskGroups[g].Tasks[t].Env["spring.datasource.password"] is secret and not exported: set JOB_DEFAULT_DOTTED_TASKGROUPS_G_TASKS_T_ENV_SPRING_DATASOURCE_PASSWORD',
        );
      },
    );
  });

  it("writes a secret's copies under other names as its placeholder too, and the export plans clean", async () => {
    // A new-user trial: DB_PASSWORD became a placeholder, and its copies in Env.DSN and the task's
    // args were written in clear two lines below.
    const secret = 'planted-copied-secret-4c9d';
    await withHandMadeJob(
      'copied',
      (task) => {
        task.Env = { DB_PASSWORD: secret, DSN: `postgres://u:${secret}@db/x`, MODE: 'x' };
        task.Config = { command: '/bin/true', args: ['--db', secret] };
      },
      async () => {
        const { out, text } = await exportJobs();
        expect(text).not.toContain(secret);
        const variable = 'JOB_DEFAULT_COPIED_TASKGROUPS_G_TASKS_T_ENV_DB_PASSWORD';
        expect(text).toContain(`DSN: postgres://u:\${env:${variable}}@db/x`);
        expect(text).toContain(`- \${env:${variable}}`);
        expect(text).toContain(
          `# ${variable} also fills the copies of its secret in other fields of this object`,
        );
        // Filled in, the export is the live job again.
        const planned = await runCli(['plan', '-f', out, '--json', '--target', 'Job/default/copied'], {
          ...env,
          CONVERGE_ALLOW_ENV: variable,
          [variable]: secret,
        });
        expect(planned.stderr).toBe('');
        // Made by hand, it gains Converge's ownership marker; the env, the DSN and the args are as live.
        const [change] = (
          JSON.parse(planned.stdout) as { changes: { address: string; diffs: { path: string }[] }[] }
        ).changes;
        expect(change!.address).toBe('Job/default/copied');
        expect(change!.diffs.map((d) => d.path)).toEqual(['Meta.converge-managed']);
      },
    );
  });

  it('plans with no changes for every kind', async () => {
    const { code, plan, changed } = await planOf(dir, {
      CONVERGE_ALLOW_ENV: 'LDAPCONFIG_LDAP_BINDPASS',
      LDAPCONFIG_LDAP_BINDPASS: BINDPASS,
    });
    expect(changed).toEqual([]);
    expect(plan.problems ?? []).toEqual([]);
    expect(code).toBe(0);
    expect(new Set(plan.changes.map((c) => c.kind))).toEqual(
      new Set(['AclRole', 'Job', 'LdapConfig', 'LdapGroup', 'LdapUser', 'Workspace']),
    );
  });

  it('writes the bind password as a placeholder with a note, never its value', () => {
    const text = exportedText(dir);
    expect(text).not.toContain(BINDPASS);
    expect(readFileSync(path.join(dir, 'LdapConfig.yaml'), 'utf8')).toContain(
      '# bindpass is secret and not exported: set LDAPCONFIG_LDAP_BINDPASS and allow it with --allow-env LDAPCONFIG_LDAP_BINDPASS (or CONVERGE_ALLOW_ENV)\n',
    );
    expect(text).toContain('bindpass: ${env:LDAPCONFIG_LDAP_BINDPASS}');
    expect(stdout).toContain('converge plan -f ' + dir + " --allow-env 'LDAPCONFIG_LDAP_BINDPASS'");
    expect(stdout).not.toContain(BINDPASS);
  });

  it('refuses an organization or mount that does not exist, in the words plan uses', async () => {
    const org = await runCli(['export', '-o', outDir(), '--kind', 'Workspace', '--namespace', 'sandbx'], env);
    expect([org.code, org.stderr.trim()]).toEqual([
      1,
      'Error: Workspace: organization "sandbx" does not exist, or this token may not see it; nothing was exported (check --namespace sandbx)',
    ]);
    for (const kind of ['LdapGroup', 'LdapUser', 'LdapConfig']) {
      const mount = await runCli(['export', '-o', outDir(), '--kind', kind, '--namespace', 'ldpa'], env);
      expect([mount.code, mount.stderr.trim()]).toEqual([
        1,
        `Error: ${kind}: nothing is mounted at auth/ldpa on the secrets service; nothing was exported (check --namespace ldpa)`,
      ]);
    }
    // Every missing scope is named at once; nothing is written, not even the folder.
    const out = outDir();
    const all = await runCli(['export', '-o', out, '--namespace', 'nope'], env);
    expect(all.code).toBe(1);
    expect(all.stderr).toContain('nothing was exported: these do not exist (check --namespace nope):\n');
    expect(all.stderr).toContain('  Workspace: organization "nope" does not exist');
    expect(all.stderr).toContain('  LdapUser: nothing is mounted at auth/nope on the secrets service');
    expect(existsSync(out)).toBe(false);
    // The default organization, when it is the setting that is wrong, is named with where it came from.
    const unset = await runCli(['export', '-o', outDir(), '--kind', 'Workspace'], {
      ...env,
      CONVERGE_WORKSPACES_ORGANIZATION: 'sandbx',
    });
    expect(unset.stderr).toContain(
      'Workspace: organization "sandbx" (from CONVERGE_WORKSPACES_ORGANIZATION) does not exist, or this token may not see it',
    );
    expect(unset.code).toBe(1);
  });

  it('says a mount that exists holds nothing, with exit 0', async () => {
    const r = await runCli(
      ['export', '-o', outDir(), '--kind', 'LdapGroup', '--kind', 'LdapUser', '--namespace', 'empty-ldap'],
      env,
    );
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout.trim()).toBe(
      'Nothing to export: namespace "empty-ldap" exists and holds no live object of the kinds asked for.',
    );
  });

  it('says plainly that nothing was found in a scheduler namespace, which lists as empty when missing', async () => {
    const r = await runCli(['export', '-o', outDir(), '--kind', 'Job', '--namespace', 'nope'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(
      'Nothing to export: nothing was found in namespace "nope". The registry and the scheduler list a namespace that does not exist as empty: check that it exists and is spelt so.',
    );
  });

  it('--kind exports one kind; an unknown one is named', async () => {
    const only = outDir();
    expect((await runCli(['export', '-o', only, '--kind', 'AclRole'], env)).code).toBe(0);
    expect(readdirSync(only)).toEqual(['AclRole.yaml']);
    const bad = await runCli(['export', '-o', outDir(), '--kind', 'AclRoles'], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--kind AclRoles: no such kind; did you mean AclRole?');
    // Nothing like any kind: no misleading guess, only the list.
    const bogus = await runCli(['export', '-o', outDir(), '--kind', 'bogus'], env);
    expect(bogus.code).toBe(1);
    expect(bogus.stderr).toContain('--kind bogus: no such kind. Kinds: ');
    expect(bogus.stderr).not.toContain('did you mean');
  });

  it('creates missing folders, and says which part of the path is in the way', async () => {
    const nested = path.join(outDir(), 'a', 'b');
    expect((await runCli(['export', '-o', nested, '--kind', 'AclRole'], env)).code).toBe(0);
    expect(readdirSync(nested)).toEqual(['AclRole.yaml']);
    const file = path.join(nested, 'AclRole.yaml');
    const under = await runCli(['export', '-o', path.join(file, 'x'), '--kind', 'AclRole'], env);
    expect([under.code, under.stderr.trim()]).toEqual([
      1,
      `Error: cannot create the folder ${path.join(file, 'x')}: part of the path is a file, not a folder (-o)`,
    ]);
    const onFile = await runCli(['export', '-o', file, '--kind', 'AclRole'], env);
    expect(onFile.stderr.trim()).toBe(
      `Error: cannot create the folder ${file}: a file of that name is in the way (-o)`,
    );
    const slashed = await runCli(['export', '-o', `${file}/`, '--kind', 'AclRole'], env);
    expect(slashed.stderr.trim()).toBe(
      `Error: cannot create the folder ${file}/: a file of that name is in the way (-o)`,
    );
  });

  it('never replaces a file that exists', async () => {
    const r = await runCli(['export', '-o', dir, '--kind', 'AclRole'], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('AclRole.yaml already exists');
  });

  it('checks every file before writing any: a refused export writes nothing', async () => {
    const mine = outDir();
    mkdirSync(mine, { recursive: true });
    writeFileSync(path.join(mine, 'LdapGroup.yaml'), '# mine\n');
    const r = await runCli(['export', '-o', mine], env);
    expect([r.code, r.stderr.trim()]).toEqual([
      1,
      `Error: ${path.join(mine, 'LdapGroup.yaml')} already exists: export writes new files only; remove it or choose another folder (-o); nothing was written`,
    ]);
    // AclRole.yaml, Job.yaml and LdapConfig.yaml come before it: none of them was written.
    expect(readdirSync(mine)).toEqual(['LdapGroup.yaml']);
    expect(readFileSync(path.join(mine, 'LdapGroup.yaml'), 'utf8')).toBe('# mine\n');
    // Every file in the way is named at once.
    writeFileSync(path.join(mine, 'Job.yaml'), '# mine too\n');
    const two = await runCli(['export', '-o', mine], env);
    expect(two.stderr).toContain(`2 files already exist in ${mine} (Job.yaml, LdapGroup.yaml)`);
    expect(readdirSync(mine).sort()).toEqual(['Job.yaml', 'LdapGroup.yaml']);
  });
});

describe('export through a Connection', () => {
  let conn: string;
  beforeAll(() => {
    conn = tempDir('converge-export-conn-');
    writeFileSync(
      path.join(conn, 'connection.yaml'),
      `apiVersion: converge/v1\nkind: Connection\nmetadata: { name: eu-registry }\nspec:\n  service: registry\n  address: ${env.CONVERGE_REGISTRY_ADDR}\n  token: ${env.CONVERGE_REGISTRY_TOKEN}\n`,
    );
  });

  it('exports only the kinds of its service, and the plan line gives the manifest that declares it', async () => {
    const dir = outDir();
    const r = await runCli(['export', '-o', dir, '--connection', 'eu-registry', '-f', conn], env);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(readdirSync(dir)).toEqual(['AclRole.yaml']);
    expect(readFileSync(path.join(dir, 'AclRole.yaml'), 'utf8')).toContain('  connection: eu-registry\n');
    expect(r.stdout).toContain(
      `Plan it with: converge plan -f ${dir} -f ${path.join(conn, 'connection.yaml')}\n`,
    );
    // The line printed plans: the folder alone would not, for want of the Connection.
    const plan = await runCli(['plan', '-f', dir, '-f', conn, '--detailed-exitcode'], env);
    expect([plan.code, plan.stderr]).toEqual([0, '']);
  });

  it('names the files that declare the Connection, not a project folder that declares exported objects too', async () => {
    const project = tempDir('converge-export-project-');
    writeFileSync(
      path.join(project, 'connection.yaml'),
      readFileSync(path.join(conn, 'connection.yaml'), 'utf8'),
    );
    const role =
      'apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: declared-on-eu, connection: eu-registry }\nspec: { Description: on eu }\n';
    writeFileSync(path.join(project, 'roles.yaml'), role);
    expect((await runCli(['apply', '-f', project, '--auto-approve'], env)).code).toBe(0);
    const dir = outDir();
    const r = await runCli(['export', '-o', dir, '--connection', 'eu-registry', '-f', project], env);
    expect([r.code, r.stderr]).toEqual([0, '']);
    const connFile = path.join(project, 'connection.yaml');
    expect(r.stdout).toContain(`Plan it with: converge plan -f ${dir} -f ${connFile}\n`);
    expect(r.stdout).not.toContain('declared twice');
    // Run as printed: the project's roles.yaml is not read, so the exported role is declared once.
    const plan = await runCli(['plan', '-f', dir, '-f', connFile, '--detailed-exitcode'], env);
    expect([plan.code, plan.stderr]).toEqual([0, '']);

    // A Connection file that declares an exported object itself: said before the plan line.
    const together = tempDir('converge-export-project-');
    writeFileSync(path.join(together, 'all.yaml'), `${readFileSync(connFile, 'utf8')}---\n${role}`);
    const again = await runCli(
      ['export', '-o', outDir(), '--connection', 'eu-registry', '-f', together],
      env,
    );
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(
      `1 exported object is declared in the manifest that declares connection "eu-registry" too (AclRole@eu-registry/default/declared-on-eu at ${path.join(together, 'all.yaml')}:10:1): delete it from one place, or the plan below reports it as declared twice.`,
    );
  });

  it('gives the -f folder when the Connection file reads a file beside its own folder', async () => {
    const infra = tempDir('converge-export-infra-');
    mkdirSync(path.join(infra, 'conns'));
    mkdirSync(path.join(infra, 'secrets'));
    writeFileSync(path.join(infra, 'secrets', 'eu-token'), env.CONVERGE_REGISTRY_TOKEN!);
    writeFileSync(
      path.join(infra, 'conns', 'eu.yaml'),
      `apiVersion: converge/v1\nkind: Connection\nmetadata: { name: eu-registry }\nspec:\n  service: registry\n  address: ${env.CONVERGE_REGISTRY_ADDR}\n  token: "\${file:../secrets/eu-token}"\n`,
    );
    const dir = outDir();
    const r = await runCli(['export', '-o', dir, '--connection', 'eu-registry', '-f', infra], env);
    expect([r.code, r.stderr]).toEqual([0, '']);
    // The Connection file alone is refused (its token file lies outside its folder): the folder loads.
    expect(r.stdout).toContain(`Plan it with: converge plan -f ${dir} -f ${infra}\n`);
    const plan = await runCli(['plan', '-f', dir, '-f', infra, '--detailed-exitcode'], env);
    expect([plan.code, plan.stderr]).toEqual([0, '']);
  });

  it('says which manifest to give, and refuses a kind of another service', async () => {
    const none = await runCli(['export', '-o', outDir(), '--connection', 'eu-registry'], env);
    expect([none.code, none.stderr.trim()]).toEqual([
      1,
      'Error: --connection eu-registry: no Connection of that name is declared; give the manifest that declares it with -f',
    ]);
    const job = await runCli(
      ['export', '-o', outDir(), '--connection', 'eu-registry', '-f', conn, '--kind', 'Job'],
      env,
    );
    expect([job.code, job.stderr.trim()]).toEqual([
      1,
      'Error: --kind Job: Connection "eu-registry" is declared for the registry service, not the scheduler service',
    ]);
  });
});

describe('export of objects made outside Converge', () => {
  let dir: string;
  beforeAll(async () => {
    const connections = connect(undefined, { env });
    try {
      // A hostile description: a reference, were it read as one, would pull a variable into a plan.
      await connections.client(registryService).createRole(
        {
          Name: 'by-hand',
          Description: 'made by ${env:EXPORT_BINDPASS} hand',
          Policies: [{ Name: 'node-read' }],
          ServiceIdentities: [],
          NodeIdentities: [],
        },
        { namespace: 'default' },
      );
      await connections.client(secretsService).writeLdapGroup('ldap', 'by-hand', { policies: ['dev'] });
      await connections
        .client(secretsService)
        .writeLdapUser('ldap', 'bob', { policies: ['dev'], groups: ['by-hand'] });
      const org = env.CONVERGE_WORKSPACES_ORGANIZATION!;
      await connections.client(workspacesService).createWorkspace(org, {
        name: 'by-hand',
        description: 'made by hand',
        'execution-mode': 'local',
      });
      const job = await connections
        .client(schedulerService)
        .parseJob(
          `job "by-hand" {\n  datacenters = ["dc1"]\n  meta {\n    owner = "ops"\n    api_token = "${META_TOKEN}"\n  }\n  update {\n    max_parallel = 2\n    min_healthy_time = "30s"\n  }\n  group "g" {\n    task "t" {\n      driver = "exec"\n      config { command = "/bin/true" }\n      env {\n        MODE = "nightly"\n        DB_PASSWORD = "${DB_PASSWORD}"\n      }\n    }\n  }\n}\n`,
        );
      await connections.client(schedulerService).registerJob(job, { namespace: 'default' });
      // A group that turns off what the job's update turns on: its false and 0 say something.
      const groups = await connections
        .client(schedulerService)
        .parseJob(
          'job "by-hand-groups" {\n  datacenters = ["dc1"]\n  update {\n    max_parallel = 2\n    auto_revert = true\n    canary = 2\n  }\n  group "g" {\n    update {\n      auto_revert = false\n      canary = 0\n    }\n    task "t" {\n      driver = "exec"\n      config { command = "/bin/true" }\n    }\n  }\n}\n',
        );
      await connections.client(schedulerService).registerJob(groups, { namespace: 'default' });
    } finally {
      await connections.close();
    }
    dir = outDir();
    const r = await runCli(['export', '-o', dir], env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });

  it('writes a job’s entries whose names say secret as placeholders, and the others as they are', () => {
    const text = readFileSync(path.join(dir, 'Job.yaml'), 'utf8');
    expect(text).not.toContain(DB_PASSWORD);
    expect(text).not.toContain(META_TOKEN);
    expect(text).toContain('DB_PASSWORD: ${env:JOB_DEFAULT_BY_HAND_TASKGROUPS_G_TASKS_T_ENV_DB_PASSWORD}');
    expect(text).toContain('api_token: ${env:JOB_DEFAULT_BY_HAND_META_API_TOKEN}');
    expect(text).toContain('MODE: nightly');
    expect(text).toContain('owner: ops');
    expect(text).toContain(
      '# TaskGroups[g].Tasks[t].Env.DB_PASSWORD is secret and not exported: set JOB_DEFAULT_BY_HAND_TASKGROUPS_G_TASKS_T_ENV_DB_PASSWORD',
    );
  });

  it('plans with no changes for every kind', async () => {
    const { code, plan, changed } = await planOf(dir, {
      CONVERGE_ALLOW_ENV: ['LDAPCONFIG_LDAP_BINDPASS', ...Object.keys(JOB_SECRETS)].join(','),
      LDAPCONFIG_LDAP_BINDPASS: BINDPASS,
      ...JOB_SECRETS,
    });
    // Converge marks the jobs it manages (Meta converge-managed) so prune can tell them: a job made
    // by hand gets that one entry on its first apply, and nothing else changes.
    expect(changed.map((c) => [c.address, c.diffs.map((d) => `${d.op} ${d.path}`)])).toEqual([
      ['Job/default/by-hand', ['add Meta.converge-managed']],
      ['Job/default/by-hand-groups', ['add Meta.converge-managed']],
    ]);
    expect(code).toBe(2);
    for (const address of [
      'AclRole/default/by-hand',
      'LdapGroup/ldap/by-hand',
      'LdapUser/ldap/bob',
      'Job/default/by-hand',
    ])
      expect(plan.changes.map((c) => c.address)).toContain(address);
    expect(plan.changes.some((c) => c.kind === 'Workspace' && c.name === 'by-hand')).toBe(true);
  });

  it('writes of an update block only what the job said, not the defaults the service completed it with', () => {
    const text = readFileSync(path.join(dir, 'Job.yaml'), 'utf8');
    const byHand = text.slice(text.indexOf('name: by-hand'));
    expect(byHand).toMatch(/Update:\n\s+MaxParallel: 2\n\s+MinHealthyTime: 30s\n/);
    expect(byHand).not.toMatch(/Stagger|HealthCheck|ProgressDeadline|HealthyDeadline/);
  });

  it('keeps a service text that looks like a reference as text', () => {
    const text = readFileSync(path.join(dir, 'AclRole.yaml'), 'utf8');
    expect(text).toContain('Description: made by $${env:EXPORT_BINDPASS} hand');
  });
});

describe('export of everything where only some services are configured', () => {
  it('leaves out the kinds of a service with no address, said aloud, and exports the rest', async () => {
    const only: Record<string, string | undefined> = Object.fromEntries(
      Object.entries(env).filter(([k]) => !/^CONVERGE_(REGISTRY|SECRETS|SCHEDULER)_/.test(k)),
    );
    const dir = outDir();
    const r = await runCli(['export', '-o', dir], only);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('Left out AclRole: CONVERGE_REGISTRY_ADDR is not set');
    expect(r.stderr).toContain('Left out Job: CONVERGE_SCHEDULER_ADDR is not set');
    expect(readdirSync(dir)).toEqual(['Workspace.yaml']);
    // A service configured wrongly is an error to fix, not a service to leave out.
    const wrong = await runCli(['export', '-o', outDir()], {
      ...env,
      CONVERGE_REGISTRY_CACERT: '/no/such/ca.pem',
    });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).not.toContain('Left out AclRole');
    expect(wrong.stderr).toContain('CONVERGE_REGISTRY_CACERT');
    // Nothing configured at all is an error, not an empty export.
    const none = Object.fromEntries(
      Object.entries(only).filter(([k]) => !k.startsWith('CONVERGE_WORKSPACES_')),
    );
    const nothing = await runCli(['export', '-o', outDir()], none);
    expect(nothing.code).toBe(1);
    expect(nothing.stderr).toContain(
      'no service is configured to export from: CONVERGE_REGISTRY_ADDR is not set, nor any other service',
    );
  });
});

describe('export of a job applied from an HCL spec file', () => {
  // The demo's service job: the service parses it into a job with null for every block it does not
  // use (UI, Multiregion, a group's Disconnect, a task's Vault...), which the export, written as JSON
  // fields, leaves out.
  const HCL = readFileSync(path.join(import.meta.dirname, '../../examples/demo/jobs/web.nomad.hcl'), 'utf8');
  let own: RunningSandbox;
  let ownEnv: Record<string, string | undefined>;
  beforeAll(async () => {
    own = await startSandbox({ port: 0, token: 'export-hcl-root-token-4e19c2' });
    ownEnv = { ...own.env(), NO_COLOR: '1', CONVERGE_STATE_DIR: tempDir('converge-export-hcl-state-') };
  });
  afterAll(async () => {
    await own?.close();
  });

  it('plans with no change: a field the spec file leaves null is the field the export leaves out', async () => {
    const src = tempDir('converge-export-hcl-src-');
    mkdirSync(path.join(src, 'jobs'));
    writeFileSync(path.join(src, 'jobs', 'web.nomad.hcl'), HCL);
    writeFileSync(
      path.join(src, 'jobs.yaml'),
      'apiVersion: converge/v1\nkind: Job\nmetadata: { name: web, namespace: default }\nspec:\n  specFile: jobs/web.nomad.hcl\n  preserveCounts: true\n',
    );
    const applied = await runCli(['apply', '-f', src, '--auto-approve'], ownEnv);
    expect([applied.code, applied.stderr]).toEqual([0, '']);

    const dir = outDir();
    const exported = await runCli(['export', '-o', dir, '--kind', 'Job'], ownEnv);
    expect([exported.code, exported.stderr]).toEqual([0, '']);
    expect(readFileSync(path.join(dir, 'Job.yaml'), 'utf8')).not.toContain('specFile');

    const r = await runCli(['plan', '-f', dir, '--json', '--detailed-exitcode'], ownEnv);
    expect(r.stderr).toBe('');
    const plan = JSON.parse(r.stdout) as PlanJson;
    expect(plan.changes.map((c) => [c.address, c.action])).toEqual([['Job/default/web', 'noop']]);
    expect(r.code).toBe(0);
    // The text plan says so too: no group "to update in place" that no diff line explains.
    const text = await runCli(['plan', '-f', dir], ownEnv);
    expect(text.stdout).not.toContain('to update in place');
    expect(text.stdout).toContain('No changes.');
  });
});
