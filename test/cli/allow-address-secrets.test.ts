/**
 * An address the operator allows (`--allow-address`, `CONVERGE_ALLOW_ADDRESSES`) is repeated in the
 * commands a run prints next (`Apply exactly this plan with: converge apply FILE --allow-address …`)
 * and in the usage hints that repeat the command line. One with credentials
 * (`https://user:password@vault…`), a query string (`?token=…`) or a fragment carried that secret
 * into the output verbatim; and it allowed nothing, since a Connection's address is compared by
 * scheme, host, port and path. Such an address is refused where it is given, and the refusal quotes
 * it in no form.
 */
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scrubSecrets } from '../../src/common/scrub.js';
import { EngineError, loadManifest } from '../../src/engine/index.js';
import { runReconcile } from '../../src/reconcile/loop.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

const SECRET = 's3cret-allow-addr-7f2c9e';

let sandbox: RunningSandbox;
let env: Record<string, string | undefined>;

beforeAll(async () => {
  sandbox = await startSandbox({});
  env = {
    PATH: process.env.PATH,
    ...sandbox.env(),
    CONVERGE_STATE_DIR: tempDir('converge-allow-secret-state-'),
    NO_COLOR: '1',
  };
  // A live role, for an export to read and suggest commands for.
  const applied = await runCli(['apply', '-f', manifest(), '--auto-approve'], env);
  expect([applied.code, applied.stderr]).toEqual([0, '']);
});

afterAll(async () => {
  await sandbox?.close();
});

/** A manifest that plans against the sandbox, on no Connection of its own. */
function manifest(): string {
  const dir = tempDir('converge-allow-secret-');
  writeFileSync(
    path.join(dir, 'role.yaml'),
    'apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: allow-secret }\nspec: { Description: web }\n',
  );
  return dir;
}

/** No form of the secret (raw, URL-, JSON-escaped, hex, base64, base32…) in `text`: the scrubber finds none. */
function expectNoSecret(text: string): void {
  expect(text).not.toContain(SECRET);
  expect(scrubSecrets(text, [SECRET])).toBe(text);
}

/** Hostile allowed addresses: each hides the secret where an address may carry one. */
const HOSTILE: [string, string, RegExp][] = [
  ['credentials', `https://user:${SECRET}@vault.example.com:8200`, /carries credentials/],
  ['a password alone', `https://:${SECRET}@vault.example.com`, /carries credentials/],
  ['credentials past extra slashes', `https:///user:${SECRET}@vault.example.com`, /carries credentials/],
  ['credentials with backslashes', `https:\\\\user:${SECRET}@vault.example.com`, /carries credentials/],
  ['credentials in a glob', `https://user:${SECRET}@*.corp.example`, /carries credentials/],
  ['credentials without a scheme', `user:${SECRET}@vault.example.com:8200`, /carries credentials/],
  [
    'credentials after an address in the same value',
    `https://ok.example,https://user:${SECRET}@vault.example.com`,
    /carries credentials/,
  ],
  ['a token in the query', `https://vault.example.com:8200/v1?token=${SECRET}`, /carries a query string/],
  ['a token in a second parameter', `https://vault.example.com?a=1&key=${SECRET}`, /carries a query string/],
  ['a token in the fragment', `https://vault.example.com#access_token=${SECRET}`, /carries a query string/],
];

describe('an allowed address that carries a secret', () => {
  it.each(HOSTILE)(
    'plan -out refuses --allow-address with %s, and neither prints it nor saves the plan',
    async (_what, value, reason) => {
      const saved = path.join(tempDir('converge-allow-secret-plan-'), 'p.plan');
      const r = await runCli(['plan', '-f', manifest(), '--allow-address', value, '-out', saved], env);
      // The old leak first: the apply line repeated the value.
      expectNoSecret(r.stdout + r.stderr);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/^Error: --allow-address: an address \(not shown\) /);
      expect(r.stderr).toMatch(reason);
      expect(r.stdout).toBe('');
      expect(existsSync(saved)).toBe(false);
    },
  );

  it('is refused as --allow-address=VALUE too, before export prints its next commands', async () => {
    const out = path.join(tempDir('converge-allow-secret-export-'), 'exp');
    const r = await runCli(
      [
        'export',
        '-o',
        out,
        '--kind',
        'AclRole',
        `--allow-address=https://user:${SECRET}@vault.example.com:8200`,
      ],
      env,
    );
    expectNoSecret(r.stdout + r.stderr);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('--allow-address: an address (not shown) carries credentials');
    expect(existsSync(out)).toBe(false);
  });

  it('is refused before a usage hint repeats the command line (`plan DIR` for `plan -f DIR`)', async () => {
    const dir = manifest();
    const r = await runCli(
      ['plan', dir, '--allow-address', `https://user:${SECRET}@vault.example.com:8200`],
      env,
    );
    expectNoSecret(r.stdout + r.stderr);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('--allow-address: an address (not shown) carries credentials');
  });

  it('is refused in CONVERGE_ALLOW_ADDRESSES, while globs with ? and a path with @ still load', async () => {
    const dir = manifest();
    // A `?` is a glob's one character, and an `@` after the host is part of a path: both allowed.
    const fine = await runCli(
      ['validate', '-f', dir, '--allow-address', 'https://node?.corp.example,https://registry.example/@team'],
      { ...env, CONVERGE_ALLOW_ADDRESSES: 'https://*.corp.example' },
    );
    expect([fine.code, fine.stderr]).toEqual([0, '']);
    for (const [, value, reason] of HOSTILE) {
      const r = await runCli(['validate', '-f', dir], {
        ...env,
        CONVERGE_ALLOW_ADDRESSES: `https://ok.example, ${value}`,
      });
      expect(r.code, value).toBe(1);
      expect(r.stderr).toMatch(/^Error: CONVERGE_ALLOW_ADDRESSES: an address \(not shown\) /);
      expect(r.stderr).toMatch(reason);
      expectNoSecret(r.stdout + r.stderr);
    }
  });

  it("is refused by the library's loadManifest (allowAddresses), naming the option and not the address", async () => {
    const load = loadManifest([manifest()], {
      env: { CONVERGE_STATE_DIR: env.CONVERGE_STATE_DIR },
      allowAddresses: [`https://user:${SECRET}@vault.example.com`],
    });
    const error = await load.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(EngineError);
    expect((error as Error).message).toMatch(/^allowAddresses: an address \(not shown\) carries credentials/);
    expectNoSecret((error as Error).message);
  });

  it('is refused by reconcile before its first cycle, not in every cycle after', async () => {
    const lines: string[] = [];
    const stop = new AbortController();
    const started = runReconcile(
      {
        paths: [manifest()],
        intervalMs: 60_000,
        env: { ...env, CONVERGE_ALLOW_ADDRESSES: `https://user:${SECRET}@vault.example.com` },
        signal: stop.signal,
        sleep: async () => stop.abort('SIGTERM'),
      },
      { stdout: { write: (t: string) => lines.push(t) } },
    );
    const error = await started.then(
      async (loop) => {
        await loop.done;
        return undefined;
      },
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(EngineError);
    expect((error as Error).message).toMatch(/^CONVERGE_ALLOW_ADDRESSES: an address \(not shown\)/);
    expectNoSecret((error as Error).message + lines.join(''));
    expect(lines.join('')).not.toContain('"type":"cycle"');
  });
});
