/** The registry's module: its client definition, the AclRole kind, and `converge role get|list`. */
import { registryService } from '../../clients/registry/definition.js';
import { aclRoleKind } from '../../resources/acl-role.js';
import type { ServiceModule } from '../catalog.js';
import { roleGetCommand, roleListCommand } from './role.js';

export const registryModule: ServiceModule = {
  definition: registryService,
  kinds: [aclRoleKind],
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
