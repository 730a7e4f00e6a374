/**
 * A value that differs only by a character that looks like a space (a no-break space pasted from a
 * document, an ideographic space) must not read as no change: the plan shows it escaped, on the
 * changed line, so the reviewer sees what the service will get.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
});
afterAll(async () => sandbox?.close());

function role(description: string): string {
  const dir = tempDir('converge-lookalike-');
  writeFileSync(
    path.join(dir, 'role.yaml'),
    `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: lookalike }\nspec: { Description: "${description}" }\n`,
  );
  return dir;
}

it.each([
  ['a no-break space', '\u00a0', '\\u00a0'],
  ['an ideographic space', '\u3000', '\\u3000'],
  ['a narrow no-break space', '\u202f', '\\u202f'],
])('shows %s in a changed value as an escape, not as a plain space', async (_what, space, shown) => {
  const env = { ...sandbox.env(), NO_COLOR: '1', CONVERGE_STATE_DIR: tempDir('converge-lookalike-state-') };
  expect((await runCli(['apply', '-f', role('read only'), '--auto-approve'], env)).code).toBe(0);
  const r = await runCli(['plan', '-f', role(`read${space}only`), '--detailed-exitcode'], env);
  expect(r.code, r.stderr).toBe(2);
  expect(r.stdout).toContain(`~ Description = "read only" -> "read${shown}only"`);
  expect(r.stdout).not.toContain(space);
});
