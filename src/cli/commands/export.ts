/**
 * `converge export -o DIR`: live objects written as manifest files (engine/export.ts), with a note of
 * the variables the secret placeholders need and the command that plans the export.
 */
import path from 'node:path';
import { printable } from '../../common/printable.js';
import type { Catalog } from '../../engine/catalog.js';
import { exportLive } from '../../engine/export.js';
import { writeExportFiles } from '../../engine/export-files.js';
import { inventoryFromEnv } from '../../engine/inventory-backend.js';
import { loadManifest } from '../../engine/workflow.js';
import { formatPosition, type Manifest } from '../../manifest/types.js';
import { connectionSettings } from '../../engine/connection-settings.js';
import { keyDesired, type SettingsOf } from '../../engine/desired.js';
import { CliError, EXIT } from '../exit-codes.js';
import { type Interrupt, onInterrupt } from '../interrupt.js';
import { type Io, write } from '../io.js';
import { quoteArg, settingFlags } from '../remedies.js';
import { runHttpOptions } from '../service-client.js';
import { CLI_SETTING_NAMES } from '../setting-flags.js';
import { addressOf, isExportable, isNamespaced, type ResourceKey } from '../../resources/contract.js';

export interface ExportFlags {
  out?: string;
  kind: string[];
  namespace?: string;
  connection?: string;
  /** A manifest whose Connections `--connection` may name. */
  file: string[];
  allowEnv?: string[];
  allowAddress?: string[];
  timeout?: number;
}

export async function exportCommand(flags: ExportFlags, io: Io, catalog: Catalog): Promise<number> {
  if (!flags.out) throw new CliError('name the folder to write with -o DIR');
  const out = flags.out;
  // Ctrl-C or SIGTERM stops the reads and says so; the files are written only once every read is
  // in, so an interrupted export leaves no half-exported folder behind.
  const interrupt = onInterrupt(io);
  const stage = { writing: false };
  try {
    return await exportAll({ ...flags, out }, io, catalog, interrupt, stage);
  } catch (error) {
    // A failure while writing is that failure, whenever the signal came: files may be written.
    if (interrupt.exitCode === undefined || stage.writing) throw error;
    write(
      io.stderr,
      `Export interrupted (${interrupt.signalName ?? 'signal'}) while reading; nothing was written to ${out}.`,
    );
    return interrupt.exitCode;
  } finally {
    interrupt.dispose();
  }
}

async function exportAll(
  flags: ExportFlags & { out: string },
  io: Io,
  catalog: Catalog,
  interrupt: Interrupt,
  stage: { writing: boolean },
): Promise<number> {
  const manifest =
    flags.file.length > 0
      ? await loadManifest(flags.file, {
          catalog,
          env: io.env,
          settingNames: CLI_SETTING_NAMES,
          allowEnv: flags.allowEnv ?? [],
          ...(flags.allowAddress ? { allowAddresses: flags.allowAddress } : {}),
        })
      : undefined;
  const http = runHttpOptions(io, flags.timeout);
  // The inventory CONVERGE_INVENTORY names: the digests of write-only values Converge applied.
  const inventory = inventoryFromEnv(io.env, http);
  await inventory.open().finally(() => inventory.close());
  const everything = await exportLive({
    catalog,
    env: io.env,
    http,
    settingNames: CLI_SETTING_NAMES,
    writeOnly: inventory,
    ...(flags.kind.length ? { kinds: flags.kind } : {}),
    ...(flags.namespace !== undefined ? { namespace: flags.namespace } : {}),
    ...(flags.connection !== undefined ? { connection: flags.connection } : {}),
    ...(manifest ? { manifest } : {}),
    onLeftOut: (message) => write(io.stderr, `Left out ${printable(message)}.`),
    signal: interrupt.signal,
  });
  // A read cut short may have come back empty rather than failed: nothing read is trusted then.
  if (interrupt.signal.aborted) throw interrupt.signal.reason;
  // The workspace holding the inventory is Converge's bookkeeping, not something to manage.
  const home = inventory.backend.storedIn;
  const isHome = (key: ResourceKey) =>
    home !== undefined && addressOf(key) === addressOf(home) && (key.connection ?? '') === '';
  const objects = everything.filter((o) => !isHome(o.key));
  if (objects.length < everything.length)
    write(io.stdout, `Left out ${addressOf(home!)}: it holds Converge's inventory (CONVERGE_INVENTORY).`);
  if (objects.length === 0) {
    write(io.stdout, nothingToExport(flags, catalog));
    return EXIT.ok;
  }
  stage.writing = true;
  const files = await writeExportFiles(flags.out, objects, { settingNames: CLI_SETTING_NAMES });
  // The few local files are written whole even when a signal comes meanwhile: the export is done.
  if (interrupt.exitCode !== undefined)
    write(
      io.stderr,
      `The interrupt (${interrupt.signalName ?? 'signal'}) came once every object had been read.`,
    );
  write(
    io.stdout,
    `Exported ${objects.length} object${objects.length === 1 ? '' : 's'} to ${files.length} file${files.length === 1 ? '' : 's'} in ${flags.out}:`,
  );
  for (const f of files) write(io.stdout, `  ${f}`);
  for (const o of objects)
    for (const at of o.redacted ?? [])
      write(
        io.stderr,
        `Warning: ${printable(addressOf(o.key))}: ${printable(at)} holds the token Converge read the service with, as the service stored it; written as [redacted] (remove it from the service and rotate the token).`,
      );
  // Where it read, said: only each kind's default place unless --namespace said otherwise, and an
  // adopter took an export of `default` for one of everything.
  write(io.stdout, `Read from: ${readFrom(objects, catalog)}.`);
  if (flags.namespace === undefined)
    write(
      io.stdout,
      "Each kind was read in its default place only: `--namespace N` reads another (with `--kind AclRole` or `--kind Job`, `--namespace '*'` reads every namespace).",
    );
  const variables = objects.flatMap((o) => o.placeholders.map((p) => p.variable));
  const sources = await planFiles(flags, manifest, (files) =>
    loadManifest(files, {
      catalog,
      env: io.env,
      settingNames: CLI_SETTING_NAMES,
      allowEnv: flags.allowEnv ?? [],
      ...(flags.allowAddress ? { allowAddresses: flags.allowAddress } : {}),
    }).then(
      () => true,
      () => false,
    ),
  );
  // What the suggested commands read, loaded as this export loaded it (its --allow-env and
  // --allow-address: a Connection's file may read a variable or send to an address only they allow).
  const read = [...sources.map((f) => `-f ${quoteArg(f)}`), ...settingFlags(flags)].join(' ');
  const plan = `converge plan ${read}`;
  // The variables the exported placeholders read, unless the export was given them already.
  const unexposed = [...new Set(variables)].filter((v) => !(flags.allowEnv ?? []).includes(v));
  const allowPlaceholders = unexposed.length > 0 ? ` --allow-env '${unexposed.join(',')}'` : '';
  const twice = manifest ? declaredAlready(manifest, sources, objects, catalog, io.env) : [];
  if (twice.length > 0)
    write(
      io.stdout,
      `\n${twice.length} exported object${twice.length === 1 ? ' is' : 's are'} declared in the manifest that declares connection "${flags.connection}" too (${twice
        .slice(0, 3)
        .map((t) => `${t.address} at ${t.at}`)
        .join(
          ', ',
        )}${twice.length > 3 ? ', …' : ''}): delete ${twice.length === 1 ? 'it' : 'them'} from one place, or the plan below reports ${twice.length === 1 ? 'it' : 'them'} as declared twice.`,
    );
  if (variables.length > 0) {
    write(
      io.stdout,
      `\nSecrets are not exported. Set these variables and allow them before planning:\n${variables.map((v) => `  ${v}`).join('\n')}\n  ${plan}${allowPlaceholders}`,
    );
  } else {
    write(io.stdout, `\nPlan it with: ${plan}`);
  }
  // What makes them Converge's, should they be (prune deletes only what its inventory records).
  write(
    io.stdout,
    `To have Converge manage them (so that --prune may delete one the manifest drops): converge import '**' ${read}${allowPlaceholders}`,
  );
  return EXIT.ok;
}

/**
 * An organization or mount that does not exist is an error by now (exportLive asks the kinds that
 * can tell); a registry or scheduler namespace cannot be told from an empty one (both list it as
 * empty), so a typo there must not pass for "nothing there" without a word.
 */
function nothingToExport(flags: ExportFlags, catalog: Catalog): string {
  if (flags.namespace === undefined) return 'Nothing to export: no live object of the kinds asked for.';
  const ns = `namespace "${printable(flags.namespace)}"`;
  const asked = flags.kind.length ? flags.kind.map((k) => catalog.kind(k)) : catalog.kinds;
  const checked = asked.every((k) => !isExportable(k) || k.exporter.missingScope !== undefined);
  return checked
    ? `Nothing to export: ${ns} exists and holds no live object of the kinds asked for.`
    : `Nothing to export: nothing was found in ${ns}. The registry and the scheduler list a namespace that does not exist as empty: check that it exists and is spelt so.`;
}

/**
 * What the plan of the export reads: the folder written, and through a Connection the files that
 * declare it, since the documents name it and a plan of the folder alone fails for want of it.
 * Those files, not the `-f` folder holding them: the rest of a project folder declares objects the
 * export may hold too, each then reported as declared twice. Unless they do not load alone (a
 * `${file:../secrets/token}` beside them lies outside their own folder): then the `-f` paths that
 * hold them, as given. A file that holds the folder already reads it.
 */
async function planFiles(
  flags: ExportFlags & { out: string },
  manifest: Manifest | undefined,
  loads: (files: string[]) => Promise<boolean>,
): Promise<string[]> {
  if (flags.connection === undefined || !manifest) return [flags.out];
  // As the manifest names its files (relative to where Converge runs, when they are below it).
  const declaring = [
    ...new Set(manifest.connections.filter((c) => c.name === flags.connection).map((c) => c.source.file)),
  ];
  const given = flags.file.filter((f) => declaring.some((d) => holds(f, d)));
  const sources = (await loads(declaring)) || given.length === 0 ? declaring : given;
  return sources.some((f) => holds(f, flags.out)) ? sources : [flags.out, ...sources];
}

/** `namespace default (AclRole, Job), organization acme (Workspace)`: the places the objects came from. */
function readFrom(objects: readonly { key: ResourceKey }[], catalog: Catalog): string {
  const places = new Map<string, Set<string>>();
  for (const { key } of objects) {
    const kind = catalog.kind(key.kind);
    const label = isNamespaced(kind) ? kind.namespaceLabel : undefined;
    const place =
      key.namespace === undefined
        ? 'the service'
        : `${label ?? 'namespace'} ${printable(key.namespace)}${key.connection ? ` on connection ${printable(key.connection)}` : ''}`;
    let kinds = places.get(place);
    if (!kinds) places.set(place, (kinds = new Set()));
    kinds.add(key.kind);
  }
  return [...places].map(([place, kinds]) => `${place} (${[...kinds].join(', ')})`).join(', ');
}

/** Whether `inner` is `outer` or lies inside it. */
function holds(outer: string, inner: string): boolean {
  const rel = path.relative(path.resolve(outer), path.resolve(inner));
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** Exported objects that the files of the suggested plan declare already: declared twice there. */
function declaredAlready(
  manifest: Manifest,
  sources: readonly string[],
  objects: readonly { key: ResourceKey }[],
  catalog: Catalog,
  env: NodeJS.ProcessEnv,
): { address: string; at: string }[] {
  const declared = {
    ...manifest,
    resources: manifest.resources.filter((r) => sources.some((f) => holds(f, r.source.file))),
  };
  const settingsOf: SettingsOf = (service, connection) =>
    connectionSettings(env, catalog.definitions, manifest.connections, service, connection);
  const at = new Map(
    keyDesired(declared, catalog, settingsOf).desired.map((d) => [addressOf(d.key), d.resource?.source]),
  );
  return objects.flatMap((o) => {
    const source = at.get(addressOf(o.key));
    return source ? [{ address: addressOf(o.key), at: formatPosition(source) }] : [];
  });
}
