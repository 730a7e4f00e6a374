/**
 * `converge ldap …`: log in through the directory auth method, and read its groups, users and
 * configuration. The password never comes from the command line (it would sit in shell history and
 * the process list): a terminal prompt asks for it, or it is read from stdin. The client token is
 * printed only when asked for (`--show-token`, `--json`).
 */
import type { LdapConfig, LoginResult, SecretsClient } from '../../clients/secrets/client.js';
import { secretsService } from '../../clients/secrets/definition.js';
import { withClient, withNote } from '../service-client.js';
import { HttpStatusError } from '../../clients/http/errors.js';
import { printable, jsonOut } from '../../common/printable.js';
import { CliError, EXIT } from '../exit-codes.js';
import { type Io, write } from '../io.js';
import { readSecret } from '../secret-input.js';
import { keyValues, table } from '../table.js';

export interface MountFlags {
  mount: string;
  json?: boolean;
}

export interface LoginFlags extends MountFlags {
  showToken?: boolean;
}

function formatSeconds(seconds: number): string {
  if (seconds <= 0) return '0s';
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return [h ? `${h}h` : '', m ? `${m}m` : '', s ? `${s}s` : ''].join('');
}

function loginSummary(result: LoginResult, mount: string, username: string, showToken: boolean): string {
  const { auth } = result;
  const metadata = Object.entries(auth.metadata ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(', ');
  const rows: [string, string][] = [
    ['Policies', auth.policies.join(', ') || '(none)'],
    ...(auth.token_policies ? [['Token policies', auth.token_policies.join(', ')] as [string, string]] : []),
    ['Metadata', metadata],
    ['Lease', `${formatSeconds(auth.lease_duration)}${auth.renewable ? ', renewable' : ''}`],
    ...(auth.token_type ? [['Token type', auth.token_type] as [string, string]] : []),
    ...(auth.accessor ? [['Accessor', auth.accessor] as [string, string]] : []),
    ['Token', showToken ? auth.client_token : '(hidden; --show-token prints it)'],
  ];
  const lines = [
    `Logged in as ${username} through auth/${mount}.`,
    keyValues(rows),
    ...result.warnings.map((w) => `Warning: ${w}`),
  ];
  return lines.join('\n');
}

export async function ldapLoginCommand(username: string, flags: LoginFlags, io: Io): Promise<number> {
  const password = await readSecret(io, `Password for ${username}:`, 'password');
  // Refused here, before anything is sent: an empty answer (standard input at its end, /dev/null)
  // reached the service, which only said "password cannot be of zero length".
  if (password === '')
    throw new CliError(
      `no password given for ${username}: type it at the prompt, or pipe it on standard input (printf '%s' "$PW" | converge ldap login ${username})`,
    );
  return withClient(io, secretsService, async (client) => {
    const result = await client.login(flags.mount, username, password).catch((error: unknown) => {
      // The login path is open without a token only where the method is mounted: at any other path
      // the service answers 403 (as it does for a request without a token), not 404.
      if (error instanceof HttpStatusError && error.status === 403)
        throw withNote(
          error,
          `is the directory auth method mounted at auth/${printable(flags.mount)}? (\`converge ldap groups --mount ${printable(flags.mount)}\` tells; the service answers a login where nothing is mounted with 403)`,
        );
      throw error;
    });
    write(
      io.stdout,
      flags.json
        ? jsonOut({ auth: result.auth, warnings: result.warnings }, null, 2)
        : loginSummary(result, flags.mount, username, Boolean(flags.showToken)),
    );
    return EXIT.ok;
  });
}

/** Reads every listed entry (the API has no bulk read); one deleted meanwhile is left out. */
async function readAll<T>(
  names: string[],
  read: (name: string) => Promise<T | undefined>,
): Promise<[string, T][]> {
  const out: [string, T][] = [];
  const values = await Promise.all(names.map((n) => read(n)));
  names.forEach((n, i) => {
    const value = values[i];
    if (value !== undefined) out.push([n, value]);
  });
  return out;
}

export async function ldapListCommand(which: 'groups' | 'users', flags: MountFlags, io: Io): Promise<number> {
  return withClient(io, secretsService, async (client: SecretsClient) => {
    const mount = flags.mount;
    if (which === 'groups') {
      const groups = await readAll((await client.listLdapGroups(mount)).sort(), (n) =>
        client.readLdapGroup(mount, n),
      );
      printEntries(io, flags, 'groups', groups, ['GROUP', 'POLICIES'], (g) => [g.policies.join(', ')]);
    } else {
      const users = await readAll((await client.listLdapUsers(mount)).sort(), (n) =>
        client.readLdapUser(mount, n),
      );
      printEntries(io, flags, 'users', users, ['USER', 'POLICIES', 'GROUPS'], (u) => [
        u.policies.join(', '),
        u.groups.split(',').filter(Boolean).join(', '),
      ]);
    }
    return EXIT.ok;
  });
}

/** Named entries as one JSON object by name, a line saying there are none, or a table of `columns`. */
function printEntries<T>(
  io: Io,
  flags: MountFlags,
  what: 'groups' | 'users',
  entries: [string, T][],
  header: string[],
  columns: (entry: T) => string[],
): void {
  if (flags.json) write(io.stdout, jsonOut(Object.fromEntries(entries), null, 2));
  else if (entries.length === 0) write(io.stdout, `No ${what} on auth/${flags.mount}.`);
  else
    write(
      io.stdout,
      table(
        header,
        entries.map(([n, e]) => [n, ...columns(e)]),
      ),
    );
}

/** The service reads write-only fields back empty: leaving them out says so better than `""`. */
function withoutWriteOnly<T extends object>(value: T): T {
  const { bindpass: _b, client_tls_key: _k, ...rest } = value as Record<string, unknown>;
  return rest as T;
}

function configDetails(config: LdapConfig): string {
  const rows = Object.entries(withoutWriteOnly(config))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v)] as const);
  return keyValues(rows);
}

export async function ldapGetCommand(
  what: string,
  name: string | undefined,
  flags: MountFlags,
  io: Io,
): Promise<number> {
  if (!['config', 'group', 'user'].includes(what))
    throw new CliError(`nothing called "${what}" to get: say config, group NAME or user NAME`);
  if (what !== 'config' && !name)
    throw new CliError(`give the ${what}'s name: converge ldap get ${what} NAME`);
  if (what === 'config' && name !== undefined)
    throw new CliError(
      `a mount has one configuration: converge ldap get config [--mount PATH], without "${name}"`,
    );
  return withClient(io, secretsService, async (client) => {
    const found =
      what === 'config'
        ? await client.readLdapConfig(flags.mount)
        : what === 'group'
          ? await client.readLdapGroup(flags.mount, name!)
          : await client.readLdapUser(flags.mount, name!);
    if (!found)
      throw new CliError(
        what === 'config'
          ? `auth/${flags.mount} has no configuration`
          : `no ${what} "${name}" on auth/${flags.mount}`,
      );
    if (flags.json) write(io.stdout, jsonOut(withoutWriteOnly(found), null, 2));
    else if (what === 'config') write(io.stdout, configDetails(found as LdapConfig));
    else {
      const entry = found as { policies: string[]; groups?: string };
      const rows: [string, string][] = [
        [what === 'group' ? 'Group' : 'User', name!],
        ['Mount', `auth/${flags.mount}`],
        ['Policies', entry.policies.join(', ')],
        ...(entry.groups !== undefined
          ? [['Groups', entry.groups.split(',').filter(Boolean).join(', ')] as [string, string]]
          : []),
      ];
      write(io.stdout, rows.map(([k, v]) => `${k.padEnd(8)}  ${v}`).join('\n'));
    }
    return EXIT.ok;
  });
}
