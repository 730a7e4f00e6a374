/**
 * A lock on the local inventory folder for the length of an apply. The inventory is read while
 * planning and written after applying; two applies on one machine that overlap would each write
 * their own copy and lose the other's records. The lock is a file created with O_EXCL (published by
 * `link`, so it is never seen half-written) holding who took it, so a second run can say who to wait
 * for, and a lock left by a process that is gone can be taken over.
 */
import { type SettingNames, settingNames } from '../common/setting-names.js';
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { truncate } from '../common/scrub.js';
import { printable } from '../common/printable.js';
import { holderLiveness } from '../common/lock-reason.js';
import { STATE_LOCK_FILE } from '../common/confined-files.js';
import { EngineError } from './errors.js';

export { STATE_LOCK_FILE };

export interface LockHolder {
  pid: number;
  host: string;
  command: string;
  /** ISO time the lock was taken. */
  since: string;
}

export interface StateLock {
  readonly file: string;
  /** Removes the lock file if it is still ours; safe to call more than once. */
  release(): void;
}

export interface LockOptions {
  /** What the holder is doing, shown to whoever waits ("converge apply -f infra/"). */
  command: string;
  /** How long to wait for another holder before giving up. */
  timeoutMs: number;
  /** Ctrl-C while waiting stops the wait. */
  signal?: AbortSignal;
  /** Told when a dead process's lock is taken over. */
  onNote?: (message: string) => void;
  /**
   * Told once, when the lock is first found held by another run, who holds it: the wait that follows
   * may take up to `timeoutMs`, and a silent one read as a hang.
   */
  onWait?: (holder: string) => void;
  /** How the front end names the wait (`lockTimeout`) in the message when it runs out. */
  settingNames?: Partial<SettingNames>;
}

const POLL_MS = 100;

export async function acquireStateLock(dir: string, options: LockOptions): Promise<StateLock> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, STATE_LOCK_FILE);
  const mine: LockHolder = {
    pid: process.pid,
    host: os.hostname(),
    command: options.command,
    since: new Date().toISOString(),
  };
  const text = `${JSON.stringify(mine)}\n`;
  const deadline = Date.now() + options.timeoutMs;
  let told = false;
  for (;;) {
    if (tryCreate(file, text)) return held(file, text);
    const current = readHolder(file);
    if (current === 'gone') continue;
    if (current !== 'unreadable' && isDeadHere(current.holder)) {
      if (takeOver(file, current.text)) {
        options.onNote?.(
          `Took over the lock ${file}: its holder (pid ${current.holder.pid}, \`${current.holder.command}\`, since ${current.holder.since}) is no longer running.`,
        );
      }
      continue;
    }
    const left = deadline - Date.now();
    if (left <= 0) throw busy(file, current, options);
    if (!told) {
      told = true;
      options.onWait?.(`${holderOf(current)} (${file})`);
    }
    try {
      await sleep(Math.min(POLL_MS, left), undefined, options.signal ? { signal: options.signal } : {});
    } catch {
      throw new EngineError(`Interrupted while waiting for the lock ${file}; nothing was changed.`);
    }
  }
}

/** Writes the lock beside its place and links it in: `link` fails if a lock is already there. */
function tryCreate(file: string, text: string): boolean {
  const tmp = `${file}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(tmp, text, { mode: 0o600 });
  try {
    linkSync(tmp, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw new EngineError(
      `cannot take the lock ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
    );
  } finally {
    unlinkSync(tmp);
  }
}

function held(file: string, text: string): StateLock {
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    process.off('exit', release);
    try {
      // Only our own lock: never one another run took over meanwhile.
      if (readFileSync(file, 'utf8') === text) unlinkSync(file);
    } catch {
      // Already gone.
    }
  };
  // A second Ctrl-C quits through process.exit: the lock still goes with the process.
  process.on('exit', release);
  return { file, release };
}

export type ReadHolder = { holder: LockHolder; text: string } | 'gone' | 'unreadable';

/** Text from a lock file, which anything may have written: one printable line of bounded length. */
function shown(text: string): string {
  return truncate(printable(text), 200);
}

/** Who holds the lock `file`, as its holder wrote it (made printable and bounded). */
export function readHolder(file: string): ReadHolder {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
    return 'unreadable';
  }
  try {
    const holder = JSON.parse(text) as Partial<LockHolder>;
    // The same check as a lock reason's pid (lock-reason.ts): a pid is a positive whole number.
    if (!Number.isSafeInteger(holder.pid) || (holder.pid as number) <= 0 || typeof holder.host !== 'string')
      return 'unreadable';
    return {
      holder: {
        pid: holder.pid as number,
        host: shown(holder.host),
        command: shown(String(holder.command ?? 'unknown')),
        since: shown(String(holder.since ?? 'unknown')),
      },
      text,
    };
  } catch {
    return 'unreadable';
  }
}

/** Only a process on this host can be checked; one elsewhere is assumed alive. */
function isDeadHere(holder: LockHolder): boolean {
  return holderLiveness(holder) === 'dead';
}

/**
 * Moves the stale lock aside and removes it, if it is still the stale one: two runs taking over at
 * once must not remove the lock the faster one has just taken.
 */
function takeOver(file: string, staleText: string): boolean {
  const aside = `${file}.${randomBytes(4).toString('hex')}.stale`;
  try {
    renameSync(file, aside);
  } catch {
    return false;
  }
  let movedText = '';
  try {
    movedText = readFileSync(aside, 'utf8');
  } catch {
    // Treated as not ours below.
  }
  if (movedText === staleText) {
    unlinkSync(aside);
    return true;
  }
  // A fresh lock was moved: put it back unless yet another one is there now.
  try {
    linkSync(aside, file);
  } catch {
    // Another lock holds the place.
  }
  unlinkSync(aside);
  return false;
}

/** Who holds the lock, as the lock file says. */
function holderOf(current: ReadHolder): string {
  return typeof current === 'object'
    ? `pid ${current.holder.pid} on ${current.holder.host}, running \`${current.holder.command}\` since ${current.holder.since}`
    : 'a process that left an unreadable lock file';
}

function busy(
  file: string,
  current: ReadHolder,
  { timeoutMs, settingNames: names }: LockOptions,
): EngineError {
  const who = holderOf(current);
  return new EngineError(
    `another apply holds the lock on the inventory (${file}): ${who}. Waited ${Math.round(timeoutMs / 1000)}s. ` +
      `Let it finish and run again, or wait longer (${settingNames(names).lockTimeout}); ` +
      'if that process is no longer running (on another host, say), release the lock.',
    'release-inventory-lock',
  );
}
