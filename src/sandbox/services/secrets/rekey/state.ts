/**
 * The recovery-key rekey ceremony as a state machine, without HTTP or cryptography beyond comparing
 * keys (combining, splitting and encrypting happen in `ceremony.ts` between the steps here). It
 * follows `vault/rekey.go` (`RecoveryRekeyInit`, `RecoveryRekeyUpdate`, `RekeyVerify`, `RekeyCancel`,
 * `RekeyVerifyRestart`) and the spec's table:
 *
 * | state                 | trigger                  | next                                        |
 * | --------------------- | ------------------------ | ------------------------------------------- |
 * | not started           | `start`                  | in progress (new nonce)                     |
 * | in progress           | `submit` below threshold | in progress                                 |
 * | in progress           | `submit` at threshold    | `complete`: rotated (not started), or       |
 * |                       |                          | awaiting verification (verification nonce)  |
 * | in progress           | `cancel`                 | not started                                 |
 * | awaiting verification | `submitVerification`     | awaiting, or `finishVerification`: rotated  |
 * | awaiting verification | `restartVerification`    | awaiting (progress 0, new nonce)            |
 * | awaiting verification | `cancel`                 | not started; current keys stay valid        |
 *
 * Refusals are `SecretsError`s with the real status and text. Keys and shares are kept as hex so the
 * state is the snapshot. The real service keeps a rekey in progress in memory only (a restart drops
 * it); the sandbox persists it with the rest, so a `--data` sandbox picks up where it stopped.
 */
import { timingSafeEqual } from 'node:crypto';
import type {
  RekeyStatus,
  VerificationStatus as ClientVerificationStatus,
} from '../../../../clients/secrets/rekey-types.js';
import { SecretsError } from '../vault.js';
import { isSealRecord, keyMatches, recoveryConfigProblem, type SealRecord, sealFor } from './seal.js';
import { fromHex, MAX_KEY_BYTES, MIN_KEY_BYTES, toHex } from './shamir.js';

/** What a rekey start asked for (the real `SealConfig` of the rekey). */
export interface RekeySettings {
  shares: number;
  threshold: number;
  /** Base64 binary public keys, in order; empty without PGP. */
  pgpKeys: string[];
  /** Their fingerprints, same order. */
  pgpFingerprints: string[];
  backup: boolean;
  verificationRequired: boolean;
}

export interface PendingVerification {
  nonce: string;
  /** Hex of the new recovery key, installed once verified. */
  key: string;
  /** Hex of the new shares submitted so far. */
  progress: string[];
}

export interface RekeyOperation {
  nonce: string;
  settings: RekeySettings;
  /** Hex of the current shares submitted so far. */
  progress: string[];
  verification?: PendingVerification;
}

/** The backed-up PGP-encrypted shares (`RekeyBackup`): fingerprint → hex ciphertexts. */
export interface RekeyBackup {
  nonce: string;
  keys: Record<string, string[]>;
}

export interface RecoveryState {
  seal: SealRecord;
  rekey?: RekeyOperation;
  backup?: RekeyBackup;
}

/**
 * `GET init` (`RekeyStatusResponse`; `pgp_fingerprints` is Go's nil slice, null, without PGP), as the
 * client reads it: one wire description for both.
 */
export type { RekeyStatus } from '../../../../clients/secrets/rekey-types.js';

/** `GET verify` (`RekeyVerificationStatusResponse`): the client's shape, which the sandbox always fills. */
export type VerificationStatus = Required<ClientVerificationStatus>;

/** A submission either adds progress or reaches the threshold with the parts to combine. */
export type Submission = { kind: 'progress' } | { kind: 'threshold'; parts: Uint8Array[]; threshold: number };

/** The fields of a rekey start, as decoded from the body (`RekeyRequest`). */
export interface RekeyInitRequest {
  secret_shares: number;
  secret_threshold: number;
  stored_shares: number;
  pgp_keys: string[];
  backup: boolean;
  require_verification: boolean;
}

const bad = (message: string) => new SecretsError(400, message);

/**
 * The checks of a rekey start before the PGP keys are read, in the real order: the HTTP layer's
 * backup and key-count checks, `RekeyInit`'s threshold check, `RecoveryRekeyInit`'s stored-shares
 * check (all 400), then `SealConfig.Validate` (500, "invalid recovery configuration: ..."; the real
 * core returns it as an internal error). Whether a rekey is already in progress is checked after
 * these (`start`), as the real core does.
 */
export function checkRekeyRequest(req: RekeyInitRequest): void {
  if (req.backup && req.pgp_keys.length === 0) {
    throw bad('cannot request a backup of the new keys without providing PGP keys for encryption');
  }
  if (req.pgp_keys.length > 0 && req.pgp_keys.length !== req.secret_shares) {
    throw bad('incorrect number of PGP keys for rekey');
  }
  if (req.secret_threshold > req.secret_shares) throw bad('provided threshold greater than the total shares');
  if (req.stored_shares > 0) throw bad('stored shares not supported by recovery key');
  const problem = recoveryConfigProblem(req.secret_shares, req.secret_threshold);
  if (problem) throw invalidRecoveryConfiguration(problem);
}

/** `SealConfig.Validate`'s failures at a rekey start: 500 (`RecoveryRekeyInit` codes them so). */
export const invalidRecoveryConfiguration = (problem: string) =>
  new SecretsError(500, `invalid recovery configuration: ${problem}`);

/** The core's length check of a submitted key (`RecoveryRekeyUpdate`, `RekeyVerify`). */
function checkKeyLength(key: Uint8Array): void {
  if (key.length < MIN_KEY_BYTES) throw bad(`key is shorter than minimum ${MIN_KEY_BYTES} bytes`);
  if (key.length > MAX_KEY_BYTES) throw bad(`key is longer than maximum ${MAX_KEY_BYTES} bytes`);
}

function alreadyGiven(progress: readonly string[], key: Uint8Array): boolean {
  const given = Buffer.from(key);
  return progress.some((hex) => {
    const existing = Buffer.from(hex, 'hex');
    return existing.length === given.length && timingSafeEqual(existing, given);
  });
}

export interface RekeyMachineDeps {
  /** A new nonce (`uuid.GenerateUUID`). */
  newNonce(): string;
  /** Called after every change of the state (persistence). */
  onChange(): void;
}

export class RekeyMachine {
  constructor(
    private state: RecoveryState,
    private readonly deps: RekeyMachineDeps,
  ) {}

  get seal(): SealRecord {
    return this.state.seal;
  }

  /** The operation in progress, if any (read-only use). */
  get operation(): Readonly<RekeyOperation> | undefined {
    return this.state.rekey;
  }

  status(): RekeyStatus {
    const op = this.state.rekey;
    const status: RekeyStatus = {
      nonce: op?.nonce ?? '',
      started: op !== undefined,
      t: op?.settings.threshold ?? 0,
      n: op?.settings.shares ?? 0,
      progress: op?.progress.length ?? 0,
      required: this.state.seal.threshold,
      pgp_fingerprints: null,
      backup: false,
      verification_required: op?.settings.verificationRequired ?? false,
    };
    if (op?.verification) status.verification_nonce = op.verification.nonce;
    if (op && op.settings.pgpKeys.length > 0) {
      status.pgp_fingerprints = [...op.settings.pgpFingerprints];
      status.backup = op.settings.backup;
    }
    return status;
  }

  /** PUT init after `checkRekeyRequest` and reading the PGP keys. */
  start(settings: RekeySettings): void {
    if (this.state.rekey) throw bad('rekey already in progress');
    this.state.rekey = { nonce: this.deps.newNonce(), settings: { ...settings }, progress: [] };
    this.deps.onChange();
  }

  /**
   * DELETE init: not started again, settings and progress gone (a pending verification too; the
   * current keys stay valid). The newest real core refuses a cancel whose nonce differs ("invalid
   * request"); the spec's cancel takes no body, so a cancel without a nonce is accepted.
   */
  cancel(nonce: string | undefined): void {
    const op = this.state.rekey;
    if (!op) return;
    if (nonce !== undefined && nonce !== op.nonce) throw bad('invalid request');
    this.state.rekey = undefined;
    this.deps.onChange();
  }

  /**
   * PUT update, first step: records a share of the current key. At the threshold the progress is
   * cleared (as the real core does before combining, so a failed attempt starts over with the same
   * nonce and settings) and the parts are handed back to be combined and checked (`recovered`).
   */
  submit(key: Uint8Array, nonce: string): Submission {
    checkKeyLength(key);
    const op = this.state.rekey;
    if (!op) throw bad('no recovery rekey in progress');
    if (op.verification) {
      throw bad(
        `rekey operation already finished; verification must be performed; nonce for the verification operation is ${JSON.stringify(op.verification.nonce)}`,
      );
    }
    if (nonce !== op.nonce) {
      throw bad(`incorrect nonce supplied; nonce for this rekey operation is ${JSON.stringify(op.nonce)}`);
    }
    if (alreadyGiven(op.progress, key))
      throw bad('given key has already been provided during this rekey operation');
    op.progress.push(toHex(key));
    const threshold = this.state.seal.threshold;
    if (op.progress.length < threshold) {
      this.deps.onChange();
      return { kind: 'progress' };
    }
    const parts = op.progress.map(fromHex);
    op.progress = [];
    this.deps.onChange();
    return { kind: 'threshold', parts, threshold };
  }

  /**
   * PUT update, second step: whether the combined parts are the current recovery key. A wrong key is
   * 400 "recovery key verification failed: ..."; the attempt stays (same nonce), its progress is 0.
   */
  checkRecovered(key: Uint8Array): void {
    if (!keyMatches(this.state.seal, key)) {
      throw bad('recovery key verification failed: recovery key does not match submitted values');
    }
  }

  /**
   * PUT update, last step, with the new key generated and split (and the backup, when asked for,
   * written before the verification check as the real core does). Without verification the key is
   * rotated and the rekey ends; with it, the new key waits for its shares and a verification nonce
   * is returned.
   */
  complete(newKey: Uint8Array, backup: RekeyBackup | undefined): { verificationNonce?: string } {
    const op = this.requireOperation();
    if (backup) this.state.backup = backup;
    if (op.settings.verificationRequired) {
      const nonce = this.deps.newNonce();
      op.verification = { nonce, key: toHex(newKey), progress: [] };
      this.deps.onChange();
      return { verificationNonce: nonce };
    }
    this.rotate(newKey, op.settings);
    return {};
  }

  /** GET verify: 400 "no rekey configuration found" without a rekey. */
  verificationStatus(): VerificationStatus {
    const op = this.state.rekey;
    if (!op) throw bad('no rekey configuration found');
    return {
      nonce: op.verification?.nonce ?? '',
      started: op.verification !== undefined,
      t: op.settings.threshold,
      n: op.settings.shares,
      progress: op.verification?.progress.length ?? 0,
    };
  }

  /** DELETE verify: progress 0 and a new verification nonce; the rekey and current keys stay. */
  restartVerification(): void {
    const verification = this.state.rekey?.verification;
    // The real core also sets a verification nonce on a rekey with nothing to verify yet; the sandbox
    // leaves such a rekey alone (the nonce would be replaced when its verification starts anyway).
    if (!verification) return;
    verification.progress = [];
    verification.nonce = this.deps.newNonce();
    this.deps.onChange();
  }

  /** PUT verify, first step: records a share of the new key; at the threshold, the parts to combine. */
  submitVerification(key: Uint8Array, nonce: string): Submission {
    checkKeyLength(key);
    const op = this.state.rekey;
    if (!op) throw bad('no rekey in progress');
    const verification = op.verification;
    if (!verification) throw bad('no rekey verification in progress');
    if (nonce !== verification.nonce) {
      throw bad(
        `incorrect nonce supplied; nonce for this verify operation is ${JSON.stringify(verification.nonce)}`,
      );
    }
    if (alreadyGiven(verification.progress, key)) {
      throw bad('given key has already been provided during this verify operation');
    }
    verification.progress.push(toHex(key));
    this.deps.onChange();
    if (verification.progress.length < op.settings.threshold) return { kind: 'progress' };
    return { kind: 'threshold', parts: verification.progress.map(fromHex), threshold: op.settings.threshold };
  }

  /**
   * PUT verify at the threshold, with the combined key (or undefined when the parts could not be
   * combined). Progress is cleared either way; a match rotates the key and ends the rekey (returning
   * the verification nonce); a mismatch is 400 and rotates the verification nonce, as the real core's
   * deferred cleanup does.
   */
  finishVerification(recovered: Uint8Array | undefined): { nonce: string } {
    const op = this.requireOperation();
    const verification = op.verification;
    if (!verification) throw bad('no rekey verification in progress');
    verification.progress = [];
    const expected = Buffer.from(verification.key, 'hex');
    if (
      recovered === undefined ||
      recovered.length !== expected.length ||
      !timingSafeEqual(Buffer.from(recovered), expected)
    ) {
      verification.nonce = this.deps.newNonce();
      this.deps.onChange();
      throw bad('rekey verification failed; incorrect key shares supplied');
    }
    const nonce = verification.nonce;
    this.rotate(expected, op.settings);
    return { nonce };
  }

  /**
   * After a failed combination in verification (500 in the real core): progress cleared, nonce
   * rotated, rekey kept.
   */
  abandonVerificationAttempt(): void {
    // The same reset as a DELETE of the verification: the real core's deferred cleanup.
    this.restartVerification();
  }

  backup(): RekeyBackup | undefined {
    return this.state.backup;
  }

  deleteBackup(): void {
    if (!this.state.backup) return;
    this.state.backup = undefined;
    this.deps.onChange();
  }

  snapshot(): RecoveryState {
    return structuredClone(this.state);
  }

  private requireOperation(): RekeyOperation {
    const op = this.state.rekey;
    if (!op) throw bad('no recovery rekey in progress');
    return op;
  }

  /** `performRecoveryRekey`: the new key and its settings become the seal; the rekey ends. */
  private rotate(newKey: Uint8Array, settings: RekeySettings): void {
    this.state.seal = sealFor(newKey, { shares: settings.shares, threshold: settings.threshold });
    this.state.rekey = undefined;
    this.deps.onChange();
  }
}

/** Checks the shape of a saved recovery state before trusting it. */
export function isRecoveryState(value: unknown): value is RecoveryState {
  const v = value as Partial<RecoveryState> | null;
  if (typeof v !== 'object' || v === null || !isSealRecord(v.seal)) return false;
  const op = v.rekey as Partial<RekeyOperation> | undefined;
  if (op !== undefined) {
    if (typeof op !== 'object' || op === null) return false;
    if (typeof op.nonce !== 'string' || !Array.isArray(op.progress) || typeof op.settings !== 'object') {
      return false;
    }
    const s = op.settings as Partial<RekeySettings> | null;
    if (!s || !Array.isArray(s.pgpKeys) || !Array.isArray(s.pgpFingerprints)) return false;
    const ver = op.verification as Partial<PendingVerification> | undefined;
    if (
      ver !== undefined &&
      (typeof ver.nonce !== 'string' || typeof ver.key !== 'string' || !Array.isArray(ver.progress))
    ) {
      return false;
    }
  }
  const backup = v.backup as Partial<RekeyBackup> | undefined;
  if (
    backup !== undefined &&
    (typeof backup.nonce !== 'string' || typeof backup.keys !== 'object' || backup.keys === null)
  ) {
    return false;
  }
  return true;
}
