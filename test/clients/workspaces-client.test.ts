/** The workspaces client against the sandbox's workspace service, over real HTTP on 127.0.0.1. */
import { randomUUID } from 'node:crypto';
import pLimit from 'p-limit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectionFromEnv, HttpStatusError } from '../../src/clients/http/index.js';
import { workspacesService } from '../../src/clients/workspaces/definition.js';
import { type Workspace, WorkspacesClient } from '../../src/clients/workspaces/client.js';
import { parseStateFile } from '../../src/clients/workspaces/state-file.js';
import { pushState, WorkspaceLockedError } from '../../src/clients/workspaces/state-push.js';
import { type SandboxConfig, startSandbox } from '../../src/sandbox/index.js';
import { caught, everyRendering } from './helpers.js';

const ROOT = 'root-secret-5e8c21';
const BOB = 'bob-secret-c47a90';
const ORG_TOKEN = 'org-secret-1b6d3f';
const ORG = 'sandbox';

const config = {
  workspaces: {
    organizations: [
      {
        name: ORG,
        projects: ['platform'],
        teams: [{ name: 'devs', access: { '*': { runs: 'read', lock: true, stateVersions: 'write' } } }],
      },
    ],
  },
  tokens: [
    { name: 'bob', secret: BOB, workspaces: { user: 'bob', teams: { [ORG]: ['devs'] } } },
    { name: 'org', secret: ORG_TOKEN, workspaces: { organization: ORG } },
  ],
} as SandboxConfig;

let sandbox: Awaited<ReturnType<typeof startSandbox>>;
let root: WorkspacesClient;
let bob: WorkspacesClient;
let orgToken: WorkspacesClient;

/** A workspace name no other test uses. */
const unique = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;

function connect(token: string): WorkspacesClient {
  const endpoint = connectionFromEnv(workspacesService, {
    ...sandbox.env(),
    CONVERGE_WORKSPACES_ORGANIZATION: ORG,
  });
  return WorkspacesClient.fromConnection({
    address: endpoint.address,
    token,
    ...(endpoint.settings.organization ? { defaultOrganization: endpoint.settings.organization } : {}),
  });
}

/** A format-4 state with `managed` resource instances, written with unusual spacing on purpose. */
function stateText(serial: number, lineage: string, managed = 0): string {
  const resources = Array.from({ length: managed }, (_, i) => ({
    mode: 'managed',
    type: 'null_resource',
    name: `r${i}`,
    provider: 'provider["registry.terraform.io/hashicorp/null"]',
    instances: [{ schema_version: 0, attributes: { id: String(i) } }],
  }));
  return `${JSON.stringify({ version: 4, terraform_version: '1.9.8', serial, lineage, outputs: {}, resources }, null, 3)}\n\n`;
}

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, token: ROOT, config });
  root = connect(ROOT);
  bob = connect(BOB);
  orgToken = connect(ORG_TOKEN);
});

afterAll(async () => {
  await Promise.all([root?.close(), bob?.close(), orgToken?.close()]);
  await sandbox?.close();
});

describe('identity', () => {
  it('pings for the rate limit and tells users from organization tokens', async () => {
    const pinger = connect(ROOT);
    const { rateLimit } = await pinger.ping();
    expect(rateLimit).toBeGreaterThan(0);
    expect(pinger.http.announcedRateLimit).toBe(rateLimit);
    await pinger.close();
    expect(await root.whoAmI()).toMatchObject({ type: 'users', username: 'root' });
    expect(await bob.whoAmI()).toMatchObject({ type: 'users', username: 'bob' });
    expect(await orgToken.whoAmI()).toBeUndefined();
  });
});

describe('workspaces', () => {
  it('creates, reads by id and by name, updates and moves between projects', async () => {
    const projects = await root.listProjects(ORG);
    const platform = projects.find((p) => p.name === 'platform')!;
    const defaultProject = projects.find((p) => p.name === 'Default Project')!;
    expect(platform).toMatchObject({ organization: ORG });
    expect(defaultProject.id).toMatch(/^prj-/);

    const name = unique('app');
    const created = await root.createWorkspace(undefined, { name, description: 'first' });
    expect(created).toMatchObject({ organization: ORG, name, projectId: defaultProject.id, lockedBy: null });
    expect(created.id).toMatch(/^ws-/);
    expect(created.attributes).toMatchObject({ 'execution-mode': 'remote', 'auto-apply': false });

    const byName = await root.readWorkspace({ organization: ORG, name }, { include: ['project'] });
    expect(byName).toMatchObject({ id: created.id, projectName: 'Default Project' });
    expect((await root.readWorkspace({ id: created.id }))?.name).toBe(name);

    const updated = await root.updateWorkspace(
      { organization: ORG, name },
      { description: 'second', 'auto-apply': true },
      { projectId: platform.id },
    );
    expect(updated).toMatchObject({ projectId: platform.id });
    expect(updated.attributes).toMatchObject({ description: 'second', 'auto-apply': true });
    const renamed = await root.updateWorkspace({ id: created.id }, { name: `${name}-x` });
    expect(renamed.name).toBe(`${name}-x`);
    expect(await root.readWorkspace({ organization: ORG, name })).toBeUndefined();
  });

  it('creates in a project given at create time', async () => {
    const platform = (await root.listProjects(ORG)).find((p) => p.name === 'platform')!;
    const ws = await root.createWorkspace(ORG, { name: unique('in-prj') }, { projectId: platform.id });
    expect(ws.projectId).toBe(platform.id);
  });

  it('reports a taken name as a 422 with the attribute pointer', async () => {
    const name = unique('dup');
    await root.createWorkspace(ORG, { name });
    const err = await root.createWorkspace(ORG, { name }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HttpStatusError);
    const status = err as HttpStatusError;
    expect(status.status).toBe(422);
    expect(status.details[0]).toMatchObject({ pointer: '/data/attributes/name' });
    expect(status.message).toContain('(at /data/attributes/name)');
    expect(status.message).not.toContain(ROOT);
  });

  it('gives undefined for what does not exist, and 404 for an unknown organization', async () => {
    expect(await root.readWorkspace({ id: 'ws-doesnotexist' })).toBeUndefined();
    expect(await root.readWorkspace({ organization: ORG, name: 'no-such-workspace' })).toBeUndefined();
    await expect(root.listWorkspaces('no-such-org')).rejects.toMatchObject({ status: 404 });
  });

  it('reads an organization, and gives undefined for one that does not exist', async () => {
    expect(await root.readOrganization(ORG)).toMatchObject({ name: ORG, attributes: { name: ORG } });
    expect(await orgToken.readOrganization(ORG)).toMatchObject({ name: ORG });
    expect(await root.readOrganization('no-such-org')).toBeUndefined();
  });

  it('filters lists by name, tags, excluded tags, wildcard and project', async () => {
    const prefix = unique('flt');
    const platform = (await root.listProjects(ORG)).find((p) => p.name === 'platform')!;
    await root.createWorkspace(ORG, { name: `${prefix}-web-prod`, 'tag-names': ['web', 'prod'] });
    await root.createWorkspace(ORG, { name: `${prefix}-web-dev`, 'tag-names': ['web', 'dev'] });
    await root.createWorkspace(
      ORG,
      { name: `${prefix}-db-prod`, 'tag-names': ['db', 'prod'] },
      {
        projectId: platform.id,
      },
    );
    const names = async (query: Parameters<WorkspacesClient['listWorkspaces']>[1]) =>
      (await root.listWorkspaces(ORG, { wildcardName: `${prefix}-*`, ...query })).map((w) => w.name).sort();

    expect(await names({})).toEqual([`${prefix}-db-prod`, `${prefix}-web-dev`, `${prefix}-web-prod`]);
    expect(await names({ tags: ['web', 'prod'] })).toEqual([`${prefix}-web-prod`]);
    expect(await names({ excludeTags: ['web'] })).toEqual([`${prefix}-db-prod`]);
    expect(await names({ projectId: platform.id })).toEqual([`${prefix}-db-prod`]);
    expect(await names({ wildcardName: `*${prefix}-web*` })).toEqual([
      `${prefix}-web-dev`,
      `${prefix}-web-prod`,
    ]);
    const byName = await root.listWorkspaces(ORG, { name: `${prefix}-web-dev` });
    expect(byName.map((w) => w.name)).toContain(`${prefix}-web-dev`);
    const withProject = await root.listWorkspaces(ORG, {
      wildcardName: `${prefix}-db*`,
      include: ['project'],
    });
    expect(withProject[0]?.projectName).toBe('platform');
  });

  it('walks more than 100 workspaces in two requests of 100', async () => {
    const prefix = unique('bulk');
    const limit = pLimit(8);
    const created = await Promise.all(
      Array.from({ length: 120 }, (_, i) =>
        limit(() => root.createWorkspace(ORG, { name: `${prefix}-${String(i).padStart(3, '0')}` })),
      ),
    );
    expect(new Set(created.map((w) => w.id)).size).toBe(120);

    const before = root.requestCount;
    const all = await root.listWorkspaces(ORG, { wildcardName: `${prefix}-*` });
    expect(root.requestCount - before).toBe(2);
    expect(all.map((w) => w.name).sort()).toEqual(created.map((w) => w.name).sort());

    const page2 = await root.listWorkspacesPage(
      ORG,
      { wildcardName: `${prefix}-*` },
      { number: 2, size: 50 },
    );
    expect(page2.items).toHaveLength(50);
    expect(page2.pagination).toEqual({
      currentPage: 2,
      pageSize: 50,
      prevPage: 1,
      nextPage: 3,
      totalPages: 3,
      totalCount: 120,
    });
    const firstDefault = await root.listWorkspacesPage(ORG, { wildcardName: `${prefix}-*` }, { number: 1 });
    expect(firstDefault.items).toHaveLength(20);
  });
});

describe('locks', () => {
  let ws: Workspace;
  beforeAll(async () => {
    ws = await root.createWorkspace(ORG, { name: unique('lock') });
  });

  it('locks, refuses a second lock and an unlock by another user, unlocks by its holder', async () => {
    const locked = await root.lockWorkspace(ws.id, 'maintenance');
    expect(locked.attributes.locked).toBe(true);
    expect(locked.lockedBy).toMatchObject({ type: 'users' });
    expect(locked.lockedBy?.id).toBe((await root.whoAmI())?.id);

    await expect(root.lockWorkspace(ws.id)).rejects.toMatchObject({ status: 409 });
    await expect(bob.lockWorkspace(ws.id)).rejects.toMatchObject({ status: 409 });
    await expect(bob.unlockWorkspace(ws.id)).rejects.toMatchObject({ status: 409 });

    const unlocked = await root.unlockWorkspace(ws.id);
    expect(unlocked.attributes.locked).toBe(false);
    expect(unlocked.lockedBy).toBeNull();
    await expect(root.unlockWorkspace(ws.id)).rejects.toMatchObject({ status: 409 });
  });

  it('force-unlocks a lock held by someone else (admin), then 409 when unlocked', async () => {
    await bob.lockWorkspace(ws.id);
    await expect(bob.forceUnlockWorkspace(ws.id)).rejects.toBeInstanceOf(HttpStatusError);
    const released = await root.forceUnlockWorkspace(ws.id);
    expect(released.attributes.locked).toBe(false);
    await expect(root.forceUnlockWorkspace(ws.id)).rejects.toMatchObject({ status: 409 });
  });
});

describe('state versions', () => {
  it('pushes a state, then reads it as current, in the list, by id and as the raw download', async () => {
    const ws = await root.createWorkspace(ORG, { name: unique('state') });
    expect(await root.currentStateVersion(ws.id)).toBeUndefined();

    const text = stateText(1, randomUUID(), 2);
    const state = parseStateFile(text, 'app.tfstate');
    const pushed = await pushState(root, ws.id, state);
    expect(pushed.id).toMatch(/^sv-/);
    expect(pushed).toMatchObject({ workspaceId: ws.id, attributes: { serial: 1 } });

    const after = await root.readWorkspace({ id: ws.id });
    expect(after).toMatchObject({ currentStateVersionId: pushed.id, lockedBy: null });
    expect(after?.attributes).toMatchObject({ locked: false, 'resource-count': 2 });

    expect((await root.currentStateVersion(ws.id))?.id).toBe(pushed.id);
    const listed = await root.listStateVersions(ORG, ws.name);
    expect(listed.map((sv) => sv.id)).toEqual([pushed.id]);
    const page = await root.listStateVersionsPage(ORG, ws.name, { number: 1, size: 10 });
    expect(page.pagination).toMatchObject({ currentPage: 1, totalCount: 1, nextPage: null });

    const read = await root.readStateVersion(pushed.id, { include: ['created_by'] });
    expect(read?.stateVersion.attributes).toMatchObject({ serial: 1 });
    expect(read?.included.some((r) => r.type === 'users')).toBe(true);
    expect(await root.readStateVersion('sv-doesnotexist')).toBeUndefined();

    const url = read!.stateVersion.attributes['hosted-state-download-url'];
    expect(typeof url).toBe('string');
    expect(await root.downloadState(url as string)).toBe(text);

    // A second push becomes current and lists first.
    const second = await pushState(root, ws.id, parseStateFile(stateText(2, state.lineage, 2), 'v2.tfstate'));
    expect((await root.currentStateVersion(ws.id))?.id).toBe(second.id);
    expect((await root.listStateVersions(ORG, ws.name)).map((sv) => sv.id)).toEqual([second.id, pushed.id]);
  });

  it('refuses an upload from a caller who does not hold the lock', async () => {
    const ws = await root.createWorkspace(ORG, { name: unique('nolock') });
    const state = parseStateFile(stateText(1, randomUUID()), 'x');
    await expect(
      root.createStateVersion(ws.id, { serial: state.serial, md5: state.md5, state: state.base64 }),
    ).rejects.toMatchObject({ status: 409 });
  });

  it('unlocks again when the service refuses the upload', async () => {
    const ws = await root.createWorkspace(ORG, { name: unique('refused') });
    const state = parseStateFile(stateText(3, randomUUID()), 'x');
    // The md5 no longer matches the state, so the service refuses the upload after the lock was taken.
    const err = await pushState(root, ws.id, { ...state, md5: '0'.repeat(32) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HttpStatusError);
    expect((err as HttpStatusError).status).toBeGreaterThanOrEqual(400);
    expect((err as HttpStatusError).status).toBeLessThan(500);
    expect((await root.readWorkspace({ id: ws.id }))?.attributes.locked).toBe(false);
  });

  it('names the holder when someone else holds the lock, and leaves their lock alone', async () => {
    const ws = await root.createWorkspace(ORG, { name: unique('held') });
    await bob.lockWorkspace(ws.id, 'bob is working');
    const err = await pushState(root, ws.id, parseStateFile(stateText(1, randomUUID()), 'x')).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(WorkspaceLockedError);
    expect(err).toMatchObject({ heldByCaller: false, lockedBy: { type: 'users' } });
    expect((err as Error).message).toMatch(/is locked by user bob/);
    expect((await root.readWorkspace({ id: ws.id }))?.lockedBy).toEqual(
      (err as WorkspaceLockedError).lockedBy,
    );
    await bob.unlockWorkspace(ws.id);
  });

  it('pushes under a lock the caller already holds, and leaves it held', async () => {
    const ws = await root.createWorkspace(ORG, { name: unique('mine') });
    await bob.lockWorkspace(ws.id);
    await pushState(bob, ws.id, parseStateFile(stateText(1, randomUUID()), 'x'), {
      alreadyLockedByCaller: true,
    });
    expect((await bob.readWorkspace({ id: ws.id }))?.attributes.locked).toBe(true);
    await bob.unlockWorkspace(ws.id);
  });
});

describe('deletes', () => {
  it('refuses a safe delete while the workspace manages resources; force delete removes it', async () => {
    const ws = await root.createWorkspace(ORG, { name: unique('del') });
    await pushState(root, ws.id, parseStateFile(stateText(1, randomUUID(), 1), 'x'));
    const err = await root.safeDeleteWorkspace({ id: ws.id }).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 409 });
    expect((err as Error).message).toMatch(/→ 409 /);
    await root.forceDeleteWorkspace({ id: ws.id });
    expect(await root.readWorkspace({ id: ws.id })).toBeUndefined();
  });

  it('safe-deletes an empty workspace by name', async () => {
    const ws = await root.createWorkspace(ORG, { name: unique('empty') });
    await root.safeDeleteWorkspace({ organization: ORG, name: ws.name });
    expect(await root.readWorkspace({ id: ws.id })).toBeUndefined();
    await expect(root.safeDeleteWorkspace({ id: ws.id })).rejects.toMatchObject({ status: 404 });
  });
});

describe('token hints', () => {
  it('says to set the token when none is configured, and to check one the service refuses', async () => {
    const wrong = 'wrong-secret-7a01f3';
    const anonymous = WorkspacesClient.fromConnection({ address: sandbox.url, defaultOrganization: ORG });
    const stranger = WorkspacesClient.fromConnection({ address: sandbox.url, token: wrong });
    try {
      const none = await caught(anonymous.listWorkspaces(ORG));
      const refused = await caught(stranger.listWorkspaces(ORG));
      expect(none).toMatchObject({ status: 401 });
      expect((none as Error).message).toMatch(/ \(no token was sent: set CONVERGE_WORKSPACES_TOKEN\)$/);
      expect((refused as Error).message).toMatch(
        / \(check the token in CONVERGE_WORKSPACES_TOKEN: the service refused it\)$/,
      );
      expect(everyRendering(refused)).not.toContain(wrong);
    } finally {
      await Promise.all([anonymous.close(), stranger.close()]);
    }
  });

  it('says the token lacks the permission on a 403, and adds nothing to a 404', async () => {
    const ws = await root.createWorkspace(ORG, { name: unique('guarded') });
    const denied = await caught(bob.forceDeleteWorkspace({ id: ws.id }));
    expect(denied).toMatchObject({ status: 403 });
    expect((denied as Error).message).toMatch(
      / \(the token in CONVERGE_WORKSPACES_TOKEN lacks this permission\)$/,
    );
    const hidden = await caught(bob.lockWorkspace('ws-doesnotexist0000'));
    expect(hidden).toMatchObject({ status: 404 });
    expect((hidden as Error).message).not.toContain('CONVERGE_WORKSPACES_TOKEN');
    await root.forceDeleteWorkspace({ id: ws.id });
  });
});

describe('faults', () => {
  it('retries a create through 429s, but not through a 503', async () => {
    const faulty = await startSandbox({
      port: 0,
      token: ROOT,
      config: {
        ...config,
        faults: { failFirst: 1, rateLimit: { perSecond: 20, burst: 2 } },
      } as SandboxConfig,
    });
    const client = WorkspacesClient.fromConnection({
      address: faulty.url,
      token: ROOT,
      defaultOrganization: ORG,
    });
    try {
      await expect(client.createWorkspace(ORG, { name: unique('f') })).rejects.toMatchObject({
        status: 503,
        attempts: 1,
      });
      // A burst of 2: the third create is answered 429 and goes through after the wait.
      const names = Array.from({ length: 3 }, () => unique('rl'));
      const created = await Promise.all(names.map((name) => client.createWorkspace(ORG, { name })));
      expect(created.map((w) => w.name)).toEqual(names);
      expect(client.http.retryCount).toBeGreaterThan(0);
    } finally {
      await client.close();
      await faulty.close();
    }
  });
});
