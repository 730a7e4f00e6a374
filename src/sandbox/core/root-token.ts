/**
 * The root token of a sandbox with a data folder, kept in the folder (`root-token`, mode 0600) so
 * that a restart on the same data accepts the token its clients were given, as the real services
 * keep theirs with their data: the first start's, given with `--token` or made. Without a data
 * folder each start makes a new one.
 */
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const ROOT_TOKEN_FILE = 'root-token';

/** What a kept token may be: printable, no spaces, and short (it is read back into headers). */
const TOKEN = /^[\x21-\x7e]{1,256}$/;

/** A token and its line break, with room for a CRLF and stray spaces: anything longer is no token. */
const MAX_TOKEN_FILE_BYTES = 1024;

export class RootTokenFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RootTokenFileError';
  }
}

/** The token kept in `dataDir`, or undefined when the folder has none yet (a first start). */
export function readKeptRootToken(dataDir: string): string | undefined {
  const path = join(dataDir, ROOT_TOKEN_FILE);
  const refuse = () =>
    new RootTokenFileError(
      `${path}: not a root token (one line of printable characters without spaces); delete the file to make a new one`,
    );
  let text: string;
  try {
    // Looked at before it is read: a FIFO would block the start, and a huge file is no token.
    const stats = statSync(path);
    if (!stats.isFile() || stats.size > MAX_TOKEN_FILE_BYTES) throw refuse();
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const token = text.trim();
  if (!TOKEN.test(token)) {
    // Never quoted back: whatever the file holds may be someone's secret, or not printable.
    throw refuse();
  }
  return token;
}

/** Keeps a first start's token in `dataDir` for the next starts; only its owner may read it. */
export function keepRootToken(dataDir: string, token: string): void {
  mkdirSync(dataDir, { recursive: true });
  // The folder's lock (data-lock.ts) is held: no other sandbox writes here meanwhile.
  writeFileSync(join(dataDir, ROOT_TOKEN_FILE), `${token}\n`, { mode: 0o600 });
}
