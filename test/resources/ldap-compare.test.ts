/**
 * The directory kinds compare a manifest with what the service stores in the service's own terms, so
 * an unchanged manifest plans no change: durations in any spelling, lists in any order, the
 * service's lower-casing, defaults for fields left out.
 */
import { describe, expect, it } from 'vitest';
import { LDAP_CONFIG_DEFAULTS, type LdapConfig } from '../../src/clients/secrets/client.js';
import type { Desired, Observed } from '../../src/resources/contract.js';
import { ldapConfigKind, type LdapConfigSpec } from '../../src/resources/secrets/ldap-config.js';
import { ldapGroupKind } from '../../src/resources/secrets/ldap-group.js';
import { ldapUserKind } from '../../src/resources/secrets/ldap-user.js';

const configKey = { kind: 'LdapConfig', name: 'ldap' };
const desiredConfig = (spec: LdapConfigSpec): Desired<LdapConfigSpec> => ({ key: configKey, spec });
const liveConfig = (fields: Partial<LdapConfig>, drop: string[] = []): Observed<LdapConfig> => {
  const live: Record<string, unknown> = { ...LDAP_CONFIG_DEFAULTS, ...fields };
  for (const f of drop) delete live[f];
  return { key: configKey, live: live as unknown as LdapConfig };
};

describe('LdapConfig compare', () => {
  it('reads durations, lists and attribute names as the service does', () => {
    const diffs = ldapConfigKind.compare(
      desiredConfig({
        connection_timeout: '5m',
        request_timeout: 90,
        token_ttl: '1h',
        token_policies: ['ops', 'dev'],
        userattr: 'UID',
        groupattr: '',
      }),
      liveConfig({
        connection_timeout: 300,
        token_ttl: 3600,
        token_policies: ['dev', 'ops'],
        userattr: 'uid',
      }),
    ).diffs;
    expect(diffs).toEqual([]);
  });

  it('plans a field dropped from the manifest back to its default', () => {
    const diffs = ldapConfigKind.compare(
      desiredConfig({}),
      liveConfig({ groupfilter: '(member={{.UserDN}})' }),
    ).diffs;
    expect(diffs).toEqual([
      expect.objectContaining({ path: 'groupfilter', before: '(member={{.UserDN}})', after: '' }),
    ]);
  });

  it('leaves out what the service does not show, and never compares the write-only fields', () => {
    const diffs = ldapConfigKind.compare(
      desiredConfig({ token_num_uses: 3, bindpass: 'x', client_tls_key: 'k', client_tls_cert: 'c' }),
      liveConfig({ client_tls_cert: 'c' }, ['token_num_uses']),
    ).diffs;
    expect(diffs).toEqual([]);
  });

  it('shows a duration changed in the form the manifest wrote it, the live side in the same form', () => {
    const diffs = ldapConfigKind.compare(
      desiredConfig({ token_ttl: '2h', token_max_ttl: 86400, token_period: '90m' }),
      liveConfig({ token_ttl: 3600, token_max_ttl: 43200, token_period: 5430 }),
    ).diffs;
    expect(diffs).toEqual([
      { path: 'token_max_ttl', op: 'change', before: 43200, after: 86400 },
      { path: 'token_period', op: 'change', before: '1h30m30s', after: '90m' },
      { path: 'token_ttl', op: 'change', before: '1h', after: '2h' },
    ]);
  });

  it('shows a duration dropped from the manifest, and a deleted configuration, as durations', () => {
    const diffs = ldapConfigKind.compare(desiredConfig({}), liveConfig({ token_ttl: 3600 })).diffs;
    expect(diffs).toEqual([
      {
        path: 'token_ttl',
        op: 'change',
        before: '1h',
        after: '0s',
        note: "left out of the manifest: 0, the secrets service's system default",
      },
    ]);
    expect(
      ldapConfigKind.describe(liveConfig({ url: 'ldap://dir', token_ttl: 3600, connection_timeout: 90 })),
    ).toEqual({ url: 'ldap://dir', connection_timeout: '1m30s', token_ttl: '1h' });
  });

  it('checks the rules the service enforces before anything is sent', () => {
    const problems = ldapConfigKind.validateSpec!({
      userattr: 'uid',
      userfilter: '(mail={{.Username}})',
      tls_min_version: 'tls13',
      client_tls_key: 'k',
    });
    expect(problems.map((p) => p.pointer).sort()).toEqual([
      '/client_tls_key',
      '/tls_min_version',
      '/userfilter',
    ]);
    expect(
      ldapConfigKind.validateSpec!({
        userattr: 'uid',
        userfilter: '(&(uid={{.Username}})(objectClass=person))',
      }),
    ).toEqual([]);
    // Active Directory's attribute as it is written, in either field: attribute names ignore case.
    expect(
      ldapConfigKind.validateSpec!({
        userattr: 'sAMAccountName',
        userfilter: '(&(objectClass=user)(sAMAccountName={{.Username}}))',
      }),
    ).toEqual([]);
  });

  it('refuses a duration the service would cut to whole seconds (0.4s stored as 0, a default)', () => {
    const problems = ldapConfigKind.validateSpec!({
      url: 'ldap://dir',
      connection_timeout: '0.4s',
      token_period: '400ms',
      request_timeout: '1.5s',
      token_ttl: '1m30s',
      token_max_ttl: 7200,
    });
    expect(problems.map((p) => p.pointer).sort()).toEqual([
      '/connection_timeout',
      '/request_timeout',
      '/token_period',
    ]);
    expect(problems.find((p) => p.pointer === '/connection_timeout')?.message).toBe(
      'connection_timeout is counted in whole seconds by the service, which would store "0.4s" as 0; write whole seconds',
    );
  });
});

describe('LdapGroup and LdapUser compare', () => {
  it("normalise policies as the service does, and read a user's comma-separated groups", () => {
    const key = { kind: 'LdapUser', name: 'alice', namespace: 'ldap' };
    expect(
      ldapUserKind.compare(
        { key, spec: { policies: ['Dev', ' ops'], groups: ['b', 'a'] } },
        { key, live: { policies: ['dev', 'ops'], groups: 'a,b' } },
      ).diffs,
    ).toEqual([]);
    const gkey = { kind: 'LdapGroup', name: 'ops', namespace: 'ldap' };
    expect(
      ldapGroupKind.compare(
        { key: gkey, spec: { policies: ['a'] } },
        { key: gkey, live: { policies: ['a', 'b'] } },
      ).diffs,
    ).toEqual([expect.objectContaining({ path: 'policies', op: 'remove', before: 'b' })]);
  });

  it('orders a user after its mount and its groups', () => {
    const key = { kind: 'LdapUser', name: 'alice', namespace: 'corp/ldap', connection: 'eu' };
    expect(ldapUserKind.dependencies!({ key, desired: { key, spec: { groups: ['ops'] } } })).toEqual([
      { kind: 'LdapConfig', name: 'corp/ldap', connection: 'eu' },
      { kind: 'LdapGroup', name: 'ops', namespace: 'corp/ldap', connection: 'eu' },
    ]);
  });
});
