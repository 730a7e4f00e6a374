import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { converge, manifestDir, role } from './helpers.js';
import { tempDir } from '../support/temp-dirs.js';

let sandbox: RunningSandbox;
let env: Record<string, string>;

async function registry(method: string, p: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${sandbox.url}/v1/acl${p}`, {
    method,
    headers: { Authorization: `Bearer ${sandbox.rootToken}`, 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return res.status === 404 ? undefined : JSON.parse(text);
}

beforeAll(async () => {
  sandbox = await startSandbox({
    port: 0,
    config: {
      tokens: [{ name: 'reader', secret: 'reader-token', registry: { acl: 'read' } }],
      registry: { policies: [{ Name: 'service-read' }, { Name: 'node-read' }] },
    },
  });
  env = sandbox.env();
});

afterAll(async () => {
  await sandbox?.close();
});

describe('converge --help and --version', () => {
  it('prints the version', async () => {
    const r = await converge(['--version'], env);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it.each([['validate'], ['plan'], ['apply'], ['sandbox'], ['role', 'get'], ['role', 'list']])(
    'has help for %s',
    async (...cmd) => {
      const r = await converge([...cmd, '--help'], env);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('Usage: converge');
    },
  );

  it('rejects an unknown command with exit 1', async () => {
    const r = await converge(['plna'], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/unknown command 'plna'/);
  });
});

describe('converge validate', () => {
  it('accepts a good manifest without contacting any service', async () => {
    const dir = manifestDir({ 'a.yaml': role('v-ok', 'Description: fine') });
    const r = await converge(['validate', '-f', dir], { PATH: process.env.PATH });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('valid: 1 object in 1 file');
  });

  it('reports every problem with file:line:col and exits 1', async () => {
    const dir = manifestDir({
      'a.yaml': `${role('bad name!', 'Description: 1')}---\n${role('ok', 'Colour: blue')}`,
    });
    const r = await converge(['validate', '-f', dir], env);
    expect(r.code).toBe(1);
    const file = path.join(dir, 'a.yaml');
    expect(r.stderr).toMatch(new RegExp(`${file}:4:9: .*name`));
    expect(r.stderr).toMatch(new RegExp(`${file}:7:16: .*string`));
    expect(r.stderr).toMatch(new RegExp(`${file}:\\d+:3: .*Colour`));
  });
});

describe('--no-color', () => {
  it('is taken by every command a CI script runs, also where the output is plain anyway', async () => {
    const dir = manifestDir({ 'a.yaml': role('nc-ok', 'Description: fine') });
    const validated = await converge(['validate', '-f', dir, '--no-color'], { PATH: process.env.PATH });
    expect(validated.stderr).toBe('');
    expect(validated.code).toBe(0);
    // Refused for their own reasons (nothing to import; an interval that is no duration), not the flag.
    const imported = await converge(['import', 'AclRole/default/none', '-f', dir, '--no-color'], env);
    expect(imported.stderr).not.toContain('unknown option');
    const looped = await converge(['reconcile', '-f', dir, '--interval', 'soon', '--no-color'], env);
    expect(looped.stderr).toContain('--interval must be a positive duration');
  });
});

describe('plan -out', () => {
  it('does not take the next flag as the file name (-out --json)', async () => {
    const dir = manifestDir({ 'a.yaml': role('out-flag', 'Description: fine') });
    const r = await converge(['plan', '-f', dir, '-out', '--json'], env, dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('-out needs a file name before the next flag, not "--json"');
    // Said once: no second line about a plan not saved to a file that was never named.
    expect(r.stderr).not.toContain('Plan not saved');
    expect(existsSync(path.join(dir, '--json'))).toBe(false);
  });
});

describe('without -f', () => {
  it.each([['validate'], ['plan'], ['apply', '--auto-approve']])(
    '%s says which flag is missing and exits 1',
    async (...cmd) => {
      const r = await converge(cmd, env, manifestDir({}));
      expect(r.code).toBe(1);
      expect(r.stderr.trim()).toBe('Error: no manifest given: pass -f FILE or -f FOLDER');
    },
  );
});

describe('plan and apply against the sandbox', () => {
  const roles = [
    role(
      'cli-web',
      'Description: web\nPolicies:\n  - Name: service-read\nServiceIdentities:\n  - ServiceName: web\n    Datacenters: [dc2, dc1]',
    ),
    role(
      'cli-db',
      'Description: db\nPolicies:\n  - Name: node-read\nNodeIdentities:\n  - NodeName: db-1\n    Datacenter: dc1',
    ),
  ].join('---\n');

  it('plans creates, refuses to apply without a terminal, applies with --auto-approve, then plans clean', async () => {
    const dir = manifestDir({ 'roles.yaml': roles });

    const plan = await converge(['plan', '-f', dir], env);
    expect(plan.code).toBe(0);
    expect(plan.stdout).toContain('+ AclRole/default/cli-web');
    expect(plan.stdout).toContain('Plan: 2 to add, 0 to change, 0 to replace, 0 to destroy, 0 unchanged.');
    expect(plan.stdout).not.toContain('\u001b[');

    const detailed = await converge(['plan', '-f', dir, '--detailed-exitcode'], env);
    expect(detailed.code).toBe(2);

    const refused = await converge(['apply', '-f', dir], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('--auto-approve');
    expect(await registry('GET', '/role/name/cli-web')).toBeUndefined();

    const applied = await converge(['apply', '-f', dir, '--auto-approve'], env);
    expect(applied.code).toBe(0);
    expect(applied.stdout).toContain('Apply complete: 2 applied, 0 failed');
    const web = (await registry('GET', '/role/name/cli-web')) as { Policies: { Name: string }[] };
    expect(web.Policies.map((p) => p.Name)).toEqual(['service-read']);

    const again = await converge(['plan', '-f', dir, '--detailed-exitcode'], env);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('No changes.');
  });

  it('shows drift made behind its back as an update, and --json/--markdown describe it', async () => {
    const dir = manifestDir({ 'roles.yaml': roles });
    await converge(['apply', '-f', dir, '--auto-approve'], env);
    const live = (await registry('GET', '/role/name/cli-db')) as Record<string, unknown>;
    await registry('PUT', `/role/${live.ID}`, { ...live, Description: 'hand edit' });

    const json = await converge(['plan', '-f', dir, '--json'], env);
    expect(json.code).toBe(0);
    const doc = JSON.parse(json.stdout);
    expect(doc.format_version).toBe('1.12');
    expect(doc.summary).toEqual({ create: 0, update: 1, replace: 0, delete: 0, noop: 1, unplanned: 0 });
    // One policy list (the plan-time check) and one role list, however many roles.
    expect(doc.requests).toEqual({ registry: 2 });
    const db = doc.changes.find((c: { name: string }) => c.name === 'cli-db');
    expect(db).toMatchObject({ kind: 'AclRole', action: 'update', namespace: 'default' });
    expect(db.diffs).toEqual([{ path: 'Description', op: 'change', before: 'hand edit', after: 'db' }]);

    const md = await converge(['plan', '-f', dir, '--markdown'], env);
    expect(md.stdout).toContain('| `~` update | AclRole | cli-db | namespace default |');
    expect(md.stdout).toContain('"hand edit" -> "db"');
  });

  it("--json gives a create's attributes as add diffs and a deletion's as remove diffs", async () => {
    const name = 'cli-json-diffs';
    const created = manifestDir({
      'r.yaml': role(name, 'Description: made here\nPolicies:\n  - Name: service-read'),
    });
    const plan = JSON.parse((await converge(['plan', '-f', created, '--json'], env)).stdout);
    const create = plan.changes.find((c: { name: string }) => c.name === name);
    expect(create.action).toBe('create');
    expect(create.diffs).toContainEqual({ path: 'Description', op: 'add', after: 'made here' });
    expect(create.diffs.map((d: { path: string }) => d.path)).toEqual(Object.keys(create.after));
    expect((await converge(['apply', '-f', created, '--auto-approve'], env)).code).toBe(0);

    const absent = manifestDir({
      'r.yaml': role(name, 'Description: made here').replace(
        `name: ${name}`,
        `name: ${name}\n  ensure: absent`,
      ),
    });
    const removal = JSON.parse((await converge(['plan', '-f', absent, '--json'], env)).stdout);
    const deletion = removal.changes.find((c: { name: string }) => c.name === name);
    expect(deletion.action).toBe('delete');
    expect(deletion.diffs).toContainEqual({ path: 'Description', op: 'remove', before: 'made here' });
    expect(deletion.diffs.every((d: { op: string }) => d.op === 'remove')).toBe(true);
    expect((await converge(['apply', '-f', absent, '--auto-approve'], env)).code).toBe(0);
  });

  it("masks the run's token wherever a service shows it, as sent, in hex and in base64", async () => {
    const dir = manifestDir({ 'r.yaml': role('cli-echo', 'Description: mine') });
    expect((await converge(['apply', '-f', dir, '--auto-approve'], env)).code).toBe(0);
    const token = env.CONVERGE_REGISTRY_TOKEN!;
    const echoed = `tok=${token} hex=${Buffer.from(token).toString('hex')} b64=${Buffer.from(token).toString('base64')}`;
    const live = (await registry('GET', '/role/name/cli-echo')) as Record<string, unknown>;
    await registry('PUT', `/role/${live.ID}`, { ...live, Description: echoed });
    for (const extra of [[], ['--json'], ['--markdown']]) {
      const out = (await converge(['plan', '-f', dir, ...extra], env)).stdout;
      expect(out).toContain('tok=');
      expect(out).not.toContain(token);
      expect(out).not.toContain(Buffer.from(token).toString('hex'));
      expect(out).not.toContain(Buffer.from(token).toString('base64').replace(/=+$/, ''));
    }
  });

  it('refuses lists the registry would merge, which could never match the manifest', async () => {
    const dir = manifestDir({
      'r.yaml': role(
        'cli-dups',
        'ServiceIdentities:\n  - ServiceName: web\n  - ServiceName: web\n    Datacenters: [dc1]',
      ),
    });
    const invalid = await converge(['validate', '-f', dir], env);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain(`${path.join(dir, 'r.yaml')}:9:20: this service is listed twice`);

    const policies = (await (
      await fetch(`${sandbox.url}/v1/acl/policies`, {
        headers: { Authorization: `Bearer ${sandbox.rootToken}` },
      })
    ).json()) as { ID: string; Name: string }[];
    const id = policies.find((p) => p.Name === 'service-read')!.ID;
    const both = manifestDir({
      'r.yaml': role('cli-both', `Policies:\n  - Name: service-read\n  - ID: ${id}`),
    });
    const plan = await converge(['plan', '-f', both], env);
    expect(plan.code).toBe(1);
    expect(plan.stdout).toContain(`${path.join(both, 'r.yaml')}:9:7: this policy is already linked`);
  });

  it('refuses a policy link whose Name is not the policy its ID names, and takes one where they agree', async () => {
    const policies = (await (
      await fetch(`${sandbox.url}/v1/acl/policies`, {
        headers: { Authorization: `Bearer ${sandbox.rootToken}` },
      })
    ).json()) as { ID: string; Name: string }[];
    const read = policies.find((p) => p.Name === 'service-read')!;
    const other = policies.find((p) => p.Name !== 'service-read')!;
    // Copied from `role get --json` and renamed: the registry would link the ID, not the Name read.
    const mixed = manifestDir({
      'r.yaml': role('cli-mixed', `Policies:\n  - { Name: service-read, ID: ${other.ID} }`),
    });
    const refused = await converge(['apply', '-f', mixed, '--auto-approve'], env);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain(
      `${path.join(mixed, 'r.yaml')}:8:15: policy ID ${other.ID} is "${other.Name}", not "service-read": the registry links by ID and ignores the Name; give one of them`,
    );
    expect(await registry('GET', '/role/name/cli-mixed')).toBeUndefined();
    const agreeing = manifestDir({
      'r.yaml': role('cli-mixed', `Policies:\n  - { Name: service-read, ID: ${read.ID} }`),
    });
    expect((await converge(['plan', '-f', agreeing], env)).code).toBe(0);
  });

  it('points at the manifest line of a policy that does not exist, and applies nothing', async () => {
    const dir = manifestDir({ 'r.yaml': role('cli-bad-policy', 'Policies:\n  - Name: no-such-policy') });
    const r = await converge(['apply', '-f', dir, '--auto-approve'], env);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      `${path.join(dir, 'r.yaml')}:8:13: policy "no-such-policy" does not exist in the registry`,
    );
    expect(await registry('GET', '/role/name/cli-bad-policy')).toBeUndefined();
  });

  it('refuses a saved plan sent to another service than it was planned against', async () => {
    const other = await startSandbox({
      port: 0,
      token: sandbox.rootToken,
      config: { registry: { policies: [{ Name: 'service-read' }] } },
    });
    try {
      const dir = manifestDir({ 'r.yaml': role('cli-elsewhere', 'Description: staging only') });
      const planFile = path.join(dir, 'staging.plan');
      expect((await converge(['plan', '-f', dir, '-out', planFile], env)).code).toBe(0);
      const elsewhere = { ...env, CONVERGE_REGISTRY_ADDR: other.url };
      const refused = await converge(['apply', planFile], elsewhere);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(
        `${planFile} was planned against registry at ${sandbox.url}, where this run's is ${other.url} (CONVERGE_REGISTRY_ADDR): a saved plan is applied only to the services it was planned against`,
      );
      const roles = (await (
        await fetch(`${other.url}/v1/acl/roles`, {
          headers: { Authorization: `Bearer ${sandbox.rootToken}` },
        })
      ).json()) as { Name: string }[];
      expect(roles.map((r) => r.Name)).not.toContain('cli-elsewhere');
      // Refused before anything is sent: an address where nothing listens says the same, not "cannot reach".
      const nowhere = await converge(['apply', planFile], {
        ...env,
        CONVERGE_REGISTRY_ADDR: 'http://127.0.0.1:9',
      });
      expect(nowhere.code).toBe(1);
      expect(nowhere.stderr).toContain(`where this run's is http://127.0.0.1:9 (CONVERGE_REGISTRY_ADDR)`);
      expect(nowhere.stderr).not.toContain('cannot reach');
      // Where it was planned, it applies.
      expect((await converge(['apply', planFile], env)).code).toBe(0);
    } finally {
      await other.close();
    }
  });

  it('applies a saved plan again as what is left of it, and refuses it where objects moved since', async () => {
    const dir = manifestDir({
      'r.yaml': [role('cli-saved', 'Description: one'), role('cli-saved-2', 'Description: two')].join(
        '---\n',
      ),
    });
    const planFile = path.join(dir, 'saved.plan');
    const saved = await converge(['plan', '-f', dir, '-out', planFile], env);
    expect(saved.code).toBe(0);
    expect(existsSync(planFile)).toBe(true);
    // An apply cut short made one of the two changes already (recorded as Converge's, as planned).
    const first = manifestDir({ 'r.yaml': role('cli-saved', 'Description: one') });
    expect((await converge(['apply', '-f', first, '--auto-approve'], env)).code).toBe(0);

    const resumed = await converge(['apply', planFile], env);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain(`# already in effect: the create was made since ${planFile} was saved`);
    expect(resumed.stdout).toContain('1 applied');
    expect(((await registry('GET', '/role/name/cli-saved-2')) as { Description?: string })?.Description).toBe(
      'two',
    );

    const again = await converge(['apply', planFile], env);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(
      `Everything ${planFile} would change is already in effect (done since it was saved, by an apply or by hand): nothing to apply.`,
    );
    expect(again.stderr).not.toContain('stale');

    // Made by hand, even as planned, or otherwise than planned: not Converge's, refused as moved.
    const other = manifestDir({ 'r.yaml': role('cli-saved-3', 'Description: three') });
    const otherPlan = path.join(other, 'saved.plan');
    expect((await converge(['plan', '-f', other, '-out', otherPlan], env)).code).toBe(0);
    await registry('PUT', '/role', { Name: 'cli-saved-3', Description: 'not three' });
    const moved = await converge(['apply', otherPlan], env);
    expect(moved.code).toBe(3);
    expect(moved.stderr).toMatch(
      /stale: AclRole\/default\/cli-saved-3: it exists now: created since the plan, and not recorded as Converge's/,
    );
    expect(((await registry('GET', '/role/name/cli-saved-3')) as { Description?: string })?.Description).toBe(
      'not three',
    );
  });

  it('does not take a namesake made by hand after Converge created the object as the create in effect', async () => {
    const env = { ...sandbox.env(), CONVERGE_STATE_DIR: tempDir('converge-saved-namesake-') };
    const dir = manifestDir({ 'r.yaml': role('cli-namesake', 'Description: n') });
    const planFile = path.join(dir, 'saved.plan');
    expect((await converge(['plan', '-f', dir, '-out', planFile], env)).code).toBe(0);
    expect((await converge(['apply', planFile], env)).code).toBe(0);
    // Deleted and made again by hand, as planned: the inventory's record names the old object.
    const made = (await registry('GET', '/role/name/cli-namesake')) as { ID: string };
    await registry('DELETE', `/role/${made.ID}`);
    await registry('PUT', '/role', { Name: 'cli-namesake', Description: 'n' });
    const again = await converge(['apply', planFile], env);
    expect(again.code).toBe(3);
    expect(again.stderr).toContain("it exists now: created since the plan, and not recorded as Converge's");
  });

  it('applies a saved prune again as done: the deleted objects are named, not called up to date', async () => {
    // Its own inventory: a prune reaches every role the inventory records, other tests' too.
    const env = { ...sandbox.env(), CONVERGE_STATE_DIR: tempDir('converge-saved-prune-') };
    const dir = manifestDir({
      'r.yaml': [role('cli-keep', 'Description: k'), role('cli-pruned', 'Description: p')].join('---\n'),
    });
    expect((await converge(['apply', '-f', dir, '--auto-approve'], env)).code).toBe(0);
    writeFileSync(path.join(dir, 'r.yaml'), role('cli-keep', 'Description: k'));
    const planFile = path.join(dir, 'prune.plan');
    expect((await converge(['plan', '-f', dir, '--prune', '-out', planFile], env)).code).toBe(0);
    expect((await converge(['apply', planFile], env)).code).toBe(0);
    expect(await registry('GET', '/role/name/cli-pruned')).toBeUndefined();

    const again = await converge(['apply', planFile], env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(
      `Nothing left to delete since ${planFile} was saved (gone, or no longer recorded as Converge's), so left out: AclRole/default/cli-pruned.`,
    );
    expect(again.stdout).not.toContain('cli-pruned" in namespace default is up to date');
    expect(again.stdout).toContain(`Everything ${planFile} would change is already in effect`);
  });

  it('refuses a saved plan when the manifest changed after it was saved', async () => {
    const dir = manifestDir({ 'r.yaml': role('cli-edited', 'Description: one') });
    const planFile = path.join(dir, 'p.plan');
    await converge(['plan', '-f', dir, '-out', planFile], env);
    writeFileSync(path.join(dir, 'r.yaml'), role('cli-edited', 'Description: two'));
    const r = await converge(['apply', planFile], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('the manifest asks for something else than when');
    // The way out is a command that works as printed: the manifest path included.
    expect(r.stderr).toContain(`converge plan -f ${dir} -out ${planFile}\` again`);
    expect(await registry('GET', '/role/name/cli-edited')).toBeUndefined();
    expect(readFileSync(planFile, 'utf8')).not.toContain(sandbox.rootToken);
  });

  it('refuses a saved deletion the manifest no longer asks for', async () => {
    await registry('PUT', '/role', { Name: 'cli-doomed' });
    const absent = `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: cli-doomed, ensure: absent }\nspec: {}\n`;
    const dir = manifestDir({ 'r.yaml': absent });
    const planFile = path.join(dir, 'p.plan');
    expect((await converge(['plan', '-f', dir, '-out', planFile], env)).stdout).toContain(
      '- AclRole/default/cli-doomed',
    );
    writeFileSync(path.join(dir, 'r.yaml'), role('cli-doomed', 'Description: ""'));
    const r = await converge(['apply', planFile], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('the manifest asks for something else than when');
    expect(await registry('GET', '/role/name/cli-doomed')).toBeDefined();
  });

  it("keeps the saved plan's own --max-deletes in the plan command it suggests", async () => {
    const dir = manifestDir({ 'r.yaml': role('cli-guarded', 'Description: "team ${env:TEAM_NAME}"') });
    const planFile = path.join(dir, 'p.plan');
    // An inventory of its own: the other tests' roles are not this manifest's to prune.
    const own = { ...env, CONVERGE_STATE_DIR: tempDir('converge-saved-guard-') };
    const made = await converge(
      ['plan', '-f', dir, '--prune', '--max-deletes', '1', '--allow-env', 'TEAM_NAME', '-out', planFile],
      { ...own, TEAM_NAME: 'a' },
    );
    expect(made.code, made.stderr).toBe(0);
    // Applied without the flag, and refused: the command to copy must not drop the guard, whether
    // the manifest asks for something else now...
    const r = await converge(['apply', planFile, '--allow-env', 'TEAM_NAME'], { ...own, TEAM_NAME: 'b' });
    expect(r.code).toBe(1);
    const suggested = /Run `converge (plan [^`]+)` again/.exec(r.stderr)?.[1];
    expect(suggested).toBe(`plan -f ${dir} --prune --allow-env TEAM_NAME --max-deletes 1 -out ${planFile}`);
    // ...or an object moved since the plan (stale, exit 3).
    await converge(['apply', '-f', dir, '--allow-env', 'TEAM_NAME', '--auto-approve'], {
      ...own,
      TEAM_NAME: 'a',
    });
    writeFileSync(path.join(dir, 'r.yaml'), role('cli-guarded', 'Description: "team ${env:TEAM_NAME} 2"'));
    const again = await converge(
      ['plan', '-f', dir, '--prune', '--max-deletes', '1', '--allow-env', 'TEAM_NAME', '-out', planFile],
      { ...own, TEAM_NAME: 'a' },
    );
    expect(again.code, again.stderr).toBe(0);
    const live = (await registry('GET', '/role/name/cli-guarded')) as { ID: string };
    await registry('PUT', `/role/${live.ID}`, { ...live, Description: 'hand edit' });
    const stale = await converge(['apply', planFile, '--allow-env', 'TEAM_NAME'], { ...own, TEAM_NAME: 'a' });
    expect(stale.code).toBe(3);
    expect(/Run `converge (plan [^`]+)` again/.exec(stale.stderr)?.[1]).toBe(
      `plan -f ${dir} --prune --allow-env TEAM_NAME --max-deletes 1 -out ${planFile}`,
    );
  });

  it("suggests the plan command with the run's --allow-env, so it works as printed", async () => {
    const dir = manifestDir({ 'r.yaml': role('cli-allowed', 'Description: "team ${env:TEAM_NAME}"') });
    const planFile = path.join(dir, 'p.plan');
    const allowed = ['--allow-env', 'TEAM_NAME'];
    const made = await converge(['plan', '-f', dir, ...allowed, '-out', planFile], {
      ...env,
      TEAM_NAME: 'a',
    });
    expect(made.code, made.stderr).toBe(0);
    // The apply's deletion guard is kept in the plan made again, too.
    const r = await converge(['apply', planFile, ...allowed, '--max-deletes', '0'], {
      ...env,
      TEAM_NAME: 'b',
    });
    expect(r.code).toBe(1);
    const suggested = /Run `converge (plan [^`]+)` again/.exec(r.stderr)?.[1];
    expect(suggested).toBe(`plan -f ${dir} --allow-env TEAM_NAME --max-deletes 0 -out ${planFile}`);
    const again = await converge(suggested!.split(' '), { ...env, TEAM_NAME: 'b' });
    expect(again.code, again.stderr).toBe(0);
  });

  it('applies a saved plan from another folder', async () => {
    const dir = manifestDir({ 'r.yaml': role('cli-elsewhere', 'Description: here') });
    const planFile = path.join(dir, 'p.plan');
    // Each folder has its own .converge/: the two runs share the state key that signs the plan, as CI jobs do.
    const shared = { ...env, CONVERGE_STATE_KEY: randomBytes(32).toString('hex') };
    expect((await converge(['plan', '-f', '.', '-out', planFile], shared, dir)).code).toBe(0);
    const r = await converge(['apply', planFile], shared, os.tmpdir());
    expect(r.code).toBe(0);
    expect(await registry('GET', '/role/name/cli-elsewhere')).toBeDefined();
  });

  it('reports a failed request without the token and exits 1', async () => {
    const dir = manifestDir({ 'r.yaml': role('cli-readonly', 'Description: x') });
    const r = await converge(['apply', '-f', dir, '--auto-approve'], {
      ...env,
      CONVERGE_REGISTRY_TOKEN: 'reader-token',
    });
    expect(r.code).toBe(1);
    expect(`${r.stdout}${r.stderr}`).toMatch(/403|Permission denied/);
    expect(`${r.stdout}${r.stderr}`).not.toContain('reader-token');
  });

  it('says which variable is missing when no address is configured', async () => {
    const dir = manifestDir({ 'r.yaml': role('cli-noaddr', 'Description: x') });
    const r = await converge(['plan', '-f', dir], { PATH: process.env.PATH });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('CONVERGE_REGISTRY_ADDR');
  });
});

describe('--prune', () => {
  const scope = `apiVersion: converge/v1
kind: PruneScope
metadata: { name: prune-roles }
spec: { kind: AclRole, namespace: default, namePrefix: prune- }
`;
  // Roles carry no ownership marker: only what Converge created (its inventory) may be pruned, so
  // each test creates its roles through Converge, with an inventory of its own.
  const ownEnv = () => ({
    ...env,
    CONVERGE_STATE_DIR: tempDir('converge-prune-'),
  });

  it('deletes only roles Converge created inside the declared scope that the manifest dropped', async () => {
    const st = ownEnv();
    const before = manifestDir({
      'r.yaml': `${scope}---\n${role('prune-keep', 'Description: kept')}---\n${role('prune-old', 'Description: left over')}`,
    });
    expect((await converge(['apply', '-f', before, '--auto-approve'], st)).code).toBe(0);
    await registry('PUT', '/role', { Name: 'outside-scope', Description: 'someone else manages this' });
    await registry('PUT', '/role', {
      Name: 'prune-foreign',
      Description: 'in the scope, not created by Converge',
    });
    const dir = manifestDir({ 'r.yaml': `${scope}---\n${role('prune-keep', 'Description: kept')}` });

    // Without --prune it is no deletion, only listed as no longer declared.
    const without = await converge(['plan', '-f', dir], st);
    expect(without.stdout).not.toContain('- AclRole/default/prune-old');
    expect(without.stdout).toContain('Not declared: 1 object');
    expect(without.stdout).toContain('No changes.');

    const plan = await converge(['plan', '-f', dir, '--prune', '--json'], st);
    const doc = JSON.parse(plan.stdout);
    expect(
      doc.changes
        .filter((c: { action: string }) => c.action === 'delete')
        .map((c: { name: string }) => c.name),
    ).toEqual(['prune-old']);

    const applied = await converge(['apply', '-f', dir, '--prune', '--auto-approve'], st);
    expect(applied.code).toBe(0);
    expect(await registry('GET', '/role/name/prune-old')).toBeUndefined();
    expect(await registry('GET', '/role/name/outside-scope')).toBeDefined();
    expect(await registry('GET', '/role/name/prune-foreign')).toBeDefined();
    expect(await registry('GET', '/role/name/prune-keep')).toBeDefined();
  });

  it('compares objects and scopes by their effective namespace', async () => {
    const st = ownEnv();
    const created = manifestDir({
      'r.yaml': `${role('eff-declared', 'Description: x')}---\n${role('eff-stray', 'Description: x')}`,
    });
    expect((await converge(['apply', '-f', created, '--auto-approve'], st)).code).toBe(0);
    // The role names no namespace (so: default); the scope names default explicitly.
    const noNs = `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: eff-declared }\nspec: { Description: x }\n`;
    const scoped = `apiVersion: converge/v1\nkind: PruneScope\nmetadata: { name: eff }\nspec: { kind: AclRole, namespace: default, namePrefix: eff- }\n`;
    const dir = manifestDir({ 'r.yaml': `${scoped}---\n${noNs}` });
    const plan = JSON.parse((await converge(['plan', '-f', dir, '--prune', '--json'], st)).stdout);
    expect(
      plan.changes.map((c: { address: string; action: string }) => `${c.action} ${c.address}`).sort(),
    ).toEqual(['delete AclRole/default/eff-stray', 'noop AclRole/default/eff-declared']);

    // A scope without a namespace is the default namespace too: a role declared in another
    // namespace does not count as declared in it, so emptying it is refused.
    const elsewhere = role('eff-other', 'Description: x', 'team-a');
    const unscoped = `apiVersion: converge/v1\nkind: PruneScope\nmetadata: { name: eff }\nspec: { kind: AclRole, namePrefix: eff- }\n`;
    const dir2 = manifestDir({ 'r.yaml': `${unscoped}---\n${elsewhere}` });
    const refused = await converge(['plan', '-f', dir2, '--prune'], st);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('the manifest declares no object in it');
  });

  it('refuses to empty a scope the manifest declares nothing in', async () => {
    const st = ownEnv();
    const created = manifestDir({ 'r.yaml': `${scope}---\n${role('prune-lonely', 'Description: x')}` });
    expect((await converge(['apply', '-f', created, '--auto-approve'], st)).code).toBe(0);
    const dir = manifestDir({ 'r.yaml': scope });
    const r = await converge(['apply', '-f', dir, '--prune', '--auto-approve'], st);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`${path.join(dir, 'r.yaml')}:2:1: PruneScope "prune-roles"`);
    expect(r.stdout).toContain('refusing');
    expect(await registry('GET', '/role/name/prune-lonely')).toBeDefined();
  });
});

describe('converge role', () => {
  it('lists and shows roles', async () => {
    const dir = manifestDir({
      'r.yaml': role('cli-listed', 'Description: listed\nPolicies:\n  - Name: service-read'),
    });
    await converge(['apply', '-f', dir, '--auto-approve'], env);
    const list = await converge(['role', 'list'], env);
    expect(list.code).toBe(0);
    expect(list.stdout.split('\n')[0]).toMatch(/^NAME\s+NAMESPACE\s+ID\s+POLICIES/);
    expect(list.stdout).toMatch(/cli-listed\s+default\s+[0-9a-f-]{36}\s+service-read/);

    const get = await converge(['role', 'get', 'cli-listed', '--json'], env);
    const shown = JSON.parse(get.stdout);
    expect(shown.Name).toBe('cli-listed');
    const byId = await converge(['role', 'get', '--id', shown.ID], env);
    expect(byId.stdout).toMatch(/Name\s+cli-listed/);

    const policies = (await (
      await fetch(`${sandbox.url}/v1/acl/policies`, {
        headers: { Authorization: `Bearer ${sandbox.rootToken}` },
      })
    ).json()) as { ID: string; Name: string }[];
    const nodeRead = policies.find((p) => p.Name === 'node-read')!;
    const filtered = await converge(['role', 'list', '--policy', nodeRead.ID, '--json'], env);
    expect(JSON.parse(filtered.stdout).map((r: { Name: string }) => r.Name)).not.toContain('cli-listed');

    const missing = await converge(['role', 'get', 'nobody'], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no role named "nobody"');
  });
});
