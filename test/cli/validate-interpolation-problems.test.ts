/**
 * A document whose `${file:}` or `${env:}` cannot be filled in still takes part in the checks across
 * documents, as one with a typo in its spec does: a copy of another document is declared twice in the
 * same run (found by the load, or by keying however each spells its namespace), and a connection it
 * names that is not declared is said too. The duplicate used to show only once the reference was
 * fixed (found by a new-user trial); the README promises every problem in one run.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

const role = (metadata: string, description: string) =>
  `apiVersion: converge/v1\nkind: AclRole\nmetadata: { ${metadata} }\nspec: { Description: ${description} }\n`;

/** dup/a.yaml and dup/b.yaml, and the problem lines `validate` and `plan` print for the folder. */
async function problems(a: string, b: string, env: Record<string, string> = {}): Promise<string[]> {
  const dup = path.join(tempDir('converge-interpolation-dup-'), 'dup');
  mkdirSync(dup);
  writeFileSync(path.join(dup, 'a.yaml'), a);
  writeFileSync(path.join(dup, 'b.yaml'), b);
  const all = { NO_COLOR: '1', CONVERGE_STATE_DIR: tempDir('converge-interpolation-state-'), ...env };
  const validated = await runCli(['validate', '-f', dup], all);
  expect(validated.code).toBe(1);
  const planned = await runCli(['plan', '-f', dup], all);
  expect(planned.code).toBe(1);
  expect(planned.stderr).toBe(validated.stderr);
  const lines = validated.stderr.trimEnd().split('\n');
  expect(lines[0]).toBe(`Error: the manifest has ${lines.length - 1} problems:`);
  // Paths as the folder names them: the same in every run.
  return lines.slice(1).map((l) => l.replaceAll(`${dup}/`, ''));
}

describe('a document with a reference that cannot be filled in', () => {
  it.each([
    ['a file that does not exist', '"${file:nope.txt}"', 'cannot use ${file:nope.txt}: nope.txt not found'],
    [
      'a variable not allowed',
      '"${env:X}"',
      'environment variable X is not exposed to the manifest: allow it with --allow-env X or CONVERGE_ALLOW_ENV=X (referenced as ${env:X})',
    ],
  ])('is still declared twice: %s', async (_, value, problem) => {
    const lines = await problems(role('name: r2', 'x'), role('name: r2', value), { X: 'set' });
    expect(lines).toEqual([
      'b.yaml:2:1: AclRole/default/r2 is declared twice: at a.yaml:2:1 and at b.yaml:2:1',
      `b.yaml:4:23: ${problem}`,
    ]);
  });

  it('is still declared twice where only keying finds it (a namespace spelled out in one)', async () => {
    const lines = await problems(
      role('name: r2', 'x'),
      role('name: r2, namespace: default', '"${file:nope.txt}"'),
    );
    expect(lines).toEqual([
      'b.yaml:2:1: AclRole/default/r2 is declared twice: at a.yaml:2:1 and here (one names the default namespace, the other leaves it out)',
      'b.yaml:4:23: cannot use ${file:nope.txt}: nope.txt not found',
    ]);
  });

  it('still has a connection that is not declared said', async () => {
    const lines = await problems(
      role('name: r1', 'x'),
      role('name: r2, connection: eu', '"${file:nope.txt}"'),
    );
    expect(lines).toEqual([
      expect.stringMatching(/^b\.yaml:3:\d+: connection "eu" is not declared/),
      'b.yaml:4:23: cannot use ${file:nope.txt}: nope.txt not found',
    ]);
  });
});
