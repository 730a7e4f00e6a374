/**
 * Retry lines during an apply name the object they belong to: against a sandbox that answers some
 * requests 503, each retry of a request made for one change starts with its address. In-process.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, config: { faults: { failRate: 0.4, seed: 7 } } });
});
afterAll(async () => {
  await sandbox?.close();
});

describe('retry lines of an apply', () => {
  it('start with the address of the object the request is made for', async () => {
    const dir = tempDir('converge-retry-label-');
    const names = Array.from({ length: 6 }, (_, i) => `lbl-${i}`);
    writeFileSync(
      path.join(dir, 'roles.yaml'),
      names
        .map(
          (n) =>
            `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: ${n} }\nspec:\n  Description: r\n`,
        )
        .join('---\n'),
    );
    const env = {
      ...sandbox.env(),
      CONVERGE_STATE_DIR: tempDir('converge-retry-label-state-'),
      NO_COLOR: '1',
    };
    // One change at a time: the seeded faults then meet the same requests in the same order every run
    // (concurrent creates drew them in whatever order they arrived, and a run could see only lost
    // creates, which the applier reports itself, and no retry of the HTTP layer inside a change).
    const r = await runCli(['apply', '-f', dir, '--auto-approve', '--parallelism', '1'], env);
    const retries = r.stderr.split('\n').filter((l) => /: attempt \d+ failed/.test(l));
    const labelled = retries.filter((l) => /^AclRole\/default\/lbl-\d: registry: /.test(l));
    expect(labelled.length, r.stderr).toBeGreaterThan(0);
  });
});
