/**
 * When one service's refusal ends a plan, Converge closes its connection pools while the other
 * services' reads are still queued. Those reads failing on the closed pools are Converge's own
 * doing: they are not network failures of healthy services, so they are neither retried nor said as
 * retries (an on-call engineer read "secrets: … connection closed; retrying" as a flaky service).
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

let sandbox: RunningSandbox;

const times = (n: number, f: (i: number) => string) =>
  Array.from({ length: n }, (_, i) => f(i)).join('---\n');

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, token: 'fatal-root-token-51c0' });
});
afterAll(async () => {
  await sandbox?.close();
});

it('a wrong token on one service ends the plan with its error alone: no retry lines for the others', async () => {
  const dir = tempDir('converge-fatal-');
  // Enough directory entries and workspaces that their reads are queued when the scheduler refuses.
  writeFileSync(
    path.join(dir, 'all.yaml'),
    [
      times(
        40,
        (i) =>
          `apiVersion: converge/v1\nkind: LdapGroup\nmetadata: { name: g${i} }\nspec: { policies: [p] }\n`,
      ),
      times(
        20,
        (i) =>
          `apiVersion: converge/v1\nkind: Workspace\nmetadata: { name: w${i} }\nspec: { description: d }\n`,
      ),
      `apiVersion: converge/v1\nkind: Job\nmetadata: { name: web }\nspec:\n  Type: service\n  Datacenters: [dc1]\n  TaskGroups: [{ Name: web, Tasks: [{ Name: web, Driver: docker, Config: { image: "nginx:1" } }] }]\n`,
    ].join('---\n'),
  );
  // Every group exists, so the plan reads each one (the reads that are queued when the refusal comes).
  const env = { ...sandbox.env(), NO_COLOR: '1', CONVERGE_STATE_DIR: tempDir('converge-fatal-state-') };
  expect((await runCli(['apply', '-f', dir, '--auto-approve'], env)).code).toBe(0);
  for (let run = 0; run < 3; run++) {
    const r = await runCli(['plan', '-f', dir], { ...env, CONVERGE_SCHEDULER_TOKEN: 'wrong-token' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('CONVERGE_SCHEDULER_TOKEN');
    expect(r.stdout + r.stderr).not.toMatch(/retrying|UND_ERR|connection closed/);
  }
});
