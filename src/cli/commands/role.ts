/** `converge role get|list`: read registry ACL roles directly, as a table or JSON. */
import type { RegistryClient, Role } from '../../clients/registry/client.js';
import { printable } from '../../common/printable.js';
import { registryService } from '../../clients/registry/definition.js';
import { withClient } from '../service-client.js';
import { CliError, EXIT } from '../exit-codes.js';
import { type Io, write } from '../io.js';
import { keyValues, table } from '../table.js';

export interface RoleGetFlags {
  id?: string;
  ns?: string;
  json?: boolean;
}

export interface RoleListFlags {
  policy?: string;
  ns?: string;
  json?: boolean;
}

function policyNames(role: Role): string {
  return (role.Policies ?? []).map((p) => p.Name ?? p.ID).join(', ');
}

function identities(role: Role): string {
  return [
    // A service identity limited to datacenters says so: bare, it reads as valid in all of them.
    ...(role.ServiceIdentities ?? []).map(
      (s) => `service:${s.ServiceName}${s.Datacenters?.length ? `@${s.Datacenters.join(',')}` : ''}`,
    ),
    ...(role.NodeIdentities ?? []).map((n) => `node:${n.NodeName}@${n.Datacenter}`),
  ].join(', ');
}

function roleDetails(role: Role): string {
  const rows: [string, string][] = [
    ['ID', role.ID],
    ['Name', role.Name],
    ['Namespace', role.Namespace ?? ''],
    ['Description', role.Description ?? ''],
    ['Policies', (role.Policies ?? []).map((p) => `${p.Name} (${p.ID})`).join('\n')],
    ['Identities', identities(role)],
    ['Hash', role.Hash ?? ''],
    ['CreateIndex', String(role.CreateIndex ?? '')],
    ['ModifyIndex', String(role.ModifyIndex ?? '')],
  ];
  return keyValues(rows);
}

export async function roleGetCommand(name: string | undefined, flags: RoleGetFlags, io: Io): Promise<number> {
  if ((name === undefined) === (flags.id === undefined))
    throw new CliError('give a role NAME or --id ID (one of them)');
  return withClient(io, registryService, async (registry) => {
    const opts = flags.ns !== undefined ? { namespace: flags.ns } : {};
    const role =
      flags.id !== undefined
        ? await registry.readRole(flags.id, opts)
        : await registry.readRoleByName(name!, opts);
    if (!role)
      throw new CliError(`no role ${flags.id !== undefined ? `with ID ${flags.id}` : `named "${name}"`}`);
    write(io.stdout, flags.json ? JSON.stringify(role, null, 2) : roleDetails(role));
    return EXIT.ok;
  });
}

/** A policy's ID (as the service's filter takes it) from its ID or its name. */
const POLICY_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The policy `--policy` names, by ID or by name. The service filters by ID only, and answers an
 * unknown one with no roles: "no role uses this policy" must not be read off a typo or a name.
 */
async function policyIdOf(client: RegistryClient, given: string): Promise<string> {
  const policies = await client.listPolicies();
  const found = POLICY_ID.test(given)
    ? policies.find((p) => p.ID.toLowerCase() === given.toLowerCase())
    : policies.find((p) => p.Name === given);
  if (!found)
    throw new CliError(
      `--policy ${printable(given)}: no policy ${POLICY_ID.test(given) ? 'has that ID' : 'has that name'} (give a policy's name or ID)`,
    );
  return found.ID;
}

export async function roleListCommand(flags: RoleListFlags, io: Io): Promise<number> {
  return withClient(io, registryService, async (client) => {
    const roles = await client.listRoles({
      ...(flags.policy !== undefined ? { policy: await policyIdOf(client, flags.policy) } : {}),
      ...(flags.ns !== undefined ? { namespace: flags.ns } : {}),
    });
    if (flags.json) {
      write(io.stdout, JSON.stringify(roles, null, 2));
    } else if (roles.length === 0) {
      write(io.stdout, 'No roles.');
    } else {
      const sorted = [...roles].sort((a, b) => a.Name.localeCompare(b.Name));
      write(
        io.stdout,
        table(
          ['NAME', 'NAMESPACE', 'ID', 'POLICIES', 'IDENTITIES', 'DESCRIPTION'],
          sorted.map((r) => [
            r.Name,
            r.Namespace ?? '',
            r.ID,
            policyNames(r),
            identities(r),
            r.Description ?? '',
          ]),
        ),
      );
    }
    return EXIT.ok;
  });
}
