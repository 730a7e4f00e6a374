/**
 * A service as the CLI sees it: the engine's module (client definition and kinds) plus the operator
 * commands it adds to the program (`converge role …`). The CLI's catalog holds these, so a service
 * added by an embedding program (or a test) brings its commands along.
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

export interface CliServiceModule extends ServiceModule {
  /** Adds the service's operator commands (`converge role …`) to the program. */
  commands?(program: Command, context: CommandContext): void;
}

export type CliCatalog = Catalog<CliServiceModule>;
