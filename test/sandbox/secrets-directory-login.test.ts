/**
 * The directory half of the LDAP login against a real slapd (test/support/slapd.ts): bind-DN
 * discovery, binds, group searches and connection handling, with Vault's messages.
 */
import { describe, expect, it } from 'vitest';
import {
  DirectoryLoginError,
  ERR_NULL_BIND,
  ERR_USER_BIND_FAILED,
  directoryLogin,
  type DirectorySettings,
} from '../../src/sandbox/services/secrets/directory-login.js';
import {
  escapeDNValue,
  escapeFilterValue,
  getCN,
  parseDN,
  renderGoTemplate,
} from '../../src/sandbox/services/secrets/ldap-filters.js';
import { refusingLoopbackPort, silentLoopbackServer } from '../support/ports.js';
import { LDAP_SEED, slapdSkipReason, useSlapd } from '../support/slapd.js';

const { users, upnDomain } = LDAP_SEED;

/** Rejects with a DirectoryLoginError, returned for inspection. */
async function loginError(promise: Promise<unknown>): Promise<DirectoryLoginError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DirectoryLoginError);
  return err as DirectoryLoginError;
}

const sorted = (names: string[]) => [...names].sort();

describe('Go-template filters, escaping and CNs', () => {
  it('renders {{.Field}} with optional spaces and trim markers', () => {
    const fields = { UserAttr: 'uid', Username: 'alice' };
    expect(renderGoTemplate('({{.UserAttr}}={{.Username}})', fields)).toBe('(uid=alice)');
    expect(renderGoTemplate('({{ .UserAttr }}={{  .Username}})', fields)).toBe('(uid=alice)');
    expect(renderGoTemplate('(uid= {{- .Username -}} )', fields)).toBe('(uid=alice)');
    expect(renderGoTemplate('(objectClass=*)', fields)).toBe('(objectClass=*)');
  });

  it('rejects anything but field references, like Go would', () => {
    const fields = { UserDN: 'x', Username: 'y' };
    expect(() => renderGoTemplate('(member={{.UserDN}', fields)).toThrow(
      /template: queryTemplate:1: unclosed action/,
    );
    expect(() => renderGoTemplate('(cn={{printf "%s" .Username}})', fields)).toThrow(/unsupported action/);
    expect(() => renderGoTemplate('(cn={{.Username | html}})', fields)).toThrow(/unsupported action/);
    expect(() => renderGoTemplate('(cn={{.UserAttr}})', fields)).toThrow(
      /executing "queryTemplate" at <.UserAttr>: can't evaluate field UserAttr/,
    );
  });

  it('escapes filter values per RFC 4515 and DN values like Vault', () => {
    expect(escapeFilterValue('a*b(c)\\d\0')).toBe('a\\2ab\\28c\\29\\5cd\\00');
    expect(escapeFilterValue('Jörg')).toBe('Jörg');
    expect(escapeDNValue('smith, john')).toBe('smith\\, john');
    expect(escapeDNValue(' a+b;c<d>"e" ')).toBe('\\ a\\+b\\;c\\<d\\>\\"e\\"\\ ');
    expect(escapeDNValue('Jörg')).toBe('J\\c3\\b6rg');
  });

  it('takes the first CN of a DN, else the value itself', () => {
    expect(getCN('cn=ops,ou=groups,dc=example,dc=test')).toBe('ops');
    expect(getCN('CN=Admins-Mixed,OU=Groups,DC=example')).toBe('Admins-Mixed');
    expect(getCN('uid=bob,cn=team\\, red,dc=x')).toBe('team, red');
    expect(getCN('ou=groups,dc=example')).toBe('ou=groups,dc=example');
    expect(getCN('plain-name')).toBe('plain-name');
    expect(parseDN('cn=a+uid=b,dc=x')).toEqual([
      [
        { type: 'cn', value: 'a' },
        { type: 'uid', value: 'b' },
      ],
      [{ type: 'dc', value: 'x' }],
    ]);
    expect(parseDN('cn=J\\c3\\b6rg,dc=x')?.[0]?.[0]?.value).toBe('Jörg');
    expect(parseDN('no-equals')).toBeUndefined();
  });
});

const skip = slapdSkipReason();

describe.skipIf(skip !== undefined)('directoryLogin against slapd', () => {
  const slapd = useSlapd();

  function settings(overrides: Partial<DirectorySettings> = {}): DirectorySettings {
    return {
      url: slapd().url,
      connection_timeout: 5,
      request_timeout: 5,
      starttls: false,
      tls_min_version: 'tls12',
      tls_max_version: 'tls12',
      insecure_tls: false,
      certificate: '',
      client_tls_cert: '',
      client_tls_key: '',
      binddn: '',
      bindpass: '',
      userdn: LDAP_SEED.peopleDN,
      userattr: 'uid',
      discoverdn: false,
      deny_null_bind: true,
      upndomain: '',
      userfilter: '',
      anonymous_group_search: false,
      groupfilter: '',
      groupdn: LDAP_SEED.groupsDN,
      groupattr: 'cn',
      case_sensitive_names: false,
      max_page_size: 0,
      ...overrides,
    };
  }
  const searchBind = { binddn: LDAP_SEED.bind.dn, bindpass: LDAP_SEED.bind.password };

  describe('finding the user', () => {
    it('search bind: binds as binddn, finds the one entry, binds as the user, reads groups as binddn', async () => {
      const result = await directoryLogin(settings(searchBind), 'alice', users.alice.password);
      expect(result.userDN).toBe(users.alice.dn);
      expect(result.userBindDN).toBe(users.alice.dn);
      expect(sorted(result.groups)).toEqual(['auditors', 'devs', 'ops']);
      expect(result.warnings).toEqual([]);
      expect(result.aliasName).toBe('alice');
      expect(result.userAttributes.mail).toEqual(['alice@example.test']);
      expect(result.userAttributes.cn).toEqual(['Alice Liddell']);
      expect(result.userAttributes).not.toHaveProperty('userpassword');
    });

    it('without binddn: binds as userattr=<username>,userdn and searches groups as the user', async () => {
      const result = await directoryLogin(settings(), 'bob', users.bob.password);
      expect(result.userDN).toBe(`uid=bob,${LDAP_SEED.peopleDN}`);
      expect(result.groups).toEqual(['ops']);
    });

    it('discoverdn: an anonymous bind finds the user (people are readable anonymously)', async () => {
      const result = await directoryLogin(settings({ discoverdn: true }), 'alice', users.alice.password);
      expect(result.userDN).toBe(users.alice.dn);
      expect(sorted(result.groups)).toEqual(['auditors', 'devs', 'ops']);
    });

    it('a search that finds nobody, or more than one entry, is a failed bind', async () => {
      const nobody = await loginError(directoryLogin(settings(searchBind), 'nobody', 'x'));
      expect(nobody.status).toBe(400);
      expect(nobody.message).toBe(ERR_USER_BIND_FAILED);
      expect(nobody.detail).toContain('LDAP search for binddn 0 or not unique');

      const twins = await loginError(
        directoryLogin(settings({ ...searchBind, userattr: 'cn' }), 'twin', 'twin-pw'),
      );
      expect(twins.message).toBe(ERR_USER_BIND_FAILED);
      expect(twins.detail).toContain('LDAP search for binddn 0 or not unique');
    });

    it('a wrong service password is a failed bind too', async () => {
      const err = await loginError(
        directoryLogin(settings({ ...searchBind, bindpass: 'wrong' }), 'alice', users.alice.password),
      );
      expect(err.message).toBe(ERR_USER_BIND_FAILED);
      expect(err.detail).toContain('bind (service) failed: LDAP Result Code 49 "Invalid Credentials"');
    });

    it('a custom userfilter (Go template) selects the user', async () => {
      const userfilter = '(&(objectClass=inetOrgPerson)({{ .UserAttr }}={{.Username}}))';
      const result = await directoryLogin(
        settings({ ...searchBind, userfilter }),
        'alice',
        users.alice.password,
      );
      expect(result.userDN).toBe(users.alice.dn);

      // A filter that cannot match this user: the search finds nobody.
      const other = '(&(objectClass=posixAccount)({{.UserAttr}}={{.Username}}))';
      const err = await loginError(
        directoryLogin(settings({ ...searchBind, userfilter: other }), 'alice', users.alice.password),
      );
      expect(err.detail).toContain('0 or not unique');

      // A template that is not plain field references fails the bind-DN discovery.
      const broken = await loginError(
        directoryLogin(
          settings({ ...searchBind, userfilter: '({{.UserAttr}}={{.Username | html}})' }),
          'alice',
          'x',
        ),
      );
      expect(broken.message).toBe(ERR_USER_BIND_FAILED);
      expect(broken.detail).toContain('search failed due to template compilation error');
    });

    it('upndomain with binddn: the filter and the user lookup use userPrincipalName', async () => {
      const result = await directoryLogin(
        settings({ ...searchBind, upndomain: upnDomain }),
        'alice',
        users.alice.password,
      );
      expect(result.userDN).toBe(users.alice.dn);
      expect(result.userBindDN).toBe(users.alice.dn);
      expect(sorted(result.groups)).toEqual(['auditors', 'devs', 'ops']);

      // bob has no userPrincipalName: the UPN search finds nobody.
      const bob = await loginError(
        directoryLogin(settings({ ...searchBind, upndomain: upnDomain }), 'bob', users.bob.password),
      );
      expect(bob.message).toBe(ERR_USER_BIND_FAILED);
    });

    it('upndomain without binddn binds as user@domain, which slapd (unlike AD) refuses as a DN', async () => {
      const err = await loginError(
        directoryLogin(settings({ upndomain: upnDomain }), 'alice', users.alice.password),
      );
      expect(err.status).toBe(400);
      expect(err.message).toBe(ERR_USER_BIND_FAILED);
      expect(err.detail).toContain('unable to bind user: LDAP Result Code 34 "Invalid DN Syntax"');
    });

    it('a login name keeps its case toward the server', async () => {
      const exact = await directoryLogin(settings(), 'MaryJane', users.maryJane.password);
      expect(exact.userDN).toBe(`uid=MaryJane,${LDAP_SEED.peopleDN}`);
      expect(sorted(exact.groups)).toEqual(['Admins-Mixed', 'devs']);

      // uid matches case-insensitively, so the search finds her; memberUid is case-exact (nis
      // schema), so "maryjane" as typed is not in devs: the name was not folded on the way.
      const lower = await directoryLogin(settings(searchBind), 'maryjane', users.maryJane.password);
      expect(lower.userDN).toBe(users.maryJane.dn);
      expect(lower.groups).toEqual(['Admins-Mixed']);
    });

    it('DN-escapes the username in a built bind DN and filter-escapes the user DN in the group filter', async () => {
      const result = await directoryLogin(settings(), 'smith, john', users.smith.password);
      expect(result.userDN).toBe(`uid=smith\\, john,${LDAP_SEED.peopleDN}`);
      expect(result.groups).toEqual(['ops']);
    });

    it('filter-escapes the username in searches (no wildcard or filter injection)', async () => {
      for (const name of ['*', 'al*', 'alice)(uid=*']) {
        const err = await loginError(directoryLogin(settings(searchBind), name, users.alice.password));
        expect(err.detail).toContain('0 or not unique');
      }
    });
  });

  describe('passwords', () => {
    it('a wrong password fails the bind', async () => {
      const err = await loginError(directoryLogin(settings(searchBind), 'alice', 'wrong'));
      expect(err.status).toBe(400);
      expect(err.message).toBe('ldap operation failed: failed to bind as user');
      expect(err.detail).toContain('unable to bind user: LDAP Result Code 49 "Invalid Credentials"');
    });

    it('an empty password with deny_null_bind is refused before connecting', async () => {
      const port = await refusingLoopbackPort();
      const err = await loginError(
        directoryLogin(settings({ url: `ldap://127.0.0.1:${port}` }), 'alice', ''),
      );
      expect(err.status).toBe(400);
      expect(err.message).toBe(ERR_NULL_BIND);
    });

    it('an empty password without deny_null_bind is an unauthenticated bind, which slapd refuses', async () => {
      const err = await loginError(
        directoryLogin(settings({ ...searchBind, deny_null_bind: false }), 'alice', ''),
      );
      expect(err.status).toBe(400);
      expect(err.message).toBe(ERR_USER_BIND_FAILED);
      expect(err.detail).toContain('LDAP Result Code 53 "Unwilling To Perform"');
      expect(err.detail).toContain('unauthenticated bind (DN with no password) disallowed');
    });
  });

  describe('groups', () => {
    const cases: [string, string, string[]][] = [
      ['member', '(&(objectClass=groupOfNames)(member={{.UserDN}}))', ['ops']],
      ['memberUid', '(&(objectClass=posixGroup)(memberUid={{.Username}}))', ['devs']],
      ['uniqueMember', '(&(objectClass=groupOfUniqueNames)(uniqueMember={{.UserDN}}))', ['auditors']],
      ['default (any of the three)', '', ['auditors', 'devs', 'ops']],
    ];
    it.each(cases)('groupfilter by %s', async (_name, groupfilter, expected) => {
      const result = await directoryLogin(
        settings({ ...searchBind, groupfilter }),
        'alice',
        users.alice.password,
      );
      expect(sorted(result.groups)).toEqual(expected);
    });

    it('groupattr memberOf on the user entry gives the CNs of the groupOfNames groups', async () => {
      const memberOf = {
        ...searchBind,
        groupfilter: '(&(objectClass=person)(uid={{.Username}}))',
        groupdn: LDAP_SEED.peopleDN,
        groupattr: 'memberOf',
      };
      expect((await directoryLogin(settings(memberOf), 'alice', users.alice.password)).groups).toEqual([
        'ops',
      ]);
      expect((await directoryLogin(settings(memberOf), 'MaryJane', users.maryJane.password)).groups).toEqual([
        'Admins-Mixed',
      ]);
      // The same search with groupattr cn reads the user's own cn instead.
      const cn = await directoryLogin(
        settings({ ...memberOf, groupattr: 'cn' }),
        'alice',
        users.alice.password,
      );
      expect(cn.groups).toEqual(['Alice Liddell']);
    });

    it('no groups: a warning naming groupdn', async () => {
      const result = await directoryLogin(settings(searchBind), 'dave', users.dave.password);
      expect(result.groups).toEqual([]);
      expect(result.warnings).toEqual([
        `no LDAP groups found in groupDN '${LDAP_SEED.groupsDN}'; only policies from locally-defined groups available`,
      ]);
    });

    it('no groupdn: no search, and the warning', async () => {
      const result = await directoryLogin(
        settings({ ...searchBind, groupdn: '' }),
        'alice',
        users.alice.password,
      );
      expect(result.groups).toEqual([]);
      expect(result.warnings[0]).toContain("groupDN ''");
    });

    it('a groupdn that does not exist gives no groups rather than an error', async () => {
      const groupdn = `ou=missing,${LDAP_SEED.baseDN}`;
      const result = await directoryLogin(
        settings({ ...searchBind, groupdn }),
        'alice',
        users.alice.password,
      );
      expect(result.groups).toEqual([]);
      expect(result.warnings[0]).toContain(groupdn);
    });

    it('anonymous_group_search binds anonymously, and anonymous may not read groups here', async () => {
      const result = await directoryLogin(
        settings({ ...searchBind, anonymous_group_search: true }),
        'alice',
        users.alice.password,
      );
      expect(result.groups).toEqual([]);
      expect(result.warnings).toHaveLength(1);

      // Anonymous may read people, so a memberOf search works anonymously.
      const memberOf = await directoryLogin(
        settings({
          ...searchBind,
          anonymous_group_search: true,
          groupfilter: '(uid={{.Username}})',
          groupdn: LDAP_SEED.peopleDN,
          groupattr: 'memberOf',
        }),
        'alice',
        users.alice.password,
      );
      expect(memberOf.groups).toEqual(['ops']);
    });

    it('a broken groupfilter template is an error with Go-like wording', async () => {
      const err = await loginError(
        directoryLogin(
          settings({ ...searchBind, groupfilter: '(member={{.UserDN}' }),
          'alice',
          users.alice.password,
        ),
      );
      expect(err.status).toBe(400);
      expect(err.message).toBe(
        'ldap.(Client).Authenticate: unable to get user groups: ldap.(Client).getGroups: ldap.(Client).filterGroupsSearch: ' +
          'LDAP search failed due to template compilation error: template: queryTemplate:1: unclosed action',
      );
    });

    it('max_page_size pages the group search (the reader may get only 2 entries unpaged)', async () => {
      const reader = { binddn: LDAP_SEED.pagedReader.dn, bindpass: LDAP_SEED.pagedReader.password };
      const unpaged = await loginError(directoryLogin(settings(reader), 'alice', users.alice.password));
      expect(unpaged.status).toBe(400);
      expect(unpaged.message).toContain('LDAP search failed (baseDN: "ou=groups,dc=example,dc=test"');
      expect(unpaged.message).toContain('LDAP Result Code 4 "Size Limit Exceeded"');

      for (const max_page_size of [1, 2]) {
        const paged = await directoryLogin(
          settings({ ...reader, max_page_size }),
          'alice',
          users.alice.password,
        );
        expect(sorted(paged.groups)).toEqual(['auditors', 'devs', 'ops']);
      }
    });
  });

  describe('connecting', () => {
    it('falls over from an unreachable first URL to the second', async () => {
      const port = await refusingLoopbackPort();
      const url = `ldap://127.0.0.1:${port}, ${slapd().url}`;
      const result = await directoryLogin(settings({ ...searchBind, url }), 'alice', users.alice.password);
      expect(result.userDN).toBe(users.alice.dn);
    });

    it('gives up on a URL after connection_timeout and tries the next', async () => {
      const silent = await silentLoopbackServer();
      try {
        // An ldaps:// URL on a server that never answers: the TLS handshake stalls.
        const url = `ldaps://127.0.0.1:${silent.port},${slapd().url}`;
        const started = Date.now();
        const result = await directoryLogin(
          settings({ ...searchBind, url, connection_timeout: 1 }),
          'alice',
          users.alice.password,
        );
        expect(result.userDN).toBe(users.alice.dn);
        expect(Date.now() - started).toBeGreaterThanOrEqual(900);
      } finally {
        await silent.close();
      }
    });

    it('request_timeout bounds each operation on a server that accepts but never answers', async () => {
      const silent = await silentLoopbackServer();
      try {
        const started = Date.now();
        const err = await loginError(
          directoryLogin(
            settings({ ...searchBind, url: `ldap://127.0.0.1:${silent.port}`, request_timeout: 1 }),
            'alice',
            'x',
          ),
        );
        expect(Date.now() - started).toBeLessThan(3_000);
        // The service bind is part of the bind-DN discovery, so Vault reports a failed user bind.
        expect(err.message).toBe(ERR_USER_BIND_FAILED);
        expect(err.detail).toContain(
          'bind (service) failed: LDAP Result Code 200 "Network Error": ldap: connection timed out',
        );
      } finally {
        await silent.close();
      }
    });

    it('no reachable server: every URL is reported, as go-multierror does', async () => {
      const [a, b] = [await refusingLoopbackPort(), await refusingLoopbackPort()];
      const url = `ldap://127.0.0.1:${a},ldap://127.0.0.1:${b}`;
      const err = await loginError(directoryLogin(settings({ url }), 'alice', users.alice.password));
      expect(err.status).toBe(400);
      expect(err.message).toBe(
        'ldap.(Client).Authenticate: failed to connect: 2 errors occurred:\n' +
          `\t* ldap.(Client).connect: error connecting to host "ldap://127.0.0.1:${a}": LDAP Result Code 200 "Network Error": dial tcp 127.0.0.1:${a}: connect: connection refused\n` +
          `\t* ldap.(Client).connect: error connecting to host "ldap://127.0.0.1:${b}": LDAP Result Code 200 "Network Error": dial tcp 127.0.0.1:${b}: connect: connection refused\n\n`,
      );
    });

    it('refuses a URL scheme other than ldap and ldaps', async () => {
      const err = await loginError(directoryLogin(settings({ url: 'http://127.0.0.1:1' }), 'alice', 'x'));
      expect(err.message).toContain('invalid LDAP scheme in url "http://127.0.0.1:1": invalid parameter');
    });

    it('honours an abort signal, closing what it opened', async () => {
      const aborted = AbortSignal.abort();
      await expect(
        directoryLogin(settings(searchBind), 'alice', users.alice.password, { signal: aborted }),
      ).rejects.toThrow(/abort/i);

      const silent = await silentLoopbackServer();
      try {
        const controller = new AbortController();
        setTimeout(() => controller.abort(), 100);
        const started = Date.now();
        await expect(
          directoryLogin(
            settings({ url: `ldaps://127.0.0.1:${silent.port}`, connection_timeout: 30 }),
            'alice',
            'x',
            {
              signal: controller.signal,
            },
          ),
        ).rejects.toThrow(/abort/i);
        expect(Date.now() - started).toBeLessThan(2_000);
      } finally {
        await silent.close();
      }
    });

    it('leaves no socket open, on success and on failure', async () => {
      const openSockets = () =>
        process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap' || r === 'TLSSocketWrap').length;
      const settle = () => new Promise((r) => setTimeout(r, 50));
      await settle(); // sockets of earlier tests finish closing
      const before = openSockets();
      await directoryLogin(settings(searchBind), 'alice', users.alice.password);
      await directoryLogin(settings(searchBind), 'alice', 'wrong').catch(() => {});
      await directoryLogin(
        settings({ ...searchBind, groupfilter: '{{' }),
        'alice',
        users.alice.password,
      ).catch(() => {});
      await settle();
      expect(openSockets()).toBe(before);
    });
  });

  describe('TLS', () => {
    const tls = () => {
      const { ldapsUrl, caCertificate } = slapd();
      if (!ldapsUrl || !caCertificate) return undefined;
      return { ldapsUrl, caCertificate };
    };

    it('ldaps:// verifies the server against certificate', async (ctx) => {
      const t = tls();
      if (!t) return ctx.skip();
      const result = await directoryLogin(
        settings({ ...searchBind, url: t.ldapsUrl, certificate: t.caCertificate }),
        'alice',
        users.alice.password,
      );
      expect(result.userDN).toBe(users.alice.dn);

      const untrusted = await loginError(
        directoryLogin(settings({ ...searchBind, url: t.ldapsUrl }), 'alice', users.alice.password),
      );
      expect(untrusted.message).toContain('failed to connect');
      expect(untrusted.message).toMatch(/self[- ]signed certificate/);

      const insecure = await directoryLogin(
        settings({ ...searchBind, url: t.ldapsUrl, insecure_tls: true }),
        'alice',
        users.alice.password,
      );
      expect(insecure.userDN).toBe(users.alice.dn);
    });

    it('starttls upgrades an ldap:// connection', async (ctx) => {
      const t = tls();
      if (!t) return ctx.skip();
      const result = await directoryLogin(
        settings({ ...searchBind, starttls: true, certificate: t.caCertificate }),
        'alice',
        users.alice.password,
      );
      expect(sorted(result.groups)).toEqual(['auditors', 'devs', 'ops']);

      const untrusted = await loginError(
        directoryLogin(settings({ ...searchBind, starttls: true }), 'alice', users.alice.password),
      );
      expect(untrusted.message).toContain('failed to connect');
    });

    it('refuses half a client key pair, as Vault does', async (ctx) => {
      const t = tls();
      if (!t) return ctx.skip();
      const err = await loginError(
        directoryLogin(
          settings({ url: t.ldapsUrl, certificate: t.caCertificate, client_tls_cert: t.caCertificate }),
          'alice',
          users.alice.password,
        ),
      );
      expect(err.message).toContain('both client_tls_cert and client_tls_key must be set in configuration');
    });
  });
});
