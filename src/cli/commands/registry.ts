/** The registry's operator commands: `converge role get|list`. Handlers load when they run. */
import type { ServiceCli } from '../service-module.js';

const roleHandlers = () => import('./role.js');

export const cli: ServiceCli = {
  commands(program, { io, action }) {
    const role = program.command('role').description('read registry ACL roles');
    role
      .command('get')
      .description('show one role, by name or by --id')
      .argument('[name]', 'role name')
      .option('--id <id>', 'role ID instead of a name')
      .option('--ns <namespace>', 'registry namespace')
      .option('--json', 'print the role as JSON')
      .action(
        action(async (name: string | undefined, opts) =>
          (await roleHandlers()).roleGetCommand(name, opts, io),
        ),
      );
    role
      .command('list')
      .description('list roles, optionally only those linked to a policy')
      .option('--policy <name|id>', 'only roles linked to this policy (its name or ID)')
      .option('--ns <namespace>', 'registry namespace (* for all)')
      .option('--json', 'print the roles as JSON')
      .action(action(async (opts) => (await roleHandlers()).roleListCommand(opts, io)));
  },
};
