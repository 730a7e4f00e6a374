/** The sandbox config file: format, validation with file:line:col, and what it seeds. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSandboxConfig, SandboxConfigError, startSandbox } from '../../src/sandbox/index.js';
import { apiFor, type RoleJson, tempDir } from './helpers.js';

let dir: ReturnType<typeof tempDir>;
let n = 0;

beforeAll(() => {
  dir = tempDir('sandbox-config');
});

afterAll(() => {
  dir.remove();
});

function configFile(text: string): string {
  const path = join(dir.path, `sandbox-${++n}.yaml`);
  writeFileSync(path, text);
  return path;
}

function errorOf(fn: () => unknown): SandboxConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof SandboxConfigError) return err;
    throw err;
  }
  throw new Error('expected a SandboxConfigError');
}

const FULL = `# every section
tokens:
  - name: reader
    secret: reader-token
    registry: { acl: read }
  - name: team-a
    secret: team-a-token
    namespace: team-a
    registry: { acl: write }
faults:
  latencyMs: 0
  failFirst: 0
  rateLimit: { perSecond: 0 }
registry:
  policies:
    - { Name: service-read, Description: "read services" }
    - { Name: team-policy, Namespace: team-a }
  roles:
    - Name: web
      Description: seeded
      Policies: [{ Name: service-read }]
      ServiceIdentities: [{ ServiceName: web, Datacenters: [dc1] }]
    - { Name: team-role, Namespace: team-a, Policies: [{ Name: team-policy }], NodeIdentities: [{ NodeName: n1, Datacenter: dc1 }] }
`;

describe('a valid config', () => {
  it('loads, and the sandbox seeds policies, roles and tokens from it', async () => {
    const path = configFile(FULL);
    expect(loadSandboxConfig(path).tokens).toHaveLength(2);
    const sandbox = await startSandbox({ config: path });
    try {
      const api = apiFor(sandbox);
      const web = await api('GET', '/v1/acl/role/name/web', { token: 'reader-token' });
      expect(web.status).toBe(200);
      expect(web.json<RoleJson>()).toMatchObject({
        Description: 'seeded',
        Policies: [{ Name: 'service-read' }],
        ServiceIdentities: [{ ServiceName: 'web', Datacenters: ['dc1'] }],
      });
      // The team token's namespace applies to its requests.
      const team = await api('GET', '/v1/acl/role/name/team-role', { token: 'team-a-token' });
      expect(team.json<RoleJson>().Namespace).toBe('team-a');
      expect((await api('PUT', '/v1/acl/role', { token: 'reader-token', body: { Name: 'x' } })).status).toBe(
        403,
      );
    } finally {
      await sandbox.close();
    }
  });

  it('treats an empty file as an empty config', () => {
    expect(loadSandboxConfig(configFile(''))).toEqual({});
    expect(loadSandboxConfig(configFile('# nothing\n'))).toEqual({});
  });
});

describe('config errors name the file, line and column', () => {
  it.each([
    [
      'an unknown top-level key',
      'tokens: []\nregistri: {}\n',
      ':2:1: registri: unknown key; allowed here: tokens, faults, registry',
    ],
    [
      'an unknown token key',
      'tokens:\n  - name: a\n    secret: s\n    registy: { acl: read }\n',
      ':4:5: tokens[0].registy: unknown key; allowed here: name, secret, namespace, registry',
    ],
    [
      'a bad right',
      'tokens:\n  - name: a\n    secret: s\n    registry: { acl: admin }\n',
      ':4:22: tokens[0].registry.acl: must be one of: read, write, none',
    ],
    ['a missing secret', 'tokens:\n  - name: a\n', ":2:5: tokens[0]: missing required key 'secret'"],
    [
      'an empty secret',
      'tokens:\n  - { name: a, secret: "" }\n',
      ':2:24: tokens[0].secret: must not be empty',
    ],
    ['a negative latency', 'faults:\n  latencyMs: -5\n', ':2:14: faults.latencyMs: must be >= 0'],
    [
      'a string for failFirst',
      'faults:\n  failFirst: lots\n',
      ':2:14: faults.failFirst: must be a whole number',
    ],
    ['an empty section', 'faults:\n', ':1:1: faults: must be a mapping (key: value)'],
    ['a list where a mapping belongs', 'registry: [1]\n', ':1:11: registry: must be a mapping (key: value)'],
    [
      'a seed role linking an unknown policy',
      'registry:\n  roles:\n    - Name: ok\n    - Name: web\n      Policies: [{ Name: nope }]\n',
      ':4:7: registry.roles[1]: No such ACL policy with name "nope"',
    ],
    [
      'a seed role with a bad name',
      'registry:\n  roles:\n    - { Name: "bad name" }\n',
      `:3:7: registry.roles[0]: Invalid Role: invalid Name. Only alphanumeric characters, '-' and '_' are allowed`,
    ],
    [
      'two policies with one name',
      'registry:\n  policies:\n    - { Name: p }\n    - { Name: p }\n',
      ':4:7: registry.policies[1]: another entry has the same Name "p" (policies[0])',
    ],
    [
      'redefining the built-in policy',
      'registry:\n  policies:\n    - { Name: global-management }\n',
      'registry.policies[0]: global-management is built in and cannot be redefined',
    ],
    [
      'a duplicate token name',
      'tokens:\n  - { name: a, secret: s1 }\n  - { name: a, secret: s2 }\n',
      ':3:13: tokens[1].name: duplicate token name (also tokens[0])',
    ],
    [
      'a fault override for a service the sandbox does not run',
      'faults:\n  services:\n    registri: { failRate: 0.2 }\n',
      ':3:5: faults.services.registri: unknown key; allowed here: registry, workspaces, secrets, scheduler',
    ],
    [
      'a rate limit that is neither a number nor a bucket',
      'faults:\n  rateLimit: fast\n',
      ':2:14: faults.rateLimit: must be a number or a mapping (key: value)',
    ],
    [
      'a per-service rate above 1',
      'faults:\n  services:\n    scheduler: { resetRate: 1.5 }\n',
      ':3:29: faults.services.scheduler.resetRate: must be <= 1',
    ],
    [
      'a fail rate under both its names',
      'faults:\n  failRate: 0.1\n  errorRate: 0.2\n',
      ':3:3: faults.errorRate: give failRate or its older name errorRate, not both',
    ],
    ['a negative seed', 'faults:\n  seed: -1\n', ':2:9: faults.seed: must be >= 0'],
    ['a duplicate key', 'faults: {}\nfaults: {}\n', ':2:1: Map keys must be unique'],
    ['a YAML syntax error', 'tokens: [\n', ':2:1: '],
  ])('reports %s', (_label, text, expected) => {
    const path = configFile(text);
    const err = errorOf(() => loadSandboxConfig(path));
    expect(err.message).toContain(`${path}${expected.startsWith(':') ? '' : ':'}`);
    expect(err.message).toContain(expected);
  });

  it('lists every problem, one per line', () => {
    const path = configFile('tokens:\n  - name: a\nfaults:\n  latencyMs: x\n');
    const err = errorOf(() => loadSandboxConfig(path));
    expect(err.problems).toHaveLength(2);
    expect(err.message.split('\n')).toEqual([
      'invalid sandbox config:',
      `  ${path}:2:5: tokens[0]: missing required key 'secret'`,
      `  ${path}:4:14: faults.latencyMs: must be a whole number`,
    ]);
  });

  it('reports a missing file clearly', () => {
    const path = join(dir.path, 'missing.yaml');
    expect(errorOf(() => loadSandboxConfig(path)).message).toBe(
      `${path}: cannot read the sandbox config: no such file`,
    );
  });
});

describe('config given as an object', () => {
  it('is validated with the same rules, naming the path', async () => {
    const err = await startSandbox({
      config: { tokens: [{ name: 'a', secret: '' }], faults: { latencyMs: 1.5 } } as never,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SandboxConfigError);
    expect((err as Error).message).toContain('sandbox config: tokens[0].secret: must not be empty');
    expect((err as Error).message).toContain('sandbox config: faults.latencyMs: must be a whole number');
  });

  it('refuses a token whose secret equals the root token', async () => {
    const err = await startSandbox({
      token: 'same',
      config: { tokens: [{ name: 'a', secret: 'same' }] },
    }).catch((e: unknown) => e);
    expect((err as Error).message).toBe('sandbox config: tokens[0].secret: equals the root token');
  });

  it('rejects a config file path with errors before listening', async () => {
    const path = configFile('nope: 1\n');
    await expect(startSandbox({ config: path })).rejects.toThrow(`${path}:1:1: nope: unknown key`);
  });
});
