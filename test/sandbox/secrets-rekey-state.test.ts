/**
 * The rekey state machine on its own (no HTTP, no Shamir): transitions, the order of the real
 * service's checks, and what a failed attempt leaves behind.
 */
import { describe, expect, it } from 'vitest';
import { sealFor } from '../../src/sandbox/services/secrets/rekey/seal.js';
import {
  checkRekeyRequest,
  isRecoveryState,
  type RekeyInitRequest,
  RekeyMachine,
  type RekeySettings,
} from '../../src/sandbox/services/secrets/rekey/state.js';
import { SecretsError } from '../../src/sandbox/services/secrets/vault.js';

const KEY = new Uint8Array(32).fill(1);
const NEW_KEY = new Uint8Array(32).fill(2);
const share = (n: number) => new Uint8Array(33).fill(n);

function machine(threshold = 2) {
  let counter = 0;
  let changes = 0;
  const m = new RekeyMachine(
    { seal: sealFor(KEY, { shares: 3, threshold }) },
    { newNonce: () => `nonce-${++counter}`, onChange: () => changes++ },
  );
  return { m, changes: () => changes };
}

const settings = (over: Partial<RekeySettings> = {}): RekeySettings => ({
  shares: 3,
  threshold: 2,
  pgpKeys: [],
  pgpFingerprints: [],
  backup: false,
  verificationRequired: false,
  ...over,
});

const request = (over: Partial<RekeyInitRequest> = {}): RekeyInitRequest => ({
  secret_shares: 3,
  secret_threshold: 2,
  stored_shares: 0,
  pgp_keys: [],
  backup: false,
  require_verification: false,
  ...over,
});

function refusal(fn: () => unknown): { status: number; message: string } {
  try {
    fn();
  } catch (err) {
    if (err instanceof SecretsError) return { status: err.status, message: err.errors[0] ?? '' };
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('checkRekeyRequest', () => {
  it('checks in the real order: backup, PGP count, threshold, stored shares (400), then Validate (500)', () => {
    // Every rule broken at once: the first check wins.
    const all = request({ secret_shares: 3, secret_threshold: 4, backup: true, stored_shares: 1 });
    expect(refusal(() => checkRekeyRequest(all)).message).toMatch(/^cannot request a backup/);
    expect(refusal(() => checkRekeyRequest({ ...all, backup: false, pgp_keys: ['a'] }))).toEqual({
      status: 400,
      message: 'incorrect number of PGP keys for rekey',
    });
    expect(refusal(() => checkRekeyRequest({ ...all, backup: false }))).toEqual({
      status: 400,
      message: 'provided threshold greater than the total shares',
    });
    expect(refusal(() => checkRekeyRequest(request({ stored_shares: 1, secret_threshold: 1 })))).toEqual({
      status: 400,
      message: 'stored shares not supported by recovery key',
    });
    expect(refusal(() => checkRekeyRequest(request({ secret_threshold: 1 })))).toEqual({
      status: 500,
      message: 'invalid recovery configuration: threshold must be greater than one for multiple shares',
    });
    expect(() => checkRekeyRequest(request({ secret_shares: 1, secret_threshold: 1 }))).not.toThrow();
    expect(() => checkRekeyRequest(request({ secret_shares: 255, secret_threshold: 255 }))).not.toThrow();
  });
});

describe('RekeyMachine', () => {
  it('start → submit below → threshold hands back the parts and clears the progress', () => {
    const { m, changes } = machine();
    m.start(settings());
    expect(m.status()).toMatchObject({
      started: true,
      nonce: 'nonce-1',
      progress: 0,
      required: 2,
      t: 2,
      n: 3,
    });
    expect(m.submit(share(1), 'nonce-1')).toEqual({ kind: 'progress' });
    expect(m.status().progress).toBe(1);
    const reached = m.submit(share(2), 'nonce-1');
    expect(reached).toEqual({ kind: 'threshold', parts: [share(1), share(2)], threshold: 2 });
    expect(m.status().progress).toBe(0);
    expect(changes()).toBe(3);
  });

  it('a wrong combined key is refused and the attempt stays with the same nonce', () => {
    const { m } = machine();
    m.start(settings());
    expect(refusal(() => m.checkRecovered(NEW_KEY))).toEqual({
      status: 400,
      message: 'recovery key verification failed: recovery key does not match submitted values',
    });
    expect(() => m.checkRecovered(KEY)).not.toThrow();
    expect(m.status()).toMatchObject({ started: true, nonce: 'nonce-1' });
  });

  it('complete without verification rotates the seal and ends the rekey', () => {
    const { m } = machine();
    m.start(settings({ shares: 4, threshold: 3 }));
    expect(m.complete(NEW_KEY, undefined)).toEqual({});
    expect(m.status()).toMatchObject({ started: false, required: 3 });
    expect(refusal(() => m.checkRecovered(KEY)).status).toBe(400);
    m.start(settings());
    expect(() => m.checkRecovered(NEW_KEY)).not.toThrow();
  });

  it('complete with verification waits; verify, restart, cancel behave as the table says', () => {
    const { m } = machine();
    m.start(settings({ verificationRequired: true }));
    expect(m.complete(NEW_KEY, { nonce: 'nonce-1', keys: { fp: ['00'] } })).toEqual({
      verificationNonce: 'nonce-2',
    });
    expect(m.backup()).toEqual({ nonce: 'nonce-1', keys: { fp: ['00'] } });
    expect(m.status()).toMatchObject({ started: true, verification_nonce: 'nonce-2' });
    expect(refusal(() => m.submit(share(1), 'nonce-1')).message).toBe(
      'rekey operation already finished; verification must be performed; nonce for the verification operation is "nonce-2"',
    );

    expect(m.submitVerification(share(1), 'nonce-2')).toEqual({ kind: 'progress' });
    m.restartVerification();
    expect(m.verificationStatus()).toEqual({ nonce: 'nonce-3', started: true, t: 2, n: 3, progress: 0 });

    m.submitVerification(share(1), 'nonce-3');
    m.submitVerification(share(2), 'nonce-3');
    expect(refusal(() => m.finishVerification(KEY))).toEqual({
      status: 400,
      message: 'rekey verification failed; incorrect key shares supplied',
    });
    expect(m.verificationStatus()).toMatchObject({ nonce: 'nonce-4', progress: 0 });
    // Still the old key.
    expect(() => m.checkRecovered(KEY)).not.toThrow();

    m.submitVerification(share(1), 'nonce-4');
    m.submitVerification(share(2), 'nonce-4');
    expect(m.finishVerification(NEW_KEY)).toEqual({ nonce: 'nonce-4' });
    expect(m.status().started).toBe(false);
    expect(() => m.checkRecovered(NEW_KEY)).not.toThrow();
  });

  it('cancel clears the rekey (a pending verification too); a wrong nonce is refused', () => {
    const { m } = machine();
    m.cancel(undefined); // nothing to cancel
    m.start(settings({ verificationRequired: true }));
    m.complete(NEW_KEY, undefined);
    expect(refusal(() => m.cancel('other'))).toEqual({ status: 400, message: 'invalid request' });
    m.cancel('nonce-1');
    expect(m.status().started).toBe(false);
    expect(() => m.checkRecovered(KEY)).not.toThrow();
  });

  it('checks a submission in the real order: length, rekey, nonce, duplicate', () => {
    const { m } = machine();
    expect(refusal(() => m.submit(new Uint8Array(15), 'x')).message).toBe(
      'key is shorter than minimum 16 bytes',
    );
    expect(refusal(() => m.submit(new Uint8Array(34), 'x')).message).toBe(
      'key is longer than maximum 33 bytes',
    );
    expect(refusal(() => m.submit(share(1), 'x')).message).toBe('no recovery rekey in progress');
    m.start(settings());
    expect(refusal(() => m.start(settings())).message).toBe('rekey already in progress');
    expect(refusal(() => m.submit(share(1), 'x')).message).toBe(
      'incorrect nonce supplied; nonce for this rekey operation is "nonce-1"',
    );
    m.submit(share(1), 'nonce-1');
    expect(refusal(() => m.submit(share(1), 'nonce-1')).message).toBe(
      'given key has already been provided during this rekey operation',
    );
  });

  it('its snapshot is a plain copy that passes the shape check', () => {
    const { m } = machine();
    m.start(settings({ verificationRequired: true }));
    m.submit(share(1), 'nonce-1');
    const snap = m.snapshot();
    expect(isRecoveryState(JSON.parse(JSON.stringify(snap)))).toBe(true);
    expect(snap.rekey?.progress).toEqual([Buffer.from(share(1)).toString('hex')]);
    snap.rekey!.progress = [];
    expect(m.status().progress).toBe(1);
    expect(isRecoveryState({ seal: {} })).toBe(false);
    expect(isRecoveryState({ seal: snap.seal, rekey: { nonce: 1 } })).toBe(false);
  });
});
