/**
 * A service as the CLI sees it: the engine's module (client definition and kinds) plus the operator
 * commands it adds to the program (`converge role …`). The engine's list (`../engine/services.ts`)
 * is the only list of services: a service Converge ships finds its commands by its name, in
 * `./commands/<service name>.ts` (exporting `cli`), loaded only when the program is built. A
 * service added by an embedding program (or a test) brings its commands along as `commands`.
 */
import type { Command } from 'commander';
import type { Catalog, ServiceModule } from '../engine/catalog.js';
import type { Io } from './io.js';

/** What a service module's commands receive. */
export interface CommandContext {
  io: Io;
  catalog: CliCatalog;
  /** Wraps a command handler so that its exit code becomes the process's. */
  action<A extends unknown[]>(handler: (...args: A) => Promise<number>): (...args: A) => Promise<void>;
}

/**
 * Adds a service's operator commands to the program. It only declares them: each action imports
 * its handler module when it runs (`(await import('./role.js')).roleGetCommand(…)`), so building
 * the program (for `--help` or any other command) loads no handler, renderer or prompt.
 */
export type ServiceCommands = (program: Command, context: CommandContext) => void;

export interface CliServiceModule extends ServiceModule {
  /** The service's operator commands; absent: those of `./commands/<service name>.ts`, if any. */
  commands?: ServiceCommands;
}

export type CliCatalog = Catalog<CliServiceModule>;

/** What a `./commands/<service name>.ts` module exports as `cli`. */
export interface ServiceCli {
  commands: ServiceCommands;
}

/**
 * The commands of a module: its own, else those found by the service's name. A service with no
 * commands file has no operator commands; any other failure to load one is a bug and surfaces.
 */
export async function serviceCommands(module: CliServiceModule): Promise<ServiceCommands | undefined> {
  if (module.commands) return module.commands;
  const name = module.definition.name;
  // Service names are code (the engine's list), never input: the path cannot leave ./commands.
  // The template stays inside import(): the CLI's bundler (scripts/bundle-cli.mjs) then bundles
  // every ./commands/*.js as a chunk of its own and looks the name up among them at run time
  // (`@vite-ignore`: vitest, running the sources, leaves the import to Node as the build does).
  try {
    const found = (await import(/* @vite-ignore */ `./commands/${name}.js`)) as { cli?: ServiceCli };
    return found.cli?.commands;
  } catch (error) {
    if (isMissing(error, `/commands/${name}.`)) return undefined;
    throw error;
  }
}

/** Only the commands file itself being absent; a missing import inside it is a real error. */
function isMissing(error: unknown, file: string): boolean {
  const e = error as { code?: unknown; message?: unknown; url?: unknown };
  // The bundled CLI's lookup among the files it bundled (esbuild's words for "no such file").
  const bundled = /^Module not found in bundle: (.*)$/.exec(String(e?.message));
  if (e?.code === undefined && bundled) return `/${bundled[1]}`.includes(file);
  if (e?.code !== 'ERR_MODULE_NOT_FOUND') return false;
  // Node names the module it could not find first ("Cannot find module '…' imported from …").
  const missing = typeof e.url === 'string' ? e.url : (/'([^']+)'/.exec(String(e.message))?.[1] ?? '');
  return missing.includes(file);
}
