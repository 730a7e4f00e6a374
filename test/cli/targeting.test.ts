/**
 * `--target` and `--exclude` on plan and apply, against the sandbox: globs over the printed address,
 * a directory user pulling in its groups and its mount's config, exclusions winning (and taking their
 * dependants along), a pattern that matches nothing named with the closest addresses, the partial
 * headline in every rendering, and a saved plan that keeps its targets.
 */
import { createHmac } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { PlanJson } from '../../src/planner/render/json.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { canonicalJson } from '../../src/common/json-equal.js';
import { parseStateKey } from '../../src/engine/state-key.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

let sandbox: RunningSandbox;
let env: Record<string, string | undefined>;
let dir: string;

const MANIFEST = `apiVersion: converge/v1
kind: LdapConfig
metadata: { name: ldap }
spec:
  url: ldap://127.0.0.1:1
  binddn: cn=svc,dc=example,dc=test
  userdn: ou=people,dc=example,dc=test
---
apiVersion: converge/v1
kind: LdapGroup
metadata: { name: ops }
spec: { policies: [ops] }
---
apiVersion: converge/v1
kind: LdapGroup
metadata: { name: devs }
spec: { policies: [dev] }
---
apiVersion: converge/v1
kind: LdapUser
metadata: { name: alice }
spec: { policies: [oncall], groups: [ops] }
---
apiVersion: converge/v1
kind: AclRole
metadata: { name: web-readers }
spec: { Description: web readers }
---
apiVersion: converge/v1
kind: AclRole
metadata: { name: web-writers }
spec: { Description: web writers }
---
apiVersion: converge/v1
kind: AclRole
metadata: { name: db-readers }
spec: { Description: db readers }
`;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, token: 'targeting-root-token-7d2e91' });
  dir = tempDir('converge-targeting-');
  writeFileSync(path.join(dir, 'all.yaml'), MANIFEST);
});
afterAll(async () => {
  await sandbox?.close();
});
beforeEach(() => {
  env = {
    ...sandbox.env(),
    NO_COLOR: '1',
    CONVERGE_STATE_DIR: tempDir('converge-targeting-state-'),
  };
});

async function planJson(...flags: string[]): Promise<PlanJson> {
  const r = await runCli(['plan', '-f', dir, '--json', ...flags], env);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as PlanJson;
}

const addresses = (plan: PlanJson) => plan.changes.map((c) => c.address).sort();

describe('--target', () => {
  it('plans a glob of addresses, * inside one segment, and reads no other service', async () => {
    const plan = await planJson('--target', 'AclRole/default/web-*');
    expect(addresses(plan)).toEqual(['AclRole/default/web-readers', 'AclRole/default/web-writers']);
    expect(plan.targets).toEqual(['AclRole/default/web-*']);
    expect(plan.targeted).toEqual({
      selected: 2,
      total: 7,
      notes: [],
      prune_left_out: [],
      prune_kinds_not_listed: [],
    });
    // The directory kinds were not targeted: the secrets service was never asked.
    expect(plan.requests.secrets ?? 0).toBe(0);
  });

  it('** crosses segments; * does not (a role address has a namespace segment)', async () => {
    expect(addresses(await planJson('--target', 'AclRole/**'))).toHaveLength(3);
    const r = await runCli(['plan', '-f', dir, '--target', 'AclRole/*'], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('--target AclRole/* matches no object of the manifest');
  });

  it('pulls in what a target depends on: a user brings its group and its mount config', async () => {
    const plan = await planJson('--target', 'LdapUser/ldap/alice');
    expect(addresses(plan)).toEqual(['LdapConfig/ldap', 'LdapGroup/ldap/ops', 'LdapUser/ldap/alice']);
    // Created in dependency order.
    expect(plan.changes.map((c) => c.address)).toEqual([
      'LdapConfig/ldap',
      'LdapGroup/ldap/ops',
      'LdapUser/ldap/alice',
    ]);
  });

  it('is matched case as printed', async () => {
    const r = await runCli(['plan', '-f', dir, '--target', 'aclrole/default/web-readers'], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('the closest addresses are AclRole/default/web-readers');
    expect(r.stderr).toContain('did you mean AclRole/default/web-readers?');
    // A glob with the kind in another case is offered as printed, with addresses of that kind.
    const glob = await runCli(['plan', '-f', dir, '--target', 'aclrole/**'], env);
    expect(glob.code).toBe(1);
    expect(glob.stderr).toContain(
      '--target aclrole/** matches no object of the manifest; did you mean AclRole/**?',
    );
    const closest = /the closest addresses are ([^.]*)\./.exec(glob.stderr)?.[1]?.split(', ') ?? [];
    for (const address of closest) expect(address).toMatch(/^AclRole\//);
  });

  it('with the wrong number of segments suggests the fixed glob and addresses of its own kind', async () => {
    const r = await runCli(['plan', '-f', dir, '--target', 'AclRole/*'], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      '--target AclRole/* matches no object of the manifest; did you mean AclRole/** or AclRole/*/*?',
    );
    const closest = /the closest addresses are ([^.]*)\./.exec(r.stderr)?.[1]?.split(', ') ?? [];
    expect(closest.length).toBeGreaterThan(0);
    for (const address of closest) expect(address).toMatch(/^AclRole\//);
  });

  it('that matches nothing is an error naming the closest addresses', async () => {
    const r = await runCli(['plan', '-f', dir, '--target', 'LdapGroup/ldap/opps'], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /--target LdapGroup\/ldap\/opps matches no object of the manifest; the closest addresses are LdapGroup\/ldap\/ops, /,
    );
    expect(r.stdout).toBe('');
  });

  it('says so when the pattern names a connection no object is on', async () => {
    const r = await runCli(['plan', '-f', dir, '--target', 'AclRole@us/**'], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      '--target AclRole@us/** matches no object of the manifest; no object of the manifest is on a connection named "us" (they are on the default connection)',
    );
  });

  it('says in the text and markdown headline that the plan is partial', async () => {
    const text = await runCli(['plan', '-f', dir, '--target', 'AclRole/default/db-readers'], env);
    expect(text.code).toBe(0);
    expect(text.stdout.split('\n')[0]).toBe(
      'Targeted plan: 1 of 7 declared objects; the rest not compared (--target AclRole/default/db-readers).',
    );
    const md = await runCli(['plan', '-f', dir, '--markdown', '--target', 'AclRole/default/db-readers'], env);
    expect(md.stdout).toContain(
      '> **Targeted plan: 1 of 7 declared objects; the rest not compared \\(--target AclRole/default/db-readers\\).**',
    );
  });

  it('a whole plan says nothing of targets', async () => {
    const plan = await planJson();
    expect(plan.targets).toEqual([]);
    expect(plan.targeted).toBeNull();
    expect(plan.changes).toHaveLength(7);
  });
});

describe('--exclude', () => {
  it('wins over --target', async () => {
    const plan = await planJson('--target', 'AclRole/**', '--exclude', 'AclRole/default/web-writers');
    expect(addresses(plan)).toEqual(['AclRole/default/db-readers', 'AclRole/default/web-readers']);
    expect(plan.excludes).toEqual(['AclRole/default/web-writers']);
  });

  it('leaves out what needs an excluded object, and what only it needed, and says so', async () => {
    const plan = await planJson('--target', 'LdapUser/ldap/alice', '--exclude', 'LdapGroup/ldap/ops');
    // The mount's config came in only for alice: planned alone, it is nothing the patterns asked for.
    expect(addresses(plan)).toEqual([]);
    expect(plan.targeted?.notes).toEqual([
      'LdapUser/ldap/alice left out: it needs LdapGroup/ldap/ops, which --exclude leaves out',
      'LdapConfig/ldap left out: only LdapUser/ldap/alice, LdapGroup/ldap/ops needed it, and those are left out',
    ]);
    const text = await runCli(
      ['plan', '-f', dir, '--target', 'LdapUser/ldap/alice', '--exclude', 'LdapGroup/ldap/ops'],
      env,
    );
    expect(text.stdout).toContain(
      '  LdapUser/ldap/alice left out: it needs LdapGroup/ldap/ops, which --exclude leaves out',
    );
    // Nothing was compared, so nothing may claim the live state matches.
    // Which pattern undid which, not "see above" of a line that only repeats them.
    expect(text.stdout).toContain(
      'Nothing was planned: every object --target matched, --exclude left out (the patterns are above).',
    );
    expect(text.stdout).not.toContain('Live state matches the manifest');
  });

  it('that matches nothing is an error (a typo must not apply what it meant to leave out)', async () => {
    const r = await runCli(['plan', '-f', dir, '--exclude', 'AclRole/default/web-writer'], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('the closest addresses are AclRole/default/web-writers');
  });
});

describe('a targeted plan with nothing to change', () => {
  it('says the objects it planned match, not the whole manifest, in text and markdown', async () => {
    // Roles of its own, so the other tests' sandbox state stays as they expect it.
    const own = tempDir('converge-targeting-nochange-');
    const role = (name: string) =>
      `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: ${name} }\nspec: { Description: ${name} }\n`;
    writeFileSync(
      path.join(own, 'roles.yaml'),
      [role('solo-a'), role('solo-b'), role('solo-c')].join('---\n'),
    );
    const target = ['--target', 'AclRole/default/solo-a'];
    expect((await runCli(['apply', '-f', own, ...target, '--auto-approve'], env)).code).toBe(0);
    const text = await runCli(['plan', '-f', own, ...target], env);
    expect(text.code).toBe(0);
    // The other two were never compared (and do not even exist): the manifest does not match.
    expect(text.stdout).toContain(
      'No changes. The 1 object planned matches live state; the other 2 were not compared.',
    );
    expect(text.stdout).not.toContain('Live state matches the manifest');
    const markdown = await runCli(['plan', '-f', own, ...target, '--markdown'], env);
    expect(markdown.stdout).toContain(
      'No changes. The 1 object planned matches live state; the other 2 were not compared.',
    );
    // Patterns that take every object planned the whole manifest: no "other 0".
    await runCli(['apply', '-f', own, '--auto-approve'], env);
    const all = await runCli(['plan', '-f', own, '--target', 'AclRole/**'], env);
    expect(all.stdout).toContain('No changes. Live state matches the manifest.');
  });
});

describe('a saved targeted plan', () => {
  it('records its targets; apply FILE applies only them and refuses new ones', async () => {
    const out = path.join(tempDir('converge-targeting-plan-'), 'roles.plan');
    const saved = await runCli(
      ['plan', '-f', dir, '--target', 'AclRole/default/web-*', '--exclude', '**/web-writers', '-out', out],
      env,
    );
    expect(saved.code).toBe(0);
    const file = JSON.parse(readFileSync(out, 'utf8')) as { targets: string[]; excludes: string[] };
    expect(file.targets).toEqual(['AclRole/default/web-*']);
    expect(file.excludes).toEqual(['**/web-writers']);

    const extra = await runCli(['apply', out, '--target', 'AclRole/**'], env);
    expect(extra.code).toBe(1);
    expect(extra.stderr).toContain('a saved plan keeps the --target and --exclude it was made with');
    // --prune too: this plan was made without it, and a flag that did nothing would read as if it had.
    const prune = await runCli(['apply', out, '--prune'], env);
    expect([prune.code, prune.stderr.trim()]).toEqual([
      1,
      'Error: a saved plan keeps the --prune it was made with, and this one was made without: give --prune to `plan`, review, then apply the new plan',
    ]);

    const applied = await runCli(['apply', out], env);
    expect(applied.stderr).toBe('');
    expect(applied.code).toBe(0);
    expect(applied.stdout).toContain('Targeted plan: 1 of 7 declared objects');
    expect(applied.stdout).toContain('1 applied');

    // Only web-readers exists now: the whole plan still wants the other six.
    const after = await planJson();
    expect(after.changes.filter((c) => c.action === 'create').map((c) => c.address)).not.toContain(
      'AclRole/default/web-readers',
    );
    expect(after.summary.create).toBe(6);
  });

  it('whose targets were edited is refused by its MAC', async () => {
    const out = path.join(tempDir('converge-targeting-plan-'), 'edited.plan');
    expect(
      (await runCli(['plan', '-f', dir, '--target', 'AclRole/default/db-readers', '-out', out], env)).code,
    ).toBe(0);
    const file = JSON.parse(readFileSync(out, 'utf8')) as { targets: string[] };
    file.targets = ['**'];
    writeFileSync(out, JSON.stringify(file));
    const r = await runCli(['apply', out], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('was changed after it was saved');
  });

  it('with a hostile targets field is not a plan file', async () => {
    const out = path.join(tempDir('converge-targeting-plan-'), 'hostile.plan');
    expect(
      (await runCli(['plan', '-f', dir, '--target', 'AclRole/default/db-readers', '-out', out], env)).code,
    ).toBe(0);
    const file = JSON.parse(readFileSync(out, 'utf8')) as Record<string, unknown>;
    file.targets = [{ $ne: 1 }];
    writeFileSync(out, JSON.stringify(file));
    const r = await runCli(['apply', out], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('"targets" is not a list of addresses');
  });

  it('with switches added after it was saved is refused whole', async () => {
    const out = path.join(tempDir('converge-targeting-plan-'), 'switched.plan');
    expect((await runCli(['plan', '-f', dir, '-out', out], env)).code).toBe(0);
    const file = JSON.parse(readFileSync(out, 'utf8')) as Record<string, unknown>;
    file.options = ['force-unlock'];
    writeFileSync(out, JSON.stringify(file));
    const edited = await runCli(['apply', out], env);
    expect(edited.code).toBe(1);
    expect(edited.stderr).toContain('was changed after it was saved');
    file.options = 'force-unlock';
    writeFileSync(out, JSON.stringify(file));
    const hostile = await runCli(['apply', out], env);
    expect(hostile.code).toBe(1);
    expect(hostile.stderr).toContain('"options" is not a list of switches');
    delete file.options;
    file.services = { registry: ['http://elsewhere'] };
    // (a map of addresses, checked before the MAC)
    writeFileSync(out, JSON.stringify(file));
    const services = await runCli(['apply', out], env);
    expect(services.code).toBe(1);
    expect(services.stderr).toContain('"services" is not a map of addresses');
  });

  it('made with a switch this Converge does not know is refused, not applied without it', async () => {
    const out = path.join(tempDir('converge-targeting-plan-'), 'newer.plan');
    expect((await runCli(['plan', '-f', dir, '-out', out], env)).code).toBe(0);
    const { mac: _mac, ...content } = JSON.parse(readFileSync(out, 'utf8')) as Record<string, unknown>;
    // Signed as a later Converge would sign it, with a switch of its own.
    const signed = { ...content, options: ['force-unlock-v2'] };
    const keyFile = path.join(env.CONVERGE_STATE_DIR!, 'state.key');
    const key = parseStateKey(readFileSync(keyFile, 'utf8'), keyFile, '');
    const mac = createHmac('sha256', key)
      .update('converge plan file mac\u0000')
      .update(canonicalJson(JSON.parse(JSON.stringify(signed))))
      .digest('hex');
    writeFileSync(out, JSON.stringify({ ...signed, mac }));
    const refused = await runCli(['apply', out], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      'was made with switches this Converge does not know (--force-unlock-v2)',
    );
  });
});

describe('--prune with targets', () => {
  it('prunes only the targeted addresses', async () => {
    // Two roles the manifest does not declare, in a declared prune scope.
    const pruneDir = tempDir('converge-targeting-prune-');
    const scope = `apiVersion: converge/v1
kind: PruneScope
metadata: { name: team }
spec: { kind: AclRole, namespace: default, namePrefix: team- }
`;
    const role = (name: string) =>
      `---\napiVersion: converge/v1\nkind: AclRole\nmetadata: { name: ${name} }\nspec: { Description: x }\n`;
    writeFileSync(
      path.join(pruneDir, 'all.yaml'),
      scope + role('team-keep') + role('team-a') + role('team-b'),
    );
    expect((await runCli(['apply', '-f', pruneDir, '--auto-approve'], env)).code).toBe(0);
    writeFileSync(path.join(pruneDir, 'all.yaml'), scope + role('team-keep'));
    const r = await runCli(
      ['plan', '-f', pruneDir, '--prune', '--json', '--target', 'AclRole/default/team-a'],
      env,
    );
    expect(r.stderr).toBe('');
    const plan = JSON.parse(r.stdout) as PlanJson;
    expect(plan.changes.filter((c) => c.action === 'delete').map((c) => c.address)).toEqual([
      'AclRole/default/team-a',
    ]);
    expect(plan.targeted?.prune_left_out).toEqual(['AclRole/default/team-b']);

    // Every deletion left out: "No changes" must not say live state matches the manifest.
    const excluded = await runCli(
      [
        'plan',
        '-f',
        pruneDir,
        '--prune',
        '--exclude',
        'AclRole/default/team-a',
        '--exclude',
        'AclRole/default/team-b',
        '--detailed-exitcode',
      ],
      env,
    );
    expect(excluded.code, excluded.stderr).toBe(0);
    expect(excluded.stdout.split('\n').slice(0, 2)).toEqual([
      'Targeted plan: all 1 declared object (--exclude AclRole/default/team-a, --exclude AclRole/default/team-b).',
      '  Left out: 2 deletions --prune would make, not planned (AclRole/default/team-a, AclRole/default/team-b).',
    ]);
    expect(excluded.stdout).toContain(
      'No changes. The 1 object planned matches live state; 2 deletions left out (above).',
    );
    expect(excluded.stdout).not.toContain('Live state matches the manifest');
  });

  it('says which kinds it did not look at for deletions, and names deletions inertly', async () => {
    // A directory group Converge made, whose name a terminal would act on, dropped from the manifest.
    const hostile = 'evil\u001b[31mred\u001b[0m\u202eabc';
    const pruneDir = tempDir('converge-targeting-kinds-');
    const role = `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: kinds-keep }\nspec: { Description: x }\n`;
    const group = (name: string) =>
      `---\napiVersion: converge/v1\nkind: LdapGroup\nmetadata: { name: ${JSON.stringify(name)} }\nspec: { policies: [dev] }\n`;
    writeFileSync(path.join(pruneDir, 'all.yaml'), role + group('kinds-kept') + group(hostile));
    const e = { ...env, CONVERGE_STATE_DIR: tempDir('converge-targeting-kinds-state-') };
    expect((await runCli(['apply', '-f', pruneDir, '--auto-approve'], e)).code).toBe(0);
    writeFileSync(path.join(pruneDir, 'all.yaml'), role + group('kinds-kept'));

    // A target that names no directory kind: their deletions were never listed, and it says so.
    const narrow = await runCli(['plan', '-f', pruneDir, '--prune', '--target', 'AclRole/**'], e);
    expect(narrow.code, narrow.stderr).toBe(0);
    expect(narrow.stdout).toContain(
      'Not looked at: what --prune would delete of LdapGroup (no --target names this kind).',
    );
    expect(narrow.stdout).not.toContain('Live state matches the manifest');
    const json = JSON.parse(
      (await runCli(['plan', '-f', pruneDir, '--prune', '--target', 'AclRole/**', '--json'], e)).stdout,
    ) as PlanJson;
    expect(json.targeted?.prune_kinds_not_listed).toEqual(['LdapGroup']);

    // The hostile name, left out or refused by --max-deletes, is shown escaped, never raw.
    const left = await runCli(['plan', '-f', pruneDir, '--prune', '--exclude', 'LdapGroup/ldap/evil*'], e);
    const refused = await runCli(['plan', '-f', pruneDir, '--prune', '--max-deletes', '0'], e);
    expect(refused.code).toBe(1);
    for (const shown of [left.stdout, refused.stdout]) {
      expect(shown).toContain('evil\\u001b[31mred');
      expect(shown).not.toMatch(/[\u001b\u202e]/);
    }
  });
});

describe('patterns and Connections', () => {
  // A second registry behind a named Connection (a manifest may not read Converge's own token): its
  // roles print as AclRole@eu/…
  let eu: RunningSandbox;
  beforeAll(async () => {
    eu = await startSandbox({ port: 0, token: 'targeting-eu-token-51c0' });
  });
  afterAll(async () => {
    await eu?.close();
  });
  const withConnection = (roles: string[]) =>
    [
      `apiVersion: converge/v1\nkind: Connection\nmetadata: { name: eu }\nspec: { service: registry, address: "${eu.url}", token: "\${env:EU_TOKEN}" }\n`,
      'apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: home-role }\nspec: { Description: home }\n',
      ...roles.map(
        (name) =>
          `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: ${name}, connection: eu }\nspec: { Description: eu }\n`,
      ),
    ].join('---\n');
  let connDir: string;
  let connEnv: Record<string, string | undefined>;
  beforeEach(() => {
    connDir = tempDir('converge-targeting-conn-');
    connEnv = {
      ...env,
      EU_TOKEN: 'targeting-eu-token-51c0',
      CONVERGE_ALLOW_ENV: 'EU_TOKEN',
      CONVERGE_ALLOW_ADDRESSES: eu.url,
    };
  });
  const plan = async (...flags: string[]) => {
    const r = await runCli(['plan', '-f', connDir, '--json', ...flags], connEnv);
    expect(r.stderr).toBe('');
    return JSON.parse(r.stdout) as PlanJson;
  };

  it('a pattern without @CONNECTION matches the kind on every connection; one with it keeps to it', async () => {
    writeFileSync(path.join(connDir, 'm.yaml'), withConnection(['eu-role']));
    expect(addresses(await plan('--target', 'AclRole/**'))).toEqual([
      'AclRole/default/home-role',
      'AclRole@eu/default/eu-role',
    ]);
    expect(addresses(await plan('--target', 'AclRole/default/eu-*'))).toEqual(['AclRole@eu/default/eu-role']);
    expect(addresses(await plan('--target', 'AclRole@eu/**'))).toEqual(['AclRole@eu/default/eu-role']);
    expect(addresses(await plan('--exclude', 'AclRole/**'))).toEqual([]);
  });

  it('--exclude Kind/** keeps a prune from deleting that kind on a Connection', async () => {
    writeFileSync(path.join(connDir, 'm.yaml'), withConnection(['eu-gone']));
    const applied = await runCli(['apply', '-f', connDir, '--auto-approve'], connEnv);
    expect(applied.code, applied.stderr).toBe(0);
    // The Connection's role leaves the manifest: a prune would delete it, unless excluded. Its last
    // role on eu, so only with --allow-empty (the emptied-scope guard counts per connection).
    writeFileSync(path.join(connDir, 'm.yaml'), withConnection([]));
    const pruned = await plan('--prune', '--allow-empty');
    expect(pruned.problems).toEqual([]);
    expect(pruned.changes.filter((c) => c.action === 'delete').map((c) => c.address)).toEqual([
      'AclRole@eu/default/eu-gone',
    ]);
    const excluded = await plan('--prune', '--allow-empty', '--exclude', 'AclRole/**');
    expect(excluded.summary.delete).toBe(0);
    expect(excluded.changes.filter((c) => c.action === 'delete')).toEqual([]);
  });
});

/**
 * `--target "$TARGET"` with the variable unset gives `""`. An empty pattern was dropped, and with it
 * the whole selection: the apply then changed every object of the manifest.
 */
describe('an empty --target or --exclude (an unset CI variable)', () => {
  const roleExists = async (name: string) =>
    (
      await fetch(`${sandbox.url}/v1/acl/roles?ns=default`, {
        headers: { Authorization: `Bearer ${sandbox.rootToken}` },
      }).then((r) => r.json() as Promise<{ Name: string }[]>)
    ).some((r) => r.Name === name);

  it.each([
    ['--target', ''],
    ['--target', '  '],
    ['--exclude', ''],
  ])('%s %j is refused before anything is read or applied', async (flag, value) => {
    const own = tempDir('converge-targeting-empty-');
    writeFileSync(
      path.join(own, 'role.yaml'),
      'apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: empty-target-role }\nspec: { Description: x }\n',
    );
    const r = await runCli(['apply', '-f', own, flag, value, '--auto-approve'], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`option '${flag} <address>' argument '${value}' is invalid`);
    expect(r.stderr).toContain('an unset variable gives an empty value');
    expect(r.stdout).toBe('');
    expect(await roleExists('empty-target-role')).toBe(false);
    const plan = await runCli(['plan', '-f', own, flag, value], env);
    expect([plan.code, plan.stdout]).toEqual([1, '']);
  });

  it('is refused by the engine too, naming the setting', async () => {
    const { loadManifest, plan } = await import('../../src/engine/index.js');
    const manifest = await loadManifest([dir], { env });
    await expect(plan(manifest, { env, targets: [''] })).rejects.toThrow(
      'targets: an empty address selects nothing',
    );
    await expect(plan(manifest, { env, excludes: ['AclRole/**', ' '] })).rejects.toThrow(
      'excludes: an empty address selects nothing',
    );
  });
});

describe('other empty values', () => {
  it('-f "" is refused, not read as the current folder', async () => {
    const r = await runCli(['plan', '-f', ''], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("option '-f, --file <path>' argument '' is invalid");
    expect(r.stderr).toContain('must name a manifest file or folder');
  });

  it('plan -out "" is refused rather than saving nothing with exit 0', async () => {
    const r = await runCli(['plan', '-f', dir, '-out', ''], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('must name the file to save the plan to');
    expect(r.stdout).toBe('');
  });

  it('apply "" names the empty plan file, not a missing manifest', async () => {
    const r = await runCli(['apply', ''], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('the plan file to apply is empty');
    expect(r.stderr).not.toContain('no manifest given');
  });
});
