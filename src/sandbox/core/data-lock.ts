/**
 * One sandbox per data folder. Each sandbox keeps its whole state in memory and writes it out whole
 * (atomic renames), so two sandboxes on one `--data` folder would each overwrite the other's writes
 * without a word. The first to start holds `<dataDir>/sandbox.lock` (host, pid, start time and a
 * random id) until it closes; a second start is refused while that holder lives.
 *
 * - The lock appears whole or not at all: written to a file of its own, then hard-linked into place
 *   (`link` fails when the lock exists), so no reader ever sees an empty lock.
 * - A lock whose process is gone (killed, crashed) is taken over, race-free: only the contender
 *   holding `<lock>.break` (made with O_EXCL) may remove a lock, and only one it reads as stale while
 *   holding it; nobody can link a lock over an existing one, so what it read is what it removes.
 *   (Moving the stale lock away, the earlier way, could move a live one made meanwhile, and two
 *   sandboxes both took the folder.)
 * - A lock naming this very process but no sandbox of it (a container restarts with the same pid,
 *   often 1) is stale too; one from another host cannot be checked, so it is refused, with how to
 *   clear it.
 */
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { SandboxStartError } from './server.js';

export const LOCK_FILE = 'sandbox.lock';

interface LockContent {
  host: string;
  pid: number;
  started: string;
  id: string;
}

export interface DataLock {
  /** Gives the folder up (on close); safe to call twice. */
  release(): void;
}

/** The lock ids this process holds: a lock with our pid and one of these is a sandbox of ours. */
const heldHere = new Set<string>();

/** Takes the folder's lock, or throws `SandboxStartError` naming the sandbox that holds it. */
export function takeDataLock(dataDir: string): DataLock {
  try {
    mkdirSync(dataDir, { recursive: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'EEXIST' || code === 'ENOTDIR'
        ? 'it (or a folder on its path) is a file, not a folder'
        : (err as Error).message;
    throw new SandboxStartError(`cannot keep state in the data folder ${dataDir}: ${why}`, code);
  }
  const file = join(dataDir, LOCK_FILE);
  const mine: LockContent = {
    host: hostname(),
    pid: process.pid,
    started: new Date().toISOString(),
    id: randomBytes(8).toString('hex'),
  };
  const draft = `${file}.${mine.id}`;
  writeFileSync(draft, `${JSON.stringify(mine)}\n`, { mode: 0o600 });
  try {
    // A few rounds at most: each takes the lock, refuses, clears a stale one, or waits a moment
    // while another contender clears it.
    for (let round = 0; round < TAKEOVER_ROUNDS; round += 1) {
      try {
        linkSync(draft, file);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        const holder = readHolder(file);
        if (holder && holds(holder)) throw lockedError(dataDir, file, holder);
        if (!takeOverStale(file, mine.id)) pause(TAKEOVER_WAIT_MS);
        continue;
      }
      heldHere.add(mine.id);
      let held = true;
      return {
        release() {
          if (!held) return;
          held = false;
          heldHere.delete(mine.id);
          // Only our own lock: never one another sandbox took over meanwhile.
          if (readHolder(file)?.id === mine.id) rmSync(file, { force: true });
        },
      };
    }
    throw new SandboxStartError(
      `could not take the lock of the data folder ${dataDir}: other sandboxes kept taking it (${file}), or one that is gone left ${file}.break behind (from another host, it cannot be checked): if no sandbox starts there, delete it`,
      'ELOCKED',
    );
  } finally {
    rmSync(draft, { force: true });
  }
}

const TAKEOVER_ROUNDS = 50;
const TAKEOVER_WAIT_MS = 5;

/**
 * Removes the lock if it is stale, holding `<lock>.break` meanwhile; false when another contender
 * holds that (it is clearing the lock: the next round sees what it left). Under the breaker nobody
 * else removes the lock and nobody can link one over it, so the lock read is the lock removed; where
 * none was read, nothing is removed (one may be linked in meanwhile).
 */
function takeOverStale(file: string, id: string): boolean {
  const breaker = `${file}.break`;
  try {
    writeFileSync(breaker, `${JSON.stringify({ host: hostname(), pid: process.pid, id })}\n`, {
      flag: 'wx',
      mode: 0o600,
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    clearDeadBreaker(breaker);
    return false;
  }
  try {
    // No lock at all: nothing to remove, and removing "it" anyway could remove a lock linked in since
    // (linking needs no breaker). A lock that is there cannot change while the breaker is held.
    const text = readLockText(file);
    const holder = text === undefined ? undefined : holderOf(text);
    if (text !== undefined && (holder === undefined || !holds(holder))) rmSync(file, { force: true });
  } finally {
    rmSync(breaker, { force: true });
  }
  return true;
}

/**
 * A breaker whose contender died between making and removing it (a moment's work) would block every
 * later start: removed when its process is gone. A contender that made a new breaker in between could
 * lose it here; that takes a crash inside that moment and two more contenders at once.
 */
function clearDeadBreaker(breaker: string): void {
  const holder = readHolder(breaker);
  if (holder && !holds(holder)) rmSync(breaker, { force: true });
}

/** Waits `ms` synchronously (the lock is taken before the sandbox starts its event loop work). */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Whether the lock's holder may still be running: refused unless it is known to be gone. */
function holds(holder: LockContent): boolean {
  if (holder.host !== hostname()) return true;
  if (holder.pid === process.pid) return heldHere.has(holder.id);
  return isAlive(holder.pid);
}

function lockedError(dataDir: string, file: string, holder: LockContent): SandboxStartError {
  const elsewhere = holder.host !== hostname() ? ` on host ${holder.host}` : '';
  return new SandboxStartError(
    `another sandbox (pid ${holder.pid}${elsewhere}, started ${holder.started}) is using the data folder ${dataDir}: two would overwrite each other's state. Stop it, or give this one another --data; if no sandbox runs there, delete ${resolve(file)}.`,
    'ELOCKED',
  );
}

/** The lock's holder; undefined for a file that is not a lock (then it is taken over). */
function readHolder(file: string): LockContent | undefined {
  const text = readLockText(file);
  return text === undefined ? undefined : holderOf(text);
}

/** The lock file's text; undefined when there is none (or it cannot be read). */
function readLockText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

function holderOf(text: string): LockContent | undefined {
  try {
    const parsed = JSON.parse(text) as Partial<LockContent>;
    if (typeof parsed.pid !== 'number' || !Number.isInteger(parsed.pid) || parsed.pid <= 0) return undefined;
    return {
      host: typeof parsed.host === 'string' ? parsed.host : hostname(),
      pid: parsed.pid,
      started: String(parsed.started ?? 'at an unknown time'),
      id: String(parsed.id ?? ''),
    };
  } catch {
    return undefined;
  }
}

/** Whether a process with this pid exists (EPERM: it exists, under another user). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
