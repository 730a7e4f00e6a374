/**
 * The PGP side of a rekey (`helper/pgpkeys`): `pgp_keys` entries are base64 of binary OpenPGP public
 * keys (as `gpg --export | base64`); each new share is hex-encoded and the hex text encrypted to the
 * key at its position (`RecoveryRekeyUpdate` then `pgpkeys.EncryptShares`). Fingerprints are the
 * primary keys' in lower-case hex.
 *
 * openpgp is loaded on first use: it is large, and the CLI loads the sandbox module for every command.
 */
import type * as OpenPgp from 'openpgp';

let loaded: Promise<typeof OpenPgp> | undefined;
const openpgp = (): Promise<typeof OpenPgp> => (loaded ??= import('openpgp'));

export interface PgpRecipient {
  key: OpenPgp.Key;
  fingerprint: string;
}

/**
 * Reads every entry, in order; a problem names the real check that refuses it (`SealConfig.Validate`:
 * "error decoding given PGP key", "error parsing given PGP key").
 */
export async function readPgpKeys(entries: readonly string[]): Promise<PgpRecipient[]> {
  const pgp = await openpgp();
  const recipients: PgpRecipient[] = [];
  for (const entry of entries) {
    if (
      !/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(entry.replace(/[\r\n]/g, ''))
    ) {
      throw new PgpKeyError('error decoding given PGP key: illegal base64 data');
    }
    let key: OpenPgp.Key;
    try {
      key = await pgp.readKey({ binaryKey: new Uint8Array(Buffer.from(entry, 'base64')) });
    } catch (err) {
      throw new PgpKeyError(`error parsing given PGP key: ${(err as Error).message}`);
    }
    recipients.push({ key, fingerprint: key.getFingerprint().toLowerCase() });
  }
  return recipients;
}

export class PgpKeyError extends Error {}

/** The hex of `share`, encrypted to `recipient`: binary OpenPGP message bytes. */
export async function encryptShare(share: Uint8Array, recipient: PgpRecipient): Promise<Uint8Array> {
  const pgp = await openpgp();
  const message = await pgp.createMessage({
    binary: new TextEncoder().encode(Buffer.from(share).toString('hex')),
  });
  const encrypted = await pgp.encrypt({ message, encryptionKeys: recipient.key, format: 'binary' });
  return new Uint8Array(encrypted);
}
