/**
 * The recovery-key rekey ceremony end to end, through the built CLI against the sandbox, as the
 * operators run it: a rekey started with PGP keys (generated here), a backup and verification; three
 * holders of the current shares submit theirs on stdin; the new shares are decrypted with the private
 * keys; verification (restarted once) completes; then a second rekey with the old shares fails and
 * one with the new shares succeeds, which proves the key rotated.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { decrypt, generateKey, readKey, readMessage, readPrivateKey } from 'openpgp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { type CliResult, converge as run } from './helpers.js';
import { tempDir } from '../support/temp-dirs.js';

const ROOT = 'rekey-root-token-7f3a';
let sandbox: RunningSandbox;
let initial: string[];
const outputs: string[] = [];

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, token: ROOT });
  expect(sandbox.recoveryKeys, 'the sandbox hands out the shares it made').toBeDefined();
  initial = sandbox.recoveryKeys!.keys;
  expect(sandbox.recoveryKeys!.threshold).toBe(3);
});
afterAll(async () => sandbox?.close());

async function converge(args: string[], input?: string): Promise<CliResult> {
  const result = await run(args, { ...sandbox.env(), NO_COLOR: '1' }, undefined, input ?? '');
  outputs.push(result.stdout, result.stderr);
  return result;
}

async function ok(args: string[], input?: string): Promise<CliResult> {
  const r = await converge(args, input);
  expect(r.code, `converge ${args.join(' ')}\n${r.stdout}\n${r.stderr}`).toBe(0);
  return r;
}

interface Operator {
  file: string;
  privateKey: string;
}

async function operators(n: number): Promise<Operator[]> {
  const dir = tempDir('converge-rekey-');
  return Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const { publicKey, privateKey } = await generateKey({
        type: 'ecc',
        curve: 'curve25519Legacy',
        userIDs: [{ name: `operator ${i + 1}` }],
        format: 'armored',
      });
      const file = path.join(dir, `operator-${i + 1}.asc`);
      writeFileSync(file, publicKey);
      return { file, privateKey };
    }),
  );
}

/** What an operator does with their encrypted share: decrypt it with their private key. */
async function decryptShare(share: string, privateKey: string): Promise<string> {
  const { data } = await decrypt({
    message: await readMessage({ binaryMessage: Buffer.from(share, 'base64') }),
    decryptionKeys: await readPrivateKey({ armoredKey: privateKey }),
    format: 'binary',
  });
  // The service encrypts the hex form of each share.
  return Buffer.from(data as Uint8Array)
    .toString('utf8')
    .trim();
}

describe('what an operator gets wrong', () => {
  it('is told before anything is sent', async () => {
    const cases: [string[], string][] = [
      [['--shares', '2', '--threshold', '3'], '--threshold (3) must not be more than --shares (2)'],
      [
        ['--shares', '3', '--threshold', '2', '--backup'],
        '--backup keeps PGP-encrypted shares: give --pgp-keys too',
      ],
      [['--shares', '3', '--threshold', '2', '--pgp-keys', 'a.asc,b.asc'], 'give exactly one per share (3)'],
      [['--shares', '1', '--threshold', '1', '--pgp-keys', '/nonexistent/key.asc'], 'cannot read PGP key'],
      [['--shares', 'two', '--threshold', '1'], '--shares must be a whole number'],
    ];
    for (const [args, message] of cases) {
      const r = await converge(['rekey', 'start', ...args]);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr).toContain(message);
    }
    expect(JSON.parse((await ok(['rekey', 'status', '--json'])).stdout).started).toBe(false);
  });

  it('has nothing to submit to before a rekey starts, and never takes a share from the command line', async () => {
    const r = await converge(['rekey', 'submit'], initial[0]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('no rekey in progress');
    const argv = await converge(['rekey', 'submit', initial[0]!]);
    expect(argv.code).toBe(1);
    expect(argv.stderr).toContain('shares are never taken from the command line');
    expect(argv.stderr).not.toContain(initial[0]);
    for (const args of [
      ['rekey', 'cancel'],
      ['rekey', 'cancel', '--verification'],
      ['rekey', 'backup', 'delete'],
    ]) {
      const nothing = await converge(args);
      expect(nothing.code, args.join(' ')).toBe(1);
      expect(nothing.stderr).toMatch(/no rekey in progress|no backup/);
    }
  });

  it('refuses a private key given as a public one, before anything is sent', async () => {
    const { privateKey } = await generateKey({
      type: 'ecc',
      curve: 'curve25519Legacy',
      userIDs: [{ name: 'x' }],
    });
    const file = path.join(tempDir('converge-rekey-'), 'secret.asc');
    writeFileSync(file, privateKey);
    const r = await converge(['rekey', 'start', '--shares', '1', '--threshold', '1', '--pgp-keys', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('is a PRIVATE key: nothing was sent');
    expect(JSON.parse((await ok(['rekey', 'status', '--json'])).stdout).started).toBe(false);
  });
});

describe('a key file holding several armored keys one after the other', () => {
  it('is refused before anything is sent, not cut to its first key', async () => {
    const made = await Promise.all(
      ['ann', 'bob'].map((name) =>
        generateKey({ type: 'ecc', curve: 'curve25519Legacy', userIDs: [{ name }] }),
      ),
    );
    const file = path.join(tempDir('converge-rekey-'), 'two.asc');
    // `cat ann.asc bob.asc > two.asc`: two armor blocks, each a whole public key.
    writeFileSync(file, made.map((k) => k.publicKey).join(''));
    const r = await converge(['rekey', 'start', '--shares', '1', '--threshold', '1', '--pgp-keys', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('holds 2 keys: give one public key per file');
    expect(JSON.parse((await ok(['rekey', 'status', '--json'])).stdout).started).toBe(false);
  });
});

describe('the rekey ceremony', () => {
  let newShares: string[] = [];

  it('starts with PGP keys, a backup and verification, and says what comes next', async () => {
    const ops = await operators(3);
    const started = await ok([
      'rekey',
      'start',
      '--shares',
      '3',
      '--threshold',
      '2',
      '--pgp-keys',
      ops.map((o) => o.file).join(','),
      '--backup',
      '--verify',
    ]);
    expect(started.stdout).toContain('Progress: 0 of 3 shares of the current recovery key.');
    expect(started.stdout).toContain('New key: 3 shares, any 2 of which recover it.');
    expect(started.stdout).toContain(
      '3 more holders of the current recovery key each run `converge rekey submit`',
    );
    const status = JSON.parse((await ok(['rekey', 'status', '--json'])).stdout);
    expect(status).toMatchObject({
      started: true,
      t: 2,
      n: 3,
      progress: 0,
      required: 3,
      backup: true,
      verification_required: true,
    });
    const fingerprints = await Promise.all(
      ops.map(async (o) => (await readKey({ armoredKey: readFileSync(o.file, 'utf8') })).getFingerprint()),
    );
    expect(status.pgp_fingerprints).toEqual(fingerprints);

    // Three holders, each on their own, the share on stdin.
    expect((await ok(['rekey', 'submit'], `${initial[0]}\n`)).stdout).toContain('Share accepted: 1 of 3.');
    const second = await converge(['rekey', 'submit'], initial[0]);
    expect(second.code, 'the same share twice is refused').toBe(1);
    expect((await ok(['rekey', 'submit'], initial[1])).stdout).toContain('Share accepted: 2 of 3.');
    const done = JSON.parse((await ok(['rekey', 'submit', '--json'], initial[2])).stdout);
    expect(done).toMatchObject({
      complete: true,
      pgp_fingerprints: fingerprints,
      backup: true,
      verification_required: true,
    });
    expect(done.verification_nonce).toBeTruthy();
    newShares = await Promise.all(
      done.keys_base64.map((s: string, i: number) => decryptShare(s, ops[i]!.privateKey)),
    );
    // A holder who pastes the encrypted share as it came is told to decrypt it first.
    const pasted = await converge(['rekey', 'verify'], done.keys_base64[0]);
    expect(pasted.code).toBe(1);
    expect(pasted.stderr).toContain('longer than maximum');
    expect(pasted.stderr).toContain('must be decrypted first (`echo SHARE | base64 -d | gpg --decrypt`)');
    expect(newShares.every((s) => /^[0-9a-f]+$/.test(s))).toBe(true);

    const backup = await ok(['rekey', 'backup', 'show']);
    for (const fp of fingerprints) expect(backup.stdout).toContain(fp);
  });

  it('verifies the new shares (restarting verification once) and then rotates', async () => {
    const before = await ok(['rekey', 'status']);
    expect(before.stdout).toContain('Verification: 0 of 2 new shares presented');
    expect((await ok(['rekey', 'verify'], newShares[0])).stdout).toContain('New share accepted: 1 of 2.');
    const restarted = await ok(['rekey', 'cancel', '--verification']);
    expect(restarted.stdout).toContain('Verification restarted: progress 0');
    expect((await ok(['rekey', 'verify'], newShares[1])).stdout).toContain('New share accepted: 1 of 2.');
    expect((await ok(['rekey', 'verify'], newShares[2])).stdout).toContain('Verification complete');
    expect((await ok(['rekey', 'status'])).stdout).toContain('No rekey in progress');
    // Perhaps the only copy of the encrypted shares: without a terminal to ask on, only with --yes.
    const unasked = await converge(['rekey', 'backup', 'delete']);
    expect(unasked.code).toBe(1);
    expect(unasked.stderr).toContain('without confirmation');
    expect(unasked.stderr).toContain('--yes');
    await ok(['rekey', 'backup', 'show']);
    expect((await ok(['rekey', 'backup', 'delete', '--yes'])).stdout).toContain(
      'Backup of the encrypted shares deleted.',
    );
    expect((await converge(['rekey', 'backup', 'show'])).code).toBe(1);
  });

  it('refuses the old shares on the next rekey and accepts the new ones', async () => {
    await ok(['rekey', 'start', '--shares', '1', '--threshold', '1']);
    expect((await ok(['rekey', 'status', '--json'])).stdout).toContain('"required": 2');
    await ok(['rekey', 'submit'], initial[0]);
    const refused = await converge(['rekey', 'submit'], initial[1]);
    expect(refused.code, 'old shares no longer rebuild the key').toBe(1);
    expect(refused.stderr).toContain('recovery key verification failed');
    expect(refused.stderr).toContain('runs `converge rekey submit` again with a share of the CURRENT key');

    // As the real service does, the failed attempt is reset, not dropped: the same rekey starts over.
    const status = JSON.parse((await ok(['rekey', 'status', '--json'])).stdout);
    expect(status).toMatchObject({ started: true, progress: 0, n: 1, t: 1 });
    await ok(['rekey', 'submit'], newShares[0]);
    const done = await ok(['rekey', 'submit'], newShares[2]);
    expect(done.stdout).toContain('Rekey complete: the recovery key has been rotated');
    expect(done.stdout).toContain('WARNING: the new shares are shown this once');
    expect(done.stdout).toMatch(/Share 1: [0-9a-f]+/);
  });

  it('never printed a share it was given', () => {
    for (const share of [...initial, ...newShares]) {
      for (const output of outputs) expect(output.includes(share), output.slice(0, 300)).toBe(false);
    }
  });
});
