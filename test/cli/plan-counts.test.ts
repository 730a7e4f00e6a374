/**
 * The plan's headline counts each object once, against the sandbox: an object with a problem is "not
 * planned", never also "to add"; a deletion guard refuses the plan without being counted as an
 * object; the Markdown per-kind table adds up to the headline, unchanged-only kinds included.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlanJson } from '../../src/planner/render/json.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
});
afterAll(async () => {
  await sandbox?.close();
});

function env(): Record<string, string | undefined> {
  return {
    ...sandbox.env(),
    NO_COLOR: '1',
    CONVERGE_STATE_DIR: tempDir('converge-counts-state-'),
  };
}

function manifest(text: string): string {
  const dir = tempDir('converge-counts-');
  writeFileSync(path.join(dir, 'm.yaml'), text);
  return dir;
}

const role = (name: string, policy?: string) =>
  `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: ${name} }\nspec:\n  Description: x\n${
    policy ? `  Policies: [{ Name: ${policy} }]\n` : ''
  }`;

describe('an object with a problem', () => {
  it('is counted once, as not planned, and not listed as a create', async () => {
    const dir = manifest(role('counts-p1', 'no-such-policy'));
    const r = await runCli(['plan', '-f', dir], env());
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('Plan incomplete: 1 object could not be planned:');
    expect(r.stdout).toContain(
      'Plan: 0 to add, 0 to change, 0 to replace, 0 to destroy, 0 unchanged, 1 not planned.',
    );
    expect(r.stdout).not.toContain('will be created');
    expect(r.stdout).toContain('? AclRole/default/counts-p1');
    const json = JSON.parse((await runCli(['plan', '-f', dir, '--json'], env())).stdout) as PlanJson;
    expect(json.summary).toEqual({ create: 0, update: 0, replace: 0, delete: 0, noop: 0, unplanned: 1 });
  });
});

describe('a deletion guard', () => {
  it('refuses the plan without counting itself as an object', async () => {
    const e = env();
    const applied = await runCli(['apply', '-f', manifest(role('counts-gone')), '--auto-approve'], e);
    expect(applied.code, applied.stderr).toBe(0);
    const r = await runCli(['plan', '-f', manifest(role('counts-kept')), '--prune', '--max-deletes', '0'], e);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      'Plan refused:\n  the plan deletes 1 object (deletions and replacements: AclRole/default/counts-gone), more than --max-deletes 0 allows',
    );
    expect(r.stdout).not.toContain('could not be planned');
    // A refused plan does not say it "will perform" anything.
    expect(r.stdout).toContain(
      'The plan would make the following changes, but it is refused (above): nothing will be applied.',
    );
    expect(r.stdout).not.toContain('Converge will perform');
    expect(r.stdout).toContain('Plan: 1 to add, 0 to change, 0 to replace, 1 to destroy, 0 unchanged.');
    const json = JSON.parse(
      (
        await runCli(
          ['plan', '-f', manifest(role('counts-kept')), '--prune', '--max-deletes', '0', '--json'],
          e,
        )
      ).stdout,
    ) as PlanJson;
    expect(json.summary.unplanned).toBe(0);
    expect(json.complete).toBe(false);
    expect(json.problems.map((p) => p.address)).toEqual(['Plan/max-deletes']);
    // On a pull request too the refusal comes first, before the counts of a plan that will not apply.
    const md = await runCli(
      ['plan', '-f', manifest(role('counts-kept')), '--prune', '--max-deletes', '0', '--markdown'],
      e,
    );
    const refusedAt = md.stdout.indexOf('**Plan refused:**');
    expect(refusedAt).toBeGreaterThan(0);
    expect(refusedAt).toBeLessThan(md.stdout.indexOf('**Plan: 1 to add'));
  });
});

describe('the Markdown per-kind table', () => {
  it('has a row for every kind, unchanged-only ones too, so its columns add up to the headline', async () => {
    const e = env();
    const workspace = `apiVersion: converge/v1\nkind: Workspace\nmetadata: { name: counts-ws }\nspec: { description: d }\n`;
    const first = manifest([workspace, role('counts-a')].join('---\n'));
    const applied = await runCli(['apply', '-f', first, '--auto-approve'], e);
    expect(applied.code, applied.stderr).toBe(0);
    const second = manifest([workspace, role('counts-a'), role('counts-b')].join('---\n'));
    const md = (await runCli(['plan', '-f', second, '--markdown'], e)).stdout;
    expect(md).toContain('**Plan: 1 to add, 0 to change, 0 to replace, 0 to destroy, 2 unchanged.**');
    expect(md).toContain('| AclRole | 1 | 0 | 0 | 0 | 1 |');
    expect(md).toContain('| Workspace | 0 | 0 | 0 | 0 | 1 |');
  });
});
