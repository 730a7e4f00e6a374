/** `converge role get|list`: read registry ACL roles directly, as a table or JSON. */
import type { Role } from '../../clients/registry/client.js';
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
    ...(role.ServiceIdentities ?? []).map((s) => `service:${s.ServiceName}`),
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

export async function roleListCommand(flags: RoleListFlags, io: Io): Promise<number> {
  return withClient(io, registryService, async (client) => {
    const roles = await client.listRoles({
      ...(flags.policy !== undefined ? { policy: flags.policy } : {}),
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
