/**
 * A seal that supports recovery keys, as the real service's auto-unseal seals do: one random 32-byte
 * recovery key, split into `shares` with Shamir (`threshold` of them rebuild it), shown once at
 * initialisation and never stored in the clear. The sandbox keeps only a key-check value (HMAC-SHA256
 * of the key under a random salt) to recognise the key when shares are combined: the Shamir library
 * returns a wrong key rather than an error for a wrong or too small set of shares, and the real seal
 * compares the rebuilt key with the one it stores (`autoSeal.VerifyRecoveryKey`).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { KEY_BYTES, splitKey } from './shamir.js';
import { hasFields } from '../../shared/record-shape.js';

/** Shares and threshold of the recovery key (the real `SealConfig`'s `secret_shares`, `secret_threshold`). */
export interface RecoveryConfig {
  shares: number;
  threshold: number;
}

export interface SealRecord extends RecoveryConfig {
  /** Hex salt of the key-check value. */
  checkSalt: string;
  /** Hex HMAC-SHA256(salt, key). */
  checkValue: string;
}

export const DEFAULT_RECOVERY_CONFIG: RecoveryConfig = { shares: 5, threshold: 3 };

export function generateRecoveryKey(): Uint8Array {
  return new Uint8Array(randomBytes(KEY_BYTES));
}

function checkValueOf(salt: Buffer, key: Uint8Array): Buffer {
  return createHmac('sha256', salt).update(key).digest();
}

/** The seal of `key` with `config` (a fresh salt each time). */
export function sealFor(key: Uint8Array, config: RecoveryConfig): SealRecord {
  const salt = randomBytes(16);
  return {
    shares: config.shares,
    threshold: config.threshold,
    checkSalt: salt.toString('hex'),
    checkValue: checkValueOf(salt, key).toString('hex'),
  };
}

/** Whether `key` is the sealed recovery key (constant time). */
export function keyMatches(seal: SealRecord, key: Uint8Array): boolean {
  const expected = Buffer.from(seal.checkValue, 'hex');
  const actual = checkValueOf(Buffer.from(seal.checkSalt, 'hex'), key);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

/** A new recovery key, its seal and its shares (the only time they exist outside their holders). */
export async function initialiseSeal(
  config: RecoveryConfig,
): Promise<{ seal: SealRecord; shares: Uint8Array[] }> {
  const key = generateRecoveryKey();
  const shares = await splitKey(key, config.shares, config.threshold);
  return { seal: sealFor(key, config), shares };
}

/**
 * The real `SealConfig.Validate` rules on shares and threshold, as messages (the API's rekey start
 * prefixes them with "invalid recovery configuration: "; the config file reports them by position).
 */
export function recoveryConfigProblem(shares: number, threshold: number): string | undefined {
  if (shares < 1) return 'shares must be at least one';
  if (threshold < 1) return 'threshold must be at least one';
  if (shares > 1 && threshold === 1) return 'threshold must be greater than one for multiple shares';
  if (shares > 255) return 'shares must be less than 256';
  if (threshold > 255) return 'threshold must be less than 256';
  if (threshold > shares) return 'threshold cannot be larger than shares';
  return undefined;
}

export function isSealRecord(value: unknown): value is SealRecord {
  return hasFields(value, {
    shares: 'integer',
    threshold: 'integer',
    checkSalt: 'string',
    checkValue: 'string',
  });
}
