/**
 * The workspace service's operator commands: `converge workspace …` and `converge state …`.
 */
import type { Command } from 'commander';
import type { CommandContext, ServiceCli } from '../service-module.js';

// Handlers load when their command runs, not when the program is built.
const stateHandlers = () => import('./state.js');
const workspaceHandlers = () => import('./workspace.js');

const WORKSPACE_ARG = 'ORGANIZATION/NAME, a ws- id, or NAME with CONVERGE_WORKSPACES_ORGANIZATION set';

function workspaceCommands(program: Command, { io, action }: CommandContext): void {
  const workspace = program
    .command('workspace')
    .description('operate on workspaces: list, show, lock, delete');
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
    .action(action(async (opts) => (await workspaceHandlers()).workspaceListCommand(opts, io)));
  workspace
    .command('show')
    .description('show one workspace')
    .argument('<workspace>', WORKSPACE_ARG)
    .option('--json', 'print the workspace as JSON')
    .action(
      action(async (ws: string, opts) => (await workspaceHandlers()).workspaceShowCommand(ws, opts, io)),
    );
  workspace
    .command('lock')
    .description("lock a workspace (as the token's user or team)")
    .argument('<workspace>', WORKSPACE_ARG)
    .option('--reason <text>', 'why it is locked')
    .action(
      action(async (ws: string, opts) =>
        (await workspaceHandlers()).workspaceLockCommand('lock', ws, opts, io),
      ),
    );
  workspace
    .command('unlock')
    .description('unlock a workspace you locked')
    .argument('<workspace>', WORKSPACE_ARG)
    .action(
      action(async (ws: string) => (await workspaceHandlers()).workspaceLockCommand('unlock', ws, {}, io)),
    );
  workspace
    .command('force-unlock')
    .description('unlock a workspace someone else locked (needs admin access)')
    .argument('<workspace>', WORKSPACE_ARG)
    .action(
      action(async (ws: string) =>
        (await workspaceHandlers()).workspaceLockCommand('force-unlock', ws, {}, io),
      ),
    );
  workspace
    .command('delete')
    .description('safe-delete a workspace (refused while it manages resources), or --force')
    .argument('<workspace>', WORKSPACE_ARG)
    .option('--force', 'force-delete even if it manages resources (organization owners only)')
    .option(
      '--yes',
      'delete without asking (needed without a terminal), as job stop and inventory forget take',
    )
    .option('--auto-approve', 'the same as --yes')
    .action(
      action(async (ws: string, opts) => (await workspaceHandlers()).workspaceDeleteCommand(ws, opts, io)),
    );
}

function stateCommands(program: Command, { io, action }: CommandContext): void {
  const state = program.command('state').description("a workspace's state versions: push, pull, list, show");
  state
    .command('push')
    .description('push a state file: lock, upload, unlock (the lock is released on every path, Ctrl-C too)')
    .argument('<workspace>', WORKSPACE_ARG)
    .argument('<file>', 'the state file (JSON, format version 4)')
    .option('--force', 'replace the state even if the file does not continue it (lineage, serial)')
    .action(
      action(async (ws: string, file: string, opts: { force?: boolean }) =>
        (await stateHandlers()).statePushCommand(ws, file, io, opts),
      ),
    );
  state
    .command('pull')
    .description('print the raw current state, or write it to a file')
    .argument('<workspace>', WORKSPACE_ARG)
    .option(
      '-o, --output <file>',
      'write the state here instead of to standard output (never over a file that exists)',
    )
    .option('--force', 'with --output: replace the file if it exists')
    .action(action(async (ws: string, opts) => (await stateHandlers()).statePullCommand(ws, opts, io)));
  state
    .command('list')
    .description("list a workspace's state versions, newest first")
    .argument('<workspace>', WORKSPACE_ARG)
    .option('--json', 'print the state versions as JSON')
    .action(action(async (ws: string, opts) => (await stateHandlers()).stateListCommand(ws, opts, io)));
  state
    .command('show')
    .description('show one state version, with its resources and outputs')
    .argument('<state-version-id>', 'an sv- id')
    .option('--json', 'print the state version as JSON')
    .action(action(async (id: string, opts) => (await stateHandlers()).stateShowCommand(id, opts, io)));
}

export const cli: ServiceCli = {
  commands(program, context) {
    workspaceCommands(program, context);
    stateCommands(program, context);
  },
};
