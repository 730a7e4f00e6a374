/**
 * The recovery-key rekey ceremony over real HTTP on loopback: one `it` per row of the spec's
 * transition table and per rejection rule, with real Shamir shares (those the sandbox hands out at
 * start), real PGP (keys generated here) and persistence across restarts.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import * as openpgp from 'openpgp';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type RunningSandbox,
  SandboxConfigError,
  type SecretsConfig,
  startSandbox,
} from '../../src/sandbox/index.js';
import { type Api, apiFor, tempDir, UUID_RE } from './helpers.js';

const INIT = '/v1/sys/rekey-recovery-key/init';
const UPDATE = '/v1/sys/rekey-recovery-key/update';
const VERIFY = '/v1/sys/rekey-recovery-key/verify';
const BACKUP_PATHS = ['/v1/sys/rekey/recovery-key-backup', '/v1/sys/rekey-recovery-key/backup'];

interface Status {
  nonce: string;
  started: boolean;
  t: number;
  n: number;
  progress: number;
  required: number;
  pgp_fingerprints: string[] | null;
  backup: boolean;
  verification_required: boolean;
  verification_nonce?: string;
}

interface Completion {
  nonce: string;
  complete: boolean;
  keys: string[];
  keys_base64: string[];
  pgp_fingerprints: string[] | null;
  backup: boolean;
  verification_required: boolean;
  verification_nonce?: string;
}

interface VerificationStatus {
  nonce: string;
  started: boolean;
  t: number;
  n: number;
  progress: number;
}

const running: RunningSandbox[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});

interface Fresh {
  sandbox: RunningSandbox;
  api: Api;
  /** The shares the sandbox made at start (hex). */
  keys: string[];
}

async function fresh(secrets?: SecretsConfig, dataDir?: string): Promise<Fresh> {
  const sandbox = await startSandbox({
    token: 'root',
    config: {
      tokens: [{ name: 'ldap-writer', secret: 'writer-token', secrets: { ldap: 'write' } }],
      ...(secrets ? { secrets } : {}),
    },
    ...(dataDir !== undefined ? { dataDir } : {}),
  });
  running.push(sandbox);
  return { sandbox, api: apiFor(sandbox), keys: sandbox.recoveryKeys?.keys ?? [] };
}

async function start(api: Api, body: Record<string, unknown>): Promise<Status> {
  const res = await api('PUT', INIT, { body });
  expect(res.status, res.text).toBe(200);
  return res.json<Status>();
}

/** Submits `keys` in order; returns the last answer. */
async function submitAll(api: Api, nonce: string, keys: string[], path = UPDATE) {
  let last;
  for (const key of keys) {
    last = await api('PUT', path, { body: { key, nonce } });
    expect(last.status, last.text).toBe(200);
  }
  return last!;
}

/** A whole rekey without verification; returns the completion. */
async function rekey(api: Api, keys: string[], shares: number, threshold: number): Promise<Completion> {
  const status = await start(api, { secret_shares: shares, secret_threshold: threshold });
  const done = await submitAll(api, status.nonce, keys);
  const completion = done.json<Completion>();
  expect(completion.complete).toBe(true);
  return completion;
}

async function status(api: Api): Promise<Status> {
  const res = await api('GET', INIT);
  expect(res.status).toBe(200);
  return res.json<Status>();
}

function expectError(res: { status: number; json<T>(): T }, code: number, message: string) {
  expect(res.status).toBe(code);
  expect(res.json()).toEqual({ errors: [message] });
}

describe('the seal and its shares at start', () => {
  it('makes 5 shares with a threshold of 3 by default, any 3 of which are the key', async () => {
    const { sandbox, api, keys } = await fresh();
    expect(sandbox.recoveryKeys?.threshold).toBe(3);
    expect(keys).toHaveLength(5);
    for (const key of keys) expect(key).toMatch(/^[0-9a-f]{66}$/); // 32 bytes and the x coordinate
    expect(sandbox.recoveryKeys?.keysBase64).toEqual(
      keys.map((k) => Buffer.from(k, 'hex').toString('base64')),
    );
    // Any three (here the last three) rebuild the key: the rekey completes.
    await rekey(api, keys.slice(2), 5, 3);
  });

  it('takes shares and threshold from the config, and a single share is the key itself', async () => {
    const three = await fresh({ recovery: { shares: 3, threshold: 2 } });
    expect(three.keys).toHaveLength(3);
    expect((await status(three.api)).required).toBe(2);

    const one = await fresh({ recovery: { shares: 1, threshold: 1 } });
    expect(one.keys).toHaveLength(1);
    expect(one.keys[0]).toMatch(/^[0-9a-f]{64}$/);
    await rekey(one.api, one.keys, 1, 1);
  });

  it('refuses a config the real seal rules refuse, at the field', async () => {
    await expect(
      startSandbox({ config: { secrets: { recovery: { shares: 3, threshold: 1 } } } }),
    ).rejects.toThrow(SandboxConfigError);
    await expect(
      startSandbox({ config: { secrets: { recovery: { shares: 3, threshold: 1 } } } }),
    ).rejects.toThrow(/secrets\.recovery\.threshold: threshold must be greater than one for multiple shares/);
    await expect(startSandbox({ config: { secrets: { recovery: { shares: 2 } } } })).rejects.toThrow(
      /secrets\.recovery\.shares: threshold cannot be larger than shares/,
    );
    await expect(
      startSandbox({ config: { secrets: { recovery: { shares: 256, threshold: 3 } } } }),
    ).rejects.toThrow(/secrets\.recovery\.shares: shares must be less than 256/);
  });
});

describe('transitions (spec table)', () => {
  it('not started → PUT init → in progress with a new nonce; the answer is the status (200)', async () => {
    const { api } = await fresh();
    expect(await status(api)).toEqual({
      nonce: '',
      started: false,
      t: 0,
      n: 0,
      progress: 0,
      required: 3,
      pgp_fingerprints: null,
      backup: false,
      verification_required: false,
    });
    const started = await start(api, { secret_shares: 4, secret_threshold: 2 });
    expect(started.nonce).toMatch(UUID_RE);
    expect(started).toEqual({
      nonce: started.nonce,
      started: true,
      t: 2,
      n: 4,
      progress: 0,
      required: 3, // the current threshold, not the new one
      pgp_fingerprints: null,
      backup: false,
      verification_required: false,
    });
  });

  it('in progress → GET init → in progress, the status', async () => {
    const { api } = await fresh();
    const started = await start(api, { secret_shares: 3, secret_threshold: 2, require_verification: true });
    expect(await status(api)).toEqual({ ...started, verification_required: true });
    expect((await status(api)).nonce).toBe(started.nonce);
  });

  it('in progress → PUT update below the threshold → in progress, the body of GET init', async () => {
    const { api, keys } = await fresh();
    const started = await start(api, { secret_shares: 3, secret_threshold: 2 });
    const res = await api('PUT', UPDATE, { body: { key: keys[0], nonce: started.nonce } });
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ ...started, progress: 1 });
    expect(await status(api)).toEqual({ ...started, progress: 1 });
  });

  it('in progress → PUT update at the threshold → complete: new shares, the key rotated', async () => {
    const { api, keys } = await fresh();
    const started = await start(api, { secret_shares: 4, secret_threshold: 2 });
    const res = await submitAll(api, started.nonce, keys.slice(0, 3));
    const done = res.json<Completion>();
    expect(done).toEqual({
      nonce: started.nonce,
      complete: true,
      keys: expect.any(Array),
      keys_base64: expect.any(Array),
      pgp_fingerprints: null,
      backup: false,
      verification_required: false,
    });
    expect(done.keys).toHaveLength(4);
    expect(done.keys_base64).toEqual(done.keys.map((k) => Buffer.from(k, 'hex').toString('base64')));
    // Not started again; the new threshold is the one required now.
    expect(await status(api)).toMatchObject({ started: false, nonce: '', required: 2 });

    // Rotation: the old shares no longer rebuild the key, any 2 new ones do.
    const second = await start(api, { secret_shares: 3, secret_threshold: 2 });
    await submitAll(api, second.nonce, keys.slice(0, 1));
    expectError(
      await api('PUT', UPDATE, { body: { key: keys[1], nonce: second.nonce } }),
      400,
      'recovery key verification failed: recovery key does not match submitted values',
    );
    const again = await submitAll(api, second.nonce, done.keys.slice(2, 4));
    expect(again.json<Completion>().complete).toBe(true);
  });

  it('in progress → PUT update at the threshold with require_verification → awaiting verification, not rotated', async () => {
    const { api, keys } = await fresh();
    const started = await start(api, { secret_shares: 3, secret_threshold: 2, require_verification: true });
    const done = (await submitAll(api, started.nonce, keys.slice(0, 3))).json<Completion>();
    expect(done).toMatchObject({ nonce: started.nonce, complete: true, verification_required: true });
    expect(done.verification_nonce).toMatch(UUID_RE);
    expect(done.keys).toHaveLength(3);
    expect(await status(api)).toMatchObject({
      started: true,
      nonce: started.nonce,
      progress: 0,
      required: 3,
      verification_required: true,
      verification_nonce: done.verification_nonce,
    });
    // Not rotated: cancel, and the old shares still rekey.
    expect((await api('DELETE', INIT)).status).toBe(204);
    await rekey(api, keys.slice(0, 3), 3, 2);
  });

  it('in progress → DELETE init → not started: settings and progress cleared, a new start has a new nonce', async () => {
    const { api, keys } = await fresh();
    const first = await start(api, { secret_shares: 3, secret_threshold: 2 });
    await submitAll(api, first.nonce, keys.slice(0, 2));
    const res = await api('DELETE', INIT);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(await status(api)).toMatchObject({ started: false, nonce: '', t: 0, n: 0, progress: 0 });
    const second = await start(api, { secret_shares: 5, secret_threshold: 4 });
    expect(second.nonce).not.toBe(first.nonce);
    expect(second).toMatchObject({ t: 4, n: 5, progress: 0 });
    // The first nonce is dead.
    expectError(
      await api('PUT', UPDATE, { body: { key: keys[0], nonce: first.nonce } }),
      400,
      `incorrect nonce supplied; nonce for this rekey operation is "${second.nonce}"`,
    );
  });

  /** A rekey awaiting verification of 3 new shares, threshold 2. */
  async function awaitingVerification() {
    const f = await fresh();
    const started = await start(f.api, { secret_shares: 3, secret_threshold: 2, require_verification: true });
    const done = (await submitAll(f.api, started.nonce, f.keys.slice(0, 3))).json<Completion>();
    return { ...f, started, done, verificationNonce: done.verification_nonce! };
  }

  it('awaiting verification → PUT verify below the threshold → awaiting, the verification status', async () => {
    const { api, done, verificationNonce } = await awaitingVerification();
    const before = await api('GET', VERIFY);
    expect(before.json()).toEqual({ nonce: verificationNonce, started: true, t: 2, n: 3, progress: 0 });
    const res = await api('PUT', VERIFY, { body: { key: done.keys[1], nonce: verificationNonce } });
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ nonce: verificationNonce, started: true, t: 2, n: 3, progress: 1 });
  });

  it('awaiting verification → PUT verify at the threshold → complete: {nonce, complete}, the key rotated', async () => {
    const { api, keys, done, verificationNonce } = await awaitingVerification();
    const res = await submitAll(api, verificationNonce, [done.keys[0]!, done.keys[2]!], VERIFY);
    expect(res.json()).toEqual({ nonce: verificationNonce, complete: true });
    expect(await status(api)).toMatchObject({ started: false, required: 2 });
    // The old shares fail, the new ones rekey.
    const next = await start(api, { secret_shares: 2, secret_threshold: 2 });
    await submitAll(api, next.nonce, keys.slice(0, 1));
    expect((await api('PUT', UPDATE, { body: { key: keys[1], nonce: next.nonce } })).status).toBe(400);
    await submitAll(api, next.nonce, done.keys.slice(0, 2));
  });

  it('awaiting verification → DELETE verify → awaiting: progress 0 and a new nonce, the rekey stays', async () => {
    const { api, done, started, verificationNonce } = await awaitingVerification();
    await submitAll(api, verificationNonce, done.keys.slice(0, 1), VERIFY);
    const res = await api('DELETE', VERIFY);
    expect(res.status).toBe(200);
    const restarted = res.json<VerificationStatus>();
    expect(restarted).toEqual({
      nonce: expect.stringMatching(UUID_RE),
      started: true,
      t: 2,
      n: 3,
      progress: 0,
    });
    expect(restarted.nonce).not.toBe(verificationNonce);
    expect(await status(api)).toMatchObject({
      started: true,
      nonce: started.nonce,
      verification_nonce: restarted.nonce,
    });
    // The same new shares verify under the new nonce.
    const ok = await submitAll(api, restarted.nonce, done.keys.slice(0, 2), VERIFY);
    expect(ok.json()).toEqual({ nonce: restarted.nonce, complete: true });
  });

  it('awaiting verification → DELETE init → not started; the current keys remain valid', async () => {
    const { api, keys, done } = await awaitingVerification();
    expect((await api('DELETE', INIT)).status).toBe(204);
    expect(await status(api)).toMatchObject({ started: false, required: 3 });
    expectError(await api('GET', VERIFY), 400, 'no rekey configuration found');
    // The unverified shares were never installed; the current ones still work.
    const next = await start(api, { secret_shares: 3, secret_threshold: 2 });
    await submitAll(api, next.nonce, done.keys.slice(0, 2));
    expect((await api('PUT', UPDATE, { body: { key: done.keys[2], nonce: next.nonce } })).status).toBe(400);
    expect(await status(api)).toMatchObject({ started: true, progress: 0 });
    await submitAll(api, next.nonce, keys.slice(1, 4));
  });
});

describe('Authentication 3: "Rekey submissions are authorized by recovery key shares plus the operation nonce."', () => {
  it('a holder with no token reads the status, submits shares with the nonce and completes the rekey', async () => {
    const { api, keys } = await fresh();
    const started = await start(api, { secret_shares: 3, secret_threshold: 2 });
    const holder = (method: string, path: string, body?: unknown) =>
      api(method, path, { token: null, ...(body !== undefined ? { body } : {}) });

    const read = await holder('GET', INIT);
    expect(read.status, read.text).toBe(200);
    expect(read.json<Status>()).toEqual(started);
    const first = await holder('PUT', UPDATE, { key: keys[0], nonce: started.nonce });
    expect(first.status, first.text).toBe(200);
    expect(first.json<Status>().progress).toBe(1);
    await holder('PUT', UPDATE, { key: keys[1], nonce: started.nonce });
    const done = await holder('PUT', UPDATE, { key: keys[2], nonce: started.nonce });
    expect(done.status, done.text).toBe(200);
    expect(done.json<Completion>()).toMatchObject({ complete: true, nonce: started.nonce });
    expect(done.json<Completion>().keys).toHaveLength(3);
  });

  it('a holder with no token reads the verification status and verifies with the new shares and the verification nonce', async () => {
    const { api, keys } = await fresh();
    const started = await start(api, { secret_shares: 3, secret_threshold: 2, require_verification: true });
    const done = (await submitAll(api, started.nonce, keys.slice(0, 3))).json<Completion>();
    const nonce = done.verification_nonce!;

    const read = await api('GET', VERIFY, { token: null });
    expect(read.status, read.text).toBe(200);
    expect(read.json<VerificationStatus>()).toMatchObject({ nonce, progress: 0, t: 2, n: 3 });
    const one = await api('PUT', VERIFY, { token: null, body: { key: done.keys[0], nonce } });
    expect(one.status, one.text).toBe(200);
    expect(one.json<VerificationStatus>().progress).toBe(1);
    const two = await api('PUT', VERIFY, { token: null, body: { key: done.keys[1], nonce } });
    expect(two.status, two.text).toBe(200);
    expect(two.json()).toEqual({ nonce, complete: true });
    expect(await status(api)).toMatchObject({ started: false, required: 2 });
  });

  it('the nonce still authorizes: a token-free submission with a wrong or missing nonce is 400', async () => {
    const { api, keys } = await fresh();
    const started = await start(api, { secret_shares: 3, secret_threshold: 2 });
    for (const nonce of ['not-the-nonce', undefined]) {
      expectError(
        await api('PUT', UPDATE, { token: null, body: { key: keys[0], ...(nonce ? { nonce } : {}) } }),
        400,
        `incorrect nonce supplied; nonce for this rekey operation is "${started.nonce}"`,
      );
    }
    expect((await status(api)).progress).toBe(0);
  });

  it('a token sent with a submission is neither required nor checked, as the real handlers ignore it', async () => {
    const { api, keys } = await fresh();
    const started = await start(api, { secret_shares: 3, secret_threshold: 2 });
    for (const [token, key] of [
      ['writer-token', keys[0]],
      ['no-such-token', keys[1]],
    ] as const) {
      const res = await api('PUT', UPDATE, { token, body: { key, nonce: started.nonce } });
      expect(res.status, `${token}: ${res.text}`).toBe(200);
      expect((await api('GET', INIT, { token })).status).toBe(200);
    }
    expect((await status(api)).progress).toBe(2);
  });
});

describe('rejections', () => {
  it('secret_threshold greater than secret_shares: 400', async () => {
    const { api } = await fresh();
    expectError(
      await api('PUT', INIT, { body: { secret_shares: 2, secret_threshold: 3 } }),
      400,
      'provided threshold greater than the total shares',
    );
    expect((await status(api)).started).toBe(false);
  });

  it('pgp_keys of another length than secret_shares: 400', async () => {
    const { api } = await fresh();
    const [key] = await pgpKeys(1);
    expectError(
      await api('PUT', INIT, { body: { secret_shares: 2, secret_threshold: 2, pgp_keys: [key!.publicB64] } }),
      400,
      'incorrect number of PGP keys for rekey',
    );
  });

  it('backup without PGP keys: 400', async () => {
    const { api } = await fresh();
    expectError(
      await api('PUT', INIT, { body: { secret_shares: 3, secret_threshold: 2, backup: true } }),
      400,
      'cannot request a backup of the new keys without providing PGP keys for encryption',
    );
  });

  it("the real seal's Validate() rules: 500 invalid recovery configuration", async () => {
    const { api } = await fresh();
    const cases: [Record<string, unknown>, string][] = [
      [{ secret_shares: 3, secret_threshold: 1 }, 'threshold must be greater than one for multiple shares'],
      [{ secret_shares: 256, secret_threshold: 3 }, 'shares must be less than 256'],
      [{ secret_shares: 0, secret_threshold: 0 }, 'shares must be at least one'],
      [{ secret_shares: 3, secret_threshold: 0 }, 'threshold must be at least one'],
      [{}, 'shares must be at least one'],
      [
        { secret_shares: 1, secret_threshold: 1, pgp_keys: ['not base64!'] },
        'error decoding given PGP key: illegal base64 data',
      ],
    ];
    for (const [body, message] of cases) {
      expectError(await api('PUT', INIT, { body }), 500, `invalid recovery configuration: ${message}`);
    }
    const garbage = await api('PUT', INIT, {
      body: { secret_shares: 1, secret_threshold: 1, pgp_keys: [Buffer.from('no key').toString('base64')] },
    });
    expect(garbage.status).toBe(500);
    expect(garbage.json<{ errors: string[] }>().errors[0]).toMatch(
      /^invalid recovery configuration: error parsing given PGP key: /,
    );
    expect((await status(api)).started).toBe(false);
  });

  it('a start while a rekey is in progress: 400 rekey already in progress', async () => {
    const { api } = await fresh();
    const first = await start(api, { secret_shares: 3, secret_threshold: 2 });
    expectError(
      await api('PUT', INIT, { body: { secret_shares: 5, secret_threshold: 3 } }),
      400,
      'rekey already in progress',
    );
    expect(await status(api)).toEqual(first);
  });

  it('a wrong or missing nonce on an update: 400 naming the right one', async () => {
    const { api, keys } = await fresh();
    const started = await start(api, { secret_shares: 3, secret_threshold: 2 });
    const message = `incorrect nonce supplied; nonce for this rekey operation is "${started.nonce}"`;
    expectError(await api('PUT', UPDATE, { body: { key: keys[0], nonce: 'nope' } }), 400, message);
    expectError(await api('PUT', UPDATE, { body: { key: keys[0] } }), 400, message);
    expect((await status(api)).progress).toBe(0);
  });

  it('the same share twice: 400', async () => {
    const { api, keys } = await fresh();
    const started = await start(api, { secret_shares: 3, secret_threshold: 2 });
    await submitAll(api, started.nonce, keys.slice(0, 1));
    expectError(
      await api('PUT', UPDATE, { body: { key: keys[0], nonce: started.nonce } }),
      400,
      'given key has already been provided during this rekey operation',
    );
    // The same share in base64 is the same share.
    expect(
      (
        await api('PUT', UPDATE, {
          body: { key: Buffer.from(keys[0]!, 'hex').toString('base64'), nonce: started.nonce },
        })
      ).status,
    ).toBe(400);
    expect((await status(api)).progress).toBe(1);
  });

  it('keys in hex or base64; anything else, none, or a wrong length: 400', async () => {
    const { api, sandbox, keys } = await fresh();
    const started = await start(api, { secret_shares: 3, secret_threshold: 2 });
    const nonce = started.nonce;
    expectError(
      await api('PUT', UPDATE, { body: { nonce } }),
      400,
      "'key' must be specified in request body as JSON",
    );
    expectError(
      await api('PUT', UPDATE, { body: { key: 'zz!', nonce } }),
      400,
      "'key' must be a valid hex or base64 string",
    );
    expectError(
      await api('PUT', UPDATE, { body: { key: Buffer.alloc(8).toString('base64'), nonce } }),
      400,
      'key is shorter than minimum 16 bytes',
    );
    expectError(
      await api('PUT', UPDATE, { body: { key: Buffer.alloc(40).toString('base64'), nonce } }),
      400,
      'key is longer than maximum 33 bytes',
    );
    expect((await status(api)).progress).toBe(0);
    // Base64 and upper-case hex shares both count.
    const b64 = sandbox.recoveryKeys!.keysBase64;
    await submitAll(api, nonce, [b64[0]!, keys[1]!.toUpperCase()]);
    const done = await api('PUT', UPDATE, { body: { key: b64[2], nonce } });
    expect(done.json<Completion>().complete).toBe(true);
  });

  it('an update without a rekey: 400', async () => {
    const { api, keys } = await fresh();
    expectError(
      await api('PUT', UPDATE, { body: { key: keys[0], nonce: 'x' } }),
      400,
      'no recovery rekey in progress',
    );
  });

  it('shares of another key at the threshold: 400, and the attempt is reset (progress 0, same nonce)', async () => {
    // Shares of another sandbox's key combine to a wrong key without an error; the check value
    // catches it.
    const { api, keys } = await fresh({ recovery: { shares: 3, threshold: 2 } });
    const other = await fresh({ recovery: { shares: 3, threshold: 2 } });
    const started = await start(api, { secret_shares: 3, secret_threshold: 2 });
    await submitAll(api, started.nonce, other.keys.slice(0, 1));
    expectError(
      await api('PUT', UPDATE, { body: { key: other.keys[1], nonce: started.nonce } }),
      400,
      'recovery key verification failed: recovery key does not match submitted values',
    );
    expect(await status(api)).toEqual(started);
    // One share of each key (the x coordinates may collide, then the combination fails outright).
    await submitAll(api, started.nonce, keys.slice(0, 1));
    const mixed = await api('PUT', UPDATE, { body: { key: other.keys[2], nonce: started.nonce } });
    expect([400, 500]).toContain(mixed.status);
    expect(await status(api)).toEqual(started);
    // The right shares still complete the same attempt.
    const done = await submitAll(api, started.nonce, keys.slice(1, 3));
    expect(done.json<Completion>()).toMatchObject({ complete: true, nonce: started.nonce });
  });

  it('an update while verification is pending: 400 naming the verification nonce', async () => {
    const { api, keys } = await fresh();
    const started = await start(api, { secret_shares: 3, secret_threshold: 2, require_verification: true });
    const done = (await submitAll(api, started.nonce, keys.slice(0, 3))).json<Completion>();
    expectError(
      await api('PUT', UPDATE, { body: { key: keys[3], nonce: started.nonce } }),
      400,
      `rekey operation already finished; verification must be performed; nonce for the verification operation is "${done.verification_nonce}"`,
    );
  });

  it('wrong shares at the verification threshold: 400 and the verification nonce rotates', async () => {
    const { api, keys } = await fresh();
    const started = await start(api, { secret_shares: 3, secret_threshold: 2, require_verification: true });
    const done = (await submitAll(api, started.nonce, keys.slice(0, 3))).json<Completion>();
    const nonce = done.verification_nonce!;
    expectError(
      await api('PUT', VERIFY, { body: { key: done.keys[0], nonce: 'wrong' } }),
      400,
      `incorrect nonce supplied; nonce for this verify operation is "${nonce}"`,
    );
    await submitAll(api, nonce, done.keys.slice(0, 1), VERIFY);
    expectError(
      await api('PUT', VERIFY, { body: { key: done.keys[0], nonce } }),
      400,
      'given key has already been provided during this verify operation',
    );
    // A share of no set (its x coordinate differs from the first's): the combination is not the new key.
    const x = Buffer.from(done.keys[0]!, 'hex')[32]!;
    const stranger = Buffer.concat([Buffer.alloc(32, 7), Buffer.from([(x % 255) + 1])]).toString('hex');
    expectError(
      await api('PUT', VERIFY, { body: { key: stranger, nonce } }),
      400,
      'rekey verification failed; incorrect key shares supplied',
    );
    const after = (await api('GET', VERIFY)).json<VerificationStatus>();
    expect(after).toMatchObject({ started: true, progress: 0 });
    expect(after.nonce).not.toBe(nonce);
    expect((await status(api)).verification_nonce).toBe(after.nonce);
    // Not rotated: the rekey is still pending, and verifies with the right shares.
    const ok = await submitAll(api, after.nonce, done.keys.slice(1, 3), VERIFY);
    expect(ok.json()).toEqual({ nonce: after.nonce, complete: true });
  });

  it('verification without a verification pending: 400', async () => {
    const { api, keys } = await fresh();
    expectError(await api('GET', VERIFY), 400, 'no rekey configuration found');
    expectError(await api('DELETE', VERIFY), 400, 'no rekey configuration found');
    expectError(
      await api('PUT', VERIFY, { body: { key: keys[0], nonce: 'x' } }),
      400,
      'no rekey in progress',
    );
    const started = await start(api, { secret_shares: 3, secret_threshold: 2 });
    expect((await api('GET', VERIFY)).json()).toEqual({ nonce: '', started: false, t: 2, n: 3, progress: 0 });
    expectError(
      await api('PUT', VERIFY, { body: { key: keys[0], nonce: started.nonce } }),
      400,
      'no rekey verification in progress',
    );
  });

  it('a cancel with a nonce that is not the rekey nonce: 400 invalid request; with the right one it cancels', async () => {
    const { api } = await fresh();
    const started = await start(api, { secret_shares: 3, secret_threshold: 2 });
    expectError(await api('DELETE', `${INIT}?nonce=other`), 400, 'invalid request');
    expect((await status(api)).started).toBe(true);
    expect((await api('DELETE', INIT, { body: { nonce: started.nonce } })).status).toBe(204);
    expect((await status(api)).started).toBe(false);
    // Nothing to cancel is fine.
    expect((await api('DELETE', INIT)).status).toBe(204);
  });

  it('start, cancel, cancel verification and the backup need the root token (403 permission denied); other methods are 405', async () => {
    const { api } = await fresh();
    // Status reads and submissions need none: 'Authentication 3' below.
    for (const [method, path] of [
      ['PUT', INIT],
      ['DELETE', INIT],
      ['DELETE', VERIFY],
      ...BACKUP_PATHS.flatMap((p) => [
        ['GET', p],
        ['DELETE', p],
      ]),
    ] as [string, string][]) {
      expectError(await api(method, path, { token: null }), 403, 'permission denied');
      expectError(await api(method, path, { token: 'writer-token' }), 403, 'permission denied');
    }
    expect((await status(api)).started).toBe(false);
    const patch = await api('PATCH', INIT);
    expect(patch.status).toBe(405);
    expect(patch.json()).toEqual({ errors: [] });
  });

  it('JSON of the wrong type: 400 failed to parse JSON input', async () => {
    const { api } = await fresh();
    const res = await api('PUT', INIT, { body: { secret_shares: '3', secret_threshold: 2 } });
    expect(res.status).toBe(400);
    expect(res.json<{ errors: string[] }>().errors[0]).toMatch(
      /^failed to parse JSON input: json: cannot unmarshal string/,
    );
    expect((await api('PUT', INIT, { rawBody: '{' })).status).toBe(400);
  });
});

interface TestPgpKey {
  privateKey: openpgp.PrivateKey;
  publicB64: string;
  fingerprint: string;
}

async function pgpKeys(count: number): Promise<TestPgpKey[]> {
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const { privateKey, publicKey } = await openpgp.generateKey({
        type: 'ecc', // curve25519 (legacy), as GnuPG makes by default
        userIDs: [{ name: `holder ${i}` }],
        format: 'object',
      });
      return {
        privateKey,
        publicB64: Buffer.from(publicKey.write()).toString('base64'),
        fingerprint: publicKey.getFingerprint(),
      };
    }),
  );
}

/** A returned share: the hex text of the share, encrypted to `key`. */
async function decryptShare(hexCiphertext: string, key: TestPgpKey): Promise<string> {
  const message = await openpgp.readMessage({ binaryMessage: Buffer.from(hexCiphertext, 'hex') });
  const { data } = await openpgp.decrypt({ message, decryptionKeys: key.privateKey, format: 'binary' });
  return new TextDecoder().decode(data);
}

describe('PGP-encrypted shares and the backup', () => {
  it('encrypts each new share to its key in order; the decrypted shares rekey again', async () => {
    const { api, keys } = await fresh();
    const holders = await pgpKeys(3);
    const started = await start(api, {
      secret_shares: 3,
      secret_threshold: 2,
      pgp_keys: holders.map((h) => h.publicB64),
    });
    expect(started.pgp_fingerprints).toEqual(holders.map((h) => h.fingerprint));
    expect(started.backup).toBe(false);
    const done = (await submitAll(api, started.nonce, keys.slice(0, 3))).json<Completion>();
    expect(done.pgp_fingerprints).toEqual(holders.map((h) => h.fingerprint));
    expect(done.keys_base64).toEqual(done.keys.map((k) => Buffer.from(k, 'hex').toString('base64')));
    const shares = await Promise.all(done.keys.map((ct, i) => decryptShare(ct, holders[i]!)));
    for (const share of shares) expect(share).toMatch(/^[0-9a-f]{66}$/);
    // Each share only opens with its own key.
    await expect(decryptShare(done.keys[0]!, holders[1]!)).rejects.toThrow();
    // No backup was asked for.
    for (const path of BACKUP_PATHS) expectError(await api('GET', path), 400, 'no backed-up keys found');
    // The decrypted shares are the new key's.
    await rekey(api, [shares[2]!, shares[0]!], 1, 1);
  });

  it('with backup: true the encrypted shares are kept under both backup paths until deleted', async () => {
    const { api, keys } = await fresh();
    const holders = await pgpKeys(2);
    const started = await start(api, {
      secret_shares: 2,
      secret_threshold: 2,
      pgp_keys: holders.map((h) => h.publicB64),
      backup: true,
    });
    expect(started.backup).toBe(true);
    const done = (await submitAll(api, started.nonce, keys.slice(0, 3))).json<Completion>();
    expect(done.backup).toBe(true);
    const expected = {
      nonce: started.nonce,
      keys: { [holders[0]!.fingerprint]: [done.keys[0]], [holders[1]!.fingerprint]: [done.keys[1]] },
      keys_base64: {
        [holders[0]!.fingerprint]: [done.keys_base64[0]],
        [holders[1]!.fingerprint]: [done.keys_base64[1]],
      },
    };
    for (const path of BACKUP_PATHS) {
      const res = await api('GET', path);
      expect(res.status).toBe(200);
      const body = res.json<{ data: unknown; mount_type: string }>();
      expect(body.data).toEqual(expected);
    }
    expectError(await api('PUT', BACKUP_PATHS[0]!), 405, 'unsupported operation');
    const deleted = await api('DELETE', BACKUP_PATHS[1]!);
    expect(deleted.status).toBe(204);
    for (const path of BACKUP_PATHS) expectError(await api('GET', path), 400, 'no backed-up keys found');
    expect((await api('DELETE', BACKUP_PATHS[0]!)).status).toBe(204);
  });
});

describe('persistence with a data folder', () => {
  it('writes recovery-keys.json (0600) once, keeps the seal and a rekey in progress across restarts', async () => {
    const dir = tempDir('rekey');
    try {
      const first = await fresh({ recovery: { shares: 3, threshold: 2 } }, dir.path);
      const file = join(dir.path, 'recovery-keys.json');
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
        keys: first.keys,
        keys_base64: first.sandbox.recoveryKeys!.keysBase64,
        threshold: 2,
      });
      const started = await start(first.api, { secret_shares: 4, secret_threshold: 3 });
      await submitAll(first.api, started.nonce, first.keys.slice(0, 1));
      await first.sandbox.close();

      // No new key, no new shares, the same file; the rekey goes on where it stopped.
      const second = await fresh({ recovery: { shares: 5, threshold: 3 } }, dir.path);
      expect(second.sandbox.recoveryKeys).toBeUndefined();
      expect(JSON.parse(readFileSync(file, 'utf8')).keys).toEqual(first.keys);
      expect(await status(second.api)).toEqual({ ...started, progress: 1 });
      const done = (await submitAll(second.api, started.nonce, first.keys.slice(2, 3))).json<Completion>();
      expect(done.keys).toHaveLength(4);
      // The development copy no longer offers the old shares, which stopped working, and does not
      // hold the new ones either (they go to whoever completed the rekey, PGP-encrypted if asked).
      const replaced = JSON.parse(readFileSync(file, 'utf8'));
      expect(replaced.keys).toEqual([]);
      expect(replaced.replaced).toMatch(
        /^a rekey installed a new recovery key at \S+; the shares that were here no longer work/,
      );
      expect(statSync(file).mode & 0o777).toBe(0o600);
      await second.sandbox.close();

      // The rotated key is the one restored.
      const third = await fresh(undefined, dir.path);
      expect(third.sandbox.recoveryKeys).toBeUndefined();
      expect((await status(third.api)).required).toBe(3);
      await rekey(third.api, done.keys.slice(1, 4), 1, 1);
    } finally {
      dir.remove();
    }
  });
});
