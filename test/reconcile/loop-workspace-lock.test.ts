/**
 * The reconcile loop with the workspace inventory (CONVERGE_INVENTORY=workspace:ORG/NAME), against a
 * slow sandbox over loopback HTTP: each cycle holds the workspace's lock, so a `converge apply` that
 * comes during a cycle fails naming the loop as the holder (or, given --lock-timeout, waits for the
 * cycle to end), one that comes between cycles succeeds,
 * and a stop (SIGTERM) in the middle of a cycle releases the lock.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ReconcileLoop, runReconcile } from '../../src/reconcile/loop.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

const ORG = 'loop-org';
// Shared by the loop and the laptop, as runs sharing a workspace inventory must.
const STATE_KEY = randomBytes(32).toString('hex');
let sandbox: RunningSandbox;

beforeAll(async () => {
  // Every request takes 100 ms: a cycle over many roles, one request at a time, lasts seconds.
  sandbox = await startSandbox({
    port: 0,
    config: { workspaces: { organizations: [{ name: ORG }] }, faults: { latencyMs: 100 } },
  });
});
afterAll(async () => {
  await sandbox?.close();
});

const tmp = (prefix: string) => tempDir(prefix);

function roles(prefix: string, count: number): string {
  const dir = tmp('converge-loop-lock-');
  const docs = Array.from(
    { length: count },
    (_, i) =>
      `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: ${prefix}-${i} }\nspec: { Description: by the loop }\n`,
  );
  writeFileSync(path.join(dir, 'roles.yaml'), docs.join('---\n'));
  return dir;
}

async function lockOf(name: string): Promise<{ locked: boolean; reason: unknown } | undefined> {
  const res = await fetch(`${sandbox.url}/api/v2/organizations/${ORG}/workspaces/${name}`, {
    headers: { Authorization: `Bearer ${sandbox.rootToken}` },
  });
  if (res.status !== 200) return undefined;
  const { data } = (await res.json()) as { data: { attributes: Record<string, unknown> } };
  return { locked: data.attributes.locked === true, reason: data.attributes['locked-reason'] };
}

async function until<T>(what: string, probe: () => Promise<T | undefined | false>, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The loop's pause between cycles, held until the test triggers a cycle or stops (bounded). */
function heldSleep(_ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, 30_000);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

interface Started {
  loop: ReconcileLoop;
  stop: AbortController;
  cycles: () => Record<string, unknown>[];
}

async function start(paths: string[], env: Record<string, string>): Promise<Started> {
  const text: string[] = [];
  const stop = new AbortController();
  const loop = await runReconcile(
    { paths, intervalMs: 60_000, parallelism: 1, env, signal: stop.signal, sleep: heldSleep },
    { stdout: { write: (t: string) => text.push(t) } },
  );
  const cycles = () =>
    text
      .join('')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.type === 'cycle');
  return { loop, stop, cycles };
}

function envFor(workspace: string): Record<string, string> {
  return {
    ...sandbox.env(),
    CONVERGE_STATE_DIR: tmp('converge-loop-state-'),
    CONVERGE_STATE_KEY: STATE_KEY,
    CONVERGE_INVENTORY: `workspace:${ORG}/${workspace}`,
    NO_COLOR: '1',
  };
}

describe('the reconcile loop with a workspace inventory', () => {
  it('holds the lock during each cycle: an apply then fails naming the loop, or waits for the cycle to end, and goes through between cycles', async () => {
    const workspace = `loop-${randomUUID().slice(0, 8)}`;
    const env = envFor(workspace);
    const run = await start([roles(`${workspace}-r`, 20)], env);
    try {
      const held = await until('the first cycle to take the lock', async () => {
        const now = await lockOf(workspace);
        return now?.locked ? now : undefined;
      });
      expect(String(held.reason)).toContain('converge reconcile (cycle 1)');
      expect(String(held.reason)).toContain(`pid ${process.pid}`);

      // A laptop's apply during the cycle: refused at once, naming the loop as the holder.
      const laptop = { ...env, CONVERGE_STATE_DIR: tmp('converge-loop-laptop-') };
      const during = await runCli(
        ['apply', '-f', roles(`${workspace}-laptop`, 1), '--auto-approve', '--lock-timeout', '0'],
        laptop,
      );
      expect(during.code).toBe(1);
      expect(during.stderr).toContain(`workspace ${ORG}/${workspace} is locked by another run`);
      expect(during.stderr).toContain('converge reconcile (cycle 1)');
      expect(run.cycles()).toHaveLength(0);

      // One that may wait (--lock-timeout) goes through once the cycle has released the lock.
      const started = run.cycles().length;
      const waited = await runCli(
        ['apply', '-f', roles(`${workspace}-laptop`, 1), '--auto-approve', '--lock-timeout', '20'],
        laptop,
      );
      expect(waited.code, waited.stderr).toBe(0);
      expect(started).toBe(0);
      expect(run.cycles()[0]).toMatchObject({ outcome: 'corrected' });

      // Between cycles the lock is free: an apply that does not wait goes through too.
      expect((await lockOf(workspace))?.locked).toBe(false);
      const between = await runCli(
        ['apply', '-f', roles(`${workspace}-laptop`, 1), '--auto-approve', '--lock-timeout', '0'],
        laptop,
      );
      expect(between.code, between.stderr).toBe(0);
    } finally {
      run.stop.abort('SIGTERM');
      await run.loop.done;
    }
  });

  it('releases the lock when stopped in the middle of a cycle', async () => {
    const workspace = `loop-${randomUUID().slice(0, 8)}`;
    const run = await start([roles(`${workspace}-r`, 12)], envFor(workspace));
    await until('a cycle to take the lock', async () => (await lockOf(workspace))?.locked === true);
    run.stop.abort('SIGTERM');
    const summary = await run.loop.done;
    expect(summary.reason).toBe('SIGTERM');
    expect(run.cycles()[0]).toMatchObject({ outcome: 'interrupted' });
    expect((await lockOf(workspace))?.locked).toBe(false);
  });
});
