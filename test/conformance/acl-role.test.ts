/** AclRole runs the kind conformance suite (see ./suite.ts for the rules). */
import { registryService } from '../../src/clients/registry/definition.js';
import type { Role } from '../../src/clients/registry/client.js';
import { runKindConformance } from './suite.js';

const NAMESPACE = 'default';

runKindConformance({
  kind: 'AclRole',
  namespace: NAMESPACE,
  sandbox: { registry: { policies: [{ Name: 'service-read' }, { Name: 'node-read' }] } },
  spec: () => ({
    Description: 'managed by the conformance suite',
    Policies: [{ Name: 'service-read' }],
    ServiceIdentities: [{ ServiceName: 'web', Datacenters: ['dc1'] }],
  }),
  change: { field: 'Description', value: 'changed in the manifest' },
  // Someone swaps the role's policy in the console.
  drift: {
    field: 'Policies',
    async apply({ ctx, observed }) {
      const role = observed.live as Role;
      await ctx
        .client(registryService)
        .updateRole(role.ID, { ...role, Policies: [{ Name: 'node-read' }] }, { namespace: NAMESPACE });
    },
  },
  // Another team's role in the same namespace: outside the PruneScope's name prefix.
  async foreign({ ctx, key }) {
    await ctx
      .client(registryService)
      .createRole(
        { Name: key.name, Description: 'not managed by Converge', Policies: [{ Name: 'service-read' }] },
        { namespace: NAMESPACE },
      );
  },
});
