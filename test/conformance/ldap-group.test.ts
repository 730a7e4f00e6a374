/** LdapGroup runs the kind conformance suite (see ./suite.ts for the rules), on the default mount. */
import { secretsService } from '../../src/clients/secrets/definition.js';
import { runKindConformance } from './suite.js';

const MOUNT = 'ldap';

runKindConformance({
  kind: 'LdapGroup',
  namespace: MOUNT,
  spec: () => ({ policies: ['dev', 'metrics-read'] }),
  change: { field: 'policies', value: ['dev', 'metrics-read', 'deploy'] },
  // Someone swaps the group's policies by hand.
  drift: {
    field: 'policies',
    async apply({ ctx, key }) {
      await ctx.client(secretsService).writeLdapGroup(MOUNT, key.name, { policies: ['root-ish'] });
    },
  },
  // Another team's group on the same mount: outside the PruneScope's name prefix.
  async foreign({ ctx, key }) {
    await ctx.client(secretsService).writeLdapGroup(MOUNT, key.name, { policies: ['other-team'] });
  },
});
