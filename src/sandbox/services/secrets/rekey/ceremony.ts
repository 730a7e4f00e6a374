/**
 * The rekey ceremony's steps that need cryptography, around the state machine (`state.ts`): reading
 * PGP keys at the start, combining and checking shares at the threshold, generating, splitting and
 * encrypting the new recovery key. One step runs at a time (the real core holds its rekey lock for
 * the whole update), so a submission cannot interleave with another or with a cancel while it awaits.
 */
import type { RekeyCompletion, VerificationCompletion } from '../../../../clients/secrets/rekey-types.js';
import { SecretsError } from '../vault.js';
import { encryptShare, PgpKeyError, readPgpKeys } from './pgp.js';
import { generateRecoveryKey } from './seal.js';
import { CombineError, combineKey, splitKey, toBase64, toHex } from './shamir.js';
import {
  checkRekeyRequest,
  invalidRecoveryConfiguration,
  type RekeyBackup,
  type RekeyInitRequest,
  type RekeyMachine,
  type RekeyStatus,
  type VerificationStatus,
} from './state.js';

/**
 * The answers of the update and of the verification that reach the threshold
 * (`RekeyUpdateResponse`, `RekeyVerificationUpdateResponse`), as the client reads them.
 */
export type { RekeyCompletion, VerificationCompletion } from '../../../../clients/secrets/rekey-types.js';

export class RekeyCeremony {
  private tail: Promise<unknown> = Promise.resolve();

  /**
   * @param onRotated called once a new recovery key is installed (at completion, or at the end of
   *   its verification): the old shares stop working then.
   */
  constructor(
    readonly machine: RekeyMachine,
    private readonly onRotated: () => void = () => {},
  ) {}

  /** Runs `step` after every step before it has finished. */
  private exclusive<T>(step: () => Promise<T> | T): Promise<T> {
    const run = this.tail.then(step);
    this.tail = run.catch(() => undefined);
    return run;
  }

  status(): Promise<RekeyStatus> {
    return this.exclusive(() => this.machine.status());
  }

  start(req: RekeyInitRequest): Promise<RekeyStatus> {
    return this.exclusive(async () => {
      checkRekeyRequest(req);
      let fingerprints: string[] = [];
      if (req.pgp_keys.length > 0) {
        try {
          fingerprints = (await readPgpKeys(req.pgp_keys)).map((r) => r.fingerprint);
        } catch (err) {
          if (err instanceof PgpKeyError) throw invalidRecoveryConfiguration(err.message);
          throw err;
        }
      }
      this.machine.start({
        shares: req.secret_shares,
        threshold: req.secret_threshold,
        pgpKeys: [...req.pgp_keys],
        pgpFingerprints: fingerprints,
        backup: req.backup,
        verificationRequired: req.require_verification,
      });
      return this.machine.status();
    });
  }

  cancel(nonce: string | undefined): Promise<void> {
    return this.exclusive(() => this.machine.cancel(nonce));
  }

  /** PUT update: the status below the threshold, the new shares at it. */
  update(key: Uint8Array, nonce: string): Promise<RekeyStatus | RekeyCompletion> {
    return this.exclusive(async () => {
      const submission = this.machine.submit(key, nonce);
      if (submission.kind === 'progress') return this.machine.status();
      const recovered = await combinedKey(submission, (err) => {
        throw new SecretsError(500, `failed to compute recovery key: ${err.message}`);
      });
      this.machine.checkRecovered(recovered);

      const op = this.machine.operation!;
      const settings = op.settings;
      // The real `RecoveryRekeyUpdate` generates a new recovery key (`c.barrier.GenerateKey`) and
      // splits that; the old key's shares stop working once it is installed.
      const newKey = generateRecoveryKey();
      let shares = await splitKey(newKey, settings.shares, settings.threshold);
      let fingerprints: string[] | null = null;
      let backup: RekeyBackup | undefined;
      if (settings.pgpKeys.length > 0) {
        try {
          const recipients = await readPgpKeys(settings.pgpKeys);
          shares = await Promise.all(shares.map((share, i) => encryptShare(share, recipients[i]!)));
          fingerprints = recipients.map((r) => r.fingerprint);
        } catch (err) {
          throw new SecretsError(500, `failed to encrypt shares: ${(err as Error).message}`);
        }
        if (settings.backup) {
          backup = { nonce: op.nonce, keys: {} };
          fingerprints.forEach((fingerprint, i) =>
            (backup!.keys[fingerprint] ??= []).push(toHex(shares[i]!)),
          );
        }
      }
      const { verificationNonce } = this.machine.complete(newKey, backup);
      const completion: RekeyCompletion = {
        // The real handler echoes the request's nonce.
        nonce,
        complete: true,
        keys: shares.map(toHex),
        keys_base64: shares.map(toBase64),
        pgp_fingerprints: fingerprints,
        backup: settings.backup,
        verification_required: verificationNonce !== undefined,
      };
      if (verificationNonce !== undefined) completion.verification_nonce = verificationNonce;
      else this.onRotated();
      return completion;
    });
  }

  verificationStatus(): Promise<VerificationStatus> {
    return this.exclusive(() => this.machine.verificationStatus());
  }

  /** DELETE verify: restarts the verification, then its status (400 without a rekey). */
  restartVerification(): Promise<VerificationStatus> {
    return this.exclusive(() => {
      this.machine.restartVerification();
      return this.machine.verificationStatus();
    });
  }

  /** PUT verify: the verification status below the threshold, `{nonce, complete}` once rotated. */
  verify(key: Uint8Array, nonce: string): Promise<VerificationStatus | VerificationCompletion> {
    return this.exclusive(async () => {
      const submission = this.machine.submitVerification(key, nonce);
      if (submission.kind === 'progress') return this.machine.verificationStatus();
      const recovered = await combinedKey(submission, (err) => {
        this.machine.abandonVerificationAttempt();
        throw new SecretsError(500, `failed to compute key for verification: ${err.message}`);
      });
      const { nonce: verified } = this.machine.finishVerification(recovered);
      this.onRotated();
      return { nonce: verified, complete: true };
    });
  }

  backup(): RekeyBackup | undefined {
    return this.machine.backup();
  }

  deleteBackup(): void {
    this.machine.deleteBackup();
  }
}

/**
 * The key the submitted parts combine to. Parts that do not combine (a bad share) go to `fail`, which
 * throws the step's own 500; any other error propagates.
 */
async function combinedKey(
  submission: { parts: Uint8Array[]; threshold: number },
  fail: (err: CombineError) => never,
): Promise<Uint8Array> {
  try {
    return await combineKey(submission.parts, submission.threshold);
  } catch (err) {
    if (err instanceof CombineError) fail(err);
    throw err;
  }
}
