/**
 * The key holder's side of the rekey ceremony, in process against the sandbox, with only
 * CONVERGE_SECRETS_ADDR set: no CONVERGE_SECRETS_TOKEN. Spec, Authentication 3: "Rekey submissions
 * are authorized by recovery key shares plus the operation nonce." Holders often have no token;
 * `converge rekey status`, `submit` and `verify` must work for them, while `start` and `cancel` (an
 * administrator's steps) still need a token and say which variable to set (issue 16).
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretsClient } from '../../src/clients/secrets/client.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

const ROOT = 'holder-test-root-token-51c2';
let sandbox: RunningSandbox;
let initial: string[];
const outputs: string[] = [];

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, token: ROOT });
  initial = sandbox.recoveryKeys!.keys;
});
afterAll(async () => sandbox?.close());

function stateDir(): string {
  return tempDir('converge-rekey-holder-');
}

/** An administrator: the sandbox's address and its root token. */
async function admin(args: string[]) {
  const r = await runCli(args, { ...sandbox.env(), CONVERGE_STATE_DIR: stateDir(), NO_COLOR: '1' });
  outputs.push(r.stdout, r.stderr);
  return r;
}

/** A key holder: the address only, no token anywhere in the environment. */
async function holder(args: string[], share?: string) {
  const env = {
    CONVERGE_SECRETS_ADDR: sandbox.env().CONVERGE_SECRETS_ADDR,
    CONVERGE_STATE_DIR: stateDir(),
    NO_COLOR: '1',
  };
  const r = await runCli(args, env, share === undefined ? {} : { stdin: `${share}\n` });
  outputs.push(r.stdout, r.stderr);
  return r;
}

function expectOk(r: { code: number; stdout: string; stderr: string }, what: string) {
  expect(r.code, `${what}\n${r.stdout}\n${r.stderr}`).toBe(0);
}

describe('Authentication 3: "Rekey submissions are authorized by recovery key shares plus the operation nonce."', () => {
  let newShares: string[] = [];

  it('a holder with CONVERGE_SECRETS_ADDR and no token runs `rekey status` and `rekey submit` to the threshold', async () => {
    expectOk(await admin(['rekey', 'start', '--shares', '3', '--threshold', '2', '--verify']), 'start');

    const status = await holder(['rekey', 'status']);
    expectOk(status, 'status');
    expect(status.stdout).toContain('Progress: 0 of 3 shares of the current recovery key.');

    const first = await holder(['rekey', 'submit'], initial[0]);
    expectOk(first, 'submit 1');
    expect(first.stdout).toContain('Share accepted: 1 of 3.');
    expectOk(await holder(['rekey', 'submit'], initial[1]), 'submit 2');
    const done = await holder(['rekey', 'submit', '--json'], initial[2]);
    expectOk(done, 'submit 3');
    const completion = JSON.parse(done.stdout) as { complete: boolean; keys: string[] };
    expect(completion.complete).toBe(true);
    newShares = completion.keys;
    expect(newShares).toHaveLength(3);
  });

  it('a holder with no token runs `rekey status` and `rekey verify` with the new shares, and the key rotates', async () => {
    const status = await holder(['rekey', 'status']);
    expectOk(status, 'status');
    expect(status.stdout).toContain('Verification: 0 of 2 new shares presented');

    const one = await holder(['rekey', 'verify'], newShares[0]);
    expectOk(one, 'verify 1');
    expect(one.stdout).toContain('New share accepted: 1 of 2.');
    const two = await holder(['rekey', 'verify'], newShares[2]);
    expectOk(two, 'verify 2');
    expect(two.stdout).toContain('Verification complete: the recovery key has been rotated');
    expect((await holder(['rekey', 'status'])).stdout).toContain('No rekey in progress');
  });

  it('start and cancel still need a token: refused 403, naming CONVERGE_SECRETS_TOKEN', async () => {
    const start = await holder(['rekey', 'start', '--shares', '1', '--threshold', '1']);
    expect(start.code).not.toBe(0);
    expect(start.stderr).toContain('403');
    expect(start.stderr).toContain('set CONVERGE_SECRETS_TOKEN');
    expect((await holder(['rekey', 'status'])).stdout).toContain('No rekey in progress');

    expectOk(await admin(['rekey', 'start', '--shares', '1', '--threshold', '1']), 'admin start');
    const cancel = await holder(['rekey', 'cancel']);
    expect(cancel.code).not.toBe(0);
    expect(cancel.stderr).toContain('set CONVERGE_SECRETS_TOKEN');
    expect(JSON.parse((await holder(['rekey', 'status', '--json'])).stdout).started).toBe(true);
    expectOk(await admin(['rekey', 'cancel']), 'admin cancel');
  });

  it('never printed a share of the current key it was given', () => {
    // (The new shares are printed once, by the submit that completes the rekey: that is their delivery.)
    for (const share of initial)
      for (const output of outputs) expect(output.includes(share), output.slice(0, 300)).toBe(false);
  });
});

describe('the client sends a token on the rekey steps when it has one, and none when it has none', () => {
  it('status and submit carry X-Secrets-Token exactly when a token is configured', async () => {
    const seen: IncomingHttpHeaders[] = [];
    const server = createServer((req, res) => {
      seen.push(req.headers);
      req.resume();
      req.on('end', () => {
        res.setHeader('Content-Type', 'application/json');
        res.end(
          JSON.stringify({
            nonce: 'n',
            started: true,
            t: 2,
            n: 3,
            progress: 1,
            required: 3,
            pgp_fingerprints: null,
            backup: false,
            verification_required: false,
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      for (const token of ['holder-token', undefined]) {
        const client = SecretsClient.fromConnection({ address, ...(token ? { token } : {}) });
        seen.length = 0;
        await client.rekeyStatus();
        await client.rekeySubmit('00'.repeat(17), 'n');
        await client.close();
        expect(seen).toHaveLength(2);
        for (const headers of seen) expect(headers['x-secrets-token']).toBe(token);
      }
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
