import { describe, expect, it } from 'vitest';
import type { Role } from '../../src/clients/registry/client.js';
import { aclRoleKind } from '../../src/resources/acl-role.js';
import type { Desired, Observed } from '../../src/resources/contract.js';

const key = { kind: 'AclRole', name: 'web', namespace: 'default' };

function compare(spec: Desired['spec'], role: Partial<Role>) {
  const observed: Observed<Role> = {
    key,
    id: 'id-1',
    version: 7,
    live: {
      ID: 'id-1',
      Name: 'web',
      Hash: 'h',
      CreateIndex: 1,
      ModifyIndex: 7,
      Namespace: 'default',
      ...role,
    } as Role,
  };
  return aclRoleKind.compare({ key, spec }, observed).diffs;
}

const P1 = { ID: '11111111-1111-4111-8111-111111111111', Name: 'service-read' };
const P2 = { ID: '22222222-2222-4222-8222-222222222222', Name: 'node-read' };

describe('AclRole comparison', () => {
  it('matches policy links written by name or by ID against the registry links carrying both', () => {
    expect(
      compare(
        { Description: 'd', Policies: [{ Name: 'node-read' }, { ID: P1.ID }] },
        { Description: 'd', Policies: [P1, P2] },
      ),
    ).toEqual([]);
  });

  it('ignores list order, empty lists, empty Datacenters and server-owned fields', () => {
    expect(
      compare(
        {
          ServiceIdentities: [
            { ServiceName: 'b', Datacenters: ['dc2', 'dc1'] },
            { ServiceName: 'a', Datacenters: [] },
          ],
          NodeIdentities: [],
        },
        {
          Description: '',
          ServiceIdentities: [{ ServiceName: 'a' }, { ServiceName: 'b', Datacenters: ['dc1', 'dc2'] }],
        },
      ),
    ).toEqual([]);
  });

  it('lists a removed and an added policy, and a changed description', () => {
    expect(
      compare(
        { Description: 'new', Policies: [{ Name: 'node-read' }] },
        { Description: 'old', Policies: [P1] },
      ),
    ).toEqual([
      { path: 'Description', op: 'change', before: 'old', after: 'new' },
      { path: 'Policies', op: 'remove', before: { Name: 'service-read' } },
      { path: 'Policies', op: 'add', after: { Name: 'node-read' } },
    ]);
  });

  it('sees an identity added behind its back', () => {
    expect(compare({}, { NodeIdentities: [{ NodeName: 'n1', Datacenter: 'dc1' }] })).toEqual([
      { path: 'NodeIdentities', op: 'remove', before: { NodeName: 'n1', Datacenter: 'dc1' } },
    ]);
  });
});
