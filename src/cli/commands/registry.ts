/** The registry's module on the command line: the engine's (the AclRole kind) and `converge role get|list`. */
import { registryModule as engineModule } from '../../engine/services.js';
import type { CliServiceModule } from '../service-module.js';
import { roleGetCommand, roleListCommand } from './role.js';

export const registryModule: CliServiceModule = {
  ...engineModule,
  commands(program, { io, action }) {
    const role = program.command('role').description('read registry ACL roles');
    role
      .command('get')
      .description('show one role, by name or by --id')
      .argument('[name]', 'role name')
      .option('--id <id>', 'role ID instead of a name')
      .option('--ns <namespace>', 'registry namespace')
      .option('--json', 'print the role as JSON')
      .action(action((name: string | undefined, opts) => roleGetCommand(name, opts, io)));
    role
      .command('list')
      .description('list roles, optionally only those linked to a policy')
      .option('--policy <id>', 'only roles linked to this policy ID')
      .option('--ns <namespace>', 'registry namespace (* for all)')
      .option('--json', 'print the roles as JSON')
      .action(action((opts) => roleListCommand(opts, io)));
  },
};
