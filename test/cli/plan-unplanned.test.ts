/**
 * The plan of a job whose HCL spec no longer parses, against the sandbox: the job exists and cannot be
 * compared, so no form of the plan may call it up to date or say there are no changes.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlanJson } from '../../src/planner/render/json.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

let sandbox: RunningSandbox;
let env: Record<string, string | undefined>;
let dir: string;

const spec = (count: string) => `job "cache" {
  datacenters = ["dc1"]
  group "web" {
    count = ${count}
    task "server" {
      driver = "docker"
      config {
        image = "redis:7"
      }
    }
  }
}
`;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, token: 'unplanned-root-token-4f1c2a' });
  env = {
    ...sandbox.env(),
    NO_COLOR: '1',
    CONVERGE_STATE_DIR: tempDir('converge-unplanned-state-'),
  };
  dir = tempDir('converge-unplanned-');
  writeFileSync(path.join(dir, 'cache.hcl'), spec('2'));
  writeFileSync(
    path.join(dir, 'jobs.yaml'),
    'apiVersion: converge/v1\nkind: Job\nmetadata: { name: cache }\nspec:\n  specFile: cache.hcl\n',
  );
  const applied = await runCli(['apply', '-f', dir, '--auto-approve'], env);
  expect(applied.code).toBe(0);
  // The live job stays; its spec file now holds a syntax error.
  writeFileSync(path.join(dir, 'cache.hcl'), spec(''));
});
afterAll(async () => {
  await sandbox?.close();
});

describe('a live job whose spec has a syntax error', () => {
  it('is "could not be planned" in the headline and the summary, never "No changes" or up to date', async () => {
    const r = await runCli(['plan', '-f', dir], env);
    expect(r.code).toBe(1);
    expect(r.stdout).not.toContain('No changes');
    expect(r.stdout).not.toContain('up to date');
    expect(r.stdout).toMatch(
      /^Plan incomplete: 1 object could not be planned:\n {2}Job\/default\/cache: .*jobs\.yaml:5:\d+: Failed to parse job: cache\.hcl:4,\d+-\d+,\d+: Invalid expression/,
    );
    expect(r.stdout).toContain(
      '  # Job "cache" in namespace default could not be planned\n  ? Job/default/cache  (id cache)\n      # not compared: its job specification has a problem\n',
    );
    expect(r.stdout).toContain(
      'Plan: 0 to add, 0 to change, 0 to replace, 0 to destroy, 0 unchanged, 1 not planned.',
    );
  });

  it('is a caution and a "not planned" row in --markdown', async () => {
    const r = await runCli(['plan', '-f', dir, '--markdown'], env);
    expect(r.stdout).not.toContain('No changes');
    expect(r.stdout).toContain('> **Plan incomplete: 1 object could not be planned:**');
    expect(r.stdout).toContain('| `?` not planned | Job | cache | namespace default |');
  });

  it('is complete: false with summary.unplanned in --json', async () => {
    const r = await runCli(['plan', '-f', dir, '--json'], env);
    const doc = JSON.parse(r.stdout) as PlanJson;
    expect(doc.complete).toBe(false);
    expect(doc.summary.unplanned).toBe(1);
    expect(doc.changes[0]).toMatchObject({
      action: 'noop',
      not_compared: 'its job specification has a problem',
      planned: false,
    });
  });
});
