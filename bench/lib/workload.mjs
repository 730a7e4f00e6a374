// The benchmark's manifest: N objects of each kind, written as a user would (one file per service).
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const MOUNT = 'ldap';
export const ORGANIZATION = 'sandbox';

const role = (i) => `apiVersion: converge/v1
kind: AclRole
metadata: { name: bench-${i}, namespace: default }
spec:
  Description: role ${i}
  Policies: [{ Name: service-read }]
`;

const workspace = (i) => `apiVersion: converge/v1
kind: Workspace
metadata: { name: bench-${i}, namespace: ${ORGANIZATION} }
spec:
  description: workspace ${i}
  tag-names: [bench, t${i % 7}]
`;

const group = (i) => `apiVersion: converge/v1
kind: LdapGroup
metadata: { name: group-${i} }
spec: { policies: [p${i}, shared] }
`;

const user = (i, groups) => `apiVersion: converge/v1
kind: LdapUser
metadata: { name: user-${i} }
spec: { policies: [u${i}]${groups > 0 ? `, groups: [group-${i % groups}]` : ''} }
`;

const job = (i) => `apiVersion: converge/v1
kind: Job
metadata: { name: bench-${i} }
spec:
  Type: service
  Datacenters: [dc1]
  Meta: { index: "${i}" }
  TaskGroups:
    - Name: app
      Count: 1
      Tasks:
        - { Name: app, Driver: docker, Config: { image: "app:${i}" }, Resources: { CPU: 10, MemoryMB: 10 } }
`;

const config = `apiVersion: converge/v1
kind: LdapConfig
metadata: { name: ${MOUNT} }
spec: { url: 'ldap://ldap.bench.test', userdn: 'ou=people,dc=bench', groupdn: 'ou=groups,dc=bench' }
`;

const times = (n, f) => Array.from({ length: n }, (_, i) => f(i));

/** Writes the manifest folder; returns how many objects it declares per kind. */
export function writeWorkload(dir, n) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'roles.yaml'), times(n.roles, role).join('---\n'));
  writeFileSync(path.join(dir, 'workspaces.yaml'), times(n.workspaces, workspace).join('---\n'));
  const directory = [config, ...times(n.groups, group), ...times(n.users, (i) => user(i, n.groups))];
  writeFileSync(path.join(dir, 'directory.yaml'), directory.join('---\n'));
  writeFileSync(path.join(dir, 'jobs.yaml'), times(n.jobs, job).join('---\n'));
  return {
    AclRole: n.roles,
    Workspace: n.workspaces,
    LdapConfig: 1,
    LdapGroup: n.groups,
    LdapUser: n.users,
    Job: n.jobs,
  };
}

/** Only roles, for the CPU and memory run (and the YAML parse it is compared with). */
export function writeRoles(dir, count) {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'roles.yaml');
  writeFileSync(file, times(count, role).join('---\n'));
  return file;
}

/** The same roles as the sandbox's seed, so a plan of the roles file finds nothing to change. */
export function seededRoles(count) {
  return times(count, (i) => ({
    Name: `bench-${i}`,
    Description: `role ${i}`,
    Policies: [{ Name: 'service-read' }],
  }));
}
