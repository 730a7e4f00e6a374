/**
 * LdapConfig runs the kind conformance suite (see ./suite.ts for the rules). Its name is a mount path,
 * so the sandbox mounts the directory method at every name the suite uses. The configuration cannot
 * be deleted in the service: `ensure: absent` writes the defaults back, which reads as absent.
 */
import { secretsService } from '../../src/clients/secrets/definition.js';
import { runKindConformance } from './suite.js';

const MOUNTS = [
  'conformance-create',
  'conformance-update',
  'conformance-drift',
  'conformance-list',
  'conformance-prune-anchor',
  'conformance-prune-victim',
  'conformance-prune-foreign',
  'foreign-prune',
  'conformance-absent',
  'conformance-secret',
  'conformance-lists',
];

runKindConformance({
  kind: 'LdapConfig',
  sandbox: { secrets: { mounts: MOUNTS.map((path) => ({ path })) } },
  spec: () => ({
    url: 'ldap://ldap1.example.test,ldap://ldap2.example.test',
    binddn: 'cn=converge,ou=services,dc=example,dc=test',
    userdn: 'ou=people,dc=example,dc=test',
    userattr: 'uid',
    groupdn: 'ou=groups,dc=example,dc=test',
    connection_timeout: '10s',
    token_policies: ['base'],
  }),
  change: { field: 'userdn', value: 'ou=staff,dc=example,dc=test' },
  // Someone points the group search elsewhere by hand.
  drift: {
    field: 'groupdn',
    async apply({ ctx, key }) {
      await ctx
        .client(secretsService)
        .writeLdapConfig(key.name, { groupdn: 'ou=elsewhere,dc=example,dc=test' });
    },
  },
  secret: { path: 'bindpass' },
});
