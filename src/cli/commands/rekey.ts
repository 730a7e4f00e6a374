/**
 * `converge rekey …`: the recovery-key rekey ceremony, an operation between several people over time.
 * The state lives on the service (the rekey in progress, its nonce, the shares supplied so far), so
 * every command reads it first and each operator runs their own command, on their own machine, in
 * any order. Shares are read from a hidden prompt or stdin, never from the command line; the new
 * shares are printed once, or only encrypted to the operators' PGP keys when those were given.
 */
import { readFileSync } from 'node:fs';
import type {
  RekeyCompletion,
  RekeyStatus,
  SecretsClient,
  VerificationCompletion,
  VerificationStatus,
} from '../../clients/secrets.js';
import { secretsService } from '../../clients/secrets/definition.js';
import { withClient } from '../connections.js';
import { CliError, EXIT } from '../exit-codes.js';
import { type Io, write } from '../io.js';
import { readSecret } from '../secret-input.js';

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

const ARMOR = /-----BEGIN PGP PUBLIC KEY BLOCK-----/;

/**
 * A public key file as the service wants it: base64 of the binary key. Accepts the binary key
 * (`gpg --export`), ASCII armor (`gpg --export --armor`), or the base64 text already.
 */
export async function pgpKeyForService(file: string): Promise<string> {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    throw new CliError(`cannot read PGP key ${file}: ${(error as NodeJS.ErrnoException).code ?? error}`);
  }
  const text = bytes.toString('utf8');
  if (ARMOR.test(text)) {
    const { readKey } = await import('openpgp');
    try {
      const key = await readKey({ armoredKey: text });
      return Buffer.from(key.write()).toString('base64');
    } catch (error) {
      throw new CliError(`${file} is not a readable PGP public key: ${(error as Error).message}`);
    }
  }
  const trimmed = text.trim();
  if (/^[A-Za-z0-9+/\s]+=*$/.test(trimmed) && trimmed.length > 0) return trimmed.replace(/\s+/g, '');
  return bytes.toString('base64');
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
    `Progress: ${status.progress} of ${status.required} shares of the current recovery key.`,
    `New key: ${status.n} shares, any ${status.t} of which recover it.`,
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
    const status = await client.rekeyStart({
      secret_shares: shares,
      secret_threshold: threshold,
      ...(pgpKeys.length > 0 ? { pgp_keys: pgpKeys } : {}),
      ...(flags.backup ? { backup: true } : {}),
      ...(flags.verify ? { require_verification: true } : {}),
    });
    if (flags.json) write(io.stdout, JSON.stringify(status, null, 2));
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
      write(io.stdout, JSON.stringify(verification ? { ...status, verification } : status, null, 2));
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

export async function rekeySubmitCommand(flags: SubmitFlags, io: Io): Promise<number> {
  return withClient(io, secretsService, async (client) => {
    const nonce = flags.nonce ?? (await currentStatus(client)).nonce;
    const share = (await readSecret(io, 'Your share of the current recovery key:', 'key share')).trim();
    if (share === '') throw new CliError('the key share is empty');
    const answer = await client.rekeySubmit(share, nonce);
    if (flags.json) {
      write(io.stdout, JSON.stringify(answer, null, 2));
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

export async function rekeyVerifyCommand(flags: SubmitFlags, io: Io): Promise<number> {
  return withClient(io, secretsService, async (client) => {
    const nonce = flags.nonce ?? (await client.rekeyVerifyStatus()).nonce;
    const share = (await readSecret(io, 'Your NEW share:', 'key share')).trim();
    if (share === '') throw new CliError('the key share is empty');
    const answer = await client.rekeyVerify(share, nonce);
    if (flags.json) write(io.stdout, JSON.stringify(answer, null, 2));
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
    if (flags.verification) {
      const status = await client.rekeyVerifyCancel();
      if (flags.json) write(io.stdout, JSON.stringify(status ?? {}, null, 2));
      else
        write(
          io.stdout,
          `Verification restarted: progress 0${status?.nonce ? `, new verification nonce ${status.nonce}` : ''}. The rekey and the current shares stay as they are.`,
        );
      return EXIT.ok;
    }
    await client.rekeyCancel();
    if (flags.json) write(io.stdout, JSON.stringify({ cancelled: true }));
    else write(io.stdout, 'Rekey cancelled. The current recovery key shares remain valid.');
    return EXIT.ok;
  });
}

export async function rekeyBackupCommand(
  action: 'show' | 'delete',
  flags: { json?: boolean },
  io: Io,
): Promise<number> {
  return withClient(io, secretsService, async (client) => {
    if (action === 'delete') {
      await client.rekeyBackupDelete();
      write(
        io.stdout,
        flags.json ? JSON.stringify({ deleted: true }) : 'Backup of the encrypted shares deleted.',
      );
      return EXIT.ok;
    }
    const backup = await client.rekeyBackup();
    if (!backup) throw new CliError('no backup of encrypted shares is stored');
    if (flags.json) write(io.stdout, JSON.stringify(backup, null, 2));
    else {
      const lines = [`Backup of the encrypted shares of rekey ${backup.nonce}:`];
      for (const [fingerprint, shares] of Object.entries(backup.keys)) {
        lines.push(`Key ${fingerprint}:`, ...shares.map((s) => `  ${s}`));
      }
      write(io.stdout, lines.join('\n'));
    }
    return EXIT.ok;
  });
}
