/**
 * The secrets service's operator commands: `converge ldap login|groups|users|get` and the
 * recovery-key ceremony `converge rekey …`. Handlers (and OpenPGP, prompts) load when they run.
 */
import { DEFAULT_LDAP_MOUNT } from '../../clients/secrets/types.js';
import type { ServiceCli } from '../service-module.js';
import { wholeNumber } from '../whole-number.js';

const ldapHandlers = () => import('./ldap.js');
const rekeyHandlers = () => import('./rekey.js');

const MOUNT_HELP = 'mount path of the auth method below auth/';

export const cli: ServiceCli = {
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
      .action(
        action(async (username: string, opts) => (await ldapHandlers()).ldapLoginCommand(username, opts, io)),
      );
    ldap
      .command('groups')
      .description('list the groups of the auth method with their policies')
      .option('--mount <path>', MOUNT_HELP, DEFAULT_LDAP_MOUNT)
      .option('--json', 'print the groups as JSON')
      .action(action(async (opts) => (await ldapHandlers()).ldapListCommand('groups', opts, io)));
    ldap
      .command('users')
      .description('list the users of the auth method with their policies and groups')
      .option('--mount <path>', MOUNT_HELP, DEFAULT_LDAP_MOUNT)
      .option('--json', 'print the users as JSON')
      .action(action(async (opts) => (await ldapHandlers()).ldapListCommand('users', opts, io)));
    ldap
      .command('get')
      .description('show the configuration, one group or one user')
      .argument('<what>', 'config, group or user')
      .argument('[name]', 'the group or user name')
      .option('--mount <path>', MOUNT_HELP, DEFAULT_LDAP_MOUNT)
      .option('--json', 'print it as JSON')
      .action(
        action(async (what: string, name: string | undefined, opts) =>
          (await ldapHandlers()).ldapGetCommand(what, name, opts, io),
        ),
      );

    // Decimal digits only: anything else (`""`, `0x2`, `1e1`) is NaN, which the command refuses
    // naming the flag (rekey.ts), as it does `two`.
    const int = (value: string) => wholeNumber(value) ?? Number.NaN;
    const rekey = program
      .command('rekey')
      .description(
        'replace the recovery key shares: start, then holders of the current shares submit them; optionally verify the new ones',
      );
    rekey
      .command('start')
      .description('start a rekey of the recovery key (one at a time)')
      .requiredOption('--shares <n>', 'number of new shares', int)
      .requiredOption('--threshold <t>', 'new shares needed to recover the key', int)
      .option(
        '--pgp-keys <files>',
        'comma-separated public key files, one per share in order: each new share is encrypted to one',
      )
      .option('--backup', 'keep a backup of the PGP-encrypted shares on the service (needs --pgp-keys)')
      .option('--verify', 'require the new shares to be presented before the rotation takes effect')
      .option('--json', 'print the status as JSON')
      .action(action(async (opts) => (await rekeyHandlers()).rekeyStartCommand(opts, io)));
    rekey
      .command('status')
      .description('show the rekey in progress: progress, what happens next')
      .option('--json', 'print the status as JSON')
      .action(action(async (opts) => (await rekeyHandlers()).rekeyStatusCommand(opts, io)));
    rekey
      .command('submit')
      .description(
        'submit one share of the current recovery key, from a hidden prompt or stdin (never the command line)',
      )
      .argument('[share]', 'refused: a share is read from a hidden prompt or stdin')
      .option('--nonce <nonce>', 'the rekey nonce (default: the one of the rekey in progress)')
      .option('--json', 'print the answer as JSON (the new shares included, once complete)')
      .action(
        action(async (share: string | undefined, opts) =>
          (await rekeyHandlers()).rekeySubmitCommand(opts, io, share),
        ),
      );
    rekey
      .command('verify')
      .description('present one NEW share, from a hidden prompt or stdin, to confirm the new shares')
      .argument('[share]', 'refused: a share is read from a hidden prompt or stdin')
      .option('--nonce <nonce>', 'the verification nonce (default: the current one)')
      .option('--json', 'print the answer as JSON')
      .action(
        action(async (share: string | undefined, opts) =>
          (await rekeyHandlers()).rekeyVerifyCommand(opts, io, share),
        ),
      );
    rekey
      .command('cancel')
      .description(
        'cancel the rekey (the current shares stay valid), or with --verification restart only the verification',
      )
      .option('--verification', 'reset verification progress and get a new verification nonce')
      .option('--json', 'print the answer as JSON')
      .action(action(async (opts) => (await rekeyHandlers()).rekeyCancelCommand(opts, io)));
    const backup = rekey.command('backup').description('the stored backup of the PGP-encrypted new shares');
    backup
      .command('show')
      .description('print the backed-up encrypted shares by PGP key fingerprint')
      .option('--json', 'print the backup as JSON')
      .action(action(async (opts) => (await rekeyHandlers()).rekeyBackupCommand('show', opts, io)));
    backup
      .command('delete')
      .description('delete the backup (asks first: it may be the only copy of the encrypted new shares)')
      .option('--yes', 'do not ask (needed without a terminal, as in CI)')
      .option('--json', 'print the answer as JSON')
      .action(action(async (opts) => (await rekeyHandlers()).rekeyBackupCommand('delete', opts, io)));
  },
};
