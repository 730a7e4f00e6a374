/**
 * Operator commands that fail early and say what is next (issue 18), in-process against the
 * sandbox: a PGP key that cannot encrypt is refused at `rekey start`; `workspace unlock` on someone
 * else's lock names the holder as the plan does and the commands that override; `job dispatch` and
 * `job force-periodic` print the child job and how to follow it; list tables keep one line a row;
 * a stale saved plan is refused before any progress line says the object is being changed.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { generateKey } from 'openpgp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Job, SchedulerClient } from '../../src/clients/scheduler/client.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { apiFor } from '../sandbox/helpers.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

const ORG = 'acme-ops';
let sandbox: RunningSandbox;
let scheduler: SchedulerClient;

beforeAll(async () => {
  sandbox = await startSandbox({
    port: 0,
    config: {
      workspaces: {
        organizations: [
          {
            name: ORG,
            teams: [{ name: 'devs', access: { '*': { runs: 'read', lock: true } } }],
          },
        ],
      },
      tokens: [{ name: 'bob', secret: 'bob-token', workspaces: { user: 'bob', teams: { [ORG]: ['devs'] } } }],
      registry: {
        policies: [
          { Name: 'ops-blast-radius' },
          // One name in two namespaces, and one policy of team1 alone: `--policy` with `--ns`.
          { Name: 'ops-team-pol', Namespace: 'team1' },
          { Name: 'ops-team-pol', Namespace: 'team2' },
          { Name: 'ops-team1-only', Namespace: 'team1' },
        ],
      },
    },
  });
  scheduler = SchedulerClient.fromConnection({ address: sandbox.url, token: sandbox.rootToken });
});
afterAll(async () => {
  await scheduler?.close();
  await sandbox?.close();
});

function tmp(prefix: string): string {
  return tempDir(prefix);
}

function env(extra: Record<string, string> = {}): Record<string, string> {
  return { ...sandbox.env(), CONVERGE_STATE_DIR: tmp('converge-ops-state-'), NO_COLOR: '1', ...extra };
}

/** A folder holding `files`; returns its absolute path. */
function folder(files: Record<string, string>): string {
  const dir = tmp('converge-ops-');
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  return dir;
}

describe('a workspace deletion the service refuses with 404 (not yours to delete)', () => {
  it('fails, and the workspace and its record stay', async () => {
    const name = 'ops-not-bobs';
    const root = env();
    const made = folder({
      'ws.yaml': `apiVersion: converge/v1\nkind: Workspace\nmetadata: { name: ${name}, namespace: ${ORG} }\nspec: { description: d }\n`,
    });
    expect((await runCli(['apply', '-f', made, '--auto-approve'], root)).code).toBe(0);
    const absent = folder({
      'ws.yaml': `apiVersion: converge/v1\nkind: Workspace\nmetadata: { name: ${name}, namespace: ${ORG}, ensure: absent }\nspec: { description: d }\n`,
    });
    // Bob may read workspaces but not delete them: the service answers 404, as for one not there.
    const bob = { ...root, CONVERGE_WORKSPACES_TOKEN: 'bob-token' };
    const refused = await runCli(['apply', '-f', absent, '--auto-approve'], bob);
    expect(refused.code).toBe(1);
    expect(refused.stdout + refused.stderr).toContain('1 failed');
    expect(refused.stdout + refused.stderr).toContain(
      'the workspace is still there: the service answers 404 too to a token that may not delete it',
    );
    expect((await runCli(['workspace', 'show', `${ORG}/${name}`], root)).code).toBe(0);
    const listed = await runCli(['inventory', 'list'], bob);
    expect(listed.stdout).toContain(`Workspace/${ORG}/${name}`);
  });
});

describe('rekey start', () => {
  it('refuses a PGP key that cannot encrypt, naming the file and the fingerprint, before sending', async () => {
    const good = await generateKey({
      type: 'ecc',
      curve: 'curve25519Legacy',
      userIDs: [{ name: 'can encrypt' }],
      format: 'object',
    });
    // A primary key alone (Ed25519, signing only): what `gpg --quick-gen-key … sign` makes.
    const signOnly = await generateKey({
      type: 'ecc',
      curve: 'curve25519Legacy',
      userIDs: [{ name: 'signs only' }],
      subkeys: [],
      format: 'object',
    });
    const dir = folder({
      'alice.asc': good.publicKey.armor(),
      'bob.asc': signOnly.publicKey.armor(),
    });
    const e = env();
    const r = await runCli(
      [
        'rekey',
        'start',
        '--shares',
        '2',
        '--threshold',
        '2',
        '--pgp-keys',
        `${dir}/alice.asc,${dir}/bob.asc`,
      ],
      e,
    );
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      [
        `Error: ${dir}/bob.asc: PGP key ${signOnly.publicKey.getFingerprint().toUpperCase()} cannot encrypt (it has no valid encryption key or subkey): nothing was sent.`,
        "Each new share is encrypted to its holder's key; give a key with a valid encryption subkey",
        '(add one with `gpg --quick-add-key FINGERPRINT cv25519 encr`, then export the public key again).',
        '',
      ].join('\n'),
    );
    const status = await runCli(['rekey', 'status'], e);
    expect(status.stdout).toContain('No rekey in progress.');
  });
});

describe('workspace unlock on someone else lock', () => {
  it('names the holder as the plan does, and the commands that release it', async () => {
    const name = 'ops-theirs';
    const dir = folder({
      'ws.yaml': `apiVersion: converge/v1\nkind: Workspace\nmetadata: { name: ${name}, namespace: ${ORG} }\nspec: { locked: false }\n`,
    });
    const root = env();
    const bob = { ...root, CONVERGE_WORKSPACES_TOKEN: 'bob-token' };
    expect((await runCli(['apply', '-f', dir, '--auto-approve'], root)).code).toBe(0);
    expect((await runCli(['workspace', 'lock', `${ORG}/${name}`, '--reason', 'freeze'], bob)).code).toBe(0);

    const plan = await runCli(['plan', '-f', dir], root);
    expect(plan.stdout).toContain(
      `# locked by user bob (reason: "freeze"); the manifest says locked: false, but someone else's lock is released only with --force-unlock`,
    );

    const r = await runCli(['workspace', 'unlock', `${ORG}/${name}`], root);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      [
        `Error: workspace ${ORG}/${name} is locked by user bob (reason: "freeze"): only they may unlock it (the service answered 409 Conflict).`,
        `To release it anyway (admin access): \`converge workspace force-unlock ${ORG}/${name}\`,`,
        'or `converge apply --force-unlock` where the manifest says `locked: false`.',
        '',
      ].join('\n'),
    );

    const forced = await runCli(['workspace', 'force-unlock', `${ORG}/${name}`], root);
    expect(forced.code).toBe(0);
    expect(forced.stdout).toMatch(/: unlocked\n$/);
    const again = await runCli(['workspace', 'unlock', `${ORG}/${name}`], root);
    expect(again.stderr).toBe(
      `Error: workspace ${ORG}/${name} is not locked: nothing to unlock (the service answered 409 Conflict)\n`,
    );
  });
});

function batchJob(id: string, extra: Partial<Job>): Job {
  return {
    ID: id,
    Name: id,
    Type: 'batch',
    Datacenters: ['dc1'],
    TaskGroups: [
      {
        Name: 'run',
        Count: 1,
        Tasks: [
          {
            Name: 'main',
            Driver: 'exec',
            Config: { command: '/bin/true' },
            Resources: { CPU: 50, MemoryMB: 32 },
          },
        ],
      },
    ],
    ...extra,
  };
}

describe('job commands that start a child job', () => {
  it('force-periodic prints the child job and the command that follows it', async () => {
    await scheduler.registerJob(
      batchJob('ops-cron', { Periodic: { Enabled: true, Spec: '0 3 * * *', SpecType: 'cron' } }),
    );
    const r = await runCli(['job', 'force-periodic', 'ops-cron'], env());
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const m = /^Job ops-cron launched now: (ops-cron\/periodic-\d+) \(evaluation [0-9a-f]{8}\)\n/.exec(
      r.stdout,
    );
    expect(m, r.stdout).not.toBeNull();
    const child = m![1]!;
    expect(r.stdout.split('\n')[1]).toBe(`Next: \`converge job status ${child}\` follows it.`);
    expect((await scheduler.readJob(child))?.ParentID).toBe('ops-cron');

    const json = JSON.parse((await runCli(['job', 'force-periodic', 'ops-cron', '--json'], env())).stdout);
    expect(json.ChildJobID).toMatch(/^ops-cron\/periodic-\d+$/);
    expect(json.EvalID).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('dispatch prints the child job and the command that follows it', async () => {
    await scheduler.registerJob(batchJob('ops-param', { ParameterizedJob: { Payload: 'optional' } }));
    const r = await runCli(['job', 'dispatch', 'ops-param'], env());
    expect(r.code).toBe(0);
    const [first, next] = r.stdout.trimEnd().split('\n');
    const child = /^Job ops-param dispatched: (\S+) \(evaluation [0-9a-f]{8}\)$/.exec(first ?? '')?.[1];
    expect(child).toMatch(/^ops-param\/dispatch-/);
    expect(next).toBe(`Next: \`converge job status ${child}\` follows it.`);
  });
});

describe('list tables', () => {
  it('cut a multi-line cell to its first line with an ellipsis; --json keeps the full text', async () => {
    const api = apiFor(sandbox);
    const description = 'Read access for CI\nOwned by platform\nTicket: PLAT-123\n';
    const created = await api('PUT', '/v1/acl/role', {
      body: { Name: 'ops-multiline', Description: description },
    });
    expect(created.status).toBe(200);
    const { ID } = created.json<{ ID: string }>();
    await api('PUT', '/v1/acl/role', { body: { Name: 'ops-one-line', Description: 'one line' } });

    const e = env();
    const r = await runCli(['role', 'list'], e);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    const header = lines[0]!;
    const row = lines.find((l) => l.startsWith('ops-multiline'))!;
    // Still a table: one line a role, every row's description under the header's.
    expect(lines.filter((l) => l.includes('Owned by') || l.includes('PLAT-123'))).toEqual([]);
    expect(row.slice(header.indexOf('DESCRIPTION'))).toBe('Read access for CI …');
    expect(row).toContain(ID);
    expect(lines.find((l) => l.startsWith('ops-one-line'))!.slice(header.indexOf('DESCRIPTION'))).toBe(
      'one line',
    );

    const json = JSON.parse((await runCli(['role', 'list', '--json'], e)).stdout) as {
      Name: string;
      Description: string;
    }[];
    expect(json.find((x) => x.Name === 'ops-multiline')?.Description).toBe(description);
  });
});

describe('role list and get', () => {
  it("show a service identity's datacenters: bare, it reads as valid in all of them", async () => {
    const api = apiFor(sandbox);
    await api('PUT', '/v1/acl/role', {
      body: {
        Name: 'ops-dc1-only',
        ServiceIdentities: [{ ServiceName: 'web', Datacenters: ['dc1', 'dc2'] }],
      },
    });
    await api('PUT', '/v1/acl/role', {
      body: { Name: 'ops-everywhere', ServiceIdentities: [{ ServiceName: 'web' }] },
    });
    const e = env();
    const list = (await runCli(['role', 'list'], e)).stdout.split('\n');
    expect(list.find((l) => l.startsWith('ops-dc1-only'))).toContain('service:web@dc1,dc2');
    expect(list.find((l) => l.startsWith('ops-everywhere'))).toMatch(/service:web(\s|$)/);
    expect((await runCli(['role', 'get', 'ops-dc1-only'], e)).stdout).toMatch(
      /Identities\s+service:web@dc1,dc2/,
    );
  });

  it('--policy takes a name or an ID, and refuses one that names no policy instead of listing nothing', async () => {
    const api = apiFor(sandbox);
    const policies = (await api('GET', '/v1/acl/policies')).json<{ ID: string; Name: string }[]>();
    const policy = policies.find((p) => p.Name === 'ops-blast-radius')!;
    await api('PUT', '/v1/acl/role', { body: { Name: 'ops-linked', Policies: [{ ID: policy.ID }] } });
    const e = env();
    for (const given of ['ops-blast-radius', policy.ID]) {
      const r = await runCli(['role', 'list', '--policy', given], e);
      expect([r.code, r.stderr]).toEqual([0, '']);
      expect(r.stdout).toContain('ops-linked');
    }
    const typo = await runCli(['role', 'list', '--policy', 'ops-blast-radious'], e);
    expect([typo.code, typo.stderr.trim()]).toEqual([
      1,
      "Error: --policy ops-blast-radious: no policy has that name (give a policy's name or ID)",
    ]);
    const unknown = await runCli(['role', 'list', '--policy', '00000000-0000-4000-8000-000000000000'], e);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no policy has that ID');
  });

  describe('--policy with --ns', () => {
    type PolicyJson = { ID: string; Name: string; Namespace: string };
    let team1Pol: PolicyJson;
    let team2Pol: PolicyJson;
    let team1Only: PolicyJson;
    beforeAll(async () => {
      const api = apiFor(sandbox);
      const all = (await api('GET', '/v1/acl/policies?ns=*')).json<PolicyJson[]>();
      const find = (name: string, ns: string) => all.find((p) => p.Name === name && p.Namespace === ns)!;
      team1Pol = find('ops-team-pol', 'team1');
      team2Pol = find('ops-team-pol', 'team2');
      team1Only = find('ops-team1-only', 'team1');
      const role = async (ns: string, Name: string, Policies: { ID: string }[]) =>
        expect((await api('PUT', `/v1/acl/role?ns=${ns}`, { body: { Name, Policies } })).status).toBe(200);
      await role('team1', 'ops-t1-role', [{ ID: team1Pol.ID }, { ID: team1Only.ID }]);
      await role('team2', 'ops-t2-role', [{ ID: team2Pol.ID }]);
      const shared = (await api('GET', '/v1/acl/policies')).json<PolicyJson[]>();
      // A role links a policy of `default` from any namespace.
      await role('team1', 'ops-t1-shared', [{ ID: shared.find((p) => p.Name === 'ops-blast-radius')!.ID }]);
    });
    const names = (stdout: string) => (JSON.parse(stdout) as { Name: string }[]).map((r) => r.Name).sort();

    it("finds a policy of another namespace by ID and by name, and lists that namespace's roles", async () => {
      const e = env();
      for (const given of [team1Pol.ID, 'ops-team-pol', 'ops-team1-only']) {
        const r = await runCli(['role', 'list', '--ns', 'team1', '--policy', given, '--json'], e);
        expect([r.code, r.stderr]).toEqual([0, '']);
        expect(names(r.stdout)).toEqual(['ops-t1-role']);
      }
      // The same name in team2 is team2's policy, with team2's roles.
      const t2 = await runCli(['role', 'list', '--ns', 'team2', '--policy', 'ops-team-pol', '--json'], e);
      expect(names(t2.stdout)).toEqual(['ops-t2-role']);
      // A policy of `default` is linked from team1 too, so it names team1's roles.
      const shared = await runCli(
        ['role', 'list', '--ns', 'team1', '--policy', 'ops-blast-radius', '--json'],
        e,
      );
      expect(names(shared.stdout)).toEqual(['ops-t1-shared']);
    });

    it('still refuses a name or an ID the namespace has no policy of, naming the namespace', async () => {
      const e = env();
      const other = await runCli(['role', 'list', '--ns', 'team2', '--policy', 'ops-team1-only'], e);
      expect([other.code, other.stderr.trim()]).toEqual([
        1,
        "Error: --policy ops-team1-only: no policy in namespace team2 has that name (give a policy's name or ID, or another --ns)",
      ]);
      const byId = await runCli(['role', 'list', '--ns', 'team2', '--policy', team1Only.ID], e);
      expect(byId.code).toBe(1);
      expect(byId.stderr).toContain('no policy in namespace team2 has that ID');
    });

    it("with --ns '*' finds a policy in any namespace, and asks for the ID or --ns when a name is in several", async () => {
      const e = env();
      for (const given of [team2Pol.ID, 'ops-team1-only']) {
        const r = await runCli(['role', 'list', '--ns', '*', '--policy', given, '--json'], e);
        expect([r.code, r.stderr]).toEqual([0, '']);
        expect(names(r.stdout)).toEqual([given === team2Pol.ID ? 'ops-t2-role' : 'ops-t1-role']);
      }
      const ambiguous = await runCli(['role', 'list', '--ns', '*', '--policy', 'ops-team-pol'], e);
      expect([ambiguous.code, ambiguous.stdout, ambiguous.stderr.trim()]).toEqual([
        1,
        '',
        "Error: --policy ops-team-pol: policies of that name are in namespaces team1, team2; give the policy's ID, or --ns with one of those namespaces",
      ]);
      const none = await runCli(['role', 'list', '--ns', '*', '--policy', 'ops-no-such-pol'], e);
      expect([none.code, none.stderr.trim()]).toEqual([
        1,
        "Error: --policy ops-no-such-pol: no policy in any namespace has that name (give a policy's name or ID, or another --ns)",
      ]);
    });
  });
});

describe('apply of a stale saved plan', () => {
  it('refuses the object before any progress line says it is being changed', async () => {
    const api = apiFor(sandbox);
    await api('PUT', '/v1/acl/role', { body: { Name: 'ops-stale', Description: 'reviewed-before' } });
    const dir = folder({
      'r.yaml':
        'apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: ops-stale }\nspec: { Description: reviewed-after }\n' +
        '---\napiVersion: converge/v1\nkind: AclRole\nmetadata: { name: ops-held }\nspec: { Description: reviewed-with-it }\n',
    });
    const e = env();
    const planFile = path.join(dir, 'reviewed.plan');
    expect((await runCli(['plan', '-f', dir, '-out', planFile], e)).code).toBe(0);

    // Someone else changes the role between the review and the apply.
    const live = (await api('GET', '/v1/acl/role/name/ops-stale')).json<{ ID: string }>();
    await api('PUT', `/v1/acl/role/${live.ID}`, {
      body: { ID: live.ID, Name: 'ops-stale', Description: 'changed-by-someone-else' },
    });

    const r = await runCli(['apply', planFile], e);
    expect(r.code).not.toBe(0);
    const progress = r.stdout.split('\n').filter((l) => l.startsWith('AclRole/'));
    expect(progress).toHaveLength(1);
    expect(progress[0]).toMatch(/^AclRole\/\S*ops-stale: STALE: it changed since the plan/);
    expect(r.stdout).not.toContain('updating…');
    expect(r.stderr).toContain(
      `Some objects changed since the plan was saved. Run \`converge plan -f ${dir} -out ${planFile}\` again and review it.`,
    );
    // The other change of the reviewed plan is held back with it: a saved plan lands whole or not at all.
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(
      'skipped: 1 other change, not attempted: a saved plan is applied whole or not at all',
    );
    expect((await api('GET', '/v1/acl/role/name/ops-held')).status).toBe(404);
    // Said as a refusal, not as an apply that tried and failed.
    expect(r.stdout).toContain(
      'Apply refused, nothing applied (live state changed since the plan): 0 applied, 0 failed, 1 skipped, 1 stale.',
    );
  });
});

describe('rekey submit, when a key the service was given cannot encrypt', () => {
  it('says why the threshold failed and what to do next', async () => {
    // Started around `rekey start`'s check (another tool, or a key that expired since).
    const signOnly = await generateKey({
      type: 'ecc',
      curve: 'curve25519Legacy',
      userIDs: [{ name: 'signs only' }],
      subkeys: [],
      format: 'object',
    });
    const api = apiFor(sandbox);
    const started = await api('PUT', '/v1/sys/rekey-recovery-key/init', {
      body: {
        secret_shares: 1,
        secret_threshold: 1,
        pgp_keys: [Buffer.from(signOnly.publicKey.write()).toString('base64')],
      },
    });
    expect(started.status, started.text).toBe(200);
    const e = env();
    const shares = sandbox.recoveryKeys!.keys.slice(0, sandbox.recoveryKeys!.threshold);
    const answers = [];
    for (const share of shares) answers.push(await runCli(['rekey', 'submit'], e, { stdin: share }));
    const last = answers.at(-1)!;
    expect(last.code).toBe(1);
    expect(last.stderr).toContain('failed to encrypt shares');
    expect(last.stderr).toContain(
      'a PGP key this rekey was started with cannot encrypt the new shares. The service reset the progress to 0 and submitting again fails the same way: `converge rekey cancel`, then `converge rekey start` again with keys that can encrypt',
    );
    expect((await runCli(['rekey', 'status'], e)).stdout).toContain('Progress: 0 of 3 shares');
    expect((await runCli(['rekey', 'cancel'], e)).code).toBe(0);
  });
});

describe('a wrong organization or mount in an operator command', () => {
  it('workspace list names the organization as plan does, not the request URL', async () => {
    const r = await runCli(['workspace', 'list', '--org', 'no-such-org'], env());
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      'Error: organization "no-such-org" does not exist, or this token may not see it',
    );
  });

  it('ldap login at a mount that is not there asks whether the method is mounted there', async () => {
    const r = await runCli(['ldap', 'login', 'alice', '--mount', 'no-such-mount'], env(), { stdin: 'pw' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('403');
    expect(r.stderr).toContain('is the directory auth method mounted at auth/no-such-mount?');
  });
});
