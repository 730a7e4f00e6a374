/**
 * What a command says while another run holds the inventory's lock: apply, import and the inventory
 * commands that write it wait up to --lock-timeout, and a wait in silence looked like a hang.
 */
import { type Io, write } from './io.js';

/** The `onWait` for `lockInventory`: names the holder and how long the command waits. */
export function sayLockWait(io: Io, lockTimeout: number | undefined): (holder: string) => void {
  return (holder) =>
    write(
      io.stderr,
      `Waiting for the inventory's lock, held by ${holder}: up to ${lockTimeout ?? 10}s (--lock-timeout)…`,
    );
}
