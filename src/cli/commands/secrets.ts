/**
 * The secrets service's module: its client definition, the directory (LDAP) kinds, and the operator
 * commands `converge ldap login|groups|users|get`.
 */
import { DEFAULT_LDAP_MOUNT } from '../../clients/secrets.js';
import { secretsService } from '../../clients/secrets/definition.js';
import { ldapConfigKind } from '../../resources/secrets/ldap-config.js';
import { ldapGroupKind } from '../../resources/secrets/ldap-group.js';
import { ldapUserKind } from '../../resources/secrets/ldap-user.js';
import type { ServiceModule } from '../catalog.js';
import { ldapGetCommand, ldapListCommand, ldapLoginCommand } from './ldap.js';

const MOUNT_HELP = 'mount path of the auth method below auth/';

export const secretsModule: ServiceModule = {
  definition: secretsService,
  // Listed in apply order: a mount's configuration, then its groups, then the users naming them.
  kinds: [ldapConfigKind, ldapGroupKind, ldapUserKind],
  commands(program, { io, action }) {
    const ldap = program
      .command('ldap')
      .description(
        "the secrets service's directory (LDAP) auth method: log in, list and read groups and users",
      );
    ldap
      .command('login')
      .description(
        'log in with a directory username; the password is asked for on a terminal, or read from stdin (never from the command line)',
      )
      .argument('<username>', 'directory username')
      .option('--mount <path>', MOUNT_HELP, DEFAULT_LDAP_MOUNT)
      .option('--show-token', 'print the client token (hidden otherwise)')
      .option('--json', 'print the whole auth result as JSON, the client token included')
      .action(action((username: string, opts) => ldapLoginCommand(username, opts, io)));
    ldap
      .command('groups')
      .description('list the groups of the auth method with their policies')
      .option('--mount <path>', MOUNT_HELP, DEFAULT_LDAP_MOUNT)
      .option('--json', 'print the groups as JSON')
      .action(action((opts) => ldapListCommand('groups', opts, io)));
    ldap
      .command('users')
      .description('list the users of the auth method with their policies and groups')
      .option('--mount <path>', MOUNT_HELP, DEFAULT_LDAP_MOUNT)
      .option('--json', 'print the users as JSON')
      .action(action((opts) => ldapListCommand('users', opts, io)));
    ldap
      .command('get')
      .description('show the configuration, one group or one user')
      .argument('<what>', 'config, group or user')
      .argument('[name]', 'the group or user name')
      .option('--mount <path>', MOUNT_HELP, DEFAULT_LDAP_MOUNT)
      .option('--json', 'print it as JSON')
      .action(action((what: string, name: string | undefined, opts) => ldapGetCommand(what, name, opts, io)));
  },
};
