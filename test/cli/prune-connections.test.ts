/**
 * `--prune` and manifest Connections, as a new user meets them: a project whose roles live on the
 * default registry and on a second one behind `kind: Connection` (`eu`), applied once so the
 * inventory records all of them, then planned with a file deleted or left out of `-f`; and the same
 * emptied-scope guard for LDAP groups per mount. In-process against two sandboxes over loopback HTTP.
 */
import { randomUUID } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlanJson } from '../../src/planner/render/json.js';
import { type ReconcileOptions, runReconcile } from '../../src/reconcile/loop.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

const EU_TOKEN = 'prune-connections-eu-token-7d21';
let home: RunningSandbox;
let eu: RunningSandbox;

beforeAll(async () => {
  home = await startSandbox({
    port: 0,
    config: { secrets: { mounts: [{ path: 'corp' }, { path: 'lab' }] } },
  });
  eu = await startSandbox({ port: 0, token: EU_TOKEN });
});
afterAll(async () => {
  await Promise.all([home?.close(), eu?.close()]);
});

interface Project {
  dir: string;
  conn: string;
  roles: string;
  euRoles: string;
  env: Record<string, string | undefined>;
  /** The unique names of the project's roles. */
  homeRole: string;
  euRoleNames: [string, string];
}

const connectionDoc = () =>
  `apiVersion: converge/v1\nkind: Connection\nmetadata: { name: eu }\nspec:\n  service: registry\n  address: "${eu.url}"\n  token: \${env:EU_TOKEN}\n`;
const role = (name: string, connection?: string) =>
  `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: ${name}${connection ? `, connection: ${connection}` : ''} }\nspec: { Description: ${name} }\n`;

/**
 * The trial's project, applied: `00-conn.yaml` (Connection eu, its token from EU_TOKEN), `roles.yaml`
 * (one role on the default connection), `eu-roles.yaml` (two roles on eu).
 */
async function appliedProject(): Promise<Project> {
  const id = randomUUID().slice(0, 6);
  const dir = tempDir('converge-prune-conn-');
  const p: Project = {
    dir,
    conn: path.join(dir, '00-conn.yaml'),
    roles: path.join(dir, 'roles.yaml'),
    euRoles: path.join(dir, 'eu-roles.yaml'),
    env: {
      ...home.env(),
      NO_COLOR: '1',
      CONVERGE_STATE_DIR: tempDir('converge-prune-conn-state-'),
      EU_TOKEN,
      CONVERGE_ALLOW_ENV: 'EU_TOKEN',
      CONVERGE_ALLOW_ADDRESSES: eu.url,
    },
    homeRole: `home-${id}`,
    euRoleNames: [`eu-readers-${id}`, `eu-writers-${id}`],
  };
  writeFileSync(p.conn, connectionDoc());
  writeFileSync(p.roles, role(p.homeRole));
  writeFileSync(p.euRoles, p.euRoleNames.map((n) => role(n, 'eu')).join('---\n'));
  const applied = await runCli(['apply', '-f', dir, '--auto-approve'], p.env);
  expect(applied.code, applied.stdout + applied.stderr).toBe(0);
  return p;
}

async function euRoleExists(name: string): Promise<boolean> {
  const res = await fetch(`${eu.url}/v1/acl/role/name/${name}`, { headers: { 'X-Consul-Token': EU_TOKEN } });
  return res.status === 200;
}

const euAddresses = (p: Project) => p.euRoleNames.map((n) => `AclRole@eu/default/${n}`);

describe('roles Converge created on a Connection the manifest no longer declares', () => {
  let p: Project;
  beforeAll(async () => {
    p = await appliedProject();
    // The user removes the Connection and its roles from the project.
    rmSync(p.conn);
    rmSync(p.euRoles);
  });

  it('plan --prune lists them as not pruned, with the two ways out, instead of failing', async () => {
    const r = await runCli(['plan', '-f', p.dir, '--prune'], p.env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      [
        "Not pruned: 2 objects the inventory records as Converge's, on connection eu, which the manifest no longer declares; --prune cannot read or delete them without the Connection's address and token.",
        ...euAddresses(p).map((a) => `  ${a}`),
        'To delete them, declare that Connection again (same name and service) and run --prune; to stop tracking one, drop the record with `converge inventory forget ADDRESS --yes`.',
      ].join('\n'),
    );
    expect(r.stdout).toContain('0 to destroy');
  });

  it('--json lists them in pruned.out_of_scope with no problem; --markdown as a note', async () => {
    const json = await runCli(['plan', '-f', p.dir, '--prune', '--json'], p.env);
    expect(json.code, json.stderr).toBe(0);
    const doc = JSON.parse(json.stdout) as PlanJson;
    expect(doc.problems).toEqual([]);
    expect(doc.complete).toBe(true);
    expect(doc.pruned.out_of_scope).toEqual(euAddresses(p));
    expect(doc.pruned.count).toBe(0);
    const md = await runCli(['plan', '-f', p.dir, '--prune', '--markdown'], p.env);
    expect(md.code, md.stderr).toBe(0);
    expect(md.stdout).toContain(
      `> Not pruned: 2 objects the inventory records as Converge's, on connection eu, which the manifest no longer declares;`,
    );
    expect(md.stdout).toContain(
      `> - \`${euAddresses(p)[1]}\`\n>\n> To delete them, declare that Connection again`,
    );
  });

  it('an --exclude of them (or of their kind) keeps them out silently; one naming nothing is still a typo', async () => {
    for (const pattern of ['AclRole@eu/**', 'AclRole/**']) {
      const r = await runCli(['plan', '-f', p.dir, '--prune', '--exclude', pattern, '--json'], p.env);
      expect(r.code, r.stderr).toBe(0);
      const doc = JSON.parse(r.stdout) as PlanJson;
      expect(doc.problems).toEqual([]);
      expect(doc.pruned.out_of_scope).toEqual([]);
      expect(doc.targeted?.prune_left_out ?? []).toEqual([]);
    }
    const text = await runCli(['plan', '-f', p.dir, '--prune', '--exclude', 'AclRole@eu/**'], p.env);
    expect(text.stdout).not.toContain('Not pruned');
    const typo = await runCli(['plan', '-f', p.dir, '--prune', '--exclude', 'AclRole@us/**'], p.env);
    expect(typo.code).toBe(1);
    expect(typo.stderr).toContain('--exclude AclRole@us/** matches no object of the manifest');
  });

  it('a --target naming them plans nothing and says why', async () => {
    const r = await runCli(['plan', '-f', p.dir, '--prune', '--target', 'AclRole@eu/**', '--json'], p.env);
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as PlanJson;
    expect(doc.pruned.out_of_scope).toEqual(euAddresses(p));
    expect(doc.summary.delete).toBe(0);
  });

  it('apply --prune and a reconcile cycle with prune go on, and leave them on the eu registry', async () => {
    const applied = await runCli(['apply', '-f', p.dir, '--prune', '--auto-approve'], p.env);
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    expect(applied.stdout).toContain('Not pruned: 2 objects');

    const text: string[] = [];
    const stop = new AbortController();
    const options: ReconcileOptions = {
      paths: [p.dir],
      intervalMs: 60_000,
      env: p.env,
      prune: true,
      signal: stop.signal,
    };
    const loop = await runReconcile(options, { stdout: { write: (t: string) => text.push(t) } });
    const deadline = Date.now() + 10_000;
    while (!text.join('').includes('"type":"cycle"') && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    stop.abort('SIGTERM');
    await loop.done;
    const cycle = text
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.type === 'cycle');
    expect(cycle).toMatchObject({ outcome: 'in_sync' });
    // Said in the log, not only in a plan no one reads in a loop.
    const left = text
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.type === 'prune_left');
    expect(left.map((l) => [l.address, l.why])).toEqual(
      euAddresses(p).map((a) => [a, 'connection_not_declared']),
    );

    for (const name of p.euRoleNames) expect(await euRoleExists(name)).toBe(true);
  });

  it('declaring the Connection again brings them back within reach of the prune', async () => {
    const dir = tempDir('converge-prune-conn-again-');
    writeFileSync(path.join(dir, '00-conn.yaml'), connectionDoc());
    writeFileSync(path.join(dir, 'roles.yaml'), role(p.homeRole));
    const r = await runCli(['plan', '-f', dir, '--prune', '--allow-empty', '--json'], p.env);
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as PlanJson;
    expect(doc.pruned.addresses).toEqual(euAddresses(p));
    expect(doc.pruned.out_of_scope).toEqual([]);
  });
});

describe('a file left out of -f empties a kind on one connection', () => {
  let p: Project;
  let scopeFile: string;
  beforeAll(async () => {
    p = await appliedProject();
    scopeFile = path.join(tempDir('converge-prune-conn-scope-'), 'scope.yaml');
    writeFileSync(
      scopeFile,
      'apiVersion: converge/v1\nkind: PruneScope\nmetadata: { name: eu-roles }\nspec: { kind: AclRole, connection: eu, allowEmpty: true }\n',
    );
  });
  const withoutEuRoles = () => ['-f', p.conn, '-f', p.roles];

  it('is refused, naming the kind, namespace and connection and both ways to allow it, although a role is declared on the default one', async () => {
    const r = await runCli(['plan', ...withoutEuRoles(), '--prune'], p.env);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      "Plan refused:\n  the manifest declares no AclRole in namespace default on connection eu any more, so --prune would delete all 2 that Converge manages there (created or adopted); refusing (if that is meant, set --allow-empty, or declare a PruneScope with kind: AclRole, namespace: default, connection: eu, allowEmpty: true; a PruneScope limits the kind's prune to the scopes declared: declare one for every scope to prune)",
    );
    const json = JSON.parse(
      (await runCli(['plan', ...withoutEuRoles(), '--prune', '--json'], p.env)).stdout,
    ) as PlanJson;
    expect(json.complete).toBe(false);
    expect(json.problems.map((x) => x.address)).toEqual(['Prune@eu/AclRole/default']);
  });

  it('apply --prune deletes nothing then; --allow-empty or a PruneScope of the connection with allowEmpty plans the deletions', async () => {
    const refused = await runCli(['apply', ...withoutEuRoles(), '--prune', '--auto-approve'], p.env);
    expect(refused.code).toBe(1);
    for (const name of p.euRoleNames) expect(await euRoleExists(name)).toBe(true);

    for (const allowed of [['--allow-empty'], ['-f', scopeFile]]) {
      const r = await runCli(['plan', ...withoutEuRoles(), ...allowed, '--prune', '--json'], p.env);
      expect(r.code, r.stdout).toBe(0);
      const doc = JSON.parse(r.stdout) as PlanJson;
      expect(doc.problems).toEqual([]);
      expect(doc.pruned.addresses).toEqual(euAddresses(p));
    }
  });

  it("leaving out the default connection's file is refused the same way, naming the default connection", async () => {
    const r = await runCli(['plan', '-f', p.conn, '-f', p.euRoles, '--prune'], p.env);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      'the manifest declares no AclRole in namespace default on the default connection any more, so --prune would delete the 1 that Converge manages there',
    );
    expect(r.stdout).not.toContain('on connection eu any more');
  });

  it('is not refused while the connection still declares one of the kind: the prune takes the other', async () => {
    const dir = tempDir('converge-prune-conn-one-left-');
    writeFileSync(path.join(dir, 'eu-roles.yaml'), role(p.euRoleNames[0], 'eu'));
    const r = await runCli(
      ['plan', ...withoutEuRoles(), '-f', path.join(dir, 'eu-roles.yaml'), '--prune', '--json'],
      p.env,
    );
    expect(r.code, r.stdout).toBe(0);
    const doc = JSON.parse(r.stdout) as PlanJson;
    expect(doc.problems).toEqual([]);
    expect(doc.pruned.addresses).toEqual([euAddresses(p)[1]]);
  });
});

describe('LDAP groups: a mount the manifest no longer declares any group in', () => {
  const group = (name: string, mount: string) =>
    `apiVersion: converge/v1\nkind: LdapGroup\nmetadata: { name: ${name}, mount: ${mount} }\nspec: { policies: [${name}] }\n`;

  it('is refused by --prune though another mount still declares groups, unless allowed', async () => {
    const id = randomUUID().slice(0, 6);
    const dir = tempDir('converge-prune-mounts-');
    const corp = path.join(dir, 'corp.yaml');
    const lab = path.join(dir, 'lab.yaml');
    writeFileSync(corp, group(`corp-${id}`, 'corp'));
    writeFileSync(lab, [group(`lab-a-${id}`, 'lab'), group(`lab-b-${id}`, 'lab')].join('---\n'));
    const env = { ...home.env(), NO_COLOR: '1', CONVERGE_STATE_DIR: tempDir('converge-prune-mounts-state-') };
    const applied = await runCli(['apply', '-f', dir, '--auto-approve'], env);
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);

    const r = await runCli(['plan', '-f', corp, '--prune'], env);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      "the manifest declares no LdapGroup in mount lab any more, so --prune would delete all 2 that Converge manages there (created or adopted); refusing (if that is meant, set --allow-empty, or declare a PruneScope with kind: LdapGroup, namespace: lab, allowEmpty: true; a PruneScope limits the kind's prune to the scopes declared: declare one for every scope to prune)",
    );
    const scope = path.join(tempDir('converge-prune-mounts-scope-'), 'scope.yaml');
    writeFileSync(
      scope,
      'apiVersion: converge/v1\nkind: PruneScope\nmetadata: { name: lab-groups }\nspec: { kind: LdapGroup, namespace: lab, allowEmpty: true }\n',
    );
    for (const allowed of [['--allow-empty'], ['-f', scope]]) {
      const r = await runCli(['plan', '-f', corp, ...allowed, '--prune', '--json'], env);
      expect(r.code, r.stdout).toBe(0);
      expect((JSON.parse(r.stdout) as PlanJson).pruned.addresses).toEqual([
        `LdapGroup/lab/lab-a-${id}`,
        `LdapGroup/lab/lab-b-${id}`,
      ]);
    }
  });
});
