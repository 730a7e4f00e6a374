/**
 * `converge apply` against a service that rate-limits (the sandbox's `faults.rateLimit`, which
 * answers 429 with Retry-After and X-RateLimit-Limit/Reset): every object is created once, nothing
 * fails, and the wait is visible on standard error as one line per pause, not one per request.
 * In-process against the sandbox.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({
    port: 0,
    config: { faults: { rateLimit: { perSecond: 10, burst: 2 }, seed: 1 } },
  });
});
afterAll(async () => {
  await sandbox?.close();
});

describe('an apply against a rate-limited service', () => {
  it('creates every object once, fails none, and says when it waits', async () => {
    const count = 12;
    const dir = tempDir('converge-ratelimit-');
    writeFileSync(
      path.join(dir, 'roles.yaml'),
      Array.from(
        { length: count },
        (_, i) =>
          `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: rl-${i} }\nspec:\n  Description: r\n`,
      ).join('---\n'),
    );
    const env = {
      ...sandbox.env(),
      CONVERGE_STATE_DIR: tempDir('converge-ratelimit-state-'),
      NO_COLOR: '1',
    };
    const r = await runCli(['apply', '-f', dir, '--auto-approve'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`${count} applied, 0 failed`);
    // The pause is named with what announced it: a 429, or the service's own count of what is left.
    expect(r.stderr).toMatch(
      /^registry: rate limited, waiting (\d+(\.\d)?s|\d+ms) \((429|X-RateLimit-Remaining 0)\)$/m,
    );
    // Once per pause: far fewer pause lines than requests held back.
    const pauses = r.stderr.match(/rate limited, waiting/g) ?? [];
    expect(pauses.length).toBeLessThan(count);
    // The requests a pause held back are not each said again as a failed attempt (429).
    const held = r.stderr.match(/failed \(429 Too Many Requests\)/g) ?? [];
    expect(held.length, r.stderr).toBeLessThanOrEqual(pauses.length);
    const res = await fetch(`${sandbox.url}/v1/acl/roles`, {
      headers: { authorization: `Bearer ${sandbox.rootToken}` },
    });
    const names = ((await res.json()) as { Name: string }[])
      .map((x) => x.Name)
      .filter((n) => n.startsWith('rl-'));
    expect(names.sort()).toEqual(Array.from({ length: count }, (_, i) => `rl-${i}`).sort());
  });
});
