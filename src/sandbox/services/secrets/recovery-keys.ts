/**
 * The recovery key shares a fresh start makes (no data folder, or one without a saved seal): shown
 * to the user once, as the real service's initialisation (`operator init`) prints them, handed to
 * library callers as `sandbox.recoveryKeys`, and, with a data folder, kept beside the state for
 * development. A start that restores a saved seal makes none: the run that made the key showed them.
 */
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Key shares created on this start. */
export interface InitialKeyShares {
  /** The shares in hex, in order. */
  keys: string[];
  /** The same shares in base64. */
  keysBase64: string[];
  /** How many of them rebuild the key. */
  threshold: number;
}

declare module '../../core/service.js' {
  interface SandboxServiceExtras {
    /**
     * The secrets service's recovery key shares when this start created the key (no data folder, or
     * one without a saved seal): hex and base64, in order, with the threshold. Undefined when the key
     * was restored from the data folder (its shares were shown by the run that made it) or the
     * secrets service is not emulated. With a data folder they are also in
     * `<dataDir>/recovery-keys.json`.
     */
    recoveryKeys?: InitialKeyShares;
  }
}

const FILE_NAME = 'recovery-keys.json';

/**
 * The shares as the real `operator init` lists them (`Recovery Key 1: <hex>`), with the threshold and a
 * warning that they are not shown again; `converge sandbox` prints it on stderr, so the export lines
 * on stdout stay parseable.
 */
export function recoveryKeysNote(shares: InitialKeyShares, dataDir: string | undefined): string {
  const lines = shares.keys.map((key, i) => `Recovery Key ${i + 1}: ${key}`);
  lines.push(
    `Recovery key initialized with ${shares.keys.length} key shares and a key threshold of ${shares.threshold}.`,
    `converge sandbox: the recovery key shares are shown only this once${
      dataDir !== undefined ? ` (a development copy is in ${join(dataDir, FILE_NAME)})` : ''
    }; keep them to rekey.`,
  );
  return `${lines.join('\n')}\n`;
}

/**
 * `<dataDir>/recovery-keys.json` (mode 0600): the shares made on this start, for development only,
 * so a sandbox with a data folder keeps them beside its state. A real service shows them once and
 * keeps no copy.
 */
export function writeRecoveryKeysFile(dataDir: string, shares: InitialKeyShares): void {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, FILE_NAME);
  const body = { keys: shares.keys, keys_base64: shares.keysBase64, threshold: shares.threshold };
  writeFileSync(path, `${JSON.stringify(body, null, 2)}\n`, { mode: 0o600 });
  // An existing file keeps its mode on write.
  chmodSync(path, 0o600);
}

/**
 * After a rekey installed a new key: the development copy holds shares that no longer work, so it
 * says so instead (the new shares went to whoever completed the rekey, PGP-encrypted if asked, and
 * are not copied here: that would undo the encryption).
 */
export function markRecoveryKeysReplaced(dataDir: string, now: Date = new Date()): void {
  const path = join(dataDir, FILE_NAME);
  if (!existsSync(path)) return;
  const body = {
    replaced: `a rekey installed a new recovery key at ${now.toISOString()}; the shares that were here no longer work, and the new ones went to whoever completed the rekey`,
    keys: [],
    keys_base64: [],
  };
  writeFileSync(path, `${JSON.stringify(body, null, 2)}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
}
