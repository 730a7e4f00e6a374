/**
 * The command line, run in-process (`run(['plan', '-f', 'infra/'], io)`), for programs and tests that
 * want exactly what `converge` does, output and exit code included. The CLI is loaded on the first
 * call, so a program that uses only the engine never loads the argument parser, prompts and renderers.
 */
import type { Io } from './cli/io.js';
import type { CliCatalog } from './cli/service-module.js';

export type { Io };

/** Runs `converge` with `args` (without `node` and the script) on `io`; resolves to the exit code. */
export async function run(args: string[], io: Io, catalog?: CliCatalog): Promise<number> {
  const cli = await import('./cli/program.js');
  return cli.run(args, io, catalog);
}
