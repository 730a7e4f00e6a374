/**
 * One sandbox per data folder. Each sandbox keeps its whole state in memory and writes it out whole
 * (atomic renames), so two sandboxes on one `--data` folder would each overwrite the other's writes
 * without a word. The first to start holds `<dataDir>/sandbox.lock` (host, pid, start time and a
 * random id) until it closes; a second start is refused while that holder lives.
 *
 * - The lock appears whole or not at all: written to a file of its own, then hard-linked into place
 *   (`link` fails when the lock exists), so no reader ever sees an empty lock.
 * - A lock whose process is gone (killed, crashed) is taken over, race-free: it is first renamed
 *   away (only one contender can move a given file), and if what was moved turns out to be a live
 *   lock made in the meantime, it is put back.
 * - A lock naming this very process but no sandbox of it (a container restarts with the same pid,
 *   often 1) is stale too; one from another host cannot be checked, so it is refused, with how to
 *   clear it.
 */
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
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
    // A few rounds at most: each either takes the lock, refuses, or clears a stale one.
    for (let round = 0; round < 5; round += 1) {
      try {
        linkSync(draft, file);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        const holder = readHolder(file);
        if (holder && holds(holder)) throw lockedError(dataDir, file, holder);
        takeOverStale(file, mine.id);
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
      `could not take the lock of the data folder ${dataDir}: other sandboxes kept taking it (${file})`,
      'ELOCKED',
    );
  } finally {
    rmSync(draft, { force: true });
  }
}

/**
 * Moves a stale lock away, so that the next `link` can take its place. Whoever moves it checks what
 * it moved: a live lock (made after the stale one was read) goes back where it was.
 */
function takeOverStale(file: string, id: string): void {
  const moved = `${file}.stale-${id}`;
  try {
    renameSync(file, moved);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return; // another contender moved it
    throw err;
  }
  const holder = readHolder(moved);
  if (holder && holds(holder)) {
    try {
      linkSync(moved, file);
    } catch {
      // A third lock took the place meanwhile: that one is live, the next round sees it.
    }
  }
  rmSync(moved, { force: true });
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
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<LockContent>;
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
