// Changes made behind Converge's back, through the services' own clients, as another tool would.
import { registryService } from '../../dist/clients/registry/definition.js';
import { schedulerService } from '../../dist/clients/scheduler/definition.js';
import { secretsService } from '../../dist/clients/secrets/definition.js';
import { workspacesService } from '../../dist/clients/workspaces/definition.js';
import { MOUNT, ORGANIZATION } from './workload.mjs';

/** Every 1/share-th object of each kind changed; returns how many per kind. */
export async function drift(connections, n, share) {
  const pick = (count) => Array.from({ length: Math.floor(count * share) }, (_, i) => Math.floor(i / share));
  const roles = connections.client(registryService);
  const live = new Map((await roles.listRoles()).map((r) => [r.Name, r]));
  const counts = { AclRole: 0, Workspace: 0, LdapGroup: 0, LdapUser: 0, Job: 0 };
  const work = [];
  for (const i of pick(n.AclRole)) {
    const r = live.get(`bench-${i}`);
    if (!r) continue;
    counts.AclRole += 1;
    work.push(() => roles.updateRole(r.ID, { Name: r.Name, Description: 'drifted', Policies: r.Policies }));
  }
  const workspaces = connections.client(workspacesService);
  for (const i of pick(n.Workspace)) {
    counts.Workspace += 1;
    work.push(() =>
      workspaces.updateWorkspace(
        { organization: ORGANIZATION, name: `bench-${i}` },
        { description: 'drifted' },
      ),
    );
  }
  const secrets = connections.client(secretsService);
  for (const i of pick(n.LdapGroup)) {
    counts.LdapGroup += 1;
    work.push(() => secrets.writeLdapGroup(MOUNT, `group-${i}`, { policies: ['drifted'] }));
  }
  for (const i of pick(n.LdapUser)) {
    counts.LdapUser += 1;
    work.push(() => secrets.writeLdapUser(MOUNT, `user-${i}`, { policies: ['drifted'], groups: [] }));
  }
  const scheduler = connections.client(schedulerService);
  for (const i of pick(n.Job)) {
    counts.Job += 1;
    work.push(async () => {
      const job = await scheduler.readJob(`bench-${i}`);
      await scheduler.registerJob({ ...job, Priority: 20 });
    });
  }
  // A few at a time, like a person's script would.
  for (let i = 0; i < work.length; i += 10) await Promise.all(work.slice(i, i + 10).map((f) => f()));
  return counts;
}
