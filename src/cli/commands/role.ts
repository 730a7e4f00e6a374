/** `converge role get|list`: read registry ACL roles directly, as a table or JSON. */
import type { Policy, RegistryClient, Role } from '../../clients/registry/client.js';
import { printable, jsonOut } from '../../common/printable.js';
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
    write(io.stdout, flags.json ? jsonOut(role, null, 2) : roleDetails(role));
    return EXIT.ok;
  });
}

/** A policy's ID (as the service's filter takes it) from its ID or its name. */
const POLICY_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The policy `--policy` names, by ID or by name, looked up where the roles are listed. The service
 * filters by ID only, and answers an unknown one with no roles: "no role uses this policy" must not
 * be read off a typo or a name. Policies are namespaced: listed without `--ns`, a policy of
 * namespace team1 was never found, so `role list --ns team1 --policy …` failed whatever was given.
 */
async function policyIdOf(client: RegistryClient, given: string, ns: string | undefined): Promise<string> {
  const byId = POLICY_ID.test(given);
  const matches = (p: Policy) => (byId ? p.ID.toLowerCase() === given.toLowerCase() : p.Name === given);
  const where =
    ns === undefined || ns === '' ? '' : ns === '*' ? ' in any namespace' : ` in namespace ${printable(ns)}`;
  const notFound = () =>
    new CliError(
      `--policy ${printable(given)}: no policy${where} ${byId ? 'has that ID' : 'has that name'} (give a policy's name or ID${where ? ', or another --ns' : ''})`,
    );
  if (ns === '*') {
    // Every namespace: a name may be taken in several, and the roles of one policy are not those of
    // another of the same name, so the choice is left to the user rather than made silently.
    const found = (await client.listPolicies({ namespace: '*' })).filter(matches);
    if (found.length === 0) throw notFound();
    if (found.length > 1) {
      const namespaces = found.map((p) => printable(p.Namespace ?? 'default')).sort();
      throw new CliError(
        `--policy ${printable(given)}: policies of that name are in namespaces ${namespaces.join(', ')}; give the policy's ID, or --ns with one of those namespaces`,
      );
    }
    return found[0]!.ID;
  }
  const opts = ns !== undefined && ns !== '' ? { namespace: ns } : {};
  const own = (await client.listPolicies(opts)).find(matches);
  if (own) return own.ID;
  // A role links a policy of its own namespace or of `default` (the registry resolves a linked
  // name in that order too), so a policy of `default` names roles of any namespace.
  if (ns !== 'default') {
    const shared = (await client.listPolicies({ namespace: 'default' })).find(matches);
    if (shared) return shared.ID;
  }
  throw notFound();
}

export async function roleListCommand(flags: RoleListFlags, io: Io): Promise<number> {
  return withClient(io, registryService, async (client) => {
    const roles = await client.listRoles({
      ...(flags.policy !== undefined ? { policy: await policyIdOf(client, flags.policy, flags.ns) } : {}),
      ...(flags.ns !== undefined ? { namespace: flags.ns } : {}),
    });
    if (flags.json) {
      write(io.stdout, jsonOut(roles, null, 2));
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
