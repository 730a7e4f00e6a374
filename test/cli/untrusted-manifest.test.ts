/**
 * `converge plan` on a pull request runs a manifest anyone may have written while the process holds
 * the service tokens. These runs are that job's hostile cases, in-process against the sandbox, which
 * logs every request it receives: the manifest may read only the variables and files the operator
 * exposes, and what it may not read is an error at its line before anything is sent.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

const ROOT_TOKEN = `planted-root-token-${randomUUID()}`;
let sandbox: RunningSandbox;
let requests: string[] = [];

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, token: ROOT_TOKEN, log: (line) => requests.push(line) });
});
afterAll(async () => sandbox?.close());
beforeEach(() => {
  requests = [];
});

/** A manifest folder of the test's own, and a state folder outside it. */
function workspace(files: Record<string, string>): { dir: string; stateDir: string } {
  const top = tempDir('converge-untrusted-');
  const dir = path.join(top, 'manifests');
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return { dir, stateDir: path.join(top, 'state') };
}

function env(stateDir: string, extra: Record<string, string> = {}): Record<string, string> {
  return { ...sandbox.env(), CONVERGE_STATE_DIR: stateDir, NO_COLOR: '1', ...extra };
}

const role = (description: string, name = 'untrusted') => `apiVersion: converge/v1
kind: AclRole
metadata:
  name: ${name}
spec:
  Description: ${description}
`;

const job = (name: string, spec: string) => `apiVersion: converge/v1
kind: Job
metadata:
  name: "${name}"
spec:
  ${spec}
`;

describe('files outside the manifest root', () => {
  it('refuses ${file:/etc/hostname} at its line and contacts no service', async () => {
    const { dir, stateDir } = workspace({ 'roles.yaml': role('${file:/etc/hostname}') });
    const r = await runCli(['plan', '-f', dir], env(stateDir));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `${path.join(dir, 'roles.yaml')}:6:16: cannot use \${file:/etc/hostname}: /etc/hostname is an absolute path`,
    );
    expect(r.stdout + r.stderr).not.toContain(readFileSync('/etc/hostname', 'utf8').trim());
    expect(requests).toEqual([]);
  });

  it('refuses a specFile outside the root: nothing goes to the parse or plan endpoints', async () => {
    const { dir, stateDir } = workspace({ 'jobs.yaml': job('web', 'specFile: /etc/passwd') });
    const r = await runCli(['plan', '-f', dir], env(stateDir));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `${path.join(dir, 'jobs.yaml')}:6:13: spec.specFile: /etc/passwd is an absolute path: name a file inside the manifest root`,
    );
    expect(r.stdout + r.stderr).not.toContain('root:');
    // Refused while loading: no service is contacted at all, least of all the parse and plan endpoints.
    expect(requests).toEqual([]);
  });

  it('refuses a specFile that is a link leading out of the root', async () => {
    const { dir, stateDir } = workspace({ 'jobs.yaml': job('web', 'specFile: web.hcl') });
    symlinkSync('/etc/passwd', path.join(dir, 'web.hcl'));
    const r = await runCli(['validate', '-f', dir], env(stateDir));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      'spec.specFile: web.hcl is a symbolic link that leads outside the manifest root',
    );
    expect(r.stdout + r.stderr).not.toContain('root:');
  });

  it('does not send a job whose text specFile the service cannot parse to the plan endpoint', async () => {
    const { dir, stateDir } = workspace({
      'jobs.yaml': job('broken', 'specFile: broken.hcl'),
      'broken.hcl': 'this is not a job specification\n',
    });
    const r = await runCli(['plan', '-f', dir], env(stateDir));
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).toContain(`${path.join(dir, 'jobs.yaml')}:6:13:`);
    expect(requests.filter((line) => line.includes('/plan'))).toEqual([]);
  });
});

describe('environment variables', () => {
  it('never reads a Converge token, even under CONVERGE_ALLOW_ENV=*', async () => {
    const { dir, stateDir } = workspace({ 'roles.yaml': role('${env:CONVERGE_REGISTRY_TOKEN}') });
    const r = await runCli(['plan', '-f', dir], env(stateDir, { CONVERGE_ALLOW_ENV: '*' }));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      "roles.yaml:6:16: environment variable CONVERGE_REGISTRY_TOKEN is one of Converge's credentials, which a manifest may never read",
    );
    expect(r.stdout + r.stderr).not.toContain(ROOT_TOKEN);
    expect(requests).toEqual([]);
  });

  it('never reads a variable that holds a Converge token under another name', async () => {
    const { dir, stateDir } = workspace({ 'roles.yaml': role('${env:INNOCENT}') });
    const r = await runCli(
      ['plan', '-f', dir],
      env(stateDir, { CONVERGE_ALLOW_ENV: '*', INNOCENT: ROOT_TOKEN }),
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      "environment variable INNOCENT holds the value of CONVERGE_REGISTRY_TOKEN, one of Converge's credentials",
    );
    expect(r.stdout + r.stderr).not.toContain(ROOT_TOKEN);
    expect(requests).toEqual([]);
  });

  it('refuses a variable nobody exposed, set or not, naming it and how to expose it, never its value', async () => {
    const value = `unlisted-${randomUUID()}`;
    const { dir, stateDir } = workspace({ 'roles.yaml': role('"${env:UNLISTED} ${env:UNSET}"') });
    const r = await runCli(['validate', '-f', dir], env(stateDir, { UNLISTED: value }));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      'roles.yaml:6:17: environment variable UNLISTED is not exposed to the manifest: allow it with --allow-env UNLISTED or CONVERGE_ALLOW_ENV=UNLISTED (referenced as ${env:UNLISTED})',
    );
    // Each at its own reference, not both at the string's start.
    expect(r.stderr).toContain('roles.yaml:6:33: environment variable UNSET is not exposed to the manifest');
    expect(r.stdout + r.stderr).not.toContain(value);
  });

  it('reads what a glob exposes, from CONVERGE_ALLOW_ENV or --allow-env', async () => {
    const { dir, stateDir } = workspace({ 'roles.yaml': role('"team ${env:DEMO_X}"') });
    const fromVariable = await runCli(
      ['plan', '-f', dir, '--json'],
      env(stateDir, { CONVERGE_ALLOW_ENV: 'OTHER, DEMO_*', DEMO_X: 'platform' }),
    );
    expect(fromVariable.code).toBe(0);
    expect(fromVariable.stdout).toContain('team platform');
    const fromFlag = await runCli(
      ['validate', '-f', dir, '--allow-env', 'OTHER,DEMO_*'],
      env(stateDir, { DEMO_X: 'platform' }),
    );
    expect(fromFlag.code).toBe(0);
    const notMatched = await runCli(
      ['validate', '-f', dir, '--allow-env', 'DEMO'],
      env(stateDir, { DEMO_X: 'x' }),
    );
    expect(notMatched.code).toBe(1);
  });
});

describe('names and YAML', () => {
  it('refuses a job named ".." at its line', async () => {
    const { dir, stateDir } = workspace({
      'jobs.yaml': `${job('..', 'TaskGroups: [{ Name: web }]')}---\n${job('a/b?c', 'TaskGroups: [{ Name: web }]')}`,
    });
    const r = await runCli(['validate', '-f', dir], env(stateDir));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${path.join(dir, 'jobs.yaml')}:4:9: invalid Job name "..":`);
    expect(r.stderr).toContain(`${path.join(dir, 'jobs.yaml')}:11:9: invalid Job name "a/b?c":`);
  });

  it('plans a manifest that uses merge keys', async () => {
    const { dir, stateDir } = workspace({
      'roles.yaml': `apiVersion: converge/v1
kind: AclRole
metadata:
  name: merged
spec:
  Description: services that share settings
  ServiceIdentities:
    - &web { ServiceName: web, Datacenters: [dc1] }
    - &eu { ServiceName: eu, Datacenters: [eu1] }
    - <<: [*web, *eu]
      ServiceName: api
`,
    });
    const r = await runCli(['plan', '-f', dir, '--json'], env(stateDir));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const after = JSON.stringify(JSON.parse(r.stdout));
    expect(after).toContain('{"ServiceName":"api","Datacenters":["dc1"]}');
  });
});

describe("a job's registration tokens", () => {
  it('never show in the plan, its JSON or markdown, or a saved plan file', async () => {
    const secret = `job-secrets-token-${randomUUID()}`;
    const registry = `job-registry-token-${randomUUID()}`;
    const { dir, stateDir } = workspace({
      'jobs.yaml': job(
        'tokens',
        [
          'SecretsToken: ${env:JOB_SECRETS_TOKEN}',
          `RegistryToken: ${registry}`,
          'Type: batch',
          'Datacenters: [dc1]',
          'TaskGroups:',
          '    - Name: g',
          '      Tasks:',
          '        - { Name: t, Driver: docker, Config: { image: "busybox" } }',
        ].join('\n  '),
      ),
    });
    const e = env(stateDir, { JOB_SECRETS_TOKEN: secret, CONVERGE_ALLOW_ENV: 'JOB_*' });
    const out = path.join(stateDir, '..', 'plan.json');
    const runs = [
      await runCli(['plan', '-f', dir], e),
      await runCli(['plan', '-f', dir, '--json'], e),
      await runCli(['plan', '-f', dir, '--markdown'], e),
      await runCli(['plan', '-f', dir, '-out', out], e),
    ];
    for (const r of runs) {
      expect(r.stderr).toBe('');
      expect(r.stdout).toContain('(sensitive value)');
      expect(r.stdout).not.toContain(secret);
      expect(r.stdout).not.toContain(registry);
    }
    const saved = readFileSync(out, 'utf8');
    expect(saved).not.toContain(secret);
    expect(saved).not.toContain(registry);
  });
});

describe('local JSON nested deeper than Converge walks', () => {
  // Each was read whole and then walked recursively: "Maximum call stack size exceeded", from a plan
  // of a pull request that names such a file.
  it('refuses a job specFile nested 3,000 levels deep, naming it, sending it nowhere', async () => {
    const deep = `${'['.repeat(3_000)}${']'.repeat(3_000)}`;
    const { dir, stateDir } = workspace({
      'jobs.yaml': job('deep', 'specFile: deep.json'),
      'deep.json': `{"Job": {"Type": "batch", "Datacenters": ["dc1"], "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Driver": "exec", "Config": {"args": ${deep}}}]}]}}`,
    });
    const r = await runCli(['plan', '-f', dir], env(stateDir));
    expect(r.stdout + r.stderr).not.toContain('call stack');
    expect(r.stdout + r.stderr).toContain(
      'deep.json: the job nests deeper than 64 levels, as a manifest may not either',
    );
    expect(r.code).toBe(1);
    // Read for its live state, never sent (no parse, no plan, no register).
    expect(requests.filter((l) => /^(POST|PUT) /.test(l))).toEqual([]);
  });

  it("refuses a workspace's state file nested 20,000 levels deep", async () => {
    const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    const { dir, stateDir } = workspace({
      'ws.yaml':
        'apiVersion: converge/v1\nkind: Workspace\nmetadata: { name: deep-state, namespace: sandbox }\nspec: { state: deep.tfstate }\n',
      'deep.tfstate': `{"version": 4, "serial": ${deep}, "lineage": "x"}`,
    });
    const r = await runCli(['plan', '-f', dir], env(stateDir));
    expect(r.stdout + r.stderr).not.toContain('call stack');
    expect(r.stdout + r.stderr).toContain('not a state file: its JSON nests deeper than 128 levels');
    expect(r.code).toBe(1);
  });
});
