/**
 * `converge import ADDRESS… -f PATH`: records existing live objects that the manifest declares as
 * Converge's own in the inventory (engine/adopt.ts). Writes nothing to any service; holds the
 * inventory's lock while it writes, as apply does.
 */
import { adoptObjects } from '../../engine/adopt.js';
import type { Catalog } from '../../engine/catalog.js';
import { inventoryFromEnv } from '../../engine/inventory-backend.js';
import { connect, loadManifest, lockInventory } from '../../engine/workflow.js';
import { EXIT } from '../exit-codes.js';
import { type Io, write } from '../io.js';
import { sayLockWait } from '../lock-wait.js';
import { requireManifestPaths } from '../manifest-paths.js';
import { quoteArg, settingFlags } from '../remedies.js';
import { runHttpOptions } from '../service-client.js';
import { CLI_SETTING_NAMES } from '../setting-flags.js';

export interface ImportFlags {
  file: string[];
  allowEnv?: string[];
  allowAddress?: string[];
  lockTimeout?: number;
  timeout?: number;
}

/** What an imported object without its ownership marker means for the next plan and for prune. */
function markerNote(marker: { adds?: string }): string {
  return marker.adds
    ? `It lacks Converge's ownership marker: the next plan adds ${marker.adds} (an update), and that apply writes it.`
    : "It lacks Converge's ownership marker, which only a create sets: the inventory records it as adopted, so --prune deletes it once the manifest drops it, as it does what Converge created.";
}

/**
 * Said, not refused, of an adopted object another inventory's Converge marked: adopting another
 * project's object may be meant (a hand-over), but its own manifest may still manage it, and
 * `--prune` here now stops or deletes it once this manifest drops it.
 */
export function markedElsewhereWarning(address: string): string {
  return `Warning: it carries Converge's ownership marker, but this inventory does not record it as Converge's: another manifest, with its own inventory, may manage it. From now on --prune here deletes it once this manifest drops it; if it is another project's, forget it again with \`converge inventory forget ${address} --yes\`.`;
}

export async function importCommand(
  addresses: string[],
  flags: ImportFlags,
  io: Io,
  catalog: Catalog,
): Promise<number> {
  requireManifestPaths(flags.file);
  const manifest = await loadManifest(flags.file, {
    catalog,
    env: io.env,
    settingNames: CLI_SETTING_NAMES,
    allowEnv: flags.allowEnv ?? [],
    ...(flags.allowAddress ? { allowAddresses: flags.allowAddress } : {}),
  });
  const http = runHttpOptions(io, flags.timeout);
  // The inventory CONVERGE_INVENTORY names (a file or a workspace), under its lock, as apply holds it.
  const { inventory, release } = await lockInventory({
    inventory: inventoryFromEnv(io.env, http),
    command: `converge import ${addresses.join(' ')}`,
    timeoutMs: (flags.lockTimeout ?? 10) * 1000,
    onNote: (note) => write(io.stderr, note),
    onWait: sayLockWait(io, flags.lockTimeout),
    settingNames: CLI_SETTING_NAMES,
  });
  const connections = connect(manifest, { catalog, env: io.env, http });
  try {
    const results = await adoptObjects(manifest, addresses, connections, inventory, catalog);
    for (const r of results) {
      const id = r.id ? ` (id ${r.id})` : '';
      write(
        io.stdout,
        r.notLive
          ? `Left ${r.address}: no such object on its service yet (an apply creates it).`
          : r.adopted
            ? `Imported ${r.address}${id}: Converge now manages it.`
            : `${r.address}${id} is already in the inventory.`,
      );
      if (r.marker) write(io.stdout, `  ${markerNote(r.marker)}`);
      if (r.markedElsewhere) write(io.stdout, `  ${markedElsewhereWarning(r.address)}`);
    }
    // The command as it can be run: the manifest the import read (plan takes no default), loaded
    // as the import loaded it (the `${env:}` it reads exposed by the same --allow-env).
    const plan = [
      'converge plan',
      ...flags.file.map((f) => `-f ${quoteArg(f)}`),
      ...settingFlags(flags),
    ].join(' ');
    write(io.stdout, `Run \`${plan}\` to see how the live objects differ from the manifest.`);
    return EXIT.ok;
  } finally {
    await release();
    await connections.close();
  }
}
