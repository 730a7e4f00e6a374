#!/usr/bin/env node
// `npm run demo`: the main job end to end on the built-in sandbox. Starts `converge sandbox`,
// validates, plans and applies the example manifest (ACL roles, two workspaces, one seeded with a
// state file, the directory login's configuration, groups and users, a service job from a text job
// spec and a parameterized job), shows that a second plan is clean, dispatches the parameterized job
// and scales the service job (which the manifest lets keep its count), logs in through the directory
// when this machine has slapd (a real directory server, started on a free port with a seeded test
// directory), replaces the recovery key shares in a rekey ceremony, changes a role and a workspace
// behind Converge's back and shows the drift, then stops everything.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { tsImport } from 'tsx/esm/api';

const root = fileURLToPath(new URL('..', import.meta.url));
const cli = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const manifest = 'examples/demo';

const bold = process.stdout.isTTY && !process.env.NO_COLOR ? (s) => `\x1b[1m${s}\x1b[0m` : (s) => s;

function banner(text) {
  process.stdout.write(`\n${bold(`==> ${text}`)}\n`);
}

/**
 * Starts the sandbox on a free port and reads the `export NAME=value` lines it prints (stdout), and
 * the recovery key shares it shows once at start (stderr), which the rekey part of the demo uses.
 */
async function startSandbox() {
  const child = spawn(
    process.execPath,
    [cli, 'sandbox', '--port', '0', '--config', 'examples/sandbox.yaml'],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const env = {};
  const recoveryKeys = [];
  let buffer = '';
  let errors = '';
  let forwarding = false;
  child.stderr.on('data', (chunk) => {
    // Start-up lines are shown once read; later ones (errors, the stop line) pass straight through.
    if (forwarding) process.stderr.write(chunk);
    else errors += chunk;
  });
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the sandbox did not start within 15 s')), 15_000);
    child.once('exit', (code) => reject(new Error(`the sandbox exited early (code ${code}): ${errors}`)));
    child.stdout.on('data', (chunk) => {
      buffer += chunk;
      for (const m of buffer.matchAll(/^export (CONVERGE_[A-Z_]+)=(?:'([^']*)'|(\S*))$/gm))
        env[m[1]] = m[2] ?? m[3];
      if (Object.keys(env).length >= 8) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  // Give stderr a moment: the shares are written right after the export lines.
  await new Promise((r) => setTimeout(r, 100));
  process.stderr.write(errors);
  forwarding = true;
  for (const m of errors.matchAll(/^Recovery Key \d+: ([0-9a-f]+)$/gm)) recoveryKeys.push(m[1]);
  return { child, env, recoveryKeys };
}

async function converge(args, env, { expect = [0], input, inputLabel = 'password' } = {}) {
  banner(`converge ${args.join(' ')}${input === undefined ? '' : `   (${inputLabel} on stdin)`}`);
  const child = spawn(process.execPath, [cli, ...args], {
    cwd: root,
    env,
    stdio: [input === undefined ? 'inherit' : 'pipe', 'inherit', 'inherit'],
  });
  if (input !== undefined) child.stdin.end(input);
  const [code] = await once(child, 'exit');
  if (!expect.includes(code))
    throw new Error(`converge ${args[0]} exited ${code}, expected ${expect.join(' or ')}`);
  return code;
}

/** Someone edits a role by hand, straight through the registry API. */
async function driftRole(env, name) {
  const base = `${env.CONVERGE_REGISTRY_ADDR}/v1/acl`;
  const headers = {
    Authorization: `Bearer ${env.CONVERGE_REGISTRY_TOKEN}`,
    'Content-Type': 'application/json',
  };
  const role = await (await fetch(`${base}/role/name/${name}`, { headers })).json();
  const edited = {
    ...role,
    Description: 'edited by hand in the console',
    Policies: role.Policies.filter((p) => p.Name !== 'node-read'),
  };
  const res = await fetch(`${base}/role/${role.ID}`, {
    method: 'PUT',
    headers,
    body: JSON.stringify(edited),
  });
  if (!res.ok) throw new Error(`could not edit the role: ${res.status} ${await res.text()}`);
}

/** Someone edits a workspace by hand, straight through the workspace API. */
async function driftWorkspace(env, organization, name) {
  const res = await fetch(
    `${env.CONVERGE_WORKSPACES_ADDR}/api/v2/organizations/${organization}/workspaces/${name}`,
    {
      method: 'PATCH',
      headers: {
        Authorization: `Bearer ${env.CONVERGE_WORKSPACES_TOKEN}`,
        'Content-Type': 'application/vnd.api+json',
      },
      body: JSON.stringify({
        data: { type: 'workspaces', attributes: { 'auto-apply': true, 'tag-names': ['web'] } },
      }),
    },
  );
  if (!res.ok) throw new Error(`could not edit the workspace: ${res.status} ${await res.text()}`);
}

/**
 * Waits until a job's latest deployment is no longer running: the scheduler refuses to scale a job
 * while it deploys (the sandbox's deployments succeed after `deploymentSeconds`).
 */
async function deployed(env, job) {
  const url = `${env.CONVERGE_SCHEDULER_ADDR}/v1/job/${job}/deployment`;
  const headers = { Authorization: `Bearer ${env.CONVERGE_SCHEDULER_TOKEN}` };
  for (let i = 0; i < 100; i += 1) {
    const deployment = await (await fetch(url, { headers })).json();
    if (!deployment || deployment.Status !== 'running') return deployment?.Status;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the deployment of job ${job} did not finish within 20 s`);
}

/** The test suite's seeded slapd (users alice, bob…), or undefined where slapd is not installed. */
async function startDirectory() {
  const { findSlapd, startSlapd, LDAP_SEED } = await tsImport(
    '../test/support/slapd-server.ts',
    import.meta.url,
  );
  if (!findSlapd()) return undefined;
  return { server: await startSlapd(), seed: LDAP_SEED };
}

const directory = await startDirectory();
const { child: sandbox, env: sandboxEnv, recoveryKeys } = await startSandbox();
// The demo's records go to a folder of its own, and nothing of the caller's Converge settings is
// inherited: run from the repository's root with the caller's environment, it wrote its records into
// the caller's inventory (the default connection's records carry no address), so the caller's next
// `plan --prune` took a group made by hand for one of Converge's.
const stateDir = mkdtempSync(path.join(os.tmpdir(), 'converge-demo-'));
const callerEnv = Object.fromEntries(
  Object.entries(process.env).filter(([name]) => !name.startsWith('CONVERGE_')),
);
const env = {
  ...callerEnv,
  ...sandboxEnv,
  CONVERGE_STATE_DIR: stateDir,
  USER_TEAM_LABEL: 'platform team',
  // Without slapd the configuration still validates, plans and applies; only login needs a server.
  DEMO_LDAP_URL: directory?.server.url ?? 'ldap://127.0.0.1:389',
  DEMO_LDAP_BINDPASS: directory?.seed.bind.password ?? 'demo-bind-password',
  // The manifest reads only the variables the operator exposes: exactly the three it uses.
  CONVERGE_ALLOW_ENV: 'USER_TEAM_LABEL,DEMO_LDAP_URL,DEMO_LDAP_BINDPASS',
};
let failed = false;
try {
  banner(`sandbox running at ${sandboxEnv.CONVERGE_REGISTRY_ADDR}`);
  banner(
    `the manifest may read only the variables exposed to it: CONVERGE_ALLOW_ENV=${env.CONVERGE_ALLOW_ENV}`,
  );
  await converge(['validate', '-f', manifest], env);
  await converge(['plan', '-f', manifest], env);
  await converge(['apply', '-f', manifest, '--auto-approve'], env);
  await converge(['plan', '-f', manifest, '--detailed-exitcode'], env, { expect: [0] });
  await converge(['role', 'list'], env);
  await converge(['workspace', 'list', '--org', 'sandbox'], env);
  await converge(['state', 'list', 'sandbox/web-prod'], env);
  await converge(['ldap', 'groups'], env);
  await converge(['ldap', 'users'], env);
  if (directory) {
    await converge(['ldap', 'login', 'alice'], env, { input: `${directory.seed.users.alice.password}\n` });
  } else {
    banner('slapd is not installed here: skipping `converge ldap login` (apt-get install slapd ldap-utils)');
  }
  banner('three holders of the recovery key shares the sandbox printed at start replace them');
  await converge(['rekey', 'start', '--shares', '3', '--threshold', '2'], env);
  for (const share of recoveryKeys.slice(0, 3))
    await converge(['rekey', 'submit'], env, { input: share, inputLabel: 'a recovery key share' });
  await converge(['job', 'status'], env);
  await converge(
    [
      'job',
      'dispatch',
      'report',
      '--meta',
      'customer=acme',
      '--payload-file',
      'examples/demo/jobs/report-input.json',
    ],
    env,
  );
  banner(`job web's deployment: ${await deployed(env, 'web')}`);
  await converge(['job', 'scale', 'web', 'web', '3', '--message', 'demo: more traffic expected'], env);
  await converge(['job', 'status', 'web'], env);
  banner('the scaled job keeps its count (preserveCounts: true), so the plan has nothing to do for it');
  await converge(['plan', '-f', manifest, '--detailed-exitcode'], env, { expect: [0] });
  banner('someone edits role web-readers and workspace web-prod by hand');
  await driftRole(env, 'web-readers');
  await driftWorkspace(env, 'sandbox', 'web-prod');
  await converge(['plan', '-f', manifest, '--detailed-exitcode'], env, { expect: [2] });
  banner('the drift is shown above; `converge apply` would put it back');
} catch (error) {
  failed = true;
  process.stderr.write(`\ndemo failed: ${error.message}\n`);
} finally {
  sandbox.kill('SIGTERM');
  await once(sandbox, 'exit');
  await directory?.server.stop();
  rmSync(stateDir, { recursive: true, force: true });
  banner('sandbox stopped');
}
process.exitCode = failed ? 1 : 0;
