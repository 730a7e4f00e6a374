/**
 * One sandbox per data folder. Each sandbox keeps its whole state in memory and writes it out whole
 * (atomic renames), so two sandboxes on one `--data` folder would each overwrite the other's writes
 * without a word. The first to start holds `<dataDir>/sandbox.lock` (its pid and start time) until it
 * closes; a second start is refused while that process lives. A lock left by a process that is gone
 * (killed, crashed) is taken over.
 */
import { mkdirSync, openSync, readFileSync, rmSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { SandboxStartError } from './server.js';

export const LOCK_FILE = 'sandbox.lock';

interface LockContent {
  pid: number;
  started: string;
}

export interface DataLock {
  /** Gives the folder up (on close); safe to call twice. */
  release(): void;
}

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
  // Twice at most: once, and once more after removing a lock whose process is gone.
  for (let attempt = 0; attempt < 2; attempt += 1) {
    let fd: number;
    try {
      fd = openSync(file, 'wx', 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = readHolder(file);
      if (holder && isAlive(holder.pid)) {
        throw new SandboxStartError(
          `another sandbox (pid ${holder.pid}, started ${holder.started}) is using the data folder ${dataDir}: two would overwrite each other's state. Stop it, or give this one another --data.`,
          'ELOCKED',
        );
      }
      rmSync(file, { force: true });
      continue;
    }
    const content: LockContent = { pid: process.pid, started: new Date().toISOString() };
    writeSync(fd, `${JSON.stringify(content)}\n`);
    closeSync(fd);
    let held = true;
    return {
      release() {
        if (!held) return;
        held = false;
        // Only our own lock: one taken over after this process was thought gone is not ours to remove.
        if (readHolder(file)?.pid === process.pid) rmSync(file, { force: true });
      },
    };
  }
  throw new SandboxStartError(`could not take the lock of the data folder ${dataDir} (${file})`, 'ELOCKED');
}

/** The lock's holder; undefined for a file that is not a lock (then it is taken over). */
function readHolder(file: string): LockContent | undefined {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<LockContent>;
    if (typeof parsed.pid !== 'number' || !Number.isInteger(parsed.pid) || parsed.pid <= 0) return undefined;
    return { pid: parsed.pid, started: String(parsed.started ?? 'at an unknown time') };
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
