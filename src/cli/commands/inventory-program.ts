/**
 * `converge inventory …` as commander commands. The handlers load on first use (the dynamic import),
 * so the rest of the CLI does not pay for them.
 */
import type { Command, Option } from 'commander';
import type { Catalog } from '../../engine/catalog.js';
import type { Io } from '../io.js';
import type { InventoryFlags } from './inventory.js';

export function registerInventoryCommands(
  program: Command,
  setExit: (code: number) => void,
  io: Io,
  lockTimeoutOption: () => Option,
  catalog: Catalog,
): void {
  const load = () => import('./inventory.js');
  const group = program
    .command('inventory')
    .description(
      'inspect and repair the inventory of objects Converge manages (CONVERGE_INVENTORY=file:PATH|workspace:ORG/NAME)',
    );
  group
    .command('list')
    .description('every object in the inventory: address, whether Converge created it, live id')
    .option('--json', 'print as JSON')
    .action(async (opts: InventoryFlags) => setExit(await (await load()).inventoryList(opts, io)));
  group
    .command('show')
    .description('one object of the inventory')
    .argument('<address>', 'the address the plan prints (AclRole/default/web)')
    .option('--json', 'print as JSON')
    .action(async (address: string, opts: InventoryFlags) =>
      setExit(await (await load()).inventoryShow(address, opts, io, catalog)),
    );
  group
    .command('forget')
    .description('drop an object from the inventory (the live object stays); --prune no longer deletes it')
    .argument('<address>', 'the address the plan prints')
    .option('--yes', 'do not ask (needed without a terminal, as in CI)')
    .addOption(lockTimeoutOption())
    .action(async (address: string, opts: InventoryFlags) =>
      setExit(await (await load()).inventoryForget(address, opts, io)),
    );
  group
    .command('unlock')
    .description(
      "release a stale lock left by a run that is gone (the workspace's lock, or the local apply.lock)",
    )
    .option('--yes', 'do not ask (needed without a terminal, as in CI)')
    .option('--force', 'release it even though its holder is still running on this host')
    .action(async (opts: InventoryFlags) => setExit(await (await load()).inventoryUnlock(opts, io)));
  group
    .command('migrate')
    .description('copy the inventory into another, empty one (then set CONVERGE_INVENTORY to it)')
    .requiredOption('--to <inventory>', 'workspace:ORG/NAME or file:PATH')
    .addOption(lockTimeoutOption())
    .action(async (opts: InventoryFlags) => setExit(await (await load()).inventoryMigrate(opts, io)));
}
