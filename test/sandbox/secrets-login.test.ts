/**
 * Logins through the sandbox over HTTP (`POST /v1/auth/<mount>/login/<username>`) against a real
 * slapd (test/support/slapd.ts): each user-search and group-search variant on its own mount, case
 * sensitivity, failures, and the token the login issues, as a client of the real product (HashiCorp
 * Vault's LDAP auth method) would see them. One slapd and one sandbox for the whole file.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretsClient } from '../../src/clients/secrets/client.js';
import { startSandbox, type RunningSandbox, type SecretsConfig } from '../../src/sandbox/index.js';
import { ERR_NULL_BIND, ERR_USER_BIND_FAILED } from '../../src/sandbox/services/secrets/directory-login.js';
import { refusingLoopbackPort } from '../support/ports.js';
import { LDAP_SEED, slapdSkipReason, useSlapd } from '../support/slapd.js';

const { users, bind, peopleDN, groupsDN, upnDomain } = LDAP_SEED;

type MountSeed = NonNullable<SecretsConfig['mounts']>[number];

interface LoginAuth {
  client_token: string;
  accessor: string;
  policies: string[];
  token_policies?: string[];
  metadata: Record<string, string>;
  lease_duration: number;
  renewable: boolean;
  token_type: string;
  orphan: boolean;
}

interface LoginEnvelope {
  request_id: string;
  lease_id: string;
  renewable: boolean;
  lease_duration: number;
  data: unknown;
  wrap_info: unknown;
  warnings: string[] | null;
  auth: LoginAuth | null;
}

interface RawAnswer {
  status: number;
  contentType: string | null;
  text: string;
  body: unknown;
}

/** The local groups every directory-backed mount below carries: one distinct policy per directory group. */
const GROUP_POLICIES = [
  { name: 'ops', policies: ['ops-pol', 'shared'] },
  { name: 'devs', policies: ['dev-pol', 'shared'] },
  { name: 'auditors', policies: ['audit-pol'] },
  { name: 'admins-mixed', policies: ['admin-pol'] },
  // Named by alice's local `groups` only; no directory group has this name.
  { name: 'local-extra', policies: ['extra-pol'] },
  // Matches nobody: its policy must never appear.
  { name: 'unused', policies: ['never'] },
];

const noGroupsWarning = (groupdn: string) =>
  `no LDAP groups found in groupDN '${groupdn}'; only policies from locally-defined groups available`;

const skip = slapdSkipReason();

describe.skipIf(skip !== undefined)('secrets sandbox: LDAP login over HTTP against slapd', () => {
  const slapd = useSlapd();
  let sandbox: RunningSandbox;
  let refusingPort: number;

  /** Search-bind settings shared by most mounts: the service account finds the user by `uid`. */
  const searchBind = () => ({
    url: slapd().url,
    binddn: bind.dn,
    bindpass: bind.password,
    userdn: peopleDN,
    userattr: 'uid',
    groupdn: groupsDN,
  });

  beforeAll(async () => {
    refusingPort = await refusingLoopbackPort();
    const refusingUrl = `ldap://127.0.0.1:${refusingPort}`;
    const mounts: MountSeed[] = [
      {
        path: 'search-bind',
        config: { ...searchBind(), token_policies: ['base'], token_ttl: '1h' },
        groups: GROUP_POLICIES,
        users: [{ name: 'alice', policies: ['alice-pol', 'shared'], groups: ['local-extra'] }],
      },
      {
        // Anonymous bind to find the user; ou=people is world-readable, groups only to bound users.
        path: 'discover',
        config: { url: slapd().url, discoverdn: true, userdn: peopleDN, userattr: 'uid', groupdn: groupsDN },
        groups: GROUP_POLICIES,
      },
      {
        // slapd cannot bind `alice@example.test`, so the service account finds the DN by UPN first.
        path: 'upn',
        config: { ...searchBind(), upndomain: upnDomain },
        groups: GROUP_POLICIES,
      },
      {
        // No service account: the user binds as `alice@example.test`, which slapd does not accept.
        path: 'upn-direct',
        config: { url: slapd().url, upndomain: upnDomain, userdn: peopleDN, groupdn: groupsDN },
      },
      {
        // Only users carrying a userPrincipalName may log in.
        path: 'userfilter',
        config: { ...searchBind(), userfilter: '(&(objectClass=upnAccount)({{.UserAttr}}={{.Username}}))' },
        groups: GROUP_POLICIES,
      },
      {
        // Only posix groups, by memberUid.
        path: 'groupfilter',
        config: { ...searchBind(), groupfilter: '(&(objectClass=posixGroup)(memberUid={{.Username}}))' },
        groups: GROUP_POLICIES,
      },
      {
        // Groups read from the user's own `memberOf` (groupOfNames only, via the memberof overlay).
        path: 'memberof',
        config: {
          ...searchBind(),
          groupdn: peopleDN,
          groupfilter: '(&(objectClass=inetOrgPerson)(uid={{.Username}}))',
          groupattr: 'memberOf',
        },
        groups: GROUP_POLICIES,
      },
      {
        path: 'case-insensitive',
        config: searchBind(),
        groups: [
          { name: 'Admins-Mixed', policies: ['admin-pol'] }, // stored lower-cased
          { name: 'team', policies: ['team-pol'] },
        ],
        users: [{ name: 'MaryJane', policies: ['mj-pol'], groups: ['TEAM'] }],
      },
      {
        path: 'case-sensitive',
        config: { ...searchBind(), case_sensitive_names: true },
        groups: [
          { name: 'admins-mixed', policies: ['lower-group-pol'] },
          { name: 'Admins-Mixed', policies: ['exact-group-pol'] },
          { name: 'team', policies: ['lower-team-pol'] },
          { name: 'Team', policies: ['exact-team-pol'] },
        ],
        users: [
          { name: 'MaryJane', policies: ['mj-pol'], groups: ['Team'] },
          { name: 'maryjane', policies: ['lower-user-pol'], groups: ['team'] },
        ],
      },
      {
        // deny_null_bind is on by default; the server refuses connections, so reaching it would show.
        path: 'null-bind',
        config: { url: refusingUrl, binddn: bind.dn, bindpass: bind.password, userdn: peopleDN },
      },
      {
        path: 'failover',
        config: { ...searchBind(), url: `${refusingUrl},${slapd().url}`, connection_timeout: 2 },
        groups: GROUP_POLICIES,
      },
      {
        path: 'no-default',
        config: { ...searchBind(), token_no_default_policy: true, token_ttl: 90, token_max_ttl: '2h' },
        groups: GROUP_POLICIES,
      },
      {
        path: 'batch',
        config: { ...searchBind(), token_type: 'batch' },
      },
      {
        path: 'cidr-outside',
        config: { ...searchBind(), token_bound_cidrs: ['10.0.0.0/8', '192.168.0.0/16'] },
      },
      {
        path: 'cidr-inside',
        config: { ...searchBind(), token_bound_cidrs: '10.0.0.0/8,127.0.0.1/32' },
      },
      // A mount nobody configured.
      { path: 'unconfigured' },
    ];
    sandbox = await startSandbox({ port: 0, config: { secrets: { mounts } } });
  });

  afterAll(async () => {
    await sandbox?.close();
  });

  /** A raw login: no token header at all, as a client of the real product logs in. */
  async function rawLogin(mount: string, username: string, body: unknown): Promise<RawAnswer> {
    const res = await fetch(`${sandbox.url}/v1/auth/${mount}/login/${encodeURIComponent(username)}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, contentType: res.headers.get('content-type'), text, body: JSON.parse(text) };
  }

  /** A login expected to succeed; returns the envelope. */
  async function login(mount: string, username: string, password: string): Promise<LoginEnvelope> {
    const res = await rawLogin(mount, username, { password });
    expect(res.status, res.text).toBe(200);
    return res.body as LoginEnvelope;
  }

  async function policiesOf(mount: string, username: string, password: string): Promise<string[]> {
    return (await login(mount, username, password)).auth!.policies;
  }

  describe('finding the user', () => {
    it('search bind: the service account finds the user, then the user binds', async () => {
      const res = await login('search-bind', 'alice', users.alice.password);
      expect(res.auth!.metadata).toEqual({ username: 'alice' });
      expect(res.auth!.policies).toContain('ops-pol');
    });

    it('discoverdn: an anonymous search finds the user; groups are searched as the user', async () => {
      expect(await policiesOf('discover', 'bob', users.bob.password)).toEqual([
        'default',
        'ops-pol',
        'shared',
      ]);
    });

    it('upndomain with binddn: the user is found by userPrincipalName', async () => {
      const res = await login('upn', 'alice', users.alice.password);
      expect(res.auth!.metadata).toEqual({ username: 'alice' });
      expect(res.auth!.policies).toEqual(['audit-pol', 'default', 'dev-pol', 'ops-pol', 'shared']);
      // bob has no userPrincipalName: not found, which reads as a failed bind.
      const bob = await rawLogin('upn', 'bob', { password: users.bob.password });
      expect(bob.status).toBe(400);
      expect(bob.body).toEqual({ errors: [ERR_USER_BIND_FAILED] });
    });

    it('upndomain without binddn binds as user@domain (slapd refuses such a bind name)', async () => {
      const res = await rawLogin('upn-direct', 'alice', { password: users.alice.password });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ errors: [ERR_USER_BIND_FAILED] });
    });

    it('a username with a comma is percent-encoded in the path and DN-escaped for the directory', async () => {
      // uid `smith, john` lives at `uid=smith\\, john,ou=people,...`, in ops (member).
      const res = await login('search-bind', users.smith.uid, users.smith.password);
      expect(res.auth!.policies).toEqual(['base', 'default', 'ops-pol', 'shared']);
      expect(res.auth!.metadata).toEqual({ username: 'smith, john' });
    });

    it('a custom userfilter limits who can log in', async () => {
      expect(await policiesOf('userfilter', 'MaryJane', users.maryJane.password)).toEqual([
        'admin-pol',
        'default',
        'dev-pol',
        'shared',
      ]);
      const bob = await rawLogin('userfilter', 'bob', { password: users.bob.password });
      expect(bob.status).toBe(400);
      expect(bob.body).toEqual({ errors: [ERR_USER_BIND_FAILED] });
    });
  });

  describe('finding the groups', () => {
    it('the default filter finds member, memberUid and uniqueMember groups', async () => {
      // alice: ops (member), devs (memberUid), auditors (uniqueMember).
      const policies = await policiesOf('discover', 'alice', users.alice.password);
      expect(policies).toEqual(['audit-pol', 'default', 'dev-pol', 'ops-pol', 'shared']);
    });

    it('a custom groupfilter finds only what it matches', async () => {
      // alice is in three groups, but only devs is a posixGroup.
      expect(await policiesOf('groupfilter', 'alice', users.alice.password)).toEqual([
        'default',
        'dev-pol',
        'shared',
      ]);
    });

    it('groupattr cn on group objects and memberOf on the user entry give the group names', async () => {
      // memberOf lists groupOfNames only: alice → ops, MaryJane → Admins-Mixed.
      expect(await policiesOf('memberof', 'alice', users.alice.password)).toEqual([
        'default',
        'ops-pol',
        'shared',
      ]);
      expect(await policiesOf('memberof', 'MaryJane', users.maryJane.password)).toEqual([
        'admin-pol',
        'default',
      ]);
      // groupattr cn (the default) over the group objects finds MaryJane's posix group too.
      expect(await policiesOf('search-bind', 'MaryJane', users.maryJane.password)).toEqual([
        'admin-pol',
        'base',
        'default',
        'dev-pol',
        'shared',
      ]);
    });

    it('a user in no group logs in with a warning and only local policies', async () => {
      const res = await login('search-bind', 'dave', users.dave.password);
      expect(res.warnings).toEqual([noGroupsWarning(groupsDN)]);
      expect(res.auth!.policies).toEqual(['base', 'default']);
    });
  });

  describe('case sensitivity', () => {
    it('case-insensitive: a mixed-case login and directory group match lower-cased local names', async () => {
      const res = await login('case-insensitive', 'MaryJane', users.maryJane.password);
      // Admins-Mixed (directory) → admins-mixed; the local user maryjane and its group TEAM → team.
      expect(res.auth!.policies).toEqual(['admin-pol', 'default', 'mj-pol', 'team-pol']);
      expect(res.auth!.metadata).toEqual({ username: 'MaryJane' });
      // The directory matches uid case-insensitively too; the name is kept as typed.
      const lower = await login('case-insensitive', 'maryjane', users.maryJane.password);
      expect(lower.auth!.policies).toEqual(['admin-pol', 'default', 'mj-pol', 'team-pol']);
      expect(lower.auth!.metadata).toEqual({ username: 'maryjane' });
    });

    it('case_sensitive_names: local users and groups must match exactly', async () => {
      const res = await login('case-sensitive', 'MaryJane', users.maryJane.password);
      expect(res.auth!.policies).toEqual(['default', 'exact-group-pol', 'exact-team-pol', 'mj-pol']);
      // Typed in lower case, the directory still accepts it, but now the local user `maryjane` applies,
      // and the directory group Admins-Mixed still matches only its exact local name.
      const lower = await login('case-sensitive', 'maryjane', users.maryJane.password);
      expect(lower.auth!.policies).toEqual([
        'default',
        'exact-group-pol',
        'lower-team-pol',
        'lower-user-pol',
      ]);
      expect(lower.auth!.metadata).toEqual({ username: 'maryjane' });
    });
  });

  describe('refusals', () => {
    it('a wrong password is 400 with Vault’s message, the password nowhere in the answer', async () => {
      const secret = 'not-alices-Pa55word';
      const res = await rawLogin('search-bind', 'alice', { password: secret });
      expect(res.status).toBe(400);
      expect(res.contentType).toBe('application/json');
      expect(res.body).toEqual({ errors: [ERR_USER_BIND_FAILED] });
      expect(res.text).not.toContain(secret);
      // An unknown user reads the same: no user enumeration.
      const unknown = await rawLogin('search-bind', 'nobody', { password: secret });
      expect(unknown.status).toBe(400);
      expect(unknown.body).toEqual({ errors: [ERR_USER_BIND_FAILED] });
    });

    it('the client reports a refused login without the password', async () => {
      const client = SecretsClient.fromConnection({ address: sandbox.url });
      try {
        const secret = 'client-Side-wrong-pw';
        const err = await client.login('search-bind', 'alice', secret).then(
          () => undefined,
          (e: unknown) => e as Error,
        );
        expect(err).toBeInstanceOf(Error);
        expect(err!.message).toContain(ERR_USER_BIND_FAILED);
        expect(err!.message).not.toContain(secret);
        expect(JSON.stringify(err)).not.toContain(secret);
      } finally {
        await client.close();
      }
    });

    it('an empty or missing password with deny_null_bind is 400 before contacting the server', async () => {
      for (const body of [{ password: '' }, {}]) {
        const res = await rawLogin('null-bind', 'alice', body);
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ errors: [ERR_NULL_BIND] });
      }
    });

    it('only an update logs in: GET on the login path is 405 `unsupported operation`', async () => {
      const res = await fetch(`${sandbox.url}/v1/auth/search-bind/login/alice`);
      expect(res.status).toBe(405);
      expect(await res.json()).toEqual({ errors: ['unsupported operation'] });
    });

    it('a mount nobody configured is 400 `auth method not configured`', async () => {
      const res = await rawLogin('unconfigured', 'alice', { password: users.alice.password });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ errors: ['auth method not configured'] });
    });

    it('token_bound_cidrs without the client address: 403 before the directory is asked', async () => {
      for (const password of [users.alice.password, 'wrong-password']) {
        const res = await rawLogin('cidr-outside', 'alice', { password });
        expect(res.status).toBe(403);
        expect(res.body).toEqual({ errors: ['permission denied'] });
      }
    });

    it('token_bound_cidrs with the client address (127.0.0.1): the login succeeds', async () => {
      const res = await login('cidr-inside', 'alice', users.alice.password);
      expect(res.auth!.client_token).toMatch(/^hvs\./);
    });
  });

  it('an unreachable first URL falls over to the next one', async () => {
    expect(await policiesOf('failover', 'bob', users.bob.password)).toEqual(['default', 'ops-pol', 'shared']);
  });

  describe('the issued token', () => {
    it('policies = local user ∪ matched groups ∪ the user’s local groups, + token_policies + default', async () => {
      const res = await login('search-bind', 'alice', users.alice.password);
      // Directory groups ops, devs, auditors; local groups: local-extra; user: alice-pol, shared;
      // token_policies: base; `unused` matches nothing; `shared` appears once.
      const expected = [
        'alice-pol',
        'audit-pol',
        'base',
        'default',
        'dev-pol',
        'extra-pol',
        'ops-pol',
        'shared',
      ];
      expect(res.auth!.policies).toEqual(expected);
      expect(res.auth!.token_policies).toEqual(expected);
    });

    it('token_no_default_policy leaves `default` out; token_ttl is the lease duration', async () => {
      const res = await login('no-default', 'bob', users.bob.password);
      expect(res.auth!.policies).toEqual(['ops-pol', 'shared']);
      expect(res.auth!.lease_duration).toBe(90);
    });

    it('the envelope and auth block as the real service shapes them', async () => {
      const raw = await rawLogin('search-bind', 'alice', { password: users.alice.password });
      expect(raw.status).toBe(200);
      expect(raw.contentType).toBe('application/json');
      expect(raw.text).not.toContain(users.alice.password);
      const res = raw.body as LoginEnvelope;
      expect(res).toMatchObject({
        lease_id: '',
        renewable: false,
        lease_duration: 0,
        data: null,
        wrap_info: null,
        warnings: null,
      });
      expect(typeof res.request_id).toBe('string');
      const auth = res.auth!;
      expect(auth.client_token).toMatch(/^hvs\.[A-Za-z0-9]{24}$/);
      expect(auth.accessor).toMatch(/^[A-Za-z0-9]{24}$/);
      expect(auth.metadata).toEqual({ username: 'alice' });
      expect(auth.lease_duration).toBe(3600); // token_ttl: 1h
      expect(auth.renewable).toBe(true);
      expect(auth.token_type).toBe('service');
      expect(auth.orphan).toBe(true);

      // Without token_ttl: the system default of 768h.
      const plain = await login('discover', 'bob', users.bob.password);
      expect(plain.auth!.lease_duration).toBe(768 * 3600);
      // A second login issues another token.
      const again = await login('search-bind', 'alice', users.alice.password);
      expect(again.auth!.client_token).not.toBe(auth.client_token);
    });

    it('a batch token is not renewable and has no accessor', async () => {
      const res = await login('batch', 'bob', users.bob.password);
      expect(res.auth!.token_type).toBe('batch');
      expect(res.auth!.client_token).toMatch(/^hvb\./);
      expect(res.auth!.renewable).toBe(false);
      expect(res.auth!.accessor).toBe('');
    });

    it('the client’s login returns the same auth block', async () => {
      const client = SecretsClient.fromConnection({ address: sandbox.url });
      try {
        const { auth, warnings } = await client.login('search-bind', 'dave', users.dave.password);
        expect(auth.policies).toEqual(['base', 'default']);
        expect(auth.metadata).toEqual({ username: 'dave' });
        expect(warnings).toEqual([noGroupsWarning(groupsDN)]);
      } finally {
        await client.close();
      }
    });

    it('carries no administrative right: reading the config with it is 403', async () => {
      const token = (await login('search-bind', 'alice', users.alice.password)).auth!.client_token;
      for (const path of ['/v1/auth/search-bind/config', '/v1/auth/ldap/config']) {
        const res = await fetch(`${sandbox.url}${path}`, { headers: { 'X-Secrets-Token': token } });
        expect(res.status).toBe(403);
        expect(await res.json()).toEqual({ errors: ['permission denied'] });
      }
      // The root token may read it (the 403 is about the token, not the path).
      const root = await fetch(`${sandbox.url}/v1/auth/search-bind/config`, {
        headers: { 'X-Secrets-Token': sandbox.rootToken },
      });
      expect(root.status).toBe(200);
    });
  });
});
