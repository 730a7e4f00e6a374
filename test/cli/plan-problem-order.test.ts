/**
 * A plan's problems are listed as the manifest reads, file by file and line by line, whichever
 * service answered first: a reader fixes them top to bottom.
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

const group = (name: string) =>
  `apiVersion: converge/v1\nkind: LdapGroup\nmetadata: { name: ${name}, mount: nowhere }\nspec: { policies: [${name}] }\n`;
const role = (name: string, policy: string) =>
  `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: ${name} }\nspec:\n  Policies:\n    - Name: ${policy}\n`;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
  env = { ...sandbox.env(), NO_COLOR: '1', CONVERGE_STATE_DIR: tempDir('converge-problem-order-state-') };
  dir = tempDir('converge-problem-order-');
  // Each file has a problem of each service, in the opposite order in the second file; the files are
  // named so that the one loaded first (z-first.yaml, given first below) sorts last by name.
  writeFileSync(path.join(dir, 'z-first.yaml'), `${group('ops')}---\n${role('r1', 'missing-one')}`);
  writeFileSync(path.join(dir, 'a-second.yaml'), `${role('r2', 'missing-two')}---\n${group('dev')}`);
});
afterAll(async () => {
  await sandbox?.close();
});

describe('plan problems', () => {
  it('are listed in the order the files were given, then by line', async () => {
    const r = await runCli(
      ['plan', '-f', path.join(dir, 'z-first.yaml'), '-f', path.join(dir, 'a-second.yaml')],
      env,
    );
    expect(r.code).toBe(1);
    const listed = r.stdout
      .split('\n')
      .filter((line) => /^ {2}\S+: /.test(line))
      .map((line) => line.trim().split(':').slice(0, 3).join(':'));
    expect(listed).toEqual(
      [
        `LdapGroup/nowhere/ops: ${path.join(dir, 'z-first.yaml')}`,
        `AclRole/default/r1: ${path.join(dir, 'z-first.yaml')}`,
        `AclRole/default/r2: ${path.join(dir, 'a-second.yaml')}`,
        `LdapGroup/nowhere/dev: ${path.join(dir, 'a-second.yaml')}`,
      ].map((prefix) =>
        expect.stringMatching(new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:\\d+$`)),
      ),
    );
  });

  it('come in the same order in --json', async () => {
    const r = await runCli(
      ['plan', '-f', path.join(dir, 'z-first.yaml'), '-f', path.join(dir, 'a-second.yaml'), '--json'],
      env,
    );
    const doc = JSON.parse(r.stdout) as PlanJson & { problems: { address: string }[] };
    expect(doc.problems.map((p) => p.address)).toEqual([
      'LdapGroup/nowhere/ops',
      'AclRole/default/r1',
      'AclRole/default/r2',
      'LdapGroup/nowhere/dev',
    ]);
    // An object's problem has the keys a manifest problem has: one script reads both.
    const first = (doc.problems as unknown as Record<string, unknown>[])[0]!;
    expect(first).toMatchObject({ file: path.join(dir, 'z-first.yaml'), line: expect.any(Number) });
    expect(first.source).toBe(`${String(first.file)}:${String(first.line)}:${String(first.col)}`);
  });
});
