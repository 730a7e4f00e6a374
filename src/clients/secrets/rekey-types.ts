/** The recovery-key rekey operations' shapes (spec "Rekey status", "Rekey completion", …). */

/** `GET sys/rekey-recovery-key/init`, and a submission below the threshold. */
export interface RekeyStatus {
  started: boolean;
  nonce: string;
  /** Threshold of the new shares. */
  t: number;
  /** Count of the new shares. */
  n: number;
  /** Shares of the current recovery key supplied so far. */
  progress: number;
  /** Shares needed to complete: the current threshold. */
  required: number;
  pgp_fingerprints: string[] | null;
  backup: boolean;
  verification_required: boolean;
  verification_nonce?: string;
}

/** The answer to the submission that reached the threshold. */
export interface RekeyCompletion {
  complete: true;
  /** The new shares, hex (PGP-encrypted when PGP keys were given). */
  keys: string[];
  keys_base64: string[];
  nonce: string;
  pgp_fingerprints: string[] | null;
  backup: boolean;
  verification_required: boolean;
  /** Present when verification was requested: the nonce for `verify`. */
  verification_nonce?: string;
}

/** `GET sys/rekey-recovery-key/verify`, and a verification submission below the threshold. */
export interface VerificationStatus {
  nonce: string;
  started?: boolean;
  t: number;
  n: number;
  progress: number;
}

/** The verification submission that reached the threshold: the rotation happened. */
export interface VerificationCompletion {
  nonce: string;
  complete: true;
}

/** `GET sys/rekey/recovery-key-backup`: PGP-encrypted shares by key fingerprint (hex). */
export interface RekeyBackup {
  nonce: string;
  keys: Record<string, string[]>;
  keys_base64?: Record<string, string[]>;
}

/** `PUT sys/rekey-recovery-key/init`. */
export interface RekeyStartInput {
  secret_shares: number;
  secret_threshold: number;
  /** Base64 of binary OpenPGP public keys, one per new share, in order. */
  pgp_keys?: string[];
  backup?: boolean;
  require_verification?: boolean;
}
