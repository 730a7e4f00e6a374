import { describe, expect, test } from 'vitest';
import { load, loadErrors, role, writeTree } from './helpers.js';

const connection = (name: string, service: string, extra = '') =>
  `apiVersion: converge/v1\nkind: Connection\nmetadata:\n  name: ${name}\nspec:\n  service: ${service}\n  address: https://${name}.example:8500\n${extra}`;

const roleOn = (name: string, conn: string, namespace?: string) =>
  `apiVersion: converge/v1\nkind: TestRole\nmetadata:\n  name: ${name}\n${namespace ? `  namespace: ${namespace}\n` : ''}  connection: ${conn}\nspec:\n  Description: x\n`;

describe('connections', () => {
  test('Connection documents are collected, resources pick them by name', async () => {
    const dir = writeTree({
      'connections.yaml': `${connection('east', 'registry', '  token: ${env:EAST_TOKEN}\n  caCertificate: ${file:ca.pem}\n  insecureSkipTlsVerify: false\n')}---\n${connection('vault-b', 'secrets')}`,
      'ca.pem': 'PEM\n',
      'roles.yaml': roleOn('web', 'east'),
    });
    const manifest = await load(dir, ['.'], { env: { EAST_TOKEN: 'tok', CONVERGE_ALLOW_ENV: 'EAST_TOKEN' } });
    expect(manifest.connections).toEqual([
      {
        name: 'east',
        service: 'registry',
        address: 'https://east.example:8500',
        addressPosition: { file: 'connections.yaml', line: 7, col: 12 },
        token: 'tok',
        // Interpolated: the CLI sends it only to an address the operator allowed.
        tokenFromOutside: true,
        // A file of one line gives that line (see interpolation.test.ts).
        caCertificate: 'PEM',
        insecureSkipTlsVerify: false,
        // Whom it trusts, set here: refused by the CLI on a Connection that carries this token.
        trustPosition: { field: 'caCertificate', position: { file: 'connections.yaml', line: 9, col: 18 } },
        settings: {},
        source: { file: 'connections.yaml', line: 2, col: 1 },
      },
      {
        name: 'vault-b',
        service: 'secrets',
        address: 'https://vault-b.example:8500',
        addressPosition: { file: 'connections.yaml', line: 18, col: 12 },
        settings: {},
        source: { file: 'connections.yaml', line: 13, col: 1 },
      },
    ]);
    expect(manifest.resources[0]).toMatchObject({ name: 'web', connection: 'east' });
  });

  test("a service's own settings are collected, and refused on another service's connection", async () => {
    const dir = writeTree({
      'c.yaml': `${connection('tfe', 'workspaces', '  organization: acme\n')}---\n${connection('east', 'registry', '  organization: acme\n')}`,
    });
    expect(await loadErrors(dir, ['c.yaml'])).toEqual([
      'c.yaml:17:17: organization is not a setting of registry connections',
    ]);
    const ok = writeTree({ 'c.yaml': connection('tfe', 'workspaces', '  organization: acme\n') });
    expect((await load(ok, ['c.yaml'])).connections[0]?.settings).toEqual({ organization: 'acme' });
  });

  test('a connection must be declared and be for the kind’s service', async () => {
    const dir = writeTree({
      'c.yaml': `${connection('east', 'registry')}---\n${connection('vault-b', 'secrets')}`,
      'r.yaml': `${roleOn('a', 'west')}---\n${roleOn('b', 'vault-b')}`,
    });
    expect(await loadErrors(dir, ['c.yaml', 'r.yaml'])).toEqual([
      'r.yaml:5:15: connection "west" is not declared; add a Connection document with that name (declared registry connections: "east")',
      'r.yaml:13:15: connection "vault-b" is a secrets connection, but TestRole needs a registry connection',
    ]);
  });

  test('a document with problems of its own still has its undeclared connection reported', async () => {
    const dir = writeTree({
      'c.yaml': connection('east', 'registry'),
      'r.yaml': roleOn('a', 'west').replace('  Description: x\n', '  Description: 7\n  Unknown: y\n'),
    });
    const errors = await loadErrors(dir, ['c.yaml', 'r.yaml']);
    expect(errors).toContain(
      'r.yaml:5:15: connection "west" is not declared; add a Connection document with that name (declared registry connections: "east")',
    );
    expect(errors.length).toBeGreaterThan(1);
  });

  test('Connection documents are validated', async () => {
    const dir = writeTree({
      'c.yaml': `apiVersion: converge/v1
kind: Connection
metadata:
  name: East
  namespace: x
spec:
  service: nomad
  address: not a url
  insecureSkipTlsVerify: "yes"
`,
      'r.yaml': roleOn('a', 'East'),
    });
    // The role's reference to the broken connection is not reported on top of the connection's own problems.
    expect(await loadErrors(dir, ['c.yaml', 'r.yaml'])).toEqual([
      'c.yaml:4:9: invalid Connection name "East": must match the pattern ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ (lowercase letters, digits and dashes, starting and ending with a letter or digit, at most 63 characters)',
      'c.yaml:5:3: "namespace" is not allowed: Connection objects have no namespace',
      'c.yaml:7:12: spec.service must be one of "registry", "scheduler", "secrets", "workspaces", got "nomad"',
      'c.yaml:8:12: spec.address must match the pattern ^[Hh][Tt][Tt][Pp][Ss]?://[^\\s/?#]+(/\\S*)?$ (the http:// or https:// URL of the service), got "not a url"',
      'c.yaml:9:26: spec.insecureSkipTlsVerify must be boolean, got string ("yes")',
      'r.yaml:5:15: metadata.connection must match the pattern ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ (lowercase letters, digits and dashes, starting and ending with a letter or digit, at most 63 characters), got "East"',
    ]);
  });
});

describe('duplicate objects', () => {
  test('the same kind, namespace and name in two files names both places', async () => {
    const dir = writeTree({ 'a.yaml': role('web'), 'b/b.yaml': `${role('other')}---\n${role('web')}` });
    expect(await loadErrors(dir, ['.'])).toEqual([
      'b/b.yaml:9:1: TestRole/default/web is declared twice: at a.yaml:2:1 and at b/b.yaml:9:1',
    ]);
  });

  test('a copy with problems of its own is still reported as declared twice, in file order', async () => {
    const broken = role('web').replace('Description: role web', 'Description: 7');
    const dir = writeTree({ 'a.yaml': `${broken}---\n${role('web')}` });
    const lines = await loadErrors(dir, ['a.yaml']);
    expect(lines).toContain(
      'a.yaml:9:1: TestRole/default/web is declared twice: at a.yaml:2:1 and at a.yaml:9:1',
    );
    expect(lines.some((l) => l.startsWith('a.yaml:6:') && l.includes('Description'))).toBe(true);
  });

  test('a copy whose reference cannot be filled in is still reported as declared twice', async () => {
    // A file that does not exist, a variable not allowed, a variable not set: found by a new-user
    // trial, the duplicate showed only once the reference was fixed (a typo's copy was reported).
    const cases: [string, string][] = [
      ['${file:nope.txt}', 'b.yaml:6:17: cannot use ${file:nope.txt}: nope.txt not found'],
      ['${env:SECRET}', 'b.yaml:6:17: environment variable SECRET is not exposed to the manifest'],
      ['${env:UNSET}', 'b.yaml:6:17: environment variable UNSET is not set'],
    ];
    for (const [value, problem] of cases) {
      const copy = role('web').replace('Description: role web', `Description: "${value}"`);
      const dir = writeTree({ 'a.yaml': role('web'), 'b.yaml': copy });
      const lines = await loadErrors(dir, ['.'], {
        env: { SECRET: 's', UNSET: undefined, CONVERGE_ALLOW_ENV: 'UNSET' },
      });
      expect(lines).toEqual([
        'b.yaml:2:1: TestRole/default/web is declared twice: at a.yaml:2:1 and at b.yaml:2:1',
        expect.stringContaining(problem),
      ]);
    }
  });

  test('a copy whose name, namespace or connection cannot be filled in is not said to be one', async () => {
    const unset = (field: string, text: string) =>
      text.replace(new RegExp(`(  ${field}: )[^\\n]+`), '$1"${env:UNSET}"');
    // Both documents' names fail alike: the same text, but not known to be the same object.
    const named = unset('name', role('web'));
    const spaced = unset('namespace', roleOn('web', 'east', 'default').replace('  connection: east\n', ''));
    const connected = unset('connection', roleOn('web', 'east'));
    // Through an alias too: the name is the anchored value whose reference failed.
    const aliased =
      'apiVersion: converge/v1\nkind: TestRole\nmetadata:\n  labels: { team: &n "${env:UNSET}" }\n  name: *n\nspec:\n  Description: x\n';
    for (const copy of [named, spaced, connected, aliased]) {
      const dir = writeTree({ 'c.yaml': connection('east', 'registry'), 'a.yaml': `${copy}---\n${copy}` });
      const lines = await loadErrors(dir, ['.'], { env: { CONVERGE_ALLOW_ENV: 'UNSET' } });
      expect(lines.length).toBeGreaterThan(0);
      expect(lines.filter((l) => l.includes('declared twice'))).toEqual([]);
    }
  });

  test('within one file, with namespaces', async () => {
    const dir = writeTree({
      'a.yaml': `${roleOn('web', 'east', 'default').replace('  connection: east\n', '')}---\n${roleOn('web', 'east', 'default').replace('  connection: east\n', '')}`,
    });
    expect(await loadErrors(dir, ['a.yaml'])).toEqual([
      'a.yaml:10:1: TestRole/default/web is declared twice: at a.yaml:2:1 and at a.yaml:10:1',
    ]);
  });

  test('different namespaces, kinds or connections are different objects', async () => {
    const dir = writeTree({
      'c.yaml': connection('east', 'registry'),
      'a.yaml': [
        role('web'),
        roleOn('web', 'east'),
        roleOn('web', 'east', 'other'),
        'apiVersion: converge/v1\nkind: TestJob\nmetadata: { name: web }\nspec: { Datacenters: [] }\n',
      ].join('---\n'),
    });
    const manifest = await load(dir, ['.']);
    expect(manifest.resources).toHaveLength(4);
  });

  test('two Connection documents with the same name', async () => {
    const dir = writeTree({
      'a.yaml': `${connection('east', 'registry')}---\n${connection('east', 'secrets')}`,
    });
    expect(await loadErrors(dir, ['a.yaml'])).toEqual([
      'a.yaml:10:1: Connection/east is declared twice: at a.yaml:2:1 and at a.yaml:10:1',
    ]);
  });
});
