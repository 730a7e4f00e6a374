/**
 * A real OpenLDAP server for tests: Debian's slapd on free loopback ports, with a temporary mdb
 * database and a temporary slapd.conf, seeded with `LDAP_SEED`.
 *
 * Tests use it through `./slapd.ts` (`useSlapd`); the demo starts one with `startSlapd()`.
 *
 * Usage (one server per test file; starting takes well under a second):
 *
 *   const skip = slapdSkipReason();            // prints the reason once when slapd is missing
 *   describe.skipIf(skip !== undefined)('…', () => {
 *     const slapd = useSlapd();                // beforeAll starts, afterAll stops and cleans up
 *     it('…', () => { slapd().url; slapd().ldapsUrl; slapd().caCertificate; … });
 *   });
 *
 * The server:
 * - schemas core, cosine, inetorgperson, nis, plus a tiny `userPrincipalName` schema (objectclass
 *   `upnAccount`, auxiliary) so Vault's `upndomain` lookups run for real;
 * - back_mdb and the `memberof` overlay: every user in a `groupOfNames` carries the operational
 *   attribute `memberOf` (returned when asked for by name, as Vault's group search does);
 * - ACLs: `userPassword` is usable for binds only; `ou=people` is readable by anyone, anonymous
 *   included (so `discoverdn` with an anonymous bind works); everything else (groups, services) is
 *   readable by authenticated users only (so an anonymous group search finds nothing);
 * - `cn=paged-reader` may read at most 2 entries per search unless the search is paged;
 * - with openssl available, a self-signed certificate for 127.0.0.1/localhost, an `ldaps://`
 *   listener and StartTLS on the `ldap://` one.
 *
 * Simple binds with a DN and an empty password are refused (slapd's default: "unauthenticated bind
 * (DN with no password) disallowed", result 53).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  writeFileSync,
  readFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { Client } from 'ldapts';
import { freeLoopbackPort } from './ports.js';

const BASE = 'dc=example,dc=test';
const PEOPLE = `ou=people,${BASE}`;
const GROUPS = `ou=groups,${BASE}`;
const SERVICES = `ou=services,${BASE}`;

interface SeedUser {
  uid: string;
  dn: string;
  password: string;
  cn: string;
  /** `userPrincipalName`, when the user has one. */
  upn?: string;
}

const user = (uid: string, dnValue: string, password: string, cn: string, upn?: string): SeedUser => ({
  uid,
  dn: `uid=${dnValue},${PEOPLE}`,
  password,
  cn,
  ...(upn ? { upn } : {}),
});

/** What the seeded directory holds. Group names are as the server spells them. */
export const LDAP_SEED = {
  baseDN: BASE,
  peopleDN: PEOPLE,
  groupsDN: GROUPS,
  servicesDN: SERVICES,
  /** The rootdn (used only to seed). */
  admin: { dn: `cn=admin,${BASE}`, password: 'admin-pw' },
  /** A service account for `binddn`/`bindpass`; reads everything. */
  bind: { dn: `cn=converge-bind,${SERVICES}`, password: 'bind-pw' },
  /** A service account limited to 2 entries per unpaged search (`size.prtotal=unlimited` when paged). */
  pagedReader: { dn: `cn=paged-reader,${SERVICES}`, password: 'paged-pw' },
  /** The `upndomain` whose `userPrincipalName`s alice and MaryJane carry. */
  upnDomain: 'example.test',
  users: {
    /** In ops (member), devs (memberUid), auditors (uniqueMember); memberOf: ops. */
    alice: user('alice', 'alice', 'alice-pw', 'Alice Liddell', 'alice@example.test'),
    /** In ops only. */
    bob: user('bob', 'bob', 'bob-pw', 'Bob Builder'),
    /** Mixed-case uid; in Admins-Mixed (member) and devs (memberUid); memberOf: Admins-Mixed. */
    maryJane: user('MaryJane', 'MaryJane', 'maryjane-pw', 'Mary Jane', 'MaryJane@example.test'),
    /** In no group. */
    dave: user('dave', 'dave', 'dave-pw', 'Dave Nogroups'),
    /** Two users sharing `cn: twin` (a search by cn finds both). */
    twinA: user('twin-a', 'twin-a', 'twin-pw', 'twin'),
    twinB: user('twin-b', 'twin-b', 'twin-pw', 'twin'),
    /** A uid with a comma, escaped in its DN; in ops (member). */
    smith: user('smith, john', 'smith\\, john', 'smith-pw', 'John Smith'),
  },
  groups: {
    ops: { dn: `cn=ops,${GROUPS}`, objectClass: 'groupOfNames', attribute: 'member' },
    adminsMixed: { dn: `cn=Admins-Mixed,${GROUPS}`, objectClass: 'groupOfNames', attribute: 'member' },
    devs: { dn: `cn=devs,${GROUPS}`, objectClass: 'posixGroup', attribute: 'memberUid' },
    auditors: { dn: `cn=auditors,${GROUPS}`, objectClass: 'groupOfUniqueNames', attribute: 'uniqueMember' },
  },
} as const;

export interface SlapdServer {
  /** `ldap://127.0.0.1:<port>` (StartTLS available when `caCertificate` is set). */
  url: string;
  /** `ldaps://127.0.0.1:<port>`, when TLS could be set up. */
  ldapsUrl?: string;
  /** PEM of the self-signed server certificate (its own CA), when TLS could be set up. */
  caCertificate?: string;
  port: number;
  stop(): Promise<void>;
}

const SCHEMA_DIR = '/etc/ldap/schema';
const MODULE_DIR = '/usr/lib/ldap';

/** slapd in PATH or /usr/sbin (Debian installs it there, often outside a user's PATH). */
export function findSlapd(): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter).filter(Boolean), '/usr/sbin', '/usr/local/sbin'];
  for (const dir of dirs) {
    const candidate = join(dir, 'slapd');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

let printedReason = false;

/** Why slapd tests cannot run here (printed once), or undefined when they can. */
export function slapdSkipReason(): string | undefined {
  let reason: string | undefined;
  if (!findSlapd()) reason = 'slapd not found in PATH or /usr/sbin (apt-get install slapd ldap-utils)';
  else if (!existsSync(join(SCHEMA_DIR, 'nis.schema'))) reason = `OpenLDAP schemas missing in ${SCHEMA_DIR}`;
  else if (!existsSync(join(MODULE_DIR, 'back_mdb.la')) && !existsSync(join(MODULE_DIR, 'back_mdb.so')))
    reason = `OpenLDAP modules (back_mdb) missing in ${MODULE_DIR}`;
  if (reason && !printedReason) {
    printedReason = true;
    console.warn(`[slapd] skipping directory tests: ${reason}`);
  }
  return reason;
}

/** Starts a server in beforeAll and stops it in afterAll; returns a getter for the running server. */
/** `{SSHA}` as slappasswd writes it: base64(SHA1(password ‖ salt) ‖ salt). */
export function sshaPassword(password: string): string {
  const salt = randomBytes(8);
  const digest = createHash('sha1').update(password).update(salt).digest();
  return `{SSHA}${Buffer.concat([digest, salt]).toString('base64')}`;
}

const UPN_SCHEMA = `# userPrincipalName for Vault's upndomain lookups (OIDs under the RFC 5612 example arc).
attributetype ( 1.3.6.1.4.1.32473.1.1.1 NAME 'userPrincipalName'
  EQUALITY caseIgnoreMatch
  SUBSTR caseIgnoreSubstringsMatch
  SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 SINGLE-VALUE )
objectclass ( 1.3.6.1.4.1.32473.1.2.1 NAME 'upnAccount' SUP top AUXILIARY
  MAY userPrincipalName )
`;

function slapdConf(dir: string, withTls: boolean): string {
  return [
    ...['core', 'cosine', 'inetorgperson', 'nis'].map((s) => `include ${SCHEMA_DIR}/${s}.schema`),
    `include ${dir}/upn.schema`,
    `modulepath ${MODULE_DIR}`,
    'moduleload back_mdb',
    'moduleload memberof',
    `pidfile ${dir}/slapd.pid`,
    `argsfile ${dir}/slapd.args`,
    ...(withTls ? [`TLSCertificateFile ${dir}/server.crt`, `TLSCertificateKeyFile ${dir}/server.key`] : []),
    'database mdb',
    'maxsize 104857600',
    `suffix "${BASE}"`,
    `rootdn "${LDAP_SEED.admin.dn}"`,
    `rootpw ${sshaPassword(LDAP_SEED.admin.password)}`,
    `directory ${dir}/db`,
    `limits dn.exact="${LDAP_SEED.pagedReader.dn}" size.soft=2 size.hard=2 size.prtotal=unlimited`,
    'overlay memberof',
    'memberof-group-oc groupOfNames',
    'memberof-member-ad member',
    'memberof-memberof-ad memberOf',
    'memberof-refint TRUE',
    'access to attrs=userPassword by self write by anonymous auth by * none',
    `access to dn.subtree="${PEOPLE}" by * read`,
    'access to * by users read by * none',
    '',
  ].join('\n');
}

/** A self-signed certificate for 127.0.0.1 and localhost, or undefined without openssl. */
function makeCertificate(dir: string): boolean {
  const result = spawnSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      join(dir, 'server.key'),
      '-out',
      join(dir, 'server.crt'),
      '-days',
      '2',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
    ],
    { stdio: 'ignore', timeout: 10_000 },
  );
  return result.status === 0 && existsSync(join(dir, 'server.crt'));
}

/** Starts slapd, waits until it answers, seeds `LDAP_SEED`. */
export async function startSlapd(): Promise<SlapdServer> {
  const slapd = findSlapd();
  if (!slapd) throw new Error('slapd not found');
  const dir = mkdtempSync(join(tmpdir(), 'converge-slapd-'));
  mkdirSync(join(dir, 'db'));
  writeFileSync(join(dir, 'upn.schema'), UPN_SCHEMA);
  const withTls = makeCertificate(dir);
  writeFileSync(join(dir, 'slapd.conf'), slapdConf(dir, withTls));

  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freeLoopbackPort();
    const tlsPort = withTls ? await freeLoopbackPort() : undefined;
    const url = `ldap://127.0.0.1:${port}`;
    const ldapsUrl = tlsPort ? `ldaps://127.0.0.1:${tlsPort}` : undefined;
    const listeners = [`${url}/`, ...(ldapsUrl ? [`${ldapsUrl}/`] : [])].join(' ');
    // -d 0 keeps slapd in the foreground, so this process owns it and can stop it.
    const child = spawn(slapd, ['-f', join(dir, 'slapd.conf'), '-h', listeners, '-d', '0'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const killOnExit = () => child.kill('SIGKILL');
    process.once('exit', killOnExit);
    const stop = async () => {
      process.removeListener('exit', killOnExit);
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
    };
    try {
      await waitUntilAnswering(url, child, () => stderr);
      await seed(url);
      return {
        url,
        port,
        ...(ldapsUrl ? { ldapsUrl, caCertificate: readFileSync(join(dir, 'server.crt'), 'utf8') } : {}),
        stop,
      };
    } catch (err) {
      lastError = err;
      process.removeListener('exit', killOnExit);
      await stopChild(child);
      rmSync(join(dir, 'db'), { recursive: true, force: true });
      mkdirSync(join(dir, 'db'));
    }
  }
  rmSync(dir, { recursive: true, force: true });
  throw lastError instanceof Error ? lastError : new Error(String(lastError));
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 3_000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

async function waitUntilAnswering(url: string, child: ChildProcess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`slapd exited with ${child.exitCode}: ${stderr().trim()}`);
    const client = new Client({ url, connectTimeout: 500, timeout: 1_000 });
    try {
      await client.bind(LDAP_SEED.admin.dn, LDAP_SEED.admin.password);
      return;
    } catch (err) {
      if (Date.now() > deadline)
        throw new Error(`slapd did not answer on ${url}: ${String(err)}; ${stderr().trim()}`);
    } finally {
      await client.unbind().catch(() => {});
    }
    await new Promise((r) => setTimeout(r, 30));
  }
}

async function seed(url: string): Promise<void> {
  const client = new Client({ url, timeout: 5_000 });
  try {
    await client.bind(LDAP_SEED.admin.dn, LDAP_SEED.admin.password);
    await client.add(BASE, { objectClass: ['top', 'dcObject', 'organization'], dc: 'example', o: 'Example' });
    for (const ou of ['people', 'groups', 'services']) {
      await client.add(`ou=${ou},${BASE}`, { objectClass: ['top', 'organizationalUnit'], ou });
    }
    for (const account of [LDAP_SEED.bind, LDAP_SEED.pagedReader]) {
      await client.add(account.dn, {
        objectClass: ['top', 'organizationalRole', 'simpleSecurityObject'],
        cn: account.dn.slice(3, account.dn.indexOf(',')),
        userPassword: sshaPassword(account.password),
      });
    }
    for (const u of Object.values(LDAP_SEED.users) as SeedUser[]) {
      await client.add(u.dn, {
        objectClass: [
          'top',
          'person',
          'organizationalPerson',
          'inetOrgPerson',
          ...(u.upn ? ['upnAccount'] : []),
        ],
        uid: u.uid,
        cn: u.cn,
        sn: u.cn.split(' ').pop()!,
        mail: `${u.uid.replace(/[^A-Za-z0-9]/g, '.')}@example.test`,
        userPassword: sshaPassword(u.password),
        ...(u.upn ? { userPrincipalName: u.upn } : {}),
      });
    }
    const { users, groups } = LDAP_SEED;
    // Groups after users: the memberof overlay records memberOf when a member is added.
    await client.add(groups.ops.dn, {
      objectClass: ['top', 'groupOfNames'],
      cn: 'ops',
      member: [users.alice.dn, users.bob.dn, users.smith.dn],
    });
    await client.add(groups.adminsMixed.dn, {
      objectClass: ['top', 'groupOfNames'],
      cn: 'Admins-Mixed',
      member: [users.maryJane.dn],
    });
    await client.add(groups.devs.dn, {
      objectClass: ['top', 'posixGroup'],
      cn: 'devs',
      gidNumber: '5000',
      memberUid: [users.alice.uid, users.maryJane.uid],
    });
    await client.add(groups.auditors.dn, {
      objectClass: ['top', 'groupOfUniqueNames'],
      cn: 'auditors',
      uniqueMember: [users.alice.dn],
    });
  } finally {
    await client.unbind().catch(() => {});
  }
}
