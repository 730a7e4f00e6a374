/**
 * `converge inventory list|show|forget|unlock|migrate`: inspect and repair the inventory the
 * environment names (CONVERGE_INVENTORY, default the local file). Changes (forget, migrate) hold the
 * inventory's lock like an apply; forget and unlock ask first on a terminal and need `--yes` elsewhere.
 */
import { printable, jsonOut } from '../../common/printable.js';
import { unlinkSync } from 'node:fs';
import path from 'node:path';
import { EngineError } from '../../engine/errors.js';
import { type FileInventoryBackend, LocalInventory } from '../../engine/inventory.js';
import { inventoryBackend, inventoryFromEnv } from '../../engine/inventory-backend.js';
import { type InventoryEntry, ownedOrigin } from '../../engine/inventory-document.js';
import type { Catalog } from '../../engine/catalog.js';
import { isPrunable } from '../../resources/contract.js';
import { WorkspaceInventoryBackend } from '../../engine/inventory-workspace.js';
import { holderLiveness, holderOfReason } from '../../common/lock-reason.js';
import { readHolder, STATE_LOCK_FILE } from '../../engine/state-lock.js';
import { type LockedInventory, lockInventory } from '../../engine/workflow.js';
import { askYesNo } from '../ask-yes-no.js';
import { CliError, EXIT } from '../exit-codes.js';
import { type Io, write } from '../io.js';
import { sayLockWait } from '../lock-wait.js';
import { keyValues, table } from '../table.js';
import { CLI_SETTING_NAMES } from '../setting-flags.js';

export interface InventoryFlags {
  json?: boolean;
  yes?: boolean;
  to?: string;
  /** Seconds to wait for another run's lock. */
  lockTimeout?: number;
  /** `unlock --force`: release a lock whose holder still runs on this host. */
  force?: boolean;
  /** False with `--no-color`: a plain confirmation prompt. */
  color?: boolean;
}

/**
 * Asks on a terminal; without one, `--yes` is the answer, and its absence a refusal with a hint.
 * Returns the exit code to stop with (after `cancelled` is said), or undefined to go on.
 */
async function confirmed(
  io: Io,
  flags: InventoryFlags,
  question: string,
  flag: string,
  cancelled: string,
): Promise<number | undefined> {
  if (flags.yes) return undefined;
  const reply = await askYesNo(io, {
    message: question,
    color: flags.color,
    noTerminal: `refusing to ${flag} without confirmation: no terminal to ask on. Pass --yes to do it anyway.`,
  });
  if (reply.answer === 'yes') return undefined;
  write(io.stderr, reply.answer === 'interrupted' ? `Interrupted; ${cancelled}` : `Cancelled; ${cancelled}`);
  return reply.answer === 'interrupted' ? reply.exitCode : EXIT.error;
}

/**
 * One inventory entry as `inventory list --json` and `inventory show --json` print it, one shape for
 * both (`show` spread the stored entry, in its own field names: `writeOnly`, `writeOnlyKey`). Which
 * write-only attributes have a digest, never the digests; the state key's id, which names no secret.
 */
function entryJson(address: string, e: InventoryEntry): Record<string, unknown> {
  return {
    address,
    kind: e.kind,
    key: e.key,
    id: e.id ?? null,
    owned: e.owned,
    origin: e.owned ? ownedOrigin(e) : null,
    write_only: Object.keys(e.writeOnly).sort(),
    write_only_key: e.writeOnlyKey ?? null,
  };
}

export async function inventoryList(flags: InventoryFlags, io: Io): Promise<number> {
  const inventory = inventoryFromEnv(io.env);
  await inventory.open().finally(() => inventory.close());
  const entries = inventory.objects.entries();
  if (flags.json) {
    const objects = entries.map(([address, e]) => entryJson(address, e));
    // `absent`: why no inventory was read at all (none there, or not for this token), else null.
    write(
      io.stdout,
      jsonOut(
        { inventory: inventory.backend.description, absent: inventory.absent ?? null, objects },
        null,
        2,
      ),
    );
    return EXIT.ok;
  }
  if (entries.length === 0) {
    // None found is not an empty one: a token that may not see the workspace reads none at all.
    const absent = inventory.absent;
    write(
      io.stdout,
      absent
        ? `No inventory was read (${printable(absent)}).`
        : `The inventory (${inventory.backend.description}) holds no objects.`,
    );
    return EXIT.ok;
  }
  // Which inventory, said first: run from another folder, a local one is another file altogether.
  write(
    io.stdout,
    `The inventory (${inventory.backend.description}) holds ${entries.length} object${entries.length === 1 ? '' : 's'}:`,
  );
  write(
    io.stdout,
    table(
      ['ADDRESS', 'OWNED', 'ID', 'WRITE-ONLY'],
      entries.map(([address, e]) => [
        address,
        e.owned ? 'yes' : 'no',
        e.id ?? '',
        String(Object.keys(e.writeOnly).length),
      ]),
    ),
  );
  return EXIT.ok;
}

export async function inventoryShow(
  address: string,
  flags: InventoryFlags,
  io: Io,
  catalog: Catalog,
): Promise<number> {
  const inventory = inventoryFromEnv(io.env);
  await inventory.open().finally(() => inventory.close());
  const entry = inventory.objects.entry(address);
  if (!entry) throw new CliError(`${address} is not in the inventory (${inventory.backend.description})`);
  if (flags.json) {
    write(io.stdout, jsonOut(entryJson(address, entry), null, 2));
    return EXIT.ok;
  }
  write(
    io.stdout,
    keyValues([
      ['Address', address],
      ['Kind', entry.kind],
      ['Connection', entry.key.connection ?? '(the environment)'],
      ['ID', entry.id ?? '(none recorded)'],
      [
        'Owned',
        entry.owned
          ? `yes: ${ownedOrigin(entry) === 'imported' ? 'adopted with `converge import`' : 'created by Converge'}, ${
              // A kind that cannot be pruned (a directory configuration) is never deleted by it.
              isPrunable(catalog.kind(entry.kind))
                ? '--prune may delete it'
                : `--prune never deletes ${entry.kind} objects`
            }`
          : 'no: --prune never deletes it',
      ],
      // Digests are keyed secrets' fingerprints: their attribute names are enough to repair with.
      ['Write-only', Object.keys(entry.writeOnly).sort().join(', ') || '(none)'],
    ]),
  );
  return EXIT.ok;
}

export async function inventoryForget(address: string, flags: InventoryFlags, io: Io): Promise<number> {
  const { inventory, release } = await lockInventory({
    env: io.env,
    command: `converge inventory forget ${address}`,
    timeoutMs: (flags.lockTimeout ?? 10) * 1000,
    onWait: sayLockWait(io, flags.lockTimeout),
    settingNames: CLI_SETTING_NAMES,
  });
  try {
    if (!inventory.objects.entry(address))
      throw new CliError(`${address} is not in the inventory (${inventory.backend.description})`);
    const question = `Forget ${address}? Converge will no longer prune it, and sets its write-only values again.`;
    const stop = await confirmed(io, flags, question, 'forget an object', 'the inventory is unchanged.');
    if (stop !== undefined) return stop;
    inventory.objects.forget(address);
    await inventory.save();
    write(
      io.stdout,
      `Forgot ${address}; nothing was sent to the service (a live object, if there is one, is left as it is).`,
    );
    return EXIT.ok;
  } finally {
    await release();
  }
}

/**
 * A lock whose holder still runs on this host belongs to a run in progress: releasing it would let
 * two runs write the inventory at once, so it takes `--force`. A holder on another host cannot be
 * checked: said so, and the usual confirmation (or `--yes`) decides.
 */
function refuseLiveHolder(
  io: Io,
  flags: InventoryFlags,
  holder: { host: string; pid: number } | undefined,
  what: string,
): void {
  if (!holder) {
    write(io.stderr, 'Whether the run holding this lock is still going cannot be checked from here.');
    return;
  }
  const liveness = holderLiveness(holder);
  if (liveness === 'elsewhere') {
    write(
      io.stderr,
      `The lock is held from host ${holder.host} (pid ${holder.pid}): whether that run is still going cannot be checked from here.`,
    );
    return;
  }
  if (liveness === 'dead') {
    write(io.stdout, `Its holder (pid ${holder.pid}) is no longer running on this host.`);
    return;
  }
  if (flags.force) {
    write(
      io.stderr,
      `Warning: releasing the lock of pid ${holder.pid} (${what}), still running on this host.`,
    );
    return;
  }
  throw new CliError(
    `the lock is held by pid ${holder.pid} (${what}), which is still running on this host; refusing to release it. ` +
      'Let it finish, stop it, or pass --force if it is certainly not using the inventory.',
  );
}

export async function inventoryUnlock(flags: InventoryFlags, io: Io): Promise<number> {
  const inventory = inventoryFromEnv(io.env);
  const backend = inventory.backend;
  try {
    if (backend instanceof WorkspaceInventoryBackend) {
      const workspace = await backend.lockState();
      if (!workspace?.lockedBy) {
        write(io.stdout, `${backend.description} is not locked.`);
        return EXIT.ok;
      }
      const holder = workspace.lockReason ?? workspace.lockedByName ?? workspace.lockedBy.id;
      write(io.stdout, keyValues([['Locked by', holder]]));
      const runner = workspace.lockReason ? holderOfReason(workspace.lockReason) : undefined;
      refuseLiveHolder(io, flags, runner, holder);
      const question = 'Release this lock? Only do so if that run is gone.';
      const stop = await confirmed(io, flags, question, 'unlock', 'the lock is still held.');
      if (stop !== undefined) return stop;
      await backend.forceUnlock();
      write(io.stdout, `Released the lock of ${backend.description}.`);
      return EXIT.ok;
    }
    const file = path.join(path.dirname((backend as FileInventoryBackend).file), STATE_LOCK_FILE);
    const current = readHolder(file);
    if (current === 'gone') {
      write(io.stdout, `${file} is not locked.`);
      return EXIT.ok;
    }
    if (current !== 'unreadable') {
      const { holder } = current;
      write(
        io.stdout,
        keyValues([
          [
            'Locked by',
            `pid ${holder.pid} on ${holder.host}, running \`${holder.command}\` since ${holder.since}`,
          ],
        ]),
      );
      refuseLiveHolder(io, flags, holder, `\`${holder.command}\``);
    }
    const question = `Delete the lock ${file}? Only do so if no apply is running.`;
    const stop = await confirmed(io, flags, question, 'unlock', 'the lock is still held.');
    if (stop !== undefined) return stop;
    try {
      unlinkSync(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      write(io.stdout, `${file} is not locked.`);
      return EXIT.ok;
    }
    write(io.stdout, `Deleted the lock ${file}.`);
    return EXIT.ok;
  } finally {
    await inventory.close();
  }
}

export async function inventoryMigrate(flags: InventoryFlags, io: Io): Promise<number> {
  if (!flags.to) throw new CliError('name where to migrate with --to workspace:ORG/NAME (or file:PATH)');
  const command = `converge inventory migrate --to ${flags.to}`;
  const timeoutMs = (flags.lockTimeout ?? 10) * 1000;
  const onWait = sayLockWait(io, flags.lockTimeout);
  const from = await lockInventory({
    env: io.env,
    command,
    timeoutMs,
    onWait,
    settingNames: CLI_SETTING_NAMES,
  });
  try {
    const target = new LocalInventory(io.env, inventoryBackend(flags.to, io.env, undefined, '--to'));
    // Two files in one folder share its lock, which this run holds already: taken again, the run
    // waited for itself and then failed.
    const to =
      target.backend.lockedThing === from.inventory.backend.lockedThing
        ? await openUnderHeldLock(target)
        : await lockInventory({
            inventory: target,
            command,
            timeoutMs,
            onWait,
            settingNames: CLI_SETTING_NAMES,
          });
    try {
      if (to.inventory.backend.description === from.inventory.backend.description)
        throw new CliError(`the inventory is already ${from.inventory.backend.description}`);
      if (to.inventory.objects.entries().length > 0)
        throw new EngineError(
          `${to.inventory.backend.description} already holds ${to.inventory.objects.entries().length} objects; migrate only into an empty inventory`,
        );
      const entries = from.inventory.objects.entries();
      for (const [address, entry] of entries) to.inventory.objects.record(address, entry);
      // What it deleted too: an old saved plan must not make those again after a migration.
      to.inventory.copyDeletions(from.inventory);
      await to.inventory.save();
      write(
        io.stdout,
        `Copied ${entries.length} object${entries.length === 1 ? '' : 's'} from ${from.inventory.backend.description} to ${to.inventory.backend.description}.\n` +
          `Use it from now on with CONVERGE_INVENTORY=${flags.to}; every run that uses it needs the same CONVERGE_STATE_KEY (write-only digests are keyed with it). The old inventory is left as it was.`,
      );
      return EXIT.ok;
    } finally {
      await to.release();
    }
  } finally {
    await from.release();
  }
}

/** An inventory read under a lock the run holds already (through another inventory sharing it). */
async function openUnderHeldLock(inventory: LocalInventory): Promise<LockedInventory> {
  try {
    await inventory.open();
  } catch (error) {
    await inventory.close();
    throw error;
  }
  return { inventory, release: () => inventory.close() };
}
