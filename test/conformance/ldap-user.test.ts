/** LdapUser runs the kind conformance suite (see ./suite.ts for the rules), on a mount of its own. */
import { secretsService } from '../../src/clients/secrets/definition.js';
import { runKindConformance } from './suite.js';

const MOUNT = 'corp/ldap';

runKindConformance({
  kind: 'LdapUser',
  namespace: MOUNT,
  sandbox: { secrets: { mounts: [{ path: MOUNT }] } },
  spec: () => ({ policies: ['dev'], groups: ['ops'] }),
  change: { field: 'groups', value: ['ops', 'oncall'] },
  // Someone grants the user an extra policy by hand.
  drift: {
    field: 'policies',
    async apply({ ctx, key }) {
      await ctx
        .client(secretsService)
        .writeLdapUser(MOUNT, key.name, { policies: ['dev', 'admin'], groups: ['ops'] });
    },
  },
  async foreign({ ctx, key }) {
    await ctx.client(secretsService).writeLdapUser(MOUNT, key.name, { policies: ['other-team'], groups: [] });
  },
});
