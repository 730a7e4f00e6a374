/**
 * The fault run's lost object at small N: a create whose answer is lost five times in a row (503s and
 * connections dropped before the service acted, the read back finding nothing each time). Under 10%
 * 503s and 5% resets that is rare per object but, over 500 objects, it failed a whole fault run every
 * few runs: the applier gave up after 5 sends, each a new request of its own, and the error showed
 * only the last send's single 503. The seed puts exactly that sequence on the one role's create
 * (one request at a time, so the seed decides which request fails):
 *   GET policies ok, GET role ok (absent), then PUT dropped / GET ok / PUT dropped / GET ok /
 *   PUT 503 / GET ok / PUT 503 / GET ok / PUT dropped / GET ok / PUT ok.
 * The create now has 9 attempts in all, so the sixth send creates the role: once, with an empty plan
 * after.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';

/** Found by drawing the sandbox's fault sequence for seeds 1, 2, … (see the comment above). */
const SEED = 34948;

let sandbox: RunningSandbox;
const log: string[] = [];
beforeAll(async () => {
  sandbox = await startSandbox({
    port: 0,
    config: { faults: { failRate: 0.1, resetRate: 0.05, seed: SEED } },
    log: (line: string) => log.push(line),
  });
});
afterAll(async () => {
  await sandbox?.close();
});

/** The role list, read through the same faults: bounded tries until one is answered. */
async function roleNames(): Promise<string[]> {
  for (let i = 0; i < 20; i++) {
    try {
      const res = await fetch(`${sandbox.url}/v1/acl/roles`, {
        headers: { authorization: `Bearer ${sandbox.rootToken}` },
        signal: AbortSignal.timeout(5_000),
      });
      if (res.ok) return ((await res.json()) as { Name: string }[]).map((r) => r.Name);
    } catch {
      // a dropped connection: try again
    }
  }
  throw new Error('no answer to the role list in 20 tries');
}

describe(`a create whose answer is lost five times in a row (10% 503s, 5% resets, seed ${SEED})`, () => {
  it('is read back and sent again until it lands: applied once, nothing failed, nothing left to plan', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'converge-lost-create-'));
    writeFileSync(
      path.join(dir, 'roles.yaml'),
      'apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: lost-5 }\nspec:\n  Description: five lost answers\n',
    );
    const env = {
      ...sandbox.env(),
      CONVERGE_STATE_DIR: mkdtempSync(path.join(os.tmpdir(), 'converge-lost-create-state-')),
      NO_COLOR: '1',
    };
    const applied = await runCli(['apply', '-f', dir, '--auto-approve', '--parallelism', '1'], env);
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    expect(applied.stdout).toContain('1 applied, 0 failed');
    // One count for the create, shown as it goes: the sixth send is attempt 6 of 9.
    expect(applied.stdout + applied.stderr).toMatch(/sent again .*\(attempt 6 of 9\)/);
    // The five sends again are the run's retries, counted in its summary.
    expect(applied.stdout + applied.stderr).toContain('Along the way: 5 requests sent again');

    // What the registry received: six creates, five of them lost before it acted.
    const creates = log.filter((l) => l.startsWith('PUT /v1/acl/role?'));
    expect(creates).toHaveLength(6);
    expect(creates.filter((l) => / 200 /.test(l))).toHaveLength(1);

    const after = await runCli(['plan', '-f', dir, '--detailed-exitcode', '--parallelism', '1'], env);
    expect(after.code, after.stdout + after.stderr).toBe(0);
    expect((await roleNames()).filter((n) => n === 'lost-5')).toHaveLength(1);
  });
});
