/**
 * `converge rekey …`: the recovery-key rekey ceremony, an operation between several people over time.
 * The state lives on the service (the rekey in progress, its nonce, the shares supplied so far), so
 * every command reads it first and each operator runs their own command, on their own machine, in
 * any order. Shares are read from a hidden prompt or stdin, never from the command line; the new
 * shares are printed once, or only encrypted to the operators' PGP keys when those were given.
 */
import { describeFsError } from '../../common/text-file.js';
import { readFileSync } from 'node:fs';
import type { Key } from 'openpgp';
import type {
  RekeyCompletion,
  RekeyStatus,
  SecretsClient,
  VerificationCompletion,
  VerificationStatus,
} from '../../clients/secrets/client.js';
import { HttpStatusError } from '../../clients/http/errors.js';
import { secretsService } from '../../clients/secrets/definition.js';
import { askYesNo } from '../ask-yes-no.js';
import { withClient } from '../service-client.js';
import { CliError, EXIT } from '../exit-codes.js';
import { type Io, write } from '../io.js';
import { readSecret } from '../secret-input.js';
import { printable, jsonOut } from '../../common/printable.js';

export interface RekeyStartFlags {
  shares: number;
  threshold: number;
  pgpKeys?: string;
  backup?: boolean;
  verify?: boolean;
  json?: boolean;
}

export interface SubmitFlags {
  nonce?: string;
  json?: boolean;
}

const ARMOR = /-----BEGIN PGP (PUBLIC|PRIVATE) KEY BLOCK-----/;

/**
 * A public key file as the service wants it: base64 of the binary key. Accepts the binary key
 * (`gpg --export`), ASCII armor (`gpg --export --armor`), or that base64 text. Every form is parsed,
 * so a private key (an easy slip: `--export-secret-keys`) is refused before anything is sent, and a
 * file holding several keys is refused rather than silently using the first.
 */
export async function pgpKeyForService(file: string): Promise<string> {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    throw new CliError(`cannot read PGP key ${file}: ${describeFsError(error)}`);
  }
  const text = bytes.toString('utf8');
  const trimmed = text.trim();
  const { readKeys } = await import('openpgp');
  let keys: Awaited<ReturnType<typeof readKeys>>;
  // openpgp reads the first armored block of a file and ignores the rest: blocks put one after the
  // other (`cat ann.asc bob.asc`, a usual key bundle) are counted here, so the second is not dropped.
  const blocks = text.match(/^-----BEGIN PGP (?:PUBLIC|PRIVATE) KEY BLOCK-----/gm)?.length ?? 0;
  if (blocks > 1)
    throw new CliError(`${file} holds ${blocks} keys: give one public key per file, one file per share`);
  try {
    if (ARMOR.test(text)) keys = await readKeys({ armoredKeys: text });
    else if (/^[A-Za-z0-9+/\s]+=*$/.test(trimmed) && trimmed.length > 0)
      keys = await readKeys({ binaryKeys: Buffer.from(trimmed.replace(/\s+/g, ''), 'base64') });
    else keys = await readKeys({ binaryKeys: bytes });
  } catch (error) {
    throw new CliError(`${file} is not a readable PGP public key: ${(error as Error).message}`);
  }
  if (keys.length !== 1)
    throw new CliError(`${file} holds ${keys.length} keys: give one public key per file, one file per share`);
  const key = keys[0]!;
  if (key.isPrivate())
    throw new CliError(
      `${file} is a PRIVATE key: nothing was sent. Give its public key (gpg --export KEYID > key.gpg), and keep the private one to decrypt your share`,
    );
  await refuseUnlessItEncrypts(file, key);
  return Buffer.from(key.write()).toString('base64');
}

/**
 * The service encrypts each new share to its key only once the last holder has submitted: a key
 * that cannot encrypt (a sign-only key, its encryption subkey expired or revoked) would then fail
 * the whole ceremony after everyone's work, and reset its progress. openpgp asks the same question
 * here, before anything is sent: `getEncryptionKey` throws when no key or subkey may encrypt now.
 */
async function refuseUnlessItEncrypts(file: string, key: Key): Promise<void> {
  try {
    await key.getEncryptionKey();
  } catch (error) {
    // openpgp's own words name the key by its short id; the reason after them, when any, is kept.
    const detail = (error as Error).message.replace(
      /^Could not find valid encryption key packet in key \w+:?\s*/,
      '',
    );
    const why = printable(detail === '' ? 'it has no valid encryption key or subkey' : detail);
    throw new CliError(
      [
        `${file}: PGP key ${key.getFingerprint().toUpperCase()} cannot encrypt (${why}): nothing was sent.`,
        "Each new share is encrypted to its holder's key; give a key with a valid encryption subkey",
        '(add one with `gpg --quick-add-key FINGERPRINT cv25519 encr`, then export the public key again).',
      ].join('\n'),
    );
  }
}

function positiveInteger(value: number, flag: string): number {
  if (!Number.isInteger(value) || value < 1)
    throw new CliError(`${flag} must be a whole number of at least 1`);
  return value;
}

function isCompletion(doc: RekeyStatus | RekeyCompletion): doc is RekeyCompletion {
  return (doc as RekeyCompletion).complete === true;
}

function isVerified(doc: VerificationStatus | VerificationCompletion): doc is VerificationCompletion {
  return (doc as VerificationCompletion).complete === true;
}

/** `Next: 2 more holders of X each run \`cmd\`.` / `Next: 1 more holder of X runs \`cmd\`.` */
function next(count: number, holderOf: string, command: string): string {
  return count === 1
    ? `Next: 1 more holder of ${holderOf} runs \`${command}\`.`
    : `Next: ${count} more holders of ${holderOf} each run \`${command}\`.`;
}

function describeStatus(status: RekeyStatus): string[] {
  const lines = [
    `Rekey in progress (nonce ${status.nonce}).`,
    status.verification_nonce
      ? 'Current shares: the threshold was reached and the new shares were issued; they take effect once verified.'
      : `Progress: ${status.progress} of ${status.required} share${status.required === 1 ? '' : 's'} of the current recovery key.`,
    status.n === 1
      ? 'New key: 1 share, which alone recovers it.'
      : `New key: ${status.n} shares, any ${status.t} of which recover it.`,
  ];
  if (status.pgp_fingerprints?.length)
    lines.push(
      `New shares encrypted to PGP keys: ${status.pgp_fingerprints.join(', ')}${status.backup ? ' (a backup is kept)' : ''}.`,
    );
  if (status.verification_required)
    lines.push('Verification required: the new shares take effect only once enough of them are presented.');
  return lines;
}

function nextSubmit(status: RekeyStatus): string {
  return next(status.required - status.progress, 'the current recovery key', 'converge rekey submit');
}

function completionLines(done: RekeyCompletion): string[] {
  const lines: string[] = [];
  const encrypted = Boolean(done.pgp_fingerprints?.length);
  if (done.verification_nonce) {
    lines.push(
      'The threshold is reached. The new shares below do NOT take effect yet: the current shares stay valid until',
      `enough new shares are presented with \`converge rekey verify\` (verification nonce ${done.verification_nonce}).`,
    );
  } else {
    lines.push('Rekey complete: the recovery key has been rotated; the old shares no longer work.');
  }
  if (encrypted) {
    lines.push(
      '',
      'Each new share is encrypted to one PGP key; send each holder theirs. Decrypt with',
      '`echo SHARE | base64 -d | gpg --decrypt`.',
    );
    done.keys_base64.forEach((share, i) =>
      lines.push(`Share ${i + 1} for key ${done.pgp_fingerprints?.[i] ?? '?'}:`, `  ${share}`),
    );
    if (done.backup)
      lines.push('', 'A backup of the encrypted shares is kept: `converge rekey backup show`.');
  } else {
    lines.push(
      '',
      'WARNING: the new shares are shown this once and Converge keeps no copy. Give each to one holder now.',
    );
    done.keys.forEach((share, i) => lines.push(`Share ${i + 1}: ${share}`));
  }
  return lines;
}

/** A share typed on the command line is already in the shell history: refuse it, never echo it. */
function refuseShareArgument(argument: string | undefined): void {
  if (argument !== undefined)
    throw new CliError(
      'shares are never taken from the command line (shell history, the process list): run on a terminal to be asked, or pipe the share on stdin',
    );
}

/** The service's refusal, with what to do next when it matches. */
async function withHint<T>(call: Promise<T>, pattern: RegExp, hint: string): Promise<T> {
  try {
    return await call;
  } catch (error) {
    if (error instanceof HttpStatusError && pattern.test(error.serviceMessage ?? ''))
      throw new CliError(`${error.message}\n${hint}`);
    throw error;
  }
}

async function currentStatus(client: SecretsClient): Promise<RekeyStatus> {
  const status = await client.rekeyStatus();
  if (!status.started)
    throw new CliError(
      'no rekey in progress: start one with `converge rekey start --shares N --threshold T`',
    );
  return status;
}

export async function rekeyStartCommand(flags: RekeyStartFlags, io: Io): Promise<number> {
  const shares = positiveInteger(flags.shares, '--shares');
  const threshold = positiveInteger(flags.threshold, '--threshold');
  if (threshold === 1 && shares > 1)
    throw new CliError(
      '--threshold must be at least 2 when there are several shares (1 only with --shares 1)',
    );
  if (threshold > shares)
    throw new CliError(`--threshold (${threshold}) must not be more than --shares (${shares})`);
  const files = flags.pgpKeys
    ? flags.pgpKeys
        .split(',')
        .map((f) => f.trim())
        .filter(Boolean)
    : [];
  if (files.length > 0 && files.length !== shares)
    throw new CliError(`--pgp-keys names ${files.length} key(s); give exactly one per share (${shares})`);
  if (flags.backup && files.length === 0)
    throw new CliError('--backup keeps PGP-encrypted shares: give --pgp-keys too');
  const pgpKeys = await Promise.all(files.map(pgpKeyForService));
  return withClient(io, secretsService, async (client) => {
    const status = await withHint(
      client.rekeyStart({
        secret_shares: shares,
        secret_threshold: threshold,
        ...(pgpKeys.length > 0 ? { pgp_keys: pgpKeys } : {}),
        ...(flags.backup ? { backup: true } : {}),
        ...(flags.verify ? { require_verification: true } : {}),
      }),
      /rekey already in progress/,
      'one rekey at a time: `converge rekey status` shows it, `converge rekey cancel` stops it',
    );
    if (flags.json) write(io.stdout, jsonOut(status, null, 2));
    else write(io.stdout, [...describeStatus(status), nextSubmit(status)].join('\n'));
    return EXIT.ok;
  });
}

export async function rekeyStatusCommand(flags: { json?: boolean }, io: Io): Promise<number> {
  return withClient(io, secretsService, async (client) => {
    const status = await client.rekeyStatus();
    const verification =
      status.started && status.verification_nonce ? await client.rekeyVerifyStatus() : undefined;
    if (flags.json) {
      write(io.stdout, jsonOut(verification ? { ...status, verification } : status, null, 2));
      return EXIT.ok;
    }
    if (!status.started) {
      write(
        io.stdout,
        'No rekey in progress. Start one with `converge rekey start --shares N --threshold T`.',
      );
      return EXIT.ok;
    }
    const lines = describeStatus(status);
    if (verification) {
      lines.push(
        `Verification: ${verification.progress} of ${verification.t} new shares presented (verification nonce ${verification.nonce}).`,
        next(verification.t - verification.progress, 'a new share', 'converge rekey verify'),
      );
    } else {
      lines.push(nextSubmit(status));
    }
    write(io.stdout, lines.join('\n'));
    return EXIT.ok;
  });
}

/**
 * A share is a hex or base64 key of at most 33 bytes; one handed out encrypted to a holder's PGP key
 * is far longer: pasted as it came, the service only says it is too long.
 */
const ENCRYPTED_SHARE = /key is longer than maximum/;
const ENCRYPTED_SHARE_HINT =
  'this is not a key share as the service takes it. A share handed out encrypted to your PGP key must be decrypted first (`echo SHARE | base64 -d | gpg --decrypt`), and then given as the text that prints';

export async function rekeySubmitCommand(flags: SubmitFlags, io: Io, argument?: string): Promise<number> {
  refuseShareArgument(argument);
  return withClient(io, secretsService, async (client) => {
    const nonce = flags.nonce ?? (await currentStatus(client)).nonce;
    const share = (await readSecret(io, 'Your share of the current recovery key:', 'key share')).trim();
    if (share === '') throw new CliError('the key share is empty');
    const answer = await withHint(
      withHint(
        withHint(client.rekeySubmit(share, nonce), ENCRYPTED_SHARE, ENCRYPTED_SHARE_HINT),
        /recovery key verification failed|failed to compute recovery key/,
        'the shares given do not rebuild the current recovery key. The service reset the progress to 0 (the rekey itself stays): every holder, those who already submitted included, runs `converge rekey submit` again with a share of the CURRENT key',
      ),
      // `rekey start` checks each key now; a rekey started elsewhere, or a key that expired since, still lands here.
      /failed to encrypt shares/,
      'a PGP key this rekey was started with cannot encrypt the new shares. The service reset the progress to 0 and submitting again fails the same way: `converge rekey cancel`, then `converge rekey start` again with keys that can encrypt',
    );
    if (flags.json) {
      write(io.stdout, jsonOut(answer, null, 2));
      return EXIT.ok;
    }
    if (isCompletion(answer)) write(io.stdout, completionLines(answer).join('\n'));
    else
      write(
        io.stdout,
        [`Share accepted: ${answer.progress} of ${answer.required}.`, nextSubmit(answer)].join('\n'),
      );
    return EXIT.ok;
  });
}

export async function rekeyVerifyCommand(flags: SubmitFlags, io: Io, argument?: string): Promise<number> {
  refuseShareArgument(argument);
  return withClient(io, secretsService, async (client) => {
    // Checked before asking for a share, so nobody types one for nothing.
    const status = await currentStatus(client);
    const nonce = flags.nonce ?? status.verification_nonce;
    if (!nonce)
      throw new CliError(
        'no verification pending: the holders of the current key submit their shares first (`converge rekey status`)',
      );
    const share = (await readSecret(io, 'Your NEW share:', 'key share')).trim();
    if (share === '') throw new CliError('the key share is empty');
    const answer = await withHint(
      withHint(client.rekeyVerify(share, nonce), ENCRYPTED_SHARE, ENCRYPTED_SHARE_HINT),
      /rekey verification failed|failed to compute key for verification/,
      'the new shares given do not match. The service reset verification to 0 with a new nonce: every holder of a new share, those who already verified included, runs `converge rekey verify` again',
    );
    if (flags.json) write(io.stdout, jsonOut(answer, null, 2));
    else if (isVerified(answer))
      write(
        io.stdout,
        'Verification complete: the recovery key has been rotated; the old shares no longer work.',
      );
    else
      write(
        io.stdout,
        [
          `New share accepted: ${answer.progress} of ${answer.t}.`,
          next(answer.t - answer.progress, 'a new share', 'converge rekey verify'),
        ].join('\n'),
      );
    return EXIT.ok;
  });
}

export async function rekeyCancelCommand(
  flags: { verification?: boolean; json?: boolean },
  io: Io,
): Promise<number> {
  return withClient(io, secretsService, async (client) => {
    const current = await client.rekeyStatus();
    if (!current.started) throw new CliError('no rekey in progress: nothing to cancel');
    if (flags.verification) {
      if (!current.verification_nonce)
        throw new CliError(
          'no verification pending: the holders of the current key have not reached the threshold yet (`converge rekey status`)',
        );
      const status = await client.rekeyVerifyCancel();
      if (flags.json) write(io.stdout, jsonOut(status ?? {}, null, 2));
      else
        write(
          io.stdout,
          `Verification restarted: progress 0${status?.nonce ? `, new verification nonce ${status.nonce}` : ''}. The rekey and the current shares stay as they are; every holder of a new share runs \`converge rekey verify\` again.`,
        );
      return EXIT.ok;
    }
    await client.rekeyCancel();
    // A backup made at the threshold outlives the cancel, though its shares never took effect.
    const leftover = current.backup ? await client.rekeyBackup() : undefined;
    if (flags.json) write(io.stdout, jsonOut({ cancelled: true, backupKept: Boolean(leftover) }));
    else
      write(
        io.stdout,
        [
          'Rekey cancelled. The current recovery key shares remain valid.',
          ...(leftover
            ? [
                "The backup of the cancelled rekey's encrypted shares is still stored: `converge rekey backup delete` removes it (it asks first; `--yes` without a terminal).",
              ]
            : []),
        ].join('\n'),
      );
    return EXIT.ok;
  });
}

export async function rekeyBackupCommand(
  action: 'show' | 'delete',
  flags: { json?: boolean; yes?: boolean; color?: boolean },
  io: Io,
): Promise<number> {
  return withClient(io, secretsService, async (client) => {
    const backup = await client.rekeyBackup();
    if (!backup) throw new CliError('no backup of encrypted shares is stored');
    if (action === 'delete') {
      // It may be the only copy of the encrypted new shares: asked, as other deletes are.
      if (!flags.yes) {
        const reply = await askYesNo(io, {
          message: `Delete the backup of the encrypted shares of rekey ${backup.nonce}? It may be their only copy.`,
          color: flags.color,
          noTerminal:
            'refusing to delete the backup of the encrypted shares without confirmation: no terminal to ask on. Pass --yes to do it anyway.',
        });
        if (reply.answer !== 'yes') {
          const interrupted = reply.answer === 'interrupted';
          write(io.stderr, `${interrupted ? 'Interrupted' : 'Cancelled'}; the backup was not deleted.`);
          return interrupted ? reply.exitCode : EXIT.error;
        }
      }
      await client.rekeyBackupDelete();
      write(io.stdout, flags.json ? jsonOut({ deleted: true }) : 'Backup of the encrypted shares deleted.');
      return EXIT.ok;
    }
    if (flags.json) write(io.stdout, jsonOut(backup, null, 2));
    else {
      const lines = [
        `Backup of the encrypted shares of rekey ${backup.nonce} (decrypt one: echo SHARE | base64 -d | gpg --decrypt):`,
      ];
      for (const [fingerprint, shares] of Object.entries(backup.keys)) {
        // Base64, like the shares printed at completion, so the same decrypt line works.
        const base64 =
          backup.keys_base64?.[fingerprint] ??
          shares.map((hex) => Buffer.from(hex, 'hex').toString('base64'));
        lines.push(`Key ${fingerprint}:`, ...base64.map((b) => `  ${b}`));
      }
      write(io.stdout, lines.join('\n'));
    }
    return EXIT.ok;
  });
}
