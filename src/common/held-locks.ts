/**
 * The service locks this process holds right now, so that quitting at once (a second Ctrl-C) can
 * name each lock it leaves behind and how to release it, instead of "a lock may be left behind".
 *
 * Whoever takes a lock registers it for exactly as long as it may be held, and the registration
 * names the lock the way its unlock command takes it. The registry knows nothing of services.
 */

export interface HeldLock {
  /** What is locked, as a person finds it: `workspace acme/web (to push state)`. */
  what: string;
  /** The command that releases it: `converge workspace unlock acme/web`. */
  release: string;
  /**
   * Set once its release was sent: quitting before the answer cannot tell whether the service
   * released it, so it is named as possibly left locked rather than as left locked.
   */
  releasing?: boolean;
}

/** A lock's registration: call it to forget the lock once released; `releasing()` as the release is sent. */
export interface LockRegistration {
  (): void;
  releasing(): void;
}

const held = new Set<HeldLock>();

/** Registers `lock` as held; the returned function forgets it (call it once the lock is released). */
export function holdingLock(lock: HeldLock): LockRegistration {
  const entry: HeldLock = { ...lock };
  held.add(entry);
  return Object.assign(
    () => {
      held.delete(entry);
    },
    {
      releasing: () => {
        entry.releasing = true;
      },
    },
  );
}

/** A registration for a lock this process does not hold: nothing to forget. */
export const NOT_HELD: LockRegistration = Object.assign(() => undefined, { releasing: () => undefined });

/** Runs `work` with `lock` registered as held, forgetting it when `work` settles. */
export async function whileHolding<T>(lock: HeldLock, work: () => Promise<T>): Promise<T> {
  const forget = holdingLock(lock);
  try {
    return await work();
  } finally {
    forget();
  }
}

/** The locks held now, in the order they were taken. */
export function heldLocks(): readonly HeldLock[] {
  return [...held].map((lock) => ({ ...lock }));
}
