/**
 * A list attribute of a directory user or group (policies, groups: comma-separated strings on the
 * secrets service) whose items change is shown item by item in every rendering, against the sandbox:
 * the items added and removed, and how many stay, never `- groups = "ops"`, which reads as the
 * attribute removed. The text plan, --markdown and --json alike.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlanJson } from '../../src/planner/render/json.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

let sandbox: RunningSandbox;
let env: Record<string, string | undefined>;

beforeAll(async () => {
  sandbox = await startSandbox({
    port: 0,
    token: 'list-items-root-token',
    config: { registry: { policies: [{ Name: 'p-read' }, { Name: 'p-write' }] } },
  });
  env = { ...sandbox.env(), NO_COLOR: '1', CONVERGE_STATE_DIR: tempDir('converge-list-items-state-') };
});
afterAll(async () => sandbox?.close());

/** The change at `address` in `plan --json` of `dir`. */
async function jsonChange(
  dir: string,
  env: Record<string, string | undefined>,
  address: string,
): Promise<PlanJson['changes'][number]> {
  const r = await runCli(['plan', '-f', dir, '--json'], env);
  expect(r.code).toBe(0);
  return (JSON.parse(r.stdout) as PlanJson).changes.find((c) => c.address === address)!;
}

function folder(text: string): string {
  const dir = tempDir('converge-list-items-');
  writeFileSync(path.join(dir, 'directory.yaml'), text);
  return dir;
}

const doc = (kind: string, name: string, spec: string) =>
  `apiVersion: converge/v1\nkind: ${kind}\nmetadata: { name: ${name} }\nspec: ${spec}\n`;

const groups = ['g-ops', 'g-dev', 'g-web'].map((g) => doc('LdapGroup', g, '{ policies: [base] }'));

describe('a directory user whose groups and policies change', () => {
  let dir: string;
  const user = 'LdapUser/ldap/alice';

  beforeAll(async () => {
    const before = folder(
      [...groups, doc('LdapUser', 'alice', '{ policies: [dev, ops], groups: [g-ops, g-dev] }')].join('---\n'),
    );
    expect((await runCli(['apply', '-f', before, '--auto-approve'], env)).code).toBe(0);
    // g-ops goes and g-web comes (g-dev stays); a policy is added to the two that stay.
    dir = folder(
      [...groups, doc('LdapUser', 'alice', '{ policies: [dev, ops, more], groups: [g-dev, g-web] }')].join(
        '---\n',
      ),
    );
  });

  it('shows the items that come and go, and how many stay, in the text plan', async () => {
    const r = await runCli(['plan', '-f', dir], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      [
        `  ~ ${user}  (id auth/ldap/users/alice)`,
        '      ~ groups   = [',
        '          - "g-ops",',
        '          + "g-web",',
        '            # (1 unchanged item hidden)',
        '        ]',
        '      ~ policies = [',
        '          + "more",',
        '            # (2 unchanged items hidden)',
        '        ]',
      ].join('\n'),
    );
    // Never the attribute as a whole: that reads as groups removed, or set to one policy.
    expect(r.stdout).not.toMatch(/[-+] (groups|policies)\s+=/);
  });

  it('shows the same items in the --markdown diff block', async () => {
    const r = await runCli(['plan', '-f', dir, '--markdown'], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      [
        `~ ${user}`,
        '!     groups   = [',
        '-         "g-ops",',
        '+         "g-web",',
        '          # (1 unchanged item hidden)',
        '      ]',
        '!     policies = [',
        '+         "more",',
      ].join('\n'),
    );
    expect(r.stdout).not.toMatch(/^[-+] +(groups|policies)\s+=/m);
  });

  it('marks each diff of one item with item: true in --json, the item as its value', async () => {
    const change = await jsonChange(dir, env, user);
    expect(change.action).toBe('update');
    expect(change.diffs).toEqual([
      { path: 'groups', op: 'remove', before: 'g-ops', item: true },
      { path: 'groups', op: 'add', after: 'g-web', item: true },
      { path: 'policies', op: 'add', after: 'more', item: true },
    ]);
    // The whole lists stay where they were: before and after.
    expect(change.before).toEqual({ policies: ['dev', 'ops'], groups: ['g-dev', 'g-ops'] });
    expect(change.after).toEqual({ policies: ['dev', 'more', 'ops'], groups: ['g-dev', 'g-web'] });
  });
});

describe('a directory group whose last policy goes', () => {
  it('shows the item removed from the list, not the attribute removed', async () => {
    const name = 'g-emptied';
    expect(
      (
        await runCli(
          ['apply', '-f', folder(doc('LdapGroup', name, '{ policies: [audit] }')), '--auto-approve'],
          env,
        )
      ).code,
    ).toBe(0);
    const r = await runCli(['plan', '-f', folder(doc('LdapGroup', name, '{ policies: [] }'))], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(['      ~ policies = [', '          - "audit",', '        ]'].join('\n'));
  });
});

describe("a directory configuration's token policies", () => {
  it('changes item by item too', async () => {
    const config = (policies: string) =>
      `apiVersion: converge/v1\nkind: LdapConfig\nmetadata: { name: ldap }\nspec:\n  url: ldap://127.0.0.1:1\n  userdn: ou=people,dc=example,dc=test\n  token_policies: ${policies}\n`;
    expect((await runCli(['apply', '-f', folder(config('[base, extra]')), '--auto-approve'], env)).code).toBe(
      0,
    );
    const r = await runCli(['plan', '-f', folder(config('[base, more]'))], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      [
        '      ~ token_policies = [',
        '          - "extra",',
        '          + "more",',
        '            # (1 unchanged item hidden)',
        '        ]',
      ].join('\n'),
    );
  });
});

describe("a workspace's tags", () => {
  it('change item by item: a tag added is one item coming, never the attribute set to it', async () => {
    const workspace = (tags: string) =>
      `apiVersion: converge/v1\nkind: Workspace\nmetadata: { name: tagged, namespace: sandbox }\nspec:\n  tag-names: ${tags}\n`;
    const before = folder(workspace('[web, prod]'));
    expect((await runCli(['apply', '-f', before, '--auto-approve'], env)).code).toBe(0);
    const dir = folder(workspace('[web, prod, eu]'));
    const r = await runCli(['plan', '-f', dir], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      [
        '      ~ tag-names = [',
        '          + "eu",',
        '            # (2 unchanged items hidden)',
        '        ]',
      ].join('\n'),
    );
    expect(r.stdout).not.toMatch(/[-+] tag-names\s+=/);
    const change = await jsonChange(dir, env, 'Workspace/sandbox/tagged');
    expect(change.diffs).toEqual([{ path: 'tag-names', op: 'add', after: 'eu', item: true }]);
  });
});

describe("a workspace's trigger patterns and prefixes", () => {
  // The live lists were missing from the workspace's `before`: a pattern added showed with no count
  // of the patterns that stay, which read as the list becoming that one pattern.
  const workspace = (patterns: string, prefixes: string) =>
    `apiVersion: converge/v1\nkind: Workspace\nmetadata: { name: triggered, namespace: sandbox }\nspec:\n  file-triggers-enabled: true\n  trigger-patterns: ${patterns}\n  trigger-prefixes: ${prefixes}\n`;
  const address = 'Workspace/sandbox/triggered';
  let dir: string;

  beforeAll(async () => {
    const applied = folder(workspace('["/a/**", "/b/**"]', '[modules/, shared/]'));
    expect((await runCli(['apply', '-f', applied, '--auto-approve'], env)).code).toBe(0);
    // One pattern comes; of the prefixes one goes and one comes.
    dir = folder(workspace('["/a/**", "/b/**", "/c/**"]', '[modules/, libs/]'));
  });

  it('show the items that come and go, and how many stay, in the text plan', async () => {
    const r = await runCli(['plan', '-f', dir], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      [
        '      ~ trigger-patterns = [',
        '          + "/c/**",',
        '            # (2 unchanged items hidden)',
        '        ]',
        '      ~ trigger-prefixes = [',
        '          - "shared/",',
        '          + "libs/",',
        '            # (1 unchanged item hidden)',
        '        ]',
      ].join('\n'),
    );
    expect(r.stdout).not.toMatch(/[-+] trigger-(patterns|prefixes)\s+=/);
  });

  it('show the same count in the --markdown diff block', async () => {
    const r = await runCli(['plan', '-f', dir, '--markdown'], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      [
        '!     trigger-patterns = [',
        '+         "/c/**",',
        '          # (2 unchanged items hidden)',
        '      ]',
      ].join('\n'),
    );
  });

  it("carry the live lists whole in --json's before, beside the item diffs", async () => {
    const change = await jsonChange(dir, env, address);
    expect(change.action).toBe('update');
    expect(change.diffs).toEqual([
      { path: 'trigger-patterns', op: 'add', after: '/c/**', item: true },
      { path: 'trigger-prefixes', op: 'remove', before: 'shared/', item: true },
      { path: 'trigger-prefixes', op: 'add', after: 'libs/', item: true },
    ]);
    expect(change.before).toMatchObject({
      'trigger-patterns': ['/a/**', '/b/**'],
      'trigger-prefixes': ['modules/', 'shared/'],
      // The other settings the kind compares, as the service holds them.
      'file-triggers-enabled': true,
      'allow-destroy-plan': true,
      'speculative-enabled': true,
    });
  });
});

describe("a role's policy links and identities", () => {
  it('change item by item: a policy linked is one item coming, the rest counted', async () => {
    const role = (links: string) =>
      `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: linked }\nspec:\n  Policies: ${links}\n  ServiceIdentities: [{ ServiceName: web }]\n`;
    expect(
      (await runCli(['apply', '-f', folder(role('[{ Name: p-read }]')), '--auto-approve'], env)).code,
    ).toBe(0);
    const r = await runCli(['plan', '-f', folder(role('[{ Name: p-read }, { Name: p-write }]'))], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      [
        '      ~ Policies = [',
        '          + { Name = "p-write" },',
        '            # (1 unchanged item hidden)',
        '        ]',
      ].join('\n'),
    );
    expect(r.stdout).not.toMatch(/[-+] Policies\s+=/);
  });
});
