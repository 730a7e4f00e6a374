/**
 * The directory auth method through the built CLI, as a user runs it: a manifest of configuration,
 * groups and users planned and applied against the sandbox; `converge ldap …` to read them back and
 * to log in against a real directory server (Debian's slapd, skipped with a reason where it is
 * missing); and a planted-secret check over every output.
 */
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { LDAP_SEED, slapdSkipReason, useSlapd } from '../support/slapd.js';
import { type CliResult, converge as run } from './helpers.js';
import { tempDir } from '../support/temp-dirs.js';

const ROOT_TOKEN = `planted-root-token-${randomUUID()}`;
const sandboxLog: string[] = [];
let sandbox: RunningSandbox;
let stateDir: string;

beforeAll(async () => {
  sandbox = await startSandbox({
    port: 0,
    token: ROOT_TOKEN,
    log: (line) => sandboxLog.push(line),
    config: { secrets: { mounts: [{ path: 'planted' }, { path: 'login' }, { path: 'wo-stale' }] } },
  });
  stateDir = tempDir('converge-ldap-state-');
});
afterAll(async () => sandbox?.close());

const outputs: string[] = [];

/** The built CLI in a child process, with the sandbox's environment and optional stdin. */
async function converge(
  args: string[],
  env: Record<string, string> = {},
  input?: string,
): Promise<CliResult> {
  const runEnv = {
    ...sandbox.env(),
    CONVERGE_STATE_DIR: stateDir,
    NO_COLOR: '1',
    // The variables these manifests interpolate, exposed as an operator would.
    CONVERGE_ALLOW_ENV: 'PLANTED_*,DROPPED_*,COMMA_*,KEY,BINDPASS',
    ...env,
  };
  const result = await run(args, runEnv, undefined, input ?? '');
  outputs.push(result.stdout, result.stderr);
  return result;
}

function manifest(text: string): string {
  const dir = tempDir('converge-ldap-');
  writeFileSync(path.join(dir, 'directory.yaml'), text);
  return dir;
}

describe('a directory configuration planted with secrets', () => {
  const bindpass = `planted-bindpass-${randomUUID()}`;
  // A real key, so the service can check it against the certificate; its PEM is the secret.
  const clientKey = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString();
  const secrets = [bindpass, clientKey.split('\n')[1]!, ROOT_TOKEN];
  const env = { PLANTED_BINDPASS: bindpass, PLANTED_KEY: clientKey };
  const text = (userdn: string) => `apiVersion: converge/v1
kind: LdapConfig
metadata: { name: planted }
spec:
  url: ldap://127.0.0.1:1
  binddn: cn=svc,dc=example,dc=test
  bindpass: \${env:PLANTED_BINDPASS}
  userdn: ${userdn}
---
apiVersion: converge/v1
kind: LdapGroup
metadata: { name: ops, mount: planted }
spec: { policies: [ops] }
---
apiVersion: converge/v1
kind: LdapUser
metadata: { name: alice, mount: planted }
spec: { policies: [dev], groups: [ops] }
`;

  it('plans config, groups and users in order, applies them, and plans nothing more', async () => {
    const dir = manifest(text('ou=people,dc=example,dc=test'));
    const plan = await converge(['plan', '-f', dir, '--json'], env);
    expect(plan.code).toBe(0);
    const changes = JSON.parse(plan.stdout).changes as { address: string; action: string }[];
    expect(changes.map((c) => [c.address, c.action])).toEqual([
      ['LdapConfig/planted', 'create'],
      ['LdapGroup/planted/ops', 'create'],
      ['LdapUser/planted/alice', 'create'],
    ]);
    const human = await converge(['plan', '-f', dir], env);
    expect(human.stdout).toContain('bindpass');
    expect(human.stdout).toContain('(sensitive value)');
    expect(human.stdout).toContain('in mount planted');

    const applied = await converge(['apply', '-f', dir, '--auto-approve'], env);
    expect(applied.code, applied.stderr).toBe(0);
    expect((await converge(['plan', '-f', dir, '--detailed-exitcode'], env)).code).toBe(0);
  });

  it('sends a changed bind password once, shown only as changed', async () => {
    const dir = manifest(text('ou=people,dc=example,dc=test'));
    const changed = { ...env, PLANTED_BINDPASS: `${bindpass}-2` };
    secrets.push(`${bindpass}-2`);
    const plan = await converge(['plan', '-f', dir, '--no-color'], changed);
    expect(plan.stdout).toContain('~ bindpass = (sensitive value changed)');
    expect((await converge(['apply', '-f', dir, '--auto-approve'], changed)).code).toBe(0);
    expect((await converge(['plan', '-f', dir, '--detailed-exitcode'], changed)).code).toBe(0);
  });

  it('reads back through `converge ldap` without the secrets', async () => {
    const config = await converge(['ldap', 'get', 'config', '--mount', 'planted', '--json']);
    expect(config.code).toBe(0);
    expect(JSON.parse(config.stdout)).toMatchObject({ binddn: 'cn=svc,dc=example,dc=test' });
    expect(JSON.parse(config.stdout)).not.toHaveProperty('bindpass');
    expect((await converge(['ldap', 'get', 'config', '--mount', 'planted'])).stdout).toContain('binddn');
    const groups = await converge(['ldap', 'groups', '--mount', 'planted']);
    expect(groups.stdout).toMatch(/ops\s+ops/);
    const users = await converge(['ldap', 'users', '--mount', 'planted', '--json']);
    expect(JSON.parse(users.stdout)).toEqual({
      alice: expect.objectContaining({ policies: ['dev'], groups: 'ops' }),
    });
    const missing = await converge(['ldap', 'get', 'user', 'nobody', '--mount', 'planted']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no user "nobody" on auth/planted');
  });

  it('never shows a planted secret: plans, saved plans, apply, errors, the sandbox log, the inventory', async () => {
    const dir = manifest(text('ou=staff,dc=example,dc=test'));
    const withKey = manifest(
      `${text('ou=staff,dc=example,dc=test')}`.replace(
        '  userdn:',
        '  client_tls_cert: not a certificate\n  client_tls_key: ${env:PLANTED_KEY}\n  userdn:',
      ),
    );
    await converge(['plan', '-f', dir], env);
    await converge(['plan', '-f', dir, '--json'], env);
    await converge(['plan', '-f', dir, '--markdown'], env);
    const out = path.join(stateDir, 'saved.plan');
    await converge(['plan', '-f', dir, '-out', out], env);
    outputs.push(readFileSync(out, 'utf8'));
    expect((await converge(['apply', out], env)).code).toBe(0);
    // The service refuses a key without a valid certificate: the error must not quote the key.
    const refused = await converge(['apply', '-f', withKey, '--auto-approve'], env);
    expect(refused.code).toBe(1);
    await converge(['plan', '-f', withKey, '--json'], env);
    // A token that is not the sandbox's: the 403 must not echo it either.
    await converge(['plan', '-f', dir], { ...env, CONVERGE_SECRETS_TOKEN: `${ROOT_TOKEN}-wrong` });
    for (const file of readdirSync(stateDir)) {
      const full = path.join(stateDir, file);
      if (statSync(full).isFile()) outputs.push(readFileSync(full, 'utf8'));
    }
    outputs.push(...sandboxLog);
    for (const secret of secrets) {
      for (const output of outputs)
        expect(output.includes(secret), `secret in: ${output.slice(0, 400)}`).toBe(false);
    }
  });
});

describe('a bind password dropped from the manifest', () => {
  const config = (bindpass: boolean) => `apiVersion: converge/v1
kind: LdapConfig
metadata: { name: planted }
spec:
  url: ldap://127.0.0.1:1
  binddn: cn=svc,dc=example,dc=test
  userdn: ou=people,dc=example,dc=test
${bindpass ? '  bindpass: ${env:DROPPED_BINDPASS}\n' : ''}`;
  const env = { DROPPED_BINDPASS: `dropped-${randomUUID()}` };

  it('is cleared once, and later plans know the service holds none', async () => {
    expect((await converge(['apply', '-f', manifest(config(true)), '--auto-approve'], env)).code).toBe(0);
    // The create sent the bind password only: nothing is recorded of the values it never sent.
    const recorded = JSON.parse(
      (await converge(['inventory', 'show', 'LdapConfig/planted', '--json'], env)).stdout,
    ) as { write_only: string[] };
    expect(recorded.write_only).toEqual(['bindpass']);
    const dir = manifest(config(false));
    const plan = await converge(['plan', '-f', dir], env);
    expect(plan.stdout).toContain(
      '- bindpass = (sensitive value) # no longer in the manifest: it will be cleared',
    );
    expect((await converge(['apply', '-f', dir, '--auto-approve'], env)).code).toBe(0);

    const after = await converge(['plan', '-f', dir, '--detailed-exitcode'], env);
    expect(after.code).toBe(0);
    // Not "the service most likely holds one": Converge cleared it itself.
    expect(after.stdout).not.toContain('most likely holds one');
    const absent = manifest(config(false).replace('name: planted }', 'name: planted, ensure: absent }'));
    const deletion = JSON.parse((await converge(['plan', '-f', absent, '--json'], env)).stdout);
    expect(deletion.changes[0].before).not.toHaveProperty('bindpass');
  });
});

describe('a secret holding commas, put in a list the service splits at commas', () => {
  it('is masked piece by piece in every rendering of the plan', async () => {
    const pieces = [`Sup3r${randomUUID().slice(0, 4)}`, 'production', `Passw0rd${randomUUID().slice(0, 4)}`];
    const env = { COMMA_BINDPASS: pieces.join(',') };
    const dir = manifest(
      [
        'apiVersion: converge/v1',
        'kind: LdapConfig',
        'metadata: { name: planted }',
        'spec:',
        '  url: ldap://127.0.0.1:1',
        '  binddn: cn=svc,dc=example,dc=test',
        '  bindpass: ${env:COMMA_BINDPASS}',
        '  token_policies: "${env:COMMA_BINDPASS}"',
        '  token_bound_cidrs: "10.0.0.0/8,${env:COMMA_BINDPASS}"',
        '---',
        'apiVersion: converge/v1',
        'kind: LdapGroup',
        'metadata: { name: readers, mount: planted }',
        'spec: { policies: [production-read] }',
        '',
      ].join('\n'),
    );
    const outputs = await Promise.all(
      [[], ['--json'], ['--markdown']].map(
        async (extra) => (await converge(['plan', '-f', dir, ...extra], env)).stdout,
      ),
    );
    expect(outputs[0]).toMatch(/token_policies/);
    for (const output of outputs) {
      for (const piece of [pieces[0]!, pieces[2]!])
        expect(output.includes(piece), `${piece} in ${output.slice(0, 300)}`).toBe(false);
      // A piece that is a word is masked as a whole item of the list, not inside other text.
      expect(output).not.toMatch(/"production"/);
      expect(output).toContain('production-read');
    }
  });
});

describe("lists written as the service's own comma-separated strings", () => {
  it('applies group and user policies and groups given as strings, then plans nothing more', async () => {
    const text = (groupPolicies: string) =>
      [
        `apiVersion: converge/v1\nkind: LdapGroup\nmetadata: { name: cs-ops }\nspec: { policies: "${groupPolicies}" }\n`,
        'apiVersion: converge/v1\nkind: LdapUser\nmetadata: { name: cs-ann }\nspec: { policies: "x, y", groups: "cs-ops" }\n',
      ].join('---\n');
    const dir = manifest(text('read, Audit'));
    const applied = await converge(['apply', '-f', dir, '--auto-approve']);
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    expect((await converge(['plan', '-f', dir, '--detailed-exitcode'])).code).toBe(0);
    // One policy more: that item alone, as for a list.
    const plan = await converge(['plan', '-f', manifest(text('read, Audit, ops')), '--json']);
    const change = JSON.parse(plan.stdout).changes.find((c: { name: string }) => c.name === 'cs-ops');
    expect(change.diffs).toEqual([{ path: 'policies', op: 'add', after: 'ops', item: true }]);
  });
});

describe('a comma-separated groups string that is wrong', () => {
  it('names a bad group by its field among the commas, and an unset variable only as that', async () => {
    const user = (groups: string) =>
      manifest(
        `apiVersion: converge/v1\nkind: LdapUser\nmetadata: { name: cs-hal }\nspec: { groups: "${groups}" }\n`,
      );
    const bad = await converge(['validate', '-f', user('ops,,Admins')]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('group 3 of the comma-separated groups is not an LdapGroup name');
    const unset = await converge(['validate', '-f', user('ops,${env:COMMA_UNSET_GROUPS}')]);
    expect(unset.code).toBe(1);
    expect(unset.stderr).toContain('environment variable COMMA_UNSET_GROUPS is not set');
    expect(unset.stderr).not.toContain('is not an LdapGroup name');
  });
});

describe('what a new user gets wrong', () => {
  const group = (metadata: string, spec = '{ policies: [ops] }') =>
    `apiVersion: converge/v1\nkind: LdapGroup\nmetadata: ${metadata}\nspec: ${spec}\n`;

  it('names are lower case, the mount is `mount:`, and a mount path is checked at its line', async () => {
    const dir = manifest(
      [
        group('{ name: Admins }'),
        group('{ name: ops, namespace: ldap }'),
        group('{ name: devs, mount: /ldap/ }'),
        `apiVersion: converge/v1\nkind: LdapUser\nmetadata: { name: bob }\nspec: { groups: [Ops] }\n`,
        // Upper case beyond A-Z: the service lower-cases it too, so the name would never be listed back.
        group('{ name: Équipe }'),
        group('{ name: team-Ⅻ }'),
        `apiVersion: converge/v1\nkind: LdapUser\nmetadata: { name: zoë }\nspec: { groups: [Ωmega] }\n`,
      ].join('---\n'),
    );
    const r = await converge(['validate', '-f', dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/directory\.yaml:3:\d+: invalid LdapGroup name "Admins": .*lower case/);
    expect(r.stderr).toMatch(/directory\.yaml:23:\d+: invalid LdapGroup name "Équipe": .*lower case/);
    expect(r.stderr).toMatch(/directory\.yaml:28:\d+: invalid LdapGroup name "team-Ⅻ"/);
    expect(r.stderr).toMatch(
      /directory\.yaml:34:\d+: spec\.groups\[0\] must match .*in lower case \(the service lower-cases names\)/,
    );
    expect(r.stderr).not.toMatch(/"zoë"/);
    expect(r.stderr).toMatch(
      /directory\.yaml:8:\d+: "namespace" is not allowed: LdapGroup objects name it "mount"/,
    );
    expect(r.stderr).toMatch(/directory\.yaml:13:\d+: metadata\.mount must match/);
    expect(r.stderr).toMatch(/directory\.yaml:19:\d+: spec\.groups\[0\] must match/);
  });

  it('a mount that is not there is a plan problem at the line naming it', async () => {
    const dir = manifest(group('{ name: ops, mount: nosuch }'));
    const r = await converge(['plan', '-f', dir]);
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).toMatch(/directory\.yaml:3:\d+: nothing is mounted at auth\/nosuch/);
  });

  it('a configuration of a mount that is not there is a problem at its line; the rest is planned', async () => {
    const dir = manifest(
      `apiVersion: converge/v1\nkind: LdapConfig\nmetadata: { name: corp/ldap }\nspec: { url: "ldap://corp" }\n---\n${group('{ name: still-planned }')}`,
    );
    const r = await converge(['plan', '-f', dir]);
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).toMatch(
      /LdapConfig\/corp\/ldap: \S*directory\.yaml:3:\d+: nothing is mounted at auth\/corp\/ldap on the secrets service: enable the directory \(LDAP\) auth method there first/,
    );
    // One missing mount does not hide the other changes (it stopped the whole plan with a bare 404).
    expect(r.stdout).toContain('LdapGroup/ldap/still-planned');
    expect(r.stdout).toContain('1 not planned');
  });

  it('an address with the API path in it (…/v1) is an error naming the address, never a plan of creates', async () => {
    const dir = manifest(group('{ name: addressed }'));
    const applied = await converge(['apply', '-f', dir, '--auto-approve']);
    expect(applied.code, applied.stderr).toBe(0);
    const r = await converge(['plan', '-f', dir, '--detailed-exitcode'], {
      CONVERGE_SECRETS_ADDR: `${sandbox.env().CONVERGE_SECRETS_ADDR}/v1`,
    });
    expect(r.code).toBe(1);
    expect(r.stdout).not.toContain('will be created');
    expect(r.stderr).toContain(
      "this is not the secrets service answering: check CONVERGE_SECRETS_ADDR (the service's base address, without /v1)",
    );
  });

  it('says that a plan with problems was not saved to -out, and leaves an earlier file alone', async () => {
    const dir = manifest(group('{ name: ops, mount: nosuch }'));
    const out = path.join(stateDir, 'problems.plan');
    const first = await converge(['plan', '-f', dir, '-out', out]);
    expect(first.code).toBe(1);
    expect(first.stderr).toContain(
      `Plan not saved to ${out}: the plan has problems (above), and an incomplete plan is never applied.`,
    );
    expect(existsSync(out)).toBe(false);
    writeFileSync(out, 'an earlier plan');
    const again = await converge(['plan', '-f', dir, '-out', out]);
    expect(again.stderr).toContain(`The earlier ${out} is left as it was.`);
    expect(readFileSync(out, 'utf8')).toBe('an earlier plan');
    // With --json nothing is "above" on standard error: the problems are in the JSON.
    const json = await converge(['plan', '-f', dir, '-out', out, '--json']);
    expect(json.stderr).toContain('the plan has problems (in the JSON on standard output)');
    expect(JSON.parse(json.stdout).problems.length).toBeGreaterThan(0);
  });

  it('takes a list as one comma-separated string, as the service does, and plans what the service will hold', async () => {
    const dir = manifest(
      [
        'apiVersion: converge/v1',
        'kind: LdapConfig',
        'metadata: { name: ldap }',
        'spec:',
        '  url: ldap://dir.example',
        '  userattr: sAMAccountName',
        '  token_policies: [Base, base, " ops "]',
        '  token_bound_cidrs: "10.0.0.0/8, 192.168.1.0/24"',
        '',
      ].join('\n'),
    );
    const plan = await converge(['plan', '-f', dir, '--json']);
    expect(plan.code, plan.stderr).toBe(0);
    const after = JSON.parse(plan.stdout).changes[0].after;
    expect(after).toMatchObject({
      userattr: 'samaccountname',
      token_policies: ['Base', 'base', 'ops'],
      token_bound_cidrs: ['10.0.0.0/8', '192.168.1.0/24'],
    });
    expect((await converge(['apply', '-f', dir, '--auto-approve'])).code).toBe(0);
    expect((await converge(['plan', '-f', dir, '--detailed-exitcode'])).code).toBe(0);
  });

  it('a configuration of nothing but defaults is refused, since it would read as unconfigured', async () => {
    const dir = manifest(
      'apiVersion: converge/v1\nkind: LdapConfig\nmetadata: { name: ldap }\nspec: { url: "ldap://127.0.0.1" }\n',
    );
    const r = await converge(['validate', '-f', dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('all defaults');
  });

  it('a token the service does not know gets a hint that says so', async () => {
    const dir = manifest(group('{ name: hint-test }'));
    const r = await converge(['plan', '-f', dir], { CONVERGE_SECRETS_TOKEN: 'not-a-token' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('CONVERGE_SECRETS_TOKEN is unknown to the service or lacks this permission');
  });

  it('a saved plan is refused when a group changed behind it', async () => {
    const dir = manifest(group('{ name: stale-test }'));
    expect((await converge(['apply', '-f', dir, '--auto-approve'])).code).toBe(0);
    const changed = manifest(group('{ name: stale-test }', '{ policies: [ops, audit] }'));
    const saved = path.join(stateDir, 'stale.plan');
    expect((await converge(['plan', '-f', changed, '-out', saved])).code).toBe(0);
    const edit = await fetch(`${sandbox.url}/v1/auth/ldap/groups/stale-test`, {
      method: 'POST',
      headers: { 'X-Secrets-Token': ROOT_TOKEN, 'Content-Type': 'application/json' },
      body: JSON.stringify({ policies: 'by-hand' }),
    });
    expect(edit.status).toBe(204);
    const r = await converge(['apply', saved]);
    expect(r.code).toBe(3);
    expect(r.stdout + r.stderr).toMatch(/stale|changed since/);
  });

  it('a saved plan is refused once another apply set the bind password, and finds itself in effect when applied twice', async () => {
    const dir = manifest(`apiVersion: converge/v1
kind: LdapConfig
metadata: { name: wo-stale }
spec:
  url: ldap://127.0.0.1:1
  binddn: cn=svc,dc=example,dc=test
  bindpass: \${env:BINDPASS}
  userdn: ou=people,dc=example,dc=test
`);
    const as = (value: string) => ({ BINDPASS: `wo-stale-password-${value}` });
    expect((await converge(['apply', '-f', dir, '--auto-approve'], as('w'))).code).toBe(0);
    const saved = path.join(stateDir, 'bindpass.plan');
    const planned = await converge(['plan', '-f', dir, '-out', saved], as('x'));
    expect(planned.stdout).toContain('~ bindpass = (sensitive value changed)');
    // Someone else's apply sets another password: the service shows nothing of it, no version moves.
    expect((await converge(['apply', '-f', dir, '--auto-approve'], as('y'))).code).toBe(0);
    const refused = await converge(['apply', saved], as('x'));
    expect(refused.code, refused.stdout + refused.stderr).toBe(3);
    expect(refused.stdout + refused.stderr).toContain('its bindpass was set by another apply since the plan');
    expect((await converge(['plan', '-f', dir, '--detailed-exitcode'], as('y'))).code).toBe(0);

    const again = path.join(stateDir, 'bindpass-again.plan');
    expect((await converge(['plan', '-f', dir, '-out', again], as('z'))).code).toBe(0);
    expect((await converge(['apply', again], as('z'))).code).toBe(0);
    // Applied again, the same plan finds its own change in effect: nothing to do, nothing refused.
    const twice = await converge(['apply', again], as('z'));
    expect(twice.code, twice.stdout + twice.stderr).toBe(0);
    expect(twice.stdout).toContain(`Everything ${again} would change is already in effect`);
  });

  it('a client certificate is compared by digest, since the service never returns it', async () => {
    const doc = (cert: string) =>
      manifest(`apiVersion: converge/v1
kind: LdapConfig
metadata: { name: planted }
spec:
  url: ldap://127.0.0.1:1
  binddn: cn=svc,dc=example,dc=test
  userdn: ou=people,dc=example,dc=test
  client_tls_cert: ${cert}
  client_tls_key: \${env:KEY}
`);
    const first = await converge(['plan', '-f', doc('cert-one'), '--json'], { KEY: 'key-one' });
    expect(first.code, first.stderr).toBe(0);
    const diff = (JSON.parse(first.stdout).changes[0].diffs as { path: string; sensitive?: boolean }[]).find(
      (d) => d.path === 'client_tls_cert',
    );
    expect(diff).toMatchObject({ sensitive: true });
  });
});

const skip = slapdSkipReason();

describe('converge ldap login with no password', () => {
  it('refuses at once, sending nothing, when standard input gives an empty password', async () => {
    const before = sandboxLog.length;
    const r = await converge(['ldap', 'login', 'alice', '--mount', 'login'], {}, '');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('no password given for alice');
    expect(sandboxLog.slice(before).filter((l) => l.includes('/login/'))).toEqual([]);
  });
});

describe.skipIf(skip !== undefined)('converge ldap login against a real directory (slapd)', () => {
  const slapd = useSlapd();
  const alice = LDAP_SEED.users.alice;

  beforeAll(async () => {
    const dir = manifest(`apiVersion: converge/v1
kind: LdapConfig
metadata: { name: login }
spec:
  url: ldap://127.0.0.1:1,${slapd().url}
  connection_timeout: 2
  binddn: ${LDAP_SEED.bind.dn}
  bindpass: \${env:BINDPASS}
  userdn: ${LDAP_SEED.peopleDN}
  userattr: uid
  groupdn: ${LDAP_SEED.groupsDN}
  token_ttl: 1h
---
apiVersion: converge/v1
kind: LdapGroup
metadata: { name: ops, mount: login }
spec: { policies: [ops-policy] }
---
apiVersion: converge/v1
kind: LdapUser
metadata: { name: alice, mount: login }
spec: { policies: [alice-policy] }
`);
    const applied = await converge(['apply', '-f', dir, '--auto-approve'], {
      BINDPASS: LDAP_SEED.bind.password,
    });
    expect(applied.code, applied.stderr).toBe(0);
  });

  it('logs in with the password on stdin and prints policies and metadata, not the token', async () => {
    const r = await converge(['ldap', 'login', alice.uid, '--mount', 'login'], {}, `${alice.password}\n`);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Logged in as alice');
    expect(r.stdout).toMatch(/Policies\s+alice-policy, default, ops-policy/);
    expect(r.stdout).toContain('username=alice');
    expect(r.stdout).toContain('(hidden; --show-token prints it)');
    const json = await converge(
      ['ldap', 'login', alice.uid, '--mount', 'login', '--json'],
      {},
      alice.password,
    );
    const token = JSON.parse(json.stdout).auth.client_token as string;
    expect(token.length).toBeGreaterThan(8);
    expect(r.stdout).not.toContain(token);
    const shown = await converge(
      ['ldap', 'login', alice.uid, '--mount', 'login', '--show-token'],
      {},
      alice.password,
    );
    expect(shown.stdout).toMatch(/Token\s+\S{8,}/);
    expect(JSON.parse(json.stdout).auth.lease_duration).toBe(3600);
  });

  it('refuses a wrong password with the service message and no password in any output', async () => {
    const wrong = `wrong-password-${randomUUID()}`;
    const r = await converge(['ldap', 'login', alice.uid, '--mount', 'login'], {}, wrong);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('failed to bind as user');
    expect(r.stdout + r.stderr).not.toContain(wrong);
    expect(sandboxLog.join('\n')).not.toContain(wrong);
  });
});
