import { describe, expect, it } from 'vitest';
import type { Workspace } from '../../src/clients/workspaces/client.js';
import { diffAttributes, updateBody } from '../../src/resources/workspace/compare.js';
import { type WorkspaceSpec, workspaceRules } from '../../src/resources/workspace/schema.js';
import { workspaceKind } from '../../src/resources/workspace/index.js';
import { compareState, type LocalState } from '../../src/resources/workspace/state.js';

/** A live workspace as the service reports one right after a create with no attributes. */
function live(attributes: Record<string, unknown> = {}, extra: Partial<Workspace> = {}): Workspace {
  return {
    id: 'ws-abc',
    organization: 'acme',
    name: 'web',
    projectId: 'prj-default',
    projectName: 'Default Project',
    lockedBy: null,
    lockedByName: null,
    lockReason: null,
    currentStateVersionId: null,
    agentPoolId: null,
    attributes: {
      name: 'web',
      'allow-destroy-plan': true,
      'assessments-enabled': false,
      'auto-apply': false,
      description: null,
      'execution-mode': 'remote',
      'file-triggers-enabled': true,
      'global-remote-state': false,
      operations: true,
      'queue-all-runs': false,
      'speculative-enabled': true,
      'engine-version': '1.9.8',
      'trigger-patterns': [],
      'trigger-prefixes': [],
      'tag-names': [],
      'vcs-repo': null,
      'working-directory': null,
      locked: false,
      'created-at': '2026-11-22T00:00:00.000Z',
      'updated-at': '2026-11-22T00:00:00.000Z',
      'resource-count': 0,
      permissions: { 'can-update': true },
      ...attributes,
    },
    ...extra,
  };
}

describe('workspace comparison', () => {
  it('finds nothing to change right after a create, whatever the server filled in', () => {
    expect(diffAttributes({ description: '' }, live())).toEqual([]);
    expect(diffAttributes({}, live())).toEqual([]);
  });

  it('treats an empty string and the null the service stores for it alike', () => {
    expect(diffAttributes({ 'working-directory': '', description: '' }, live())).toEqual([]);
  });

  it('treats omitted attributes with a create default as that default', () => {
    expect(diffAttributes({}, live({ 'auto-apply': true }))).toEqual([
      { path: 'auto-apply', op: 'change', before: true, after: false },
    ]);
  });

  it('leaves attributes without a fixed default alone when the manifest omits them', () => {
    expect(
      diffAttributes({}, live({ 'engine-version': '1.5.0', 'working-directory': 'x', 'tag-names': ['a'] })),
    ).toEqual([]);
  });

  it('ignores the order of tags and trigger lists', () => {
    expect(diffAttributes({ 'tag-names': ['b', 'a'] }, live({ 'tag-names': ['a', 'b'] }))).toEqual([]);
    expect(diffAttributes({ 'tag-names': ['a', 'c'] }, live({ 'tag-names': ['a', 'b'] }))).toEqual([
      { path: 'tag-names', op: 'remove', before: 'b' },
      { path: 'tag-names', op: 'add', after: 'c' },
    ]);
  });

  it('compares only the vcs-repo members the manifest sets, and null removes the link', () => {
    const repo = {
      identifier: 'acme/web',
      'oauth-token-id': 'ot-1',
      branch: 'main',
      'ingress-submodules': false,
      'display-identifier': 'acme/web',
      'webhook-url': 'https://example.test/hook',
      'service-provider': 'github',
    };
    expect(
      diffAttributes(
        { 'vcs-repo': { identifier: 'acme/web', 'oauth-token-id': 'ot-1', branch: 'main' } },
        live({ 'vcs-repo': repo }),
      ),
    ).toEqual([]);
    const changed = diffAttributes(
      { 'vcs-repo': { identifier: 'acme/web', 'oauth-token-id': 'ot-1', branch: 'dev' } },
      live({ 'vcs-repo': repo }),
    );
    expect(changed).toEqual([{ path: 'vcs-repo.branch', op: 'change', before: 'main', after: 'dev' }]);
    expect(
      updateBody(
        { 'vcs-repo': { identifier: 'acme/web', 'oauth-token-id': 'ot-1', branch: 'dev' } },
        changed,
      ),
    ).toEqual({
      'vcs-repo': { branch: 'dev' },
    });
    const removed = diffAttributes({ 'vcs-repo': null }, live({ 'vcs-repo': repo }));
    expect(removed).toHaveLength(1);
    expect(updateBody({ 'vcs-repo': null }, removed)).toEqual({ 'vcs-repo': null });
  });

  it('compares the project by the form the manifest uses', () => {
    expect(diffAttributes({ project: { name: 'Default Project' } }, live())).toEqual([]);
    expect(diffAttributes({ project: { id: 'prj-default' } }, live())).toEqual([]);
    expect(diffAttributes({ project: { name: 'platform' } }, live())).toEqual([
      { path: 'project.name', op: 'change', before: 'Default Project', after: 'platform' },
    ]);
  });

  it('shows on create every attribute it compares, execution-mode remote included', () => {
    const key = { kind: 'Workspace', name: 'web' };
    expect(workspaceKind.render({ key, spec: {} })).toMatchObject({ 'execution-mode': 'remote' });
    expect(workspaceKind.render({ key, spec: { 'execution-mode': 'local' } })).toMatchObject({
      'execution-mode': 'local',
    });
    // The deprecated alias says it instead: never both in one create.
    expect(workspaceKind.render({ key, spec: { operations: false } })).not.toHaveProperty('execution-mode');
  });

  it('sends only what changed on update', () => {
    const spec = { description: 'new', 'auto-apply': true, 'engine-version': '1.9.8' };
    const diffs = diffAttributes(spec, live({ description: 'old' }));
    expect(updateBody(spec, diffs)).toEqual({ description: 'new', 'auto-apply': true });
  });

  it("sends assessments-enabled with every update, since the service's update default is false", () => {
    const spec = { description: 'second', 'assessments-enabled': true };
    const diffs = diffAttributes(spec, live({ description: 'first', 'assessments-enabled': true }));
    expect(diffs).toEqual([{ path: 'description', op: 'change', before: 'first', after: 'second' }]);
    expect(updateBody(spec, diffs)).toEqual({ description: 'second', 'assessments-enabled': true });
    // Nothing to update: nothing sent at all.
    expect(updateBody(spec, [])).toEqual({});
  });

  it("reads an agent workspace's pool from the agent-pool relationship", () => {
    const spec = { 'execution-mode': 'agent', 'agent-pool-id': 'apool-1' } as const;
    const agent = live({ 'execution-mode': 'agent' }, { agentPoolId: 'apool-1' });
    expect(diffAttributes(spec, agent)).toEqual([]);
    expect(diffAttributes({ ...spec, 'agent-pool-id': 'apool-2' }, agent)).toEqual([
      { path: 'agent-pool-id', op: 'change', before: 'apool-1', after: 'apool-2' },
    ]);
  });

  it('puts a default back when someone changed an omitted attribute', () => {
    const diffs = diffAttributes({}, live({ 'speculative-enabled': false, 'execution-mode': 'local' }));
    expect(updateBody({}, diffs)).toEqual({ 'speculative-enabled': true, 'execution-mode': 'remote' });
  });
});

describe('what moved in a stale workspace', () => {
  it('names the parts, a lock reason holding "|" included', () => {
    const planned = '2026-01-01T00:00:00Z|users/user-9|a|b|sv-1';
    const now = '2026-01-01T00:00:00Z|users/user-9|a|c|sv-1';
    expect(workspaceKind.versionChange(planned, now)).toBe('lock reason a|b → a|c');
    expect(workspaceKind.versionChange('t|unlocked||sv-1', 't|users/u-1|freeze|sv-2')).toBe(
      'lock unlocked → users/u-1; lock reason (none) → freeze; current state version sv-1 → sv-2',
    );
  });
});

describe('workspace locks in the plan', () => {
  const key = { kind: 'Workspace', name: 'web', namespace: 'acme' };
  const theirs = live(
    { locked: true },
    { lockedBy: { id: 'user-9', type: 'users' }, lockedByName: 'bob', lockReason: 'change freeze' },
  );

  const forced = { option: (flag: string) => flag === 'force-unlock' };

  it("plans no release of someone else's lock without --force-unlock, and names holder and reason", () => {
    const { diffs, notes, heldBack } = workspaceKind.compare(
      { key, spec: { locked: false } },
      { key, live: { workspace: theirs } },
      undefined,
      { option: () => false },
    );
    expect(diffs).toEqual([]);
    expect(notes).toEqual([
      `locked by user bob (reason: "change freeze"); the manifest says locked: false, but someone else's lock is released only with --force-unlock (plan or apply with it to release the lock; a plan made with another token than the one that applies sees that token's lock so too)`,
    ]);
    // A saved plan made with the switch is stale without it, not "already in effect".
    expect(heldBack).toEqual(['locked']);
  });

  it('plans the release with --force-unlock, naming the holder (the id when no name was included)', () => {
    const unnamed = { ...theirs, lockedByName: null, lockReason: null };
    const { diffs } = workspaceKind.compare(
      { key, spec: { locked: false } },
      { key, live: { workspace: unnamed } },
      undefined,
      forced,
    );
    expect(diffs).toEqual([
      {
        path: 'locked',
        op: 'change',
        before: true,
        after: false,
        note: 'locked by user user-9: released by --force-unlock',
      },
    ]);
  });

  it('shows the reason Converge will lock with, and the holder and reason of a live lock', () => {
    const { diffs } = workspaceKind.compare(
      { key, spec: { locked: true, 'lock-reason': 'release' } },
      { key, live: { workspace: live() } },
    );
    expect(diffs[0]).toMatchObject({ path: 'locked', after: true, note: 'reason: "release"' });
    expect(workspaceKind.render({ key, spec: { locked: true, 'lock-reason': 'release' } })).toMatchObject({
      locked: true,
      'lock-reason': 'release',
    });
    expect(workspaceKind.describe({ key, live: { workspace: theirs } })).toMatchObject({
      locked: true,
      'locked-by': 'user bob',
      'lock-reason': 'change freeze',
    });
  });
});

describe("a live workspace's plan attributes (before)", () => {
  const key = { kind: 'Workspace', name: 'web', namespace: 'acme' };
  it('hold every attribute the kind compares, lists whole, the agent pool from its relationship', () => {
    const agent = live(
      {
        'execution-mode': 'agent',
        description: 'web',
        'source-url': 'https://ci.example.test/job/1',
        'trigger-patterns': ['/a/**', '/b/**'],
        'trigger-prefixes': ['modules/'],
        'tag-names': ['web'],
        'working-directory': 'envs/prod',
        'vcs-repo': { identifier: 'acme/web', 'oauth-token-id': 'ot-1', branch: 'main' },
      },
      { agentPoolId: 'apool-1' },
    );
    const before = workspaceKind.describe({
      key,
      live: { workspace: agent, state: { serial: 3, lineage: 'l-1', md5: 'x' } },
    });
    expect(before).toEqual({
      description: 'web',
      'agent-pool-id': 'apool-1',
      'allow-destroy-plan': true,
      'assessments-enabled': false,
      'auto-apply': false,
      'execution-mode': 'agent',
      operations: true,
      'file-triggers-enabled': true,
      'global-remote-state': false,
      'queue-all-runs': false,
      'speculative-enabled': true,
      'engine-version': '1.9.8',
      'source-url': 'https://ci.example.test/job/1',
      'trigger-patterns': ['/a/**', '/b/**'],
      'trigger-prefixes': ['modules/'],
      'tag-names': ['web'],
      'vcs-repo': { identifier: 'acme/web', 'oauth-token-id': 'ot-1', branch: 'main' },
      'working-directory': 'envs/prod',
      locked: false,
      'resource-count': 0,
      project: 'Default Project',
      state: 'serial 3, lineage l-1',
    });
    // Whatever a manifest may set and compare reads is there: a plan counts a list's unchanged
    // items from it, and --json readers read the live value from it.
    const spec = {
      description: 'x',
      'agent-pool-id': 'apool-2',
      'allow-destroy-plan': false,
      'assessments-enabled': true,
      'auto-apply': true,
      'execution-mode': 'local',
      'file-triggers-enabled': false,
      'global-remote-state': true,
      'queue-all-runs': true,
      'speculative-enabled': false,
      'engine-version': '1.0.0',
      'trigger-patterns': ['/z/**'],
      'trigger-prefixes': ['z/'],
      'tag-names': ['z'],
      'working-directory': 'z',
    } satisfies WorkspaceSpec;
    const compared = new Set(diffAttributes(spec, agent).map((d) => d.path.split('.')[0]!));
    expect(compared.size).toBe(Object.keys(spec).length);
    expect([...compared].filter((k) => !(k in before))).toEqual([]);
  });
});

describe('workspace manifest rules', () => {
  it('rejects execution-mode with operations, agent mode without a pool, and a pool without agent mode', () => {
    expect(workspaceRules({ 'execution-mode': 'remote', operations: true }).map((r) => r.pointer)).toEqual([
      '/operations',
    ]);
    expect(workspaceRules({ 'execution-mode': 'agent' })[0]?.message).toMatch(/needs agent-pool-id/);
    expect(workspaceRules({ 'agent-pool-id': 'apool-1' })[0]?.pointer).toBe('/agent-pool-id');
    expect(workspaceRules({ 'execution-mode': 'agent', 'agent-pool-id': 'apool-1' })).toEqual([]);
    expect(workspaceRules({ 'lock-reason': 'x' })[0]?.message).toMatch(/needs locked: true/);
  });

  it('refuses a tag listed twice, which the service keeps once (a change planned after every apply)', () => {
    expect(workspaceRules({ 'tag-names': ['a', 'a', 'B'] })).toEqual([
      { pointer: '/tag-names/1', message: 'this tag is listed twice; the service keeps it once' },
    ]);
    expect(workspaceRules({ 'tag-names': ['a', 'B'] })).toEqual([]);
  });
});

describe('state seeding rules', () => {
  const local = (serial: number, lineage = 'L1', md5 = 'm'): LocalState => ({
    path: 'prod.tfstate',
    info: { serial, lineage, md5, version: 4, base64: '', resourceCount: 0, text: '' },
  });

  it('pushes into a workspace without state', () => {
    expect(compareState(local(1), null).diff).toMatchObject({ path: 'state', op: 'add' });
  });

  it('pushes a newer serial of the same lineage', () => {
    const r = compareState(local(5), { serial: 4, lineage: 'L1', md5: 'x' });
    expect(r.diff).toMatchObject({ op: 'change', before: 'serial 4, lineage L1' });
    expect(r.problem).toBeUndefined();
  });

  it('does nothing when the same state is already there', () => {
    expect(compareState(local(4, 'L1', 'same'), { serial: 4, lineage: 'L1', md5: 'same' })).toEqual({});
  });

  it('refuses another lineage (older serial or not) and the same serial with other content', () => {
    expect(compareState(local(9, 'L2'), { serial: 4, lineage: 'L1', md5: 'x' }).problem).toMatch(
      /lineage L2.*lineage L1/,
    );
    expect(compareState(local(3, 'L2'), { serial: 4, lineage: 'L1', md5: 'x' }).problem).toMatch(
      /lineage L2.*lineage L1/,
    );
    expect(compareState(local(4, 'L1', 'a'), { serial: 4, lineage: 'L1', md5: 'b' }).problem).toMatch(
      /different content/,
    );
  });

  it('leaves a workspace whose runs moved its state on alone, with a note (a seed is for an empty one)', () => {
    // Held back, not in effect: a saved plan that was to push the seed is stale now.
    expect(compareState(local(3), { serial: 7, lineage: 'L1', md5: 'x' })).toEqual({
      note: "state: the workspace's state (serial 7) has moved on from state file prod.tfstate (serial 3); the seed is not pushed again",
      heldBack: true,
    });
  });

  it('leaves it alone through the whole workspace comparison: noop, no problem, the note', () => {
    const comparison = workspaceKind.compare(
      {
        key: { kind: 'Workspace', name: 'web', namespace: 'acme' },
        spec: { state: 'prod.tfstate' },
        local: { state: local(3) },
      },
      {
        key: { kind: 'Workspace', name: 'web' },
        live: { workspace: live(), state: { serial: 7, lineage: 'L1', md5: 'x' } },
      },
    );
    expect(comparison.diffs).toEqual([]);
    expect(comparison.problems).toEqual([]);
    expect(comparison.notes).toEqual([expect.stringContaining('has moved on from state file prod.tfstate')]);
  });
});
