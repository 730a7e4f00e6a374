/**
 * The inventory from the command line, in-process against the sandbox: prune of roles Converge
 * created without any PruneScope, the guards on deletions, `converge inventory`, and the workspace
 * backend (CONVERGE_INVENTORY=workspace:ORG/NAME) with the workspace's lock held for the whole
 * apply and released on every path.
 */
import { writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { inventoryFromEnv } from '../../src/engine/inventory-backend.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

const ORG = 'inv-org';
let sandbox: RunningSandbox;

const config = {
  workspaces: { organizations: [{ name: ORG }] },
  // A directory mount of its own for the test that drops an LdapConfig, so that others find `ldap` as new.
  secrets: { mounts: [{ path: 'invnp-ldap' }] },
};

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, config });
});
afterAll(async () => {
  await sandbox?.close();
});

function tmp(prefix: string): string {
  return tempDir(prefix);
}

function roles(...names: string[]): string {
  const dir = tmp('converge-invcli-manifest-');
  const docs = names.map(
    (n) =>
      `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: ${n} }\nspec: { Description: by a test }\n`,
  );
  writeFileSync(path.join(dir, 'roles.yaml'), docs.join('---\n'));
  return dir;
}

/** A manifest that declares no role, only an object of another kind. */
function otherKindOnly(): string {
  const dir = tmp('converge-invcli-other-');
  writeFileSync(
    path.join(dir, 'p.yaml'),
    `apiVersion: converge/v1\nkind: Workspace\nmetadata: { name: inv-unrelated, namespace: ${ORG} }\nspec: { description: n }\n`,
  );
  return dir;
}

function localEnv(box = sandbox): Record<string, string> {
  return { ...box.env(), CONVERGE_STATE_DIR: tmp('converge-invcli-state-'), NO_COLOR: '1' };
}

async function roleExists(name: string, box = sandbox): Promise<boolean> {
  const res = await fetch(`${box.url}/v1/acl/role/name/${name}`, {
    headers: { 'X-Consul-Token': box.env().CONVERGE_REGISTRY_TOKEN! },
  });
  return res.status === 200;
}

async function workspacesApi(box: RunningSandbox, method: string, p: string, body?: unknown) {
  const res = await fetch(`${box.url}/api/v2${p}`, {
    method,
    headers: {
      Authorization: `Bearer ${box.env().CONVERGE_WORKSPACES_TOKEN}`,
      'Content-Type': 'application/vnd.api+json',
    },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return res.status === 200
    ? ((await res.json()) as { data: { id: string; attributes: Record<string, unknown> } })
    : undefined;
}

async function workspaceLock(box: RunningSandbox, name: string) {
  const ws = await workspacesApi(box, 'GET', `/organizations/${ORG}/workspaces/${name}`);
  return (
    ws && {
      id: ws.data.id,
      locked: ws.data.attributes.locked === true,
      reason: ws.data.attributes['locked-reason'],
    }
  );
}

describe('without --prune, the inventory objects the manifest dropped', () => {
  it('are listed as not declared and left alone, in every rendering', async () => {
    const env = localEnv();
    expect(
      (await runCli(['apply', '-f', roles('invnd-keep', 'invnd-old'), '--auto-approve'], env)).code,
    ).toBe(0);
    const dir = roles('invnd-keep');
    const text = await runCli(['plan', '-f', dir, '--detailed-exitcode'], env);
    // Nothing to change, and said so; but not silent about the dropped document.
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(
      "Not declared: 1 object the inventory records as Converge's is no longer in the manifest; without --prune it is left alone (not read: one deleted outside Converge meanwhile is listed too, and a plan with --prune says so).\n  AclRole/default/invnd-old\n",
    );
    const markdown = await runCli(['plan', '-f', dir, '--markdown'], env);
    expect(markdown.stdout).toContain('> - `AclRole/default/invnd-old`');
    const json = JSON.parse((await runCli(['plan', '-f', dir, '--json'], env)).stdout);
    expect(json.pruned).toMatchObject({ count: 0, not_declared: ['AclRole/default/invnd-old'] });
    // With --prune it is a deletion instead, and no longer "not declared".
    const pruned = JSON.parse((await runCli(['plan', '-f', dir, '--prune', '--json'], env)).stdout);
    expect(pruned.pruned).toMatchObject({ addresses: ['AclRole/default/invnd-old'], not_declared: [] });
  });
});

describe('without --prune, a dropped object of a kind --prune never deletes', () => {
  it('is listed apart, not with the advice to plan with --prune', async () => {
    const env = localEnv();
    const dir = roles('invnp-keep');
    writeFileSync(
      path.join(dir, 'ldap.yaml'),
      'apiVersion: converge/v1\nkind: LdapConfig\nmetadata: { name: invnp-ldap }\nspec: { url: "ldap://dir.example:389" }\n',
    );
    const applied = await runCli(['apply', '-f', dir, '--auto-approve'], env);
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    writeFileSync(path.join(dir, 'ldap.yaml'), '');
    const text = await runCli(['plan', '-f', dir], env);
    expect(text.stdout).toContain(
      "Not declared, never pruned: 1 object the inventory records as Converge's is no longer in the manifest, of a kind --prune never deletes; it is left as it is.\n  LdapConfig/invnp-ldap\n",
    );
    expect(text.stdout).not.toContain('Plan with --prune to delete');
    // With --prune too: its plan deletes nothing of the kind, and must not read as nothing dropped.
    const pruned = await runCli(['plan', '-f', dir, '--prune'], env);
    expect(pruned.stdout).toContain('Not declared, never pruned: 1 object');
    const prunedJson = JSON.parse((await runCli(['plan', '-f', dir, '--prune', '--json'], env)).stdout);
    expect(prunedJson.pruned).toMatchObject({ count: 0, not_declared: ['LdapConfig/invnp-ldap'] });
    const json = JSON.parse((await runCli(['plan', '-f', dir, '--json'], env)).stdout);
    expect(json.pruned).toMatchObject({ count: 0, not_declared: ['LdapConfig/invnp-ldap'] });
  });
});

describe('an old saved plan after a newer apply deleted what it creates', () => {
  it('is refused as stale, rather than making the pruned object again', async () => {
    const env = localEnv();
    const planDir = tmp('converge-invcli-old-plan-');
    const old = path.join(planDir, 'old.plan');
    // The old job: plan (and apply) the role's creation.
    expect((await runCli(['plan', '-f', roles('invs-keep', 'invs-svc'), '-out', old], env)).code).toBe(0);
    expect((await runCli(['apply', old], env)).code).toBe(0);
    // A newer job prunes it.
    const pruned = await runCli(['apply', '-f', roles('invs-keep'), '--prune', '--auto-approve'], env);
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(await roleExists('invs-svc')).toBe(false);
    // The old job re-run: its create would undo the prune.
    const rerun = await runCli(['apply', old], env);
    expect(rerun.code).toBe(3);
    expect(rerun.stderr).toMatch(
      /AclRole\/default\/invs-svc: STALE: an apply deleted it at \S+, after the plan was saved; making it again would undo that deletion/,
    );
    expect(await roleExists('invs-svc')).toBe(false);
  });

  /** Runs `fn` with the clock `offsetMs` off, as on a runner whose clock is not in step. */
  async function withClockOff<T>(offsetMs: number, fn: () => Promise<T>): Promise<T> {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + offsetMs);
    try {
      return await fn();
    } finally {
      vi.useRealTimers();
    }
  }

  it("tells before from after by the inventory's writes, not by the clocks of the runners", async () => {
    const env = localEnv();
    const planDir = tmp('converge-invcli-clock-plan-');
    const old = path.join(planDir, 'old.plan');
    expect((await runCli(['plan', '-f', roles('invk-keep', 'invk-svc'), '-out', old], env)).code).toBe(0);
    expect((await runCli(['apply', old], env)).code).toBe(0);
    // The prune runs on a runner whose clock is an hour behind: its deletion's time is before the
    // plan's, though the deletion came after.
    const pruned = await withClockOff(-3_600_000, () =>
      runCli(['apply', '-f', roles('invk-keep'), '--prune', '--auto-approve'], env),
    );
    expect(pruned.code, pruned.stderr).toBe(0);
    const rerun = await runCli(['apply', old], env);
    expect(rerun.code, rerun.stdout).toBe(3);
    expect(rerun.stderr).toContain('AclRole/default/invk-svc: STALE: an apply deleted it at');
    expect(await roleExists('invk-svc')).toBe(false);
    // A plan made after the prune, on a runner whose clock is an hour behind that one's, makes it
    // again as the reviewer saw: it is not refused as made before the deletion.
    const again = path.join(planDir, 'again.plan');
    const made = await withClockOff(-7_200_000, () =>
      runCli(['plan', '-f', roles('invk-keep', 'invk-svc'), '-out', again], env),
    );
    expect(made.code, made.stderr).toBe(0);
    const applied = await runCli(['apply', again], env);
    expect(applied.code, applied.stderr).toBe(0);
    expect(await roleExists('invk-svc')).toBe(true);
  });
});

describe('--prune with the inventory', () => {
  it('deletes the roles Converge created that the manifest dropped, without any PruneScope, as their own section', async () => {
    const env = localEnv();
    expect((await runCli(['apply', '-f', roles('invp-keep', 'invp-old'), '--auto-approve'], env)).code).toBe(
      0,
    );
    const dir = roles('invp-keep');

    const text = await runCli(['plan', '-f', dir, '--prune'], env);
    expect(text.stdout).toContain(
      'To prune: 1 object Converge manages that the manifest no longer declares:',
    );
    expect(text.stdout.indexOf('To prune:')).toBeLessThan(text.stdout.indexOf('AclRole/default/invp-old'));
    const markdown = await runCli(['plan', '-f', dir, '--prune', '--markdown'], env);
    expect(markdown.stdout).toContain(
      '#### To prune: 1 object Converge manages that the manifest no longer declares',
    );
    // Each deletion says why beside it, not only in the folded diff.
    expect(markdown.stdout).toMatch(
      /^- `AclRole\/default\/invp-old`: created by Converge \\\(inventory\\\)(, among [^\n]*,)? and no longer in the manifest$/m,
    );
    const json = JSON.parse((await runCli(['plan', '-f', dir, '--prune', '--json'], env)).stdout);
    expect(json.pruned).toMatchObject({ count: 1, addresses: ['AclRole/default/invp-old'] });
    expect(json.changes.find((c: { name: string }) => c.name === 'invp-old')).toMatchObject({
      action: 'delete',
      prune: true,
    });

    const applied = await runCli(['apply', '-f', dir, '--prune', '--auto-approve'], env);
    expect(applied.code, applied.stderr).toBe(0);
    expect(await roleExists('invp-old')).toBe(false);
    expect(await roleExists('invp-keep')).toBe(true);
  });

  it('refuses to prune every role when the manifest declares none any more, unless --allow-empty', async () => {
    const env = localEnv();
    expect((await runCli(['apply', '-f', roles('inve-a', 'inve-b'), '--auto-approve'], env)).code).toBe(0);
    const refused = await runCli(['apply', '-f', otherKindOnly(), '--prune', '--auto-approve'], env);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain(
      'the manifest declares no AclRole in namespace default any more, so --prune would delete all 2',
    );
    expect(refused.stdout).toContain('--allow-empty');
    expect(await roleExists('inve-a')).toBe(true);

    const allowed = await runCli(
      ['apply', '-f', otherKindOnly(), '--prune', '--allow-empty', '--auto-approve'],
      env,
    );
    expect(allowed.code, allowed.stdout + allowed.stderr).toBe(0);
    expect(await roleExists('inve-a')).toBe(false);
    expect(await roleExists('inve-b')).toBe(false);
  });

  it('--max-deletes refuses a plan with more deletions, naming the count and the flag', async () => {
    const env = localEnv();
    expect(
      (await runCli(['apply', '-f', roles('invm-keep', 'invm-a', 'invm-b'), '--auto-approve'], env)).code,
    ).toBe(0);
    const dir = roles('invm-keep');
    const refused = await runCli(
      ['apply', '-f', dir, '--prune', '--max-deletes', '1', '--auto-approve'],
      env,
    );
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('the plan deletes 2 objects');
    expect(refused.stdout).toContain('--max-deletes 1');
    expect(await roleExists('invm-a')).toBe(true);
    const enough = await runCli(['apply', '-f', dir, '--prune', '--max-deletes', '2', '--auto-approve'], env);
    expect(enough.code, enough.stdout).toBe(0);
    expect(await roleExists('invm-a')).toBe(false);
  });
});

describe('converge inventory', () => {
  it('lists, shows and forgets objects; forget asks, and refuses without a terminal unless --yes', async () => {
    const env = localEnv();
    expect((await runCli(['apply', '-f', roles('invc-a', 'invc-b'), '--auto-approve'], env)).code).toBe(0);
    const list = await runCli(['inventory', 'list'], env);
    expect(list.stdout).toMatch(/AclRole\/default\/invc-a\s+yes\s+\S+/);
    const json = JSON.parse((await runCli(['inventory', 'list', '--json'], env)).stdout);
    expect(json.objects.map((o: { address: string }) => o.address)).toEqual([
      'AclRole/default/invc-a',
      'AclRole/default/invc-b',
    ]);
    // Which file it read is said, objects or not: the way to notice a run from another folder.
    expect(list.stdout).toContain(
      `The inventory (file ${path.join(env.CONVERGE_STATE_DIR!, 'inventory.json')}) holds 2 objects:`,
    );
    const show = await runCli(['inventory', 'show', 'AclRole/default/invc-a'], env);
    expect(show.stdout).toMatch(/Owned\s+yes: created by Converge, --prune may delete it/);
    expect((await runCli(['inventory', 'show', 'AclRole/default/nope'], env)).stderr).toContain(
      'is not in the inventory',
    );

    const refused = await runCli(['inventory', 'forget', 'AclRole/default/invc-b'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('Pass --yes');
    const forgot = await runCli(['inventory', 'forget', 'AclRole/default/invc-b', '--yes'], env);
    expect(forgot.code, forgot.stderr).toBe(0);
    // Said without claiming the object exists: forget is also how a record of a gone one is dropped.
    expect(forgot.stdout).toContain(
      'Forgot AclRole/default/invc-b; nothing was sent to the service (a live object, if there is one, is left as it is).',
    );
    // Forgotten: no longer Converge's, so prune leaves it.
    const plan = JSON.parse((await runCli(['plan', '-f', roles('invc-a'), '--prune', '--json'], env)).stdout);
    expect(plan.pruned.count).toBe(0);
    expect(await roleExists('invc-b')).toBe(true);
  });

  it('migrates the local inventory into a workspace, which later runs then use', async () => {
    const env = localEnv();
    expect(
      (await runCli(['apply', '-f', roles('invg-a', 'invg-b', 'invg-c'), '--auto-approve'], env)).code,
    ).toBe(0);
    // A deletion it remembers goes along: an old saved plan must not make the role again after.
    expect(
      (await runCli(['apply', '-f', roles('invg-a', 'invg-b'), '--prune', '--auto-approve'], env)).code,
    ).toBe(0);
    const migrated = await runCli(['inventory', 'migrate', '--to', `workspace:${ORG}/inv-migrated`], env);
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(migrated.stdout).toContain('Copied 2 objects');
    const shared = {
      ...env,
      CONVERGE_INVENTORY: `workspace:${ORG}/inv-migrated`,
      CONVERGE_STATE_DIR: tmp('converge-invcli-other-'),
    };
    const list = JSON.parse((await runCli(['inventory', 'list', '--json'], shared)).stdout);
    expect(list.objects.map((o: { address: string }) => o.address)).toEqual([
      'AclRole/default/invg-a',
      'AclRole/default/invg-b',
    ]);
    const after = inventoryFromEnv(shared);
    await after.open().finally(() => after.close());
    expect(after.deletion('AclRole/default/invg-c')).toBeDefined();
    // Another machine (another state folder) prunes through the shared inventory.
    const pruned = await runCli(['apply', '-f', roles('invg-a'), '--prune', '--auto-approve'], shared);
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(await roleExists('invg-b')).toBe(false);
    expect((await workspaceLock(sandbox, 'inv-migrated'))?.locked).toBe(false);
  });

  it('says so when --prune reads no inventory, rather than planning nothing to delete in silence', async () => {
    const env = localEnv();
    expect((await runCli(['apply', '-f', roles('inva-a', 'inva-b'), '--auto-approve'], env)).code).toBe(0);
    const migrated = await runCli(['inventory', 'migrate', '--to', `workspace:${ORG}/inv-absent`], env);
    expect(migrated.code, migrated.stderr).toBe(0);
    // A misspelt workspace (or one a plan token may not see: the service answers both with 404).
    const wrong = { ...env, CONVERGE_INVENTORY: `workspace:${ORG}/inv-absnet` };
    const text = await runCli(['plan', '-f', roles('inva-a'), '--prune'], wrong);
    expect(text.stdout).toContain(
      `No inventory was read (workspace ${ORG}/inv-absnet: it does not exist, or this token may not see it): --prune knows of no object Converge made`,
    );
    const markdown = await runCli(['plan', '-f', roles('inva-a'), '--prune', '--markdown'], wrong);
    expect(markdown.stdout).toContain('> [!WARNING]\n> No inventory was read');
    const json = JSON.parse(
      (await runCli(['plan', '-f', roles('inva-a'), '--prune', '--json'], wrong)).stdout,
    );
    expect(json.pruned.inventory_absent).toBe(
      `workspace ${ORG}/inv-absnet: it does not exist, or this token may not see it`,
    );
    const list = await runCli(['inventory', 'list'], wrong);
    expect(list.stdout.trim()).toBe(
      `No inventory was read (workspace ${ORG}/inv-absnet: it does not exist, or this token may not see it).`,
    );
    // Spelt right, the inventory is read and the prune plans its deletion, with no such line.
    const right = { ...env, CONVERGE_INVENTORY: `workspace:${ORG}/inv-absent` };
    const found = JSON.parse(
      (await runCli(['plan', '-f', roles('inva-a'), '--prune', '--json'], right)).stdout,
    );
    expect(found.pruned).toMatchObject({ addresses: ['AclRole/default/inva-b'], inventory_absent: null });
  });

  it('refuses an inventory that is neither file: nor workspace:', async () => {
    const r = await runCli(['inventory', 'list'], { ...localEnv(), CONVERGE_INVENTORY: 'ftp://elsewhere' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('CONVERGE_INVENTORY must be file:PATH or workspace:ORG/NAME');
  });
});

describe('the workspace inventory lock', () => {
  const ciEnv = {
    GITHUB_SERVER_URL: 'https://github.example',
    GITHUB_REPOSITORY: 'acme/infra',
    GITHUB_RUN_ID: '4242',
  };

  it('is held for the whole apply, with a reason naming the run, and released after', async () => {
    const slow = await startSandbox({ port: 0, config: { ...config, faults: { latencyMs: 60 } } });
    try {
      const env = { ...localEnv(slow), ...ciEnv, CONVERGE_INVENTORY: `workspace:${ORG}/inv-held` };
      let midApply: { locked: boolean; reason: unknown } | undefined;
      let done = false;
      const running = runCli(['apply', '-f', roles('invl-a', 'invl-b'), '--auto-approve'], env).finally(
        () => {
          done = true;
        },
      );
      // Polled until a role the run creates exists: the workspace must be locked then.
      while (!done && !midApply) {
        const now = await workspaceLock(slow, 'inv-held');
        if (now && (await roleExists('invl-a', slow)) && !done) midApply = now;
      }
      const r = await running;
      expect(r.code, r.stderr).toBe(0);
      expect(midApply?.locked).toBe(true);
      const reason = String(midApply?.reason);
      expect(reason).toContain('converge apply');
      expect(reason).toContain('https://github.example/acme/infra/actions/runs/4242');
      expect(reason).toContain(`pid ${process.pid}`);
      expect(reason).toContain(os.hostname());
      expect((await workspaceLock(slow, 'inv-held'))?.locked).toBe(false);
    } finally {
      await slow.close();
    }
  });

  it('says a lock whose holder on this host is gone will never be released by it', async () => {
    const env = { ...localEnv(), CONVERGE_INVENTORY: `workspace:${ORG}/inv-orphan` };
    expect((await runCli(['apply', '-f', roles('invo-a'), '--auto-approve'], env)).code).toBe(0);
    const ws = await workspaceLock(sandbox, 'inv-orphan');
    // A run killed with -9 on this host: its pid is no longer running.
    const gone = spawnSync(process.execPath, ['-e', '0']).pid;
    const reason = `converge apply -f infra/ on host ${os.hostname()}, pid ${gone}, since 2030-01-01T00:00:00.000Z`;
    await workspacesApi(sandbox, 'POST', `/workspaces/${ws!.id}/actions/lock`, { reason });
    const r = await runCli(['apply', '-f', roles('invo-a'), '--auto-approve', '--lock-timeout', '0'], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`and no process ${gone} runs on this host: if that run was here, it is gone`);
    expect(r.stderr).toContain('converge inventory unlock');
    expect(r.stderr).not.toContain('if that run is gone');
  });

  it('makes a second run wait up to --lock-timeout, then fail naming the holder; unlock releases it', async () => {
    const env = { ...localEnv(), CONVERGE_INVENTORY: `workspace:${ORG}/inv-busy` };
    // The workspace exists once a first run used it.
    expect((await runCli(['apply', '-f', roles('invw-a'), '--auto-approve'], env)).code).toBe(0);
    const ws = await workspaceLock(sandbox, 'inv-busy');
    const reason =
      'converge apply -f infra/ in https://ci.example/jobs/7 on host runner-3, pid 99, since 2030-01-01T00:00:00.000Z';
    await workspacesApi(sandbox, 'POST', `/workspaces/${ws!.id}/actions/lock`, { reason });

    const started = Date.now();
    const r = await runCli(
      ['apply', '-f', roles('invw-a', 'invw-b'), '--auto-approve', '--lock-timeout', '1'],
      env,
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`workspace ${ORG}/inv-busy is locked by another run: ${reason}`);
    expect(r.stderr).toContain('converge inventory unlock');
    expect(await roleExists('invw-b')).toBe(false);
    // Never stolen.
    expect((await workspaceLock(sandbox, 'inv-busy'))?.reason).toBe(reason);

    const refused = await runCli(['inventory', 'unlock'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('Pass --yes');
    const unlocked = await runCli(['inventory', 'unlock', '--yes'], env);
    expect(unlocked.code, unlocked.stderr).toBe(0);
    expect(unlocked.stdout).toContain(reason);
    expect(unlocked.stderr).toContain('held from host runner-3 (pid 99)');
    expect(unlocked.stderr).toContain('cannot be checked');
    expect((await workspaceLock(sandbox, 'inv-busy'))?.locked).toBe(false);
  });

  it('refuses to unlock a workspace lock whose holder still runs on this host, unless --force', async () => {
    const env = { ...localEnv(), CONVERGE_INVENTORY: `workspace:${ORG}/inv-live` };
    expect((await runCli(['apply', '-f', roles('invl-a'), '--auto-approve'], env)).code).toBe(0);
    const ws = await workspaceLock(sandbox, 'inv-live');
    // This test's own process: alive, on this host.
    const reason = `converge apply -f infra/ on host ${os.hostname()}, pid ${process.pid}, since 2030-01-01T00:00:00.000Z`;
    await workspacesApi(sandbox, 'POST', `/workspaces/${ws!.id}/actions/lock`, { reason });
    const refused = await runCli(['inventory', 'unlock', '--yes'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`held by pid ${process.pid}`);
    expect(refused.stderr).toContain('still running on this host');
    expect((await workspaceLock(sandbox, 'inv-live'))?.locked).toBe(true);
    const forced = await runCli(['inventory', 'unlock', '--yes', '--force'], env);
    expect(forced.code, forced.stderr).toBe(0);
    expect((await workspaceLock(sandbox, 'inv-live'))?.locked).toBe(false);
  });

  it('treats a lock reason that only looks like a holder (hostile text) as one that cannot be checked', async () => {
    const env = { ...localEnv(), CONVERGE_INVENTORY: `workspace:${ORG}/inv-forged` };
    expect((await runCli(['apply', '-f', roles('invf-a'), '--auto-approve'], env)).code).toBe(0);
    const ws = await workspaceLock(sandbox, 'inv-forged');
    const reason = `x on host ${os.hostname()}\n, pid 99999999999999999999, since \u001b[2J`;
    await workspacesApi(sandbox, 'POST', `/workspaces/${ws!.id}/actions/lock`, { reason });
    const r = await runCli(['inventory', 'unlock', '--yes'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('cannot be checked');
    expect((await workspaceLock(sandbox, 'inv-forged'))?.locked).toBe(false);
  });

  it('shows that a kind prune never deletes is never deleted, created by Converge or not', async () => {
    const env = localEnv();
    const dir = tmp('converge-invcli-ldap-');
    writeFileSync(
      path.join(dir, 'ldap.yaml'),
      'apiVersion: converge/v1\nkind: LdapConfig\nmetadata: { name: ldap }\nspec: { url: "ldap://dir.example:389" }\n',
    );
    expect((await runCli(['apply', '-f', dir, '--auto-approve'], env)).code).toBe(0);
    const show = await runCli(['inventory', 'show', 'LdapConfig/ldap'], env);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(/Owned\s+yes: created by Converge, --prune never deletes LdapConfig objects/);
  });

  it('shows a lock reason anyone may have written as one printable, bounded line', async () => {
    const env = { ...localEnv(), CONVERGE_INVENTORY: `workspace:${ORG}/inv-hostile` };
    expect((await runCli(['apply', '-f', roles('invh-a'), '--auto-approve'], env)).code).toBe(0);
    const ws = await workspaceLock(sandbox, 'inv-hostile');
    const reason = `x\u001b[2K\r::error::forged\n${'y'.repeat(5000)}`;
    await workspacesApi(sandbox, 'POST', `/workspaces/${ws!.id}/actions/lock`, { reason });
    const r = await runCli(['apply', '-f', roles('invh-a'), '--auto-approve', '--lock-timeout', '0'], env);
    expect(r.code).toBe(1);
    expect(r.stderr).not.toMatch(/[\u001b\r]/);
    expect(r.stderr).not.toMatch(/^::/m);
    expect(r.stderr.length).toBeLessThan(1500);
    expect((await runCli(['inventory', 'unlock', '--yes'], env)).code).toBe(0);
  });

  it('is not taken, nor the workspace created, by a plan', async () => {
    const env = { ...localEnv(), CONVERGE_INVENTORY: `workspace:${ORG}/inv-plan-only` };
    const r = await runCli(['plan', '-f', roles('invpl-a'), '--prune'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(await workspaceLock(sandbox, 'inv-plan-only')).toBeUndefined();
  });

  it('is released after an apply that fails', async () => {
    const env = { ...localEnv(), CONVERGE_INVENTORY: `workspace:${ORG}/inv-failed` };
    const dir = tmp('converge-invcli-bad-');
    writeFileSync(
      path.join(dir, 'r.yaml'),
      'apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: invf-a }\nspec: { Policies: [{ Name: no-such-policy }] }\n',
    );
    const r = await runCli(['apply', '-f', dir, '--auto-approve'], env);
    expect(r.code).toBe(1);
    expect((await workspaceLock(sandbox, 'inv-failed'))?.locked).toBe(false);
  });

  it('is released after Ctrl-C', async () => {
    const slow = await startSandbox({ port: 0, config: { ...config, faults: { latencyMs: 150 } } });
    try {
      const env = { ...localEnv(slow), CONVERGE_INVENTORY: `workspace:${ORG}/inv-interrupted` };
      let done = false;
      const running = runCli(['apply', '-f', roles('invi-a'), '--auto-approve'], env).finally(() => {
        done = true;
      });
      while (!done && !(await workspaceLock(slow, 'inv-interrupted'))?.locked);
      process.emit('SIGINT', 'SIGINT');
      const r = await running;
      expect(r.code).toBe(130);
      expect(r.stderr).toContain('Interrupted');
      expect((await workspaceLock(slow, 'inv-interrupted'))?.locked).toBe(false);
    } finally {
      await slow.close();
    }
  });
});
