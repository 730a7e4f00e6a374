/**
 * The command line: argument parsing and dispatch only. Each command lives in ./commands and returns
 * its exit code; errors are turned into one clear message by `run`.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { ManifestError } from '../manifest/types.js';
import { applyCommand } from './commands/apply.js';
import { planCommand } from './commands/plan.js';
import { roleGetCommand, roleListCommand } from './commands/role.js';
import { stateListCommand, statePullCommand, statePushCommand, stateShowCommand } from './commands/state.js';
import {
  workspaceDeleteCommand,
  workspaceListCommand,
  workspaceLockCommand,
  workspaceShowCommand,
} from './commands/workspace.js';
import { sandboxCommand } from './commands/sandbox.js';
import { validateCommand } from './commands/validate.js';
import { CliError, EXIT } from './exit-codes.js';
import { type Io, write } from './io.js';
import { VERSION } from './version.js';

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a whole number of at least 1');
  return n;
}

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new InvalidArgumentError('must be a port number (0 to 65535)');
  return n;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

const fileOption = () =>
  new Option('-f, --file <path>', 'manifest file or folder (repeatable; folders are read recursively)')
    .argParser(collect)
    .default([] as string[], 'none');
const parallelismOption = () =>
  new Option('--parallelism <n>', 'how many requests may run at once').argParser(positiveInt).default(10);
const noColorOption = () => new Option('--no-color', 'plain output, no colours (NO_COLOR does the same)');

export function buildProgram(io: Io, setExit: (code: number) => void): Command {
  const program = new Command('converge')
    .description(
      'Keep workspaces, directory auth, ACL roles and scheduler jobs in the state a YAML manifest declares.',
    )
    .version(VERSION, '-v, --version', 'print the version')
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
    })
    .exitOverride();

  program
    .command('validate')
    .description('check the manifest (syntax, schema, references between files); contacts no service')
    .addOption(fileOption())
    .action(async (opts: { file: string[] }) => setExit(await validateCommand(opts.file, io)));

  program
    .command('plan')
    .description('show what apply would change, attribute by attribute')
    .addOption(fileOption())
    .option('--json', 'print the plan as one JSON object (stable, with format_version)')
    .option('--markdown', 'print the plan as markdown for a pull-request comment')
    .option('--detailed-exitcode', 'exit 0 when there are no changes, 2 when there are, 1 on error')
    .option('-o, --out <file>', 'save the plan for `converge apply FILE` (also spelled -out FILE)')
    .option('--prune', 'also plan to delete objects Converge owns that the manifest no longer declares')
    .addOption(parallelismOption())
    .addOption(noColorOption())
    .action(async (opts) => {
      if (opts.json && opts.markdown) throw new CliError('choose one of --json and --markdown');
      setExit(await planCommand(opts, io));
    });

  program
    .command('apply')
    .description('plan, confirm, and make live state match the manifest; or apply a saved plan FILE')
    .argument('[planfile]', 'a plan saved with `converge plan -out FILE`')
    .addOption(fileOption())
    .option('--auto-approve', 'apply without asking (needed when there is no terminal, as in CI)')
    .option('--prune', 'also delete objects Converge owns that the manifest no longer declares')
    .option(
      '--force-unlock',
      'release workspace locks held by someone else where the manifest says locked: false',
    )
    .addOption(parallelismOption())
    .addOption(noColorOption())
    .action(async (planfile: string | undefined, opts) => setExit(await applyCommand(planfile, opts, io)));

  program
    .command('sandbox')
    .description('serve a local emulation of all four services on one loopback port')
    .addOption(new Option('--port <n>', 'port to listen on (0: any free port)').argParser(port).default(8500))
    .option('--host <address>', 'address to listen on (loopback unless you say otherwise)', '127.0.0.1')
    .option('--token <token>', 'root token for every service (random when absent)')
    .option('--data <dir>', 'keep the sandbox state in this folder across restarts')
    .option('--config <file>', 'YAML file with extra tokens, policies, seed data and faults')
    .action(async (opts) => setExit(await sandboxCommand(opts, io)));

  const role = program.command('role').description('read registry ACL roles');
  role
    .command('get')
    .description('show one role, by name or by --id')
    .argument('[name]', 'role name')
    .option('--id <id>', 'role ID instead of a name')
    .option('--ns <namespace>', 'registry namespace')
    .option('--json', 'print the role as JSON')
    .action(async (name: string | undefined, opts) => setExit(await roleGetCommand(name, opts, io)));
  role
    .command('list')
    .description('list roles, optionally only those linked to a policy')
    .option('--policy <id>', 'only roles linked to this policy ID')
    .option('--ns <namespace>', 'registry namespace (* for all)')
    .option('--json', 'print the roles as JSON')
    .action(async (opts) => setExit(await roleListCommand(opts, io)));

  const workspace = program
    .command('workspace')
    .description('operate on workspaces: list, show, lock, delete');
  const wsArg = 'ORGANIZATION/NAME, a ws- id, or NAME with CONVERGE_WORKSPACES_ORGANIZATION set';
  workspace
    .command('list')
    .description('list the workspaces of an organization (every page)')
    .option('--org <organization>', 'organization (default: CONVERGE_WORKSPACES_ORGANIZATION)')
    .option('--search <text>', 'names containing this')
    .option('--wildcard <pattern>', 'names matching this, with * as prefix, suffix or both')
    .option('--tags <a,b>', 'only workspaces with all these tags')
    .option('--exclude-tags <a,b>', 'leave out workspaces with any of these tags')
    .option('--project <id>', 'only workspaces in this project')
    .option('--json', 'print the workspaces as JSON')
    .action(async (opts) => setExit(await workspaceListCommand(opts, io)));
  workspace
    .command('show')
    .description('show one workspace')
    .argument('<workspace>', wsArg)
    .option('--json', 'print the workspace as JSON')
    .action(async (ws: string, opts) => setExit(await workspaceShowCommand(ws, opts, io)));
  workspace
    .command('lock')
    .description("lock a workspace (as the token's user or team)")
    .argument('<workspace>', wsArg)
    .option('--reason <text>', 'why it is locked')
    .action(async (ws: string, opts) => setExit(await workspaceLockCommand('lock', ws, opts, io)));
  workspace
    .command('unlock')
    .description('unlock a workspace you locked')
    .argument('<workspace>', wsArg)
    .action(async (ws: string) => setExit(await workspaceLockCommand('unlock', ws, {}, io)));
  workspace
    .command('force-unlock')
    .description('unlock a workspace someone else locked (needs admin access)')
    .argument('<workspace>', wsArg)
    .action(async (ws: string) => setExit(await workspaceLockCommand('force-unlock', ws, {}, io)));
  workspace
    .command('delete')
    .description('safe-delete a workspace (refused while it manages resources), or --force')
    .argument('<workspace>', wsArg)
    .option('--force', 'force-delete even if it manages resources (organization owners only)')
    .option('--auto-approve', 'delete without asking (needed without a terminal)')
    .action(async (ws: string, opts) => setExit(await workspaceDeleteCommand(ws, opts, io)));

  const state = program.command('state').description("a workspace's state versions: push, pull, list, show");
  state
    .command('push')
    .description('push a state file: lock, upload, unlock (the lock is released on every path, Ctrl-C too)')
    .argument('<workspace>', wsArg)
    .argument('<file>', 'the state file (JSON, format version 4)')
    .option('--force', 'replace the state even if the file does not continue it (lineage, serial)')
    .action(async (ws: string, file: string, opts) => setExit(await statePushCommand(ws, file, io, opts)));
  state
    .command('pull')
    .description('print the raw current state, or write it to a file')
    .argument('<workspace>', wsArg)
    .option('-o, --output <file>', 'write the state here instead of to standard output')
    .action(async (ws: string, opts) => setExit(await statePullCommand(ws, opts, io)));
  state
    .command('list')
    .description("list a workspace's state versions, newest first")
    .argument('<workspace>', wsArg)
    .option('--json', 'print the state versions as JSON')
    .action(async (ws: string, opts) => setExit(await stateListCommand(ws, opts, io)));
  state
    .command('show')
    .description('show one state version, with its resources and outputs')
    .argument('<state-version-id>', 'an sv- id')
    .option('--json', 'print the state version as JSON')
    .action(async (id: string, opts) => setExit(await stateShowCommand(id, opts, io)));

  for (const group of [program, role, workspace, state]) {
    for (const c of group.commands) c.exitOverride().configureOutput(program.configureOutput());
  }
  return program;
}

/** terraform spells it `-out FILE` / `-out=FILE`; commander would read that as `-o ut`. */
export function normaliseArgs(args: string[]): string[] {
  return args.map((a) => (a === '-out' ? '--out' : a.startsWith('-out=') ? `--out=${a.slice(5)}` : a));
}

/** Runs the CLI with the given arguments (without `node` and the script) and returns the exit code. */
export async function run(args: string[], io: Io): Promise<number> {
  let code: number = EXIT.ok;
  const program = buildProgram(io, (c) => {
    code = c;
  });
  try {
    await program.parseAsync(normaliseArgs(args), { from: 'user' });
    return code;
  } catch (error) {
    return reportError(error, io);
  }
}

function reportError(error: unknown, io: Io): number {
  const e = error as { code?: string; exitCode?: number };
  if (typeof e?.code === 'string' && e.code.startsWith('commander.')) {
    // Help and version exit 0; usage errors were already printed by commander.
    return e.exitCode === 0 ? EXIT.ok : EXIT.error;
  }
  if (error instanceof ManifestError) {
    const n = error.problems.length;
    write(io.stderr, `Error: the manifest has ${n} problem${n === 1 ? '' : 's'}:\n${error.message}`);
    return EXIT.error;
  }
  if (error instanceof CliError) {
    write(io.stderr, `Error: ${error.message}`);
    return error.exitCode;
  }
  const message = error instanceof Error ? error.message : String(error);
  write(io.stderr, `Error: ${message}`);
  if (io.env.CONVERGE_DEBUG && error instanceof Error && error.stack) write(io.stderr, error.stack);
  return EXIT.error;
}
