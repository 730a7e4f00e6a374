/**
 * Secrets outside a kind's secret attributes, masked in every output: a secret the manifest copies
 * into a plain attribute (a bind password in a role's Description), also when `--target` or
 * `--exclude` leaves out the object that holds it (the masking takes the whole manifest's secrets),
 * and a value read from a sensitive variable (`CONVERGE_SENSITIVE_ENV`, by default the names that
 * say password, secret, token, …). Plans are what gets posted to pull requests and CI logs.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/resources/compare.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

const SECRET = 'Hunter2-Secret-Value';

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
});
afterAll(async () => {
  await sandbox?.close();
});

function manifest(): string {
  const dir = tempDir('converge-copies-');
  writeFileSync(
    path.join(dir, 'ldap.yaml'),
    'apiVersion: converge/v1\nkind: LdapConfig\nmetadata: { name: ldap }\nspec: { url: "ldap://dir.example:389", bindpass: "${env:BP}" }\n',
  );
  writeFileSync(
    path.join(dir, 'role.yaml'),
    'apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: leaky }\nspec: { Description: "bind with ${env:BP}" }\n',
  );
  return dir;
}

describe('a secret copied into another object', () => {
  it('is masked in targeted and excluding plans, their JSON, a saved plan and its apply', async () => {
    const dir = manifest();
    const env = {
      ...sandbox.env(),
      BP: SECRET,
      CONVERGE_ALLOW_ENV: 'BP',
      CONVERGE_STATE_DIR: tempDir('converge-copies-state-'),
    };
    const out = path.join(dir, 'plan.bin');
    const runs = [
      await runCli(['plan', '-f', dir, '--target', 'AclRole/**'], env),
      await runCli(['plan', '-f', dir, '--target', 'AclRole/**', '--json'], env),
      await runCli(['plan', '-f', dir, '--exclude', 'LdapConfig/ldap', '--markdown'], env),
      await runCli(['plan', '-f', dir, '--exclude', 'LdapConfig/ldap', '-out', out], env),
    ];
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    const applied = await runCli(['apply', out, '--auto-approve'], env);
    expect(applied.code, applied.stderr).toBe(0);
    for (const r of [...runs, applied]) {
      expect(r.stdout + r.stderr).not.toContain(SECRET);
    }
    expect(runs[0]!.stdout).toContain('bind with (sensitive value)');
    expect(readFileSync(out, 'utf8')).not.toContain(SECRET);
    // What the service got is the value itself: only what is shown is masked.
    const role = await fetch(`${sandbox.url}/v1/acl/role/name/leaky`, {
      headers: { authorization: `Bearer ${sandbox.rootToken}` },
    });
    expect(((await role.json()) as { Description: string }).Description).toBe(`bind with ${SECRET}`);
  });
});

const base = (extra: Record<string, string>) => ({
  ...sandbox.env(),
  CONVERGE_STATE_DIR: tempDir('converge-sensitive-env-state-'),
  ...extra,
});

describe('a value read from a sensitive variable', () => {
  function roleManifest(description: string, name = 'sensitive-env'): string {
    const dir = tempDir('converge-sensitive-env-');
    writeFileSync(
      path.join(dir, 'role.yaml'),
      `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: ${name} }\nspec: { Description: "${description}" }\n`,
    );
    return dir;
  }

  it('is masked in every plan output when its name says it is a secret, by default', async () => {
    const dir = roleManifest('db ${env:WORKER_DB_PASSWORD} for ${env:TEAM_LABEL}');
    const env = base({
      WORKER_DB_PASSWORD: 'dbpass-9876',
      TEAM_LABEL: 'platform-team',
      CONVERGE_ALLOW_ENV: 'WORKER_DB_PASSWORD,TEAM_LABEL',
    });
    const out = path.join(dir, 'plan.bin');
    for (const args of [[], ['--json'], ['--markdown'], ['-out', out]]) {
      const r = await runCli(['plan', '-f', dir, ...args], env);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout + r.stderr).not.toContain('dbpass-9876');
      // A variable whose name says nothing of secrets stays readable for the reviewer.
      if (args.length === 0) expect(r.stdout).toContain('db (sensitive value) for platform-team');
    }
    expect(readFileSync(out, 'utf8')).not.toContain('dbpass-9876');
  });

  it('is masked in a live value after a pull request drops every reference to its variable', async () => {
    const env = base({ WORKER_DB_PASSWORD: 'dbpass-4321', CONVERGE_ALLOW_ENV: 'WORKER_DB_PASSWORD' });
    const dir = roleManifest('pw ${env:WORKER_DB_PASSWORD}', 'dropped-ref');
    expect((await runCli(['apply', '-f', dir, '--auto-approve'], env)).code).toBe(0);
    // The pull request: the variable is still exposed (the real manifest needs it), the reference gone.
    const changed = roleManifest('pw changed', 'dropped-ref');
    for (const args of [[], ['--json'], ['--markdown']]) {
      const r = await runCli(['plan', '-f', changed, ...args], env);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout + r.stderr).not.toContain('dbpass-4321');
      if (args.length === 0) expect(r.stdout).toContain('"pw (sensitive value)" -> "pw changed"');
    }
  });

  it('refuses no name when the manifest never reads it', async () => {
    // Exposed by a glob, never read: it refuses no name (the manifest put it nowhere).
    const env = base({
      APP_ROLE: 'web-readers',
      APP_SECRET_STORE: 'readers',
      CONVERGE_ALLOW_ENV: 'APP_*',
    });
    const dir = tempDir('converge-unread-sensitive-');
    writeFileSync(
      path.join(dir, 'role.yaml'),
      'apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: "${env:APP_ROLE}" }\nspec: { Description: "Readers of the web tier: readers" }\n',
    );
    expect((await runCli(['validate', '-f', dir], env)).code).toBe(0);
    const plan = await runCli(['plan', '-f', dir], env);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain('+ AclRole/default/web-readers');
  });

  it('is masked from a short plain password too when the manifest stops reading it', async () => {
    const env = base({ DB_PASSWORD: 'supersecret', CONVERGE_ALLOW_ENV: 'DB_PASSWORD' });
    const dir = roleManifest('pw ${env:DB_PASSWORD}', 'plain-dropped');
    expect((await runCli(['apply', '-f', dir, '--auto-approve'], env)).code).toBe(0);
    const r = await runCli(['plan', '-f', roleManifest('pw from a file', 'plain-dropped')], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toContain('supersecret');
  });

  it('is masked as a kind normalises it (an LDAP group lower-cases and trims its policies)', async () => {
    const dir = tempDir('converge-sensitive-normalised-');
    writeFileSync(
      path.join(dir, 'group.yaml'),
      'apiVersion: converge/v1\nkind: LdapGroup\nmetadata: { name: ops }\nspec: { policies: ["${env:DB_PASSWORD}"] }\n',
    );
    for (const [password, lowered] of [
      [' Tiger1Secret ', 'tiger1secret'],
      // Lower-cased as JavaScript does: İ becomes i and a combining dot, two characters.
      ['İstanbul99', 'i̇stanbul99'],
    ]) {
      const env = base({ DB_PASSWORD: password!, CONVERGE_ALLOW_ENV: 'DB_PASSWORD' });
      for (const args of [[], ['--json'], ['--markdown']]) {
        const r = await runCli(['plan', '-f', dir, ...args], env);
        expect(r.code, r.stderr).toBe(0);
        expect((r.stdout + r.stderr).toLowerCase()).not.toContain(lowered);
      }
    }
  });

  it('is not a name that only holds KEY or PASS inside a word, nor a value that is a switch', async () => {
    const dir = roleManifest(
      '${env:CACHE_KEY_PREFIX} ${env:BYPASS_PROXY}: true owners of ${env:WORKER_DB_PASSWORD}',
    );
    const env = base({
      CACHE_KEY_PREFIX: 'platform',
      BYPASS_PROXY: 'direct',
      WORKER_DB_PASSWORD: 'true',
      CONVERGE_ALLOW_ENV: 'CACHE_KEY_PREFIX,BYPASS_PROXY,WORKER_DB_PASSWORD',
    });
    const r = await runCli(['plan', '-f', dir], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('platform direct: true owners of true');
  });

  it('plan --json keeps workflow commands and terminal controls inert, and reads back the same', async () => {
    // YAML's escapes in a double-quoted string: a raw C1 CSI and a right-to-left override.
    const dir = roleManifest('##[error]boom \\u009b2J \\u202eevil ##vso[task.setvariable variable=X]y');
    const r = await runCli(['plan', '-f', dir, '--json'], base({}));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toMatch(/##(vso)?\[|[\u009b\u202e]/);
    const change = JSON.parse(r.stdout).changes.find((c: { name: string }) => c.name === 'sensitive-env');
    expect(change.after.Description).toBe(
      '##[error]boom \u009b2J \u202eevil ##vso[task.setvariable variable=X]y',
    );
  });

  it("is MySQL's MYSQL_PWD and a MASTERKEY by default, a numeric one included", async () => {
    const dir = roleManifest('pwd ${env:MYSQL_PWD} key ${env:MASTERKEY}');
    const env = base({
      MYSQL_PWD: '12345',
      MASTERKEY: 'mk-551-xyz',
      CONVERGE_ALLOW_ENV: 'MYSQL_PWD,MASTERKEY',
    });
    const r = await runCli(['plan', '-f', dir], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('pwd (sensitive value) key (sensitive value)');
  });

  it("is an LDAP bind password's by default, as the quickstart's DEMO_LDAP_BINDPASS", async () => {
    const dir = roleManifest('team ${env:DEMO_LDAP_BINDPASS}');
    const env = base({ DEMO_LDAP_BINDPASS: 'change-me-s3cr3t', CONVERGE_ALLOW_ENV: 'DEMO_LDAP_BINDPASS' });
    const r = await runCli(['plan', '-f', dir], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toContain('change-me-s3cr3t');
    expect(r.stdout).toContain('team (sensitive value)');
  });

  it('cannot be guessed from a saved plan: its digest of what the manifest asks is keyed', async () => {
    const dir = roleManifest('db ${env:WORKER_DB_PASSWORD}');
    const values = { WORKER_DB_PASSWORD: 'tiger1', CONVERGE_ALLOW_ENV: 'WORKER_DB_PASSWORD' };
    const digestWith = async (key: string) => {
      const out = path.join(tempDir('converge-keyed-digest-'), 'plan.bin');
      const r = await runCli(['plan', '-f', dir, '-out', out], base({ ...values, CONVERGE_STATE_KEY: key }));
      expect(r.code, r.stderr).toBe(0);
      return (JSON.parse(readFileSync(out, 'utf8')) as { changes: { digest: string }[] }).changes[0]!.digest;
    };
    const digest = await digestWith(randomBytes(32).toString('hex'));
    // A plain hash of the spec, which anyone with the repository could compute for each guess.
    const plain = createHash('sha256')
      .update(
        canonicalJson({
          spec: { Description: 'db tiger1' },
          secrets: [],
          ensure: 'present',
          local: null,
        }),
      )
      .digest('hex');
    expect(digest).not.toBe(plain);
    expect(await digestWith(randomBytes(32).toString('hex'))).not.toBe(digest);
  });

  it('follows CONVERGE_SENSITIVE_ENV when the operator sets it (empty: none)', async () => {
    const dir = roleManifest('db ${env:WORKER_DB_PASSWORD} for ${env:TEAM_LABEL}');
    const allow = { CONVERGE_ALLOW_ENV: 'WORKER_DB_PASSWORD,TEAM_LABEL' };
    const values = { WORKER_DB_PASSWORD: 'dbpass-9876', TEAM_LABEL: 'platform-team' };
    const listed = await runCli(
      ['plan', '-f', dir],
      base({ ...allow, ...values, CONVERGE_SENSITIVE_ENV: 'team_*' }),
    );
    expect(listed.stdout).toContain('db dbpass-9876 for (sensitive value)');
    const none = await runCli(['plan', '-f', dir], base({ ...allow, ...values, CONVERGE_SENSITIVE_ENV: '' }));
    expect(none.stdout).toContain('db dbpass-9876 for platform-team');
  });
});

describe('a value read into a field whose name says secret', () => {
  it('is masked in every plan output, whatever the variable is called', async () => {
    const dir = tempDir('converge-secret-field-');
    writeFileSync(
      path.join(dir, 'job.yaml'),
      `apiVersion: converge/v1
kind: Job
metadata: { name: field-named }
spec:
  Type: service
  Datacenters: [dc1]
  TaskGroups:
    - Name: web
      Tasks:
        - Name: server
          Driver: docker
          Config: { image: "nginx:1.27" }
          Env: { DB_PASSWORD: "\${env:PROD_DB}", MODE: "\${env:RUN_MODE}" }
`,
    );
    const env = base({
      PROD_DB: 'prod-db-pass-4711',
      RUN_MODE: 'nightly-run',
      CONVERGE_ALLOW_ENV: 'PROD_DB,RUN_MODE',
    });
    const out = path.join(dir, 'plan.bin');
    for (const args of [[], ['--json'], ['--markdown'], ['-out', out]]) {
      const r = await runCli(['plan', '-f', dir, ...args], env);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout + r.stderr).not.toContain('prod-db-pass-4711');
      if (args.length === 0) {
        expect(r.stdout).toMatch(/DB_PASSWORD = "?\(sensitive value\)/);
        // A field whose name says nothing of secrets stays readable.
        expect(r.stdout).toContain('"nightly-run"');
      }
    }
    expect(readFileSync(out, 'utf8')).not.toContain('prod-db-pass-4711');
  });
});

describe('a whole value that is a secret, rotated', () => {
  it('is said to have changed, as a secret attribute is, in text and JSON', async () => {
    const dir = tempDir('converge-rotated-');
    writeFileSync(
      path.join(dir, 'role.yaml'),
      'apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: rotated }\nspec: { Description: "${env:SERVICE_TOKEN}" }\n',
    );
    const env = (value: string) => base({ SERVICE_TOKEN: value, CONVERGE_ALLOW_ENV: 'SERVICE_TOKEN' });
    const applied = await runCli(['apply', '-f', dir, '--auto-approve'], env('old-token-1234'));
    expect(applied.code, applied.stderr).toBe(0);
    const text = await runCli(['plan', '-f', dir], env('new-token-5678'));
    expect(text.stdout).toMatch(/~ Description = \(sensitive value changed\)$/m);
    expect(text.stdout).not.toContain('(sensitive value) -> (sensitive value)');
    const json = await runCli(['plan', '-f', dir, '--json'], env('new-token-5678'));
    const diff = (JSON.parse(json.stdout) as { changes: { diffs: Record<string, unknown>[] }[] }).changes[0]!
      .diffs[0];
    expect(diff).toMatchObject({ path: 'Description', sensitive: true });
    for (const r of [text, json]) {
      expect(r.stdout + r.stderr).not.toContain('old-token-1234');
      expect(r.stdout + r.stderr).not.toContain('new-token-5678');
    }
  });
});

describe('a value read from a file whose path says secret', () => {
  it('is masked in every plan output, and a file named otherwise stays readable', async () => {
    const dir = tempDir('converge-sensitive-file-');
    mkdirSync(path.join(dir, 'secrets'));
    // An editor's final line break: the value is masked with it and without it.
    writeFileSync(path.join(dir, 'secrets', 'db.txt'), 'filepass-4321\n');
    writeFileSync(path.join(dir, 'api-token'), 'tok-5678');
    writeFileSync(path.join(dir, 'label.txt'), 'platform-team');
    writeFileSync(
      path.join(dir, 'role.yaml'),
      'apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: sensitive-file }\nspec: { Description: "db ${file:secrets/db.txt} via ${file:api-token} for ${file:label.txt}" }\n---\napiVersion: converge/v1\nkind: AclRole\nmetadata: { name: copy }\nspec: { Description: "filepass-4321" }\n',
    );
    const out = path.join(dir, 'plan.bin');
    for (const args of [[], ['--json'], ['--markdown'], ['-out', out]]) {
      const r = await runCli(['plan', '-f', dir, ...args], base({}));
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout + r.stderr).not.toMatch(/filepass-4321|tok-5678/);
      if (args.length === 0) {
        expect(r.stdout).toContain(
          'Description = "db (sensitive value) via (sensitive value) for platform-team"',
        );
        expect(r.stdout).toContain('Description = (sensitive value)');
      }
    }
    expect(readFileSync(out, 'utf8')).not.toMatch(/filepass-4321|tok-5678/);
    // The operator's rule for variables is the rule for files too: empty, none.
    const none = await runCli(['plan', '-f', dir], base({ CONVERGE_SENSITIVE_ENV: '' }));
    expect(none.stdout).toContain('tok-5678');
  });
});

describe("a Connection's token", () => {
  it('is masked where another document copies it, whatever variable or file it came from', async () => {
    const dir = tempDir('converge-connection-token-');
    mkdirSync(path.join(dir, 'secrets'));
    writeFileSync(path.join(dir, 'secrets', 'eu.token'), 'file-held-token-abcdef123');
    const connection = (name: string, token: string) =>
      `apiVersion: converge/v1\nkind: Connection\nmetadata: { name: ${name} }\nspec: { service: registry, address: "${sandbox.url}", token: "${token}" }\n---\n`;
    writeFileSync(
      path.join(dir, 'm.yaml'),
      connection('eu', '${file:secrets/eu.token}') +
        connection('us', '${env:US_REG_AUTH}') +
        'apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: copied }\nspec: { Description: "eu ${file:secrets/eu.token} us ${env:US_REG_AUTH}" }\n',
    );
    const env = base({ US_REG_AUTH: 's3cr3t-admin-value-123', CONVERGE_ALLOW_ENV: 'US_REG_AUTH' });
    for (const args of [[], ['--json'], ['--markdown']]) {
      const r = await runCli(['plan', '-f', dir, ...args], env);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout + r.stderr).not.toContain('file-held-token-abcdef123');
      expect(r.stdout + r.stderr).not.toContain('s3cr3t-admin-value-123');
      if (args.length === 0) expect(r.stdout).toContain('eu (sensitive value) us (sensitive value)');
    }
  });

  it('may not be part of an object name, which cannot be masked', async () => {
    const dir = tempDir('converge-connection-token-name-');
    writeFileSync(
      path.join(dir, 'm.yaml'),
      `apiVersion: converge/v1\nkind: Connection\nmetadata: { name: eu }\nspec: { service: registry, address: "${sandbox.url}", token: "\${env:US_REG_AUTH}" }\n---\napiVersion: converge/v1\nkind: AclRole\nmetadata: { name: "r-\${env:US_REG_AUTH}" }\nspec: { Description: x }\n`,
    );
    const r = await runCli(
      ['validate', '-f', dir],
      base({ US_REG_AUTH: 'regkey4567', CONVERGE_ALLOW_ENV: 'US_REG_AUTH' }),
    );
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).not.toContain('regkey4567');
    expect(r.stderr).toMatch(/m\.yaml:8:\d+: metadata\.name holds the token of Connection "eu"/);
  });

  it("may not be a Connection's organization, the namespace of every workspace on it", async () => {
    const dir = tempDir('converge-sensitive-organization-');
    writeFileSync(
      path.join(dir, 'm.yaml'),
      `apiVersion: converge/v1\nkind: Connection\nmetadata: { name: eu }\nspec:\n  service: workspaces\n  address: "${sandbox.url}"\n  organization: "\${env:DB_PASSWORD}"\n---\napiVersion: converge/v1\nkind: Workspace\nmetadata: { name: w9, connection: eu }\nspec: { description: x }\n`,
    );
    const env = base({ DB_PASSWORD: 'HunterSecret2Pw', CONVERGE_ALLOW_ENV: 'DB_PASSWORD' });
    for (const command of [['validate'], ['plan'], ['plan', '--json']]) {
      const r = await runCli([...command, '-f', dir], env);
      expect(r.code).toBe(1);
      expect(r.stdout + r.stderr).not.toContain('HunterSecret2Pw');
      expect(r.stdout + r.stderr).toMatch(
        /m\.yaml:7:\d+: spec\.organization of Connection "eu" holds the value of DB_PASSWORD, a sensitive variable/,
      );
    }
  });

  it("names a directory entry's mount as the document writes it, at its line", async () => {
    const dir = tempDir('converge-sensitive-mount-');
    writeFileSync(
      path.join(dir, 'm.yaml'),
      'apiVersion: converge/v1\nkind: LdapGroup\nmetadata:\n  name: ops\n  mount: "ldap-${env:MOUNT_TOKEN}"\nspec: { policies: [a] }\n',
    );
    const r = await runCli(
      ['validate', '-f', dir],
      base({ MOUNT_TOKEN: 'mounttok9', CONVERGE_ALLOW_ENV: 'MOUNT_TOKEN' }),
    );
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).not.toContain('mounttok9');
    expect(r.stderr).toMatch(/m\.yaml:5:\d+: metadata\.mount holds the value of MOUNT_TOKEN/);
  });
});

describe('a live value in an entry whose name says secret', () => {
  const job = (name: string, env: string) =>
    `apiVersion: converge/v1\nkind: Job\nmetadata: { name: ${name} }\nspec: { Type: service, Datacenters: [dc1], TaskGroups: [{ Name: web, Count: 1, Tasks: [{ Name: srv, Driver: docker, Config: { image: "nginx:1.27" }, Env: { ${env} } }] }] }\n`;
  const LIVE = 'hunter2-live-password';

  /** The plan of `dir` in every form (text, JSON, Markdown, a saved plan), each checked to hold no `secret`. */
  async function everyPlanForm(dir: string, env: Record<string, string | undefined>, secret: string) {
    const out = path.join(tempDir('converge-by-name-out-'), 'p.plan');
    const runs = [
      await runCli(['plan', '-f', dir], env),
      await runCli(['plan', '-f', dir, '--json'], env),
      await runCli(['plan', '-f', dir, '--markdown'], env),
      await runCli(['plan', '-f', dir, '-out', out], env),
    ];
    for (const r of runs) {
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout + r.stderr).not.toContain(secret);
    }
    expect(readFileSync(out, 'utf8')).not.toContain(secret);
    return runs;
  }

  it('is masked when a pull request stops reading it from a variable, or drops it, in every form of the plan', async () => {
    const env = base({ API_DB: LIVE, CONVERGE_ALLOW_ENV: 'API_DB' });
    const dir = tempDir('converge-by-name-');
    const file = path.join(dir, 'job.yaml');
    writeFileSync(file, job('by-name', 'DB_PASSWORD: "${env:API_DB}", MODE: prod'));
    expect((await runCli(['apply', '-f', dir, '--auto-approve'], env)).code).toBe(0);

    for (const edit of ['DB_PASSWORD: changeme, MODE: staging', 'MODE: staging']) {
      writeFileSync(file, job('by-name', edit));
      const runs = await everyPlanForm(dir, env, LIVE);
      // The entry's change is still said, and the entries whose names say nothing stay readable.
      expect(runs[0]!.stdout).toMatch(
        edit.includes('changeme')
          ? /~ DB_PASSWORD += \(sensitive value changed\)/
          : /- DB_PASSWORD += \(sensitive value\)/,
      );
      expect(runs[0]!.stdout).toMatch(/~ MODE += "prod" -> "staging"/);
    }
  });

  it('is masked where a pull request renames its entry to a name that says nothing, in every form of the plan', async () => {
    // The value is read from a variable whose name is not sensitive: only the entry's name said so.
    const env = base({ API_DB: LIVE, CONVERGE_ALLOW_ENV: 'API_DB' });
    const dir = tempDir('converge-by-name-');
    const file = path.join(dir, 'job.yaml');
    writeFileSync(file, job('by-name-renamed', 'DB_PASSWORD: "${env:API_DB}", MODE: prod'));
    expect((await runCli(['apply', '-f', dir, '--auto-approve'], env)).code).toBe(0);
    writeFileSync(file, job('by-name-renamed', 'DATABASE_PW: "${env:API_DB}", MODE: prod'));
    const runs = await everyPlanForm(dir, env, LIVE);
    expect(runs[0]!.stdout).toMatch(/\+ DATABASE_PW += \(sensitive value\)/);
    expect(runs[0]!.stdout).toMatch(/- DB_PASSWORD += \(sensitive value\)/);
  });

  it('is masked when its name holds dots (spring.datasource.password), in every form of the plan, and shown as one key', async () => {
    const env = base({});
    const dir = tempDir('converge-by-name-dots-');
    const file = path.join(dir, 'job.yaml');
    const entries = (password: string, url: string) =>
      `"spring.datasource.password": "${password}", "spring.datasource.url": "${url}", MODE: a`;
    writeFileSync(
      file,
      job('by-name-dots', entries('pw-one-1234567', 'jdbc:one-with-a-longer-url-so-the-map-takes-lines')),
    );
    // Created whole, the map shows each dotted name quoted too.
    const created = await runCli(['plan', '-f', dir], env);
    expect(created.stdout).toContain('"spring.datasource.url"');
    expect(created.stdout).not.toMatch(/[^"]spring\.datasource\.url/);
    expect((await runCli(['apply', '-f', dir, '--auto-approve'], env)).code).toBe(0);
    writeFileSync(file, job('by-name-dots', entries('pw-one-CHANGED9', 'jdbc:two')));
    const [text, json, markdown] = await everyPlanForm(dir, env, 'pw-one-');
    // A dotted name is one key, as the manifest wrote it, never `spring = { datasource = {…} }`.
    expect(text!.stdout).toMatch(/~ "spring\.datasource\.password" += \(sensitive value changed\)/);
    expect(text!.stdout).toMatch(
      /~ "spring\.datasource\.url" += "jdbc:one-with-a-longer-url-so-the-map-takes-lines" -> "jdbc:two"/,
    );
    expect(text!.stdout).not.toMatch(/datasource = \{/);
    expect(markdown!.stdout).toMatch(
      /"spring\.datasource\.url" += "jdbc:one-with-a-longer-url-so-the-map-takes-lines" -> "jdbc:two"/,
    );
    const paths = (
      JSON.parse(json!.stdout) as { changes: { diffs: { path: string }[] }[] }
    ).changes[0]!.diffs.map((d) => d.path);
    expect(paths).toEqual([
      'TaskGroups[web].Tasks[srv].Env["spring.datasource.password"]',
      'TaskGroups[web].Tasks[srv].Env["spring.datasource.url"]',
    ]);
  });

  it('is masked in converge job plan, text and JSON', async () => {
    const env = base({});
    const dir = tempDir('converge-by-name-job-');
    const jobFile = path.join(dir, 'by-name.json');
    writeFileSync(
      jobFile,
      JSON.stringify({
        Job: {
          ID: 'by-name',
          Type: 'service',
          Datacenters: ['dc1'],
          TaskGroups: [
            {
              Name: 'web',
              Count: 1,
              Tasks: [
                {
                  Name: 'srv',
                  Driver: 'docker',
                  Config: { image: 'nginx:1.27' },
                  Env: { DB_PASSWORD: 'x1', MODE: 'prod' },
                },
              ],
            },
          ],
        },
      }),
    );
    const text = await runCli(['job', 'plan', jobFile], env);
    expect(text.stdout + text.stderr).not.toContain(LIVE);
    expect(text.stdout).toContain('Env[DB_PASSWORD]: (sensitive value changed)');
    const json = await runCli(['job', 'plan', jobFile, '--json'], env);
    expect(json.stdout + json.stderr).not.toContain(LIVE);
    expect(json.stdout).toContain('"Name": "Env[DB_PASSWORD]"');
  });

  it('is shown when the operator says no name is sensitive (CONVERGE_SENSITIVE_ENV empty)', async () => {
    const env = base({ CONVERGE_SENSITIVE_ENV: '' });
    const dir = tempDir('converge-by-name-off-');
    writeFileSync(path.join(dir, 'job.yaml'), job('by-name', 'DB_PASSWORD: changeme, MODE: prod'));
    const r = await runCli(['plan', '-f', dir], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`~ DB_PASSWORD = "${LIVE}" -> "changeme"`);
  });
});
