/**
 * pushState: lock → upload → unlock, and the unlock on every path once the lock was taken (refused
 * upload, abort mid-upload), checked against a MockAgent that records every request in order.
 */
import { MockAgent } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HttpStatusError, type RetryEvent } from '../../src/clients/http/index.js';
import { HostRegistry } from '../../src/clients/http/host-registry.js';
import { heldLocks } from '../../src/common/held-locks.js';
import type { RunHttpOptions } from '../../src/clients/service.js';
import { WorkspacesClient } from '../../src/clients/workspaces/client.js';
import { parseStateFile } from '../../src/clients/workspaces/state-file.js';
import {
  pushState,
  WorkspaceLockedError,
  WorkspaceUnlockError,
} from '../../src/clients/workspaces/state-push.js';

const ORIGIN = 'http://tfe.test';
const apiHeaders = { 'content-type': 'application/vnd.api+json' };
const LOCK = '/api/v2/workspaces/ws-1/actions/lock';
const UNLOCK = '/api/v2/workspaces/ws-1/actions/unlock';
const UPLOAD = '/api/v2/workspaces/ws-1/state-versions';

const state = parseStateFile(
  JSON.stringify({ version: 4, serial: 2, lineage: 'lin-1', resources: [] }),
  'app.tfstate',
);

let agent: MockAgent;
let pool: ReturnType<MockAgent['get']>;
let client: WorkspacesClient;

beforeEach(() => {
  agent = new MockAgent({ enableCallHistory: true });
  agent.disableNetConnect();
  pool = agent.get(ORIGIN);
  client = clientWith({});
});

afterEach(async () => {
  agent.assertNoPendingInterceptors();
  await agent.close();
});

/** A client of the mock service with short retry waits, and `http` options of the test's own. */
function clientWith(http: Omit<RunHttpOptions, 'retry'>): WorkspacesClient {
  return WorkspacesClient.fromConnection({
    address: ORIGIN,
    token: 'tok-12345678',
    dispatcher: agent,
    http: { retry: { minDelayMs: 1, maxDelayMs: 5 }, ...http },
  });
}

/** `METHOD /path` of every request sent, in order. */
function sent(): string[] {
  return (agent.getCallHistory()?.calls() ?? []).map((c) => `${c.method} ${new URL(c.fullUrl).pathname}`);
}

function workspace(lockedBy: { id: string; type: string } | null = null, lockReason?: string) {
  return JSON.stringify({
    data: {
      id: 'ws-1',
      type: 'workspaces',
      attributes: {
        name: 'app',
        locked: lockedBy !== null,
        ...(lockReason !== undefined ? { 'locked-reason': lockReason } : {}),
      },
      relationships: {
        organization: { data: { id: 'acme', type: 'organizations' } },
        'locked-by': { data: lockedBy },
      },
    },
    ...(lockedBy
      ? { included: [{ id: lockedBy.id, type: lockedBy.type, attributes: { username: 'bob' } }] }
      : {}),
  });
}

const stateVersion = JSON.stringify({
  data: {
    id: 'sv-9',
    type: 'state-versions',
    attributes: { serial: 2 },
    relationships: { workspace: { data: { id: 'ws-1', type: 'workspaces' } } },
  },
});

/** A JSON:API error answer as the service writes one: `.reply(...apiError(409, 'conflict'))`. */
function apiError(status: number, title: string, detail?: string) {
  const error = { status: String(status), title, ...(detail !== undefined ? { detail } : {}) };
  return [status, JSON.stringify({ errors: [error] }), { headers: apiHeaders }] as const;
}

function replyLock(status = 200) {
  pool
    .intercept({ path: LOCK, method: 'POST' })
    .reply(status, status === 200 ? workspace({ id: 'user-1', type: 'users' }) : '', { headers: apiHeaders });
}

function replyUnlock(status = 200) {
  pool
    .intercept({ path: UNLOCK, method: 'POST' })
    .reply(
      status,
      status === 200 ? workspace() : JSON.stringify({ errors: [{ status: String(status), title: 'nope' }] }),
      { headers: apiHeaders },
    );
}

describe('pushState', () => {
  it('locks, uploads and unlocks, in that order', async () => {
    replyLock();
    pool.intercept({ path: UPLOAD, method: 'POST' }).reply(201, stateVersion, { headers: apiHeaders });
    replyUnlock();
    const sv = await pushState(client, 'ws-1', state, { reason: 'seeding' });
    expect(sv).toMatchObject({ id: 'sv-9', workspaceId: 'ws-1' });
    expect(sent()).toEqual([`POST ${LOCK}`, `POST ${UPLOAD}`, `POST ${UNLOCK}`]);
    const calls = agent.getCallHistory()!.calls();
    expect(JSON.parse(calls[0]!.body as string)).toEqual({ reason: 'seeding' });
    expect(JSON.parse(calls[1]!.body as string)).toEqual({
      data: {
        type: 'state-versions',
        attributes: { serial: 2, md5: state.md5, state: state.base64, lineage: 'lin-1' },
      },
    });
  });

  it('sends force: true only when asked to replace the state', async () => {
    replyLock();
    pool.intercept({ path: UPLOAD, method: 'POST' }).reply(201, stateVersion, { headers: apiHeaders });
    replyUnlock();
    await pushState(client, 'ws-1', state, { force: true });
    const upload = JSON.parse(agent.getCallHistory()!.calls()[1]!.body as string);
    expect(upload.data.attributes).toEqual({
      serial: 2,
      md5: state.md5,
      state: state.base64,
      lineage: 'lin-1',
      force: true,
    });
  });

  it.each([409, 412, 422])('unlocks when the service refuses the upload with %i', async (status) => {
    replyLock();
    pool
      .intercept({ path: UPLOAD, method: 'POST' })
      .reply(
        status,
        JSON.stringify({ errors: [{ status: String(status), title: 'refused', detail: 'no' }] }),
        {
          headers: apiHeaders,
        },
      );
    replyUnlock();
    const err = await pushState(client, 'ws-1', state).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HttpStatusError);
    expect(err).toMatchObject({ status, serviceMessage: 'refused: no' });
    expect(sent()).toEqual([`POST ${LOCK}`, `POST ${UPLOAD}`, `POST ${UNLOCK}`]);
  });

  it('unlocks when the signal aborts mid-upload, and does not abort the unlock', async () => {
    replyLock();
    pool
      .intercept({ path: UPLOAD, method: 'POST' })
      .reply(201, stateVersion, { headers: apiHeaders })
      .delay(5_000);
    replyUnlock();
    const controller = new AbortController();
    const reason = new Error('interrupted (Ctrl-C)');
    const started = performance.now();
    const pushing = pushState(client, 'ws-1', state, { signal: controller.signal });
    setTimeout(() => controller.abort(reason), 50);
    await expect(pushing).rejects.toBe(reason);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(sent()).toEqual([`POST ${LOCK}`, `POST ${UPLOAD}`, `POST ${UNLOCK}`]);
  });

  it('lets a lock request finish when aborted during it, then unlocks without uploading', async () => {
    pool
      .intercept({ path: LOCK, method: 'POST' })
      .reply(200, workspace({ id: 'user-1', type: 'users' }), { headers: apiHeaders })
      .delay(100);
    replyUnlock();
    const controller = new AbortController();
    const pushing = pushState(client, 'ws-1', state, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('stop')), 10);
    await expect(pushing).rejects.toThrow('stop');
    expect(sent()).toEqual([`POST ${LOCK}`, `POST ${UNLOCK}`]);
  });

  it.each([
    ['this push', 'Locked by Converge to push state', true],
    ['another run of the same user', 'my other run', false],
  ])(
    'after every lock send lost its answer, unlocks only a lock carrying its own reason (held by %s)',
    async (_who, heldReason, unlocks) => {
      pool
        .intercept({ path: LOCK, method: 'POST' })
        .replyWithError(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }))
        .persist();
      pool
        .intercept({ path: '/api/v2/workspaces/ws-1', method: 'GET' })
        .reply(200, workspace({ id: 'user-1', type: 'users' }, heldReason), { headers: apiHeaders });
      if (unlocks) replyUnlock();
      await expect(pushState(client, 'ws-1', state)).rejects.toMatchObject({ kind: 'connection' });
      const calls = sent();
      const locks = calls.filter((c) => c === `POST ${LOCK}`);
      expect(locks.length).toBeGreaterThan(1);
      expect(calls.slice(locks.length)).toEqual([
        'GET /api/v2/workspaces/ws-1',
        ...(unlocks ? [`POST ${UNLOCK}`] : []),
      ]);
    },
  );

  it('sends a lock whose answer was lost again, and takes the 409 carrying its own reason as its lock', async () => {
    pool
      .intercept({ path: LOCK, method: 'POST' })
      .replyWithError(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
    pool.intercept({ path: LOCK, method: 'POST' }).reply(...apiError(409, 'conflict'));
    pool
      .intercept({ path: '/api/v2/workspaces/ws-1?include=locked_by', method: 'GET' })
      .reply(200, workspace({ id: 'user-1', type: 'users' }, 'seeding by pid 7'), { headers: apiHeaders });
    pool
      .intercept({ path: '/api/v2/account/details', method: 'GET' })
      .reply(
        200,
        JSON.stringify({ data: { id: 'user-1', type: 'users', attributes: { username: 'alice' } } }),
        {
          headers: apiHeaders,
        },
      );
    pool.intercept({ path: UPLOAD, method: 'POST' }).reply(201, stateVersion, { headers: apiHeaders });
    replyUnlock();
    await expect(pushState(client, 'ws-1', state, { reason: 'seeding by pid 7' })).resolves.toMatchObject({
      id: 'sv-9',
    });
    expect(sent().filter((c) => c.startsWith('POST'))).toEqual([
      `POST ${LOCK}`,
      `POST ${LOCK}`,
      `POST ${UPLOAD}`,
      `POST ${UNLOCK}`,
    ]);
  });

  it('refuses a 409 on its lock sent again when the lock carries another reason of the same user', async () => {
    pool.intercept({ path: LOCK, method: 'POST' }).reply(...apiError(503, 'busy'));
    pool.intercept({ path: LOCK, method: 'POST' }).reply(...apiError(409, 'conflict'));
    pool
      .intercept({ path: '/api/v2/workspaces/ws-1?include=locked_by', method: 'GET' })
      .reply(200, workspace({ id: 'user-1', type: 'users' }, 'my other run'), { headers: apiHeaders });
    pool
      .intercept({ path: '/api/v2/account/details', method: 'GET' })
      .reply(
        200,
        JSON.stringify({ data: { id: 'user-1', type: 'users', attributes: { username: 'alice' } } }),
        {
          headers: apiHeaders,
        },
      );
    const err = await pushState(client, 'ws-1', state, { reason: 'seeding by pid 7' }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(WorkspaceLockedError);
    expect(err).toMatchObject({ heldByCaller: true, lockReason: 'my other run' });
    expect(sent()).not.toContain(`POST ${UPLOAD}`);
    expect(sent()).not.toContain(`POST ${UNLOCK}`);
  });

  it('reads back an unlock whose answer was lost, and sends it again only while the lock is still its own', async () => {
    replyLock();
    pool.intercept({ path: UPLOAD, method: 'POST' }).reply(201, stateVersion, { headers: apiHeaders });
    replyUnlock(503);
    pool
      .intercept({ path: '/api/v2/workspaces/ws-1', method: 'GET' })
      .reply(200, workspace({ id: 'user-1', type: 'users' }, 'seeding by pid 7'), { headers: apiHeaders });
    replyUnlock();
    await expect(pushState(client, 'ws-1', state, { reason: 'seeding by pid 7' })).resolves.toMatchObject({
      id: 'sv-9',
    });
    expect(sent()).toEqual([
      `POST ${LOCK}`,
      `POST ${UPLOAD}`,
      `POST ${UNLOCK}`,
      'GET /api/v2/workspaces/ws-1',
      `POST ${UNLOCK}`,
    ]);
  });

  it('sends no second unlock when the lost one landed and another run has locked the workspace since', async () => {
    replyLock();
    pool.intercept({ path: UPLOAD, method: 'POST' }).reply(201, stateVersion, { headers: apiHeaders });
    replyUnlock(503);
    pool
      .intercept({ path: '/api/v2/workspaces/ws-1', method: 'GET' })
      .reply(200, workspace({ id: 'user-1', type: 'users' }, 'their own run'), { headers: apiHeaders });
    await expect(pushState(client, 'ws-1', state, { reason: 'seeding by pid 7' })).resolves.toMatchObject({
      id: 'sv-9',
    });
    // Their lock stays: one unlock only.
    expect(sent().filter((c) => c === `POST ${UNLOCK}`)).toHaveLength(1);
  });

  it('takes a 409 carrying its own reason as its lock even when the service cannot say who the caller is', async () => {
    pool.intercept({ path: LOCK, method: 'POST' }).reply(...apiError(502, 'bad gateway'));
    pool.intercept({ path: LOCK, method: 'POST' }).reply(...apiError(409, 'conflict'));
    pool
      .intercept({ path: '/api/v2/workspaces/ws-1?include=locked_by', method: 'GET' })
      .reply(200, workspace({ id: 'user-1', type: 'users' }, 'seeding by pid 7'), { headers: apiHeaders });
    pool.intercept({ path: '/api/v2/account/details', method: 'GET' }).reply(404, '');
    pool.intercept({ path: UPLOAD, method: 'POST' }).reply(201, stateVersion, { headers: apiHeaders });
    replyUnlock();
    await expect(pushState(client, 'ws-1', state, { reason: 'seeding by pid 7' })).resolves.toMatchObject({
      id: 'sv-9',
    });
  });

  it('reads back an upload whose answer was lost: landed, it is not sent again', async () => {
    replyLock();
    pool
      .intercept({ path: UPLOAD, method: 'POST' })
      .replyWithError(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
    pool.intercept({ path: '/api/v2/workspaces/ws-1/current-state-version', method: 'GET' }).reply(
      200,
      JSON.stringify({
        data: { id: 'sv-9', type: 'state-versions', attributes: { serial: 2, md5: state.md5 } },
      }),
      { headers: apiHeaders },
    );
    replyUnlock();
    await expect(pushState(client, 'ws-1', state)).resolves.toMatchObject({ id: 'sv-9' });
    expect(sent()).toEqual([
      `POST ${LOCK}`,
      `POST ${UPLOAD}`,
      'GET /api/v2/workspaces/ws-1/current-state-version',
      `POST ${UNLOCK}`,
    ]);
  });

  it('sends an upload again when its 5xx left the current state as it was', async () => {
    replyLock();
    pool.intercept({ path: UPLOAD, method: 'POST' }).reply(...apiError(503, 'unavailable'));
    pool.intercept({ path: '/api/v2/workspaces/ws-1/current-state-version', method: 'GET' }).reply(
      200,
      JSON.stringify({
        data: { id: 'sv-1', type: 'state-versions', attributes: { serial: 1, md5: 'older' } },
      }),
      { headers: apiHeaders },
    );
    pool.intercept({ path: UPLOAD, method: 'POST' }).reply(201, stateVersion, { headers: apiHeaders });
    replyUnlock();
    await expect(pushState(client, 'ws-1', state)).resolves.toMatchObject({ id: 'sv-9' });
    expect(sent().filter((c) => c === `POST ${UPLOAD}`)).toHaveLength(2);
  });

  // Was: 3 sends of its own, none of them shown, and the last 503 alone in the error
  // (`POST …/state-versions → 503 unavailable`): at 30% 503s a push failed one time in twenty.
  describe('every answer a 5xx: sent as a create is, 9 attempts, each resend a retry line', () => {
    const currentPath = '/api/v2/workspaces/ws-1/current-state-version';
    const asBefore = JSON.stringify({
      data: { id: 'sv-1', type: 'state-versions', attributes: { serial: 1, md5: 'older' } },
    });
    let retries: RetryEvent[];
    beforeEach(() => {
      retries = [];
      client = clientWith({ onRetry: (e) => retries.push(e) });
    });

    it('reads the upload back before each of its 9 sends, and says after how many it gave up', async () => {
      replyLock();
      for (let i = 0; i < 9; i++) {
        pool.intercept({ path: UPLOAD, method: 'POST' }).reply(...apiError(503, 'unavailable'));
        pool.intercept({ path: currentPath, method: 'GET' }).reply(200, asBefore, { headers: apiHeaders });
      }
      replyUnlock();
      const err = await pushState(client, 'ws-1', state, { reason: 'seeding by pid 7' }).catch(
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(HttpStatusError);
      expect(err).toMatchObject({ status: 503, attempts: 9 });
      expect((err as Error).message).toMatch(
        /state-versions → 503 unavailable \(gave up after 9 attempts\)$/,
      );
      expect(sent().filter((c) => c === `POST ${UPLOAD}`)).toHaveLength(9);
      expect(sent().filter((c) => c === `GET ${currentPath}`)).toHaveLength(9);
      expect(retries.map((r) => `${r.method} ${r.path} ${r.attempt}/${r.maxAttempts}: ${r.reason}`)).toEqual(
        Array.from(
          { length: 8 },
          (_, i) =>
            `POST ${UPLOAD} ${i + 1}/9: 503 Service Unavailable; read back: the state version did not land`,
        ),
      );
      expect(client.http.retryCount).toBe(8);
    });

    it('no longer lists a lock it failed to release as held, once its error has said so', async () => {
      const during: string[] = [];
      replyLock();
      pool.intercept({ path: UPLOAD, method: 'POST' }).reply(
        201,
        () => {
          during.push(...heldLocks().map((l) => l.what));
          return stateVersion;
        },
        { headers: apiHeaders },
      );
      pool.intercept({ path: UNLOCK, method: 'POST' }).reply(...apiError(400, 'bad request'));
      const holding = { what: 'workspace acme/app, locked to push app.tfstate', release: 'unlock it' };
      const err = await pushState(client, 'ws-1', state, { reason: 'seeding by pid 7', holding }).catch(
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(WorkspaceUnlockError);
      expect((err as Error).message).toContain('stays locked');
      // Held while the push ran (a quit-at-once would name it), not after its error named it.
      expect(during).toEqual([holding.what]);
      expect(heldLocks()).toEqual([]);
    });

    it('marks its lock as being released while the unlock is in flight (a quit then says it may be released)', async () => {
      const seen: { stage: string; releasing: boolean | undefined }[] = [];
      const look = (stage: string) =>
        seen.push(...heldLocks().map((l) => ({ stage, releasing: l.releasing })));
      replyLock();
      pool.intercept({ path: UPLOAD, method: 'POST' }).reply(
        201,
        () => {
          look('upload');
          return stateVersion;
        },
        { headers: apiHeaders },
      );
      pool.intercept({ path: UNLOCK, method: 'POST' }).reply(
        200,
        () => {
          look('unlock');
          return { data: { id: 'ws-1', type: 'workspaces', attributes: { locked: false } } };
        },
        { headers: apiHeaders },
      );
      const holding = { what: 'workspace acme/app, locked to push app.tfstate', release: 'unlock it' };
      await pushState(client, 'ws-1', state, { reason: 'seeding by pid 7', holding }).catch(() => undefined);
      expect(seen).toEqual([
        { stage: 'upload', releasing: undefined },
        { stage: 'unlock', releasing: true },
      ]);
      expect(heldLocks()).toEqual([]);
    });

    it('reads the unlock back before each of its 9 sends, and says after how many it gave up', async () => {
      replyLock();
      pool.intercept({ path: UPLOAD, method: 'POST' }).reply(201, stateVersion, { headers: apiHeaders });
      for (let i = 0; i < 9; i++) {
        pool.intercept({ path: UNLOCK, method: 'POST' }).reply(...apiError(503, 'unavailable'));
        pool
          .intercept({ path: '/api/v2/workspaces/ws-1', method: 'GET' })
          .reply(200, workspace({ id: 'user-1', type: 'users' }, 'seeding by pid 7'), {
            headers: apiHeaders,
          });
      }
      const err = await pushState(client, 'ws-1', state, { reason: 'seeding by pid 7' }).catch(
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(WorkspaceUnlockError);
      expect((err as Error).message).toMatch(
        /actions\/unlock → 503 unavailable \(gave up after 9 attempts\)/,
      );
      expect(sent().filter((c) => c === `POST ${UNLOCK}`)).toHaveLength(9);
      expect(retries).toHaveLength(8);
      expect(retries[0]!.reason).toBe('503 Service Unavailable; read back: still locked by this run');
    });

    it("still releases its lock with the run's retry budget spent: the 3 sends it had before the budget", async () => {
      const hosts = new HostRegistry(0);
      const budget = hosts.budget(ORIGIN);
      while (budget.tryTake()) {
        // Spend it all: a service that failed the rest of the run.
      }
      client = clientWith({ hosts });
      replyLock();
      pool.intercept({ path: UPLOAD, method: 'POST' }).reply(201, stateVersion, { headers: apiHeaders });
      for (let i = 0; i < 2; i++) {
        pool.intercept({ path: UNLOCK, method: 'POST' }).reply(...apiError(503, 'unavailable'));
        pool
          .intercept({ path: '/api/v2/workspaces/ws-1', method: 'GET' })
          .reply(200, workspace({ id: 'user-1', type: 'users' }, 'seeding by pid 7'), {
            headers: apiHeaders,
          });
      }
      replyUnlock();
      await expect(pushState(client, 'ws-1', state, { reason: 'seeding by pid 7' })).resolves.toMatchObject({
        id: 'sv-9',
      });
      expect(sent().filter((c) => c === `POST ${UNLOCK}`)).toHaveLength(3);
    });

    it('sends nothing again once interrupted during the read back, and says the interrupt', async () => {
      const hosts = new HostRegistry();
      client = clientWith({ hosts, onRetry: (e) => retries.push(e) });
      const interrupt = new AbortController();
      replyLock();
      pool.intercept({ path: UPLOAD, method: 'POST' }).reply(...apiError(503, 'unavailable'));
      pool.intercept({ path: currentPath, method: 'GET' }).reply(
        200,
        () => {
          interrupt.abort(new Error('interrupted by SIGINT'));
          return asBefore;
        },
        { headers: apiHeaders },
      );
      replyUnlock();
      const err = await pushState(client, 'ws-1', state, {
        reason: 'seeding by pid 7',
        signal: interrupt.signal,
      }).catch((e: unknown) => e);
      expect((err as Error).message).toBe('interrupted by SIGINT');
      expect(retries).toEqual([]);
      expect(sent().filter((c) => c === `POST ${UPLOAD}`)).toHaveLength(1);
      // The retry the 503 took is back: nothing was sent again.
      expect(hosts.budget(ORIGIN).usage.retries).toBe(0);
    });

    it('gives the retry back when the read back finds the upload landed', async () => {
      replyLock();
      pool.intercept({ path: UPLOAD, method: 'POST' }).reply(...apiError(503, 'unavailable'));
      pool.intercept({ path: currentPath, method: 'GET' }).reply(
        200,
        JSON.stringify({
          data: { id: 'sv-9', type: 'state-versions', attributes: { serial: 2, md5: state.md5 } },
        }),
        { headers: apiHeaders },
      );
      replyUnlock();
      await expect(pushState(client, 'ws-1', state, { reason: 'seeding by pid 7' })).resolves.toMatchObject({
        id: 'sv-9',
      });
      expect(retries).toEqual([]);
      expect(client.http.retryCount).toBe(0);
    });
  });

  /**
   * The first send lands but its answer is lost, and so is its read-back's; the resend is refused
   * as not newer (409); the current state, read again, is then `current`.
   */
  function lostThenRefused(current: { id: string; serial: number; md5: string }) {
    const currentPath = '/api/v2/workspaces/ws-1/current-state-version';
    replyLock();
    pool
      .intercept({ path: UPLOAD, method: 'POST' })
      .replyWithError(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
    pool.intercept({ path: currentPath, method: 'GET' }).reply(...apiError(400, 'bad request'));
    const detail = `serial 2 must be greater than ${current.serial}`;
    pool.intercept({ path: UPLOAD, method: 'POST' }).reply(...apiError(409, 'conflict', detail));
    pool.intercept({ path: currentPath, method: 'GET' }).reply(
      200,
      JSON.stringify({
        data: {
          id: current.id,
          type: 'state-versions',
          attributes: { serial: current.serial, md5: current.md5 },
        },
      }),
      { headers: apiHeaders },
    );
    replyUnlock();
  }

  it('takes a resend refused as not newer for the earlier send landing, once the read-back says so', async () => {
    // The current state is this very file: the first send landed.
    lostThenRefused({ id: 'sv-9', serial: 2, md5: state.md5 });
    await expect(pushState(client, 'ws-1', state)).resolves.toMatchObject({ id: 'sv-9' });
    expect(sent().filter((c) => c === `POST ${UPLOAD}`)).toHaveLength(2);
  });

  it('reports a resend refused as not newer when the current state is another file', async () => {
    // Someone else's newer state is current: this push did not land, and says why.
    lostThenRefused({ id: 'sv-10', serial: 3, md5: 'theirs' });
    await expect(pushState(client, 'ws-1', state)).rejects.toThrow(/serial 2 must be greater than 3/);
  });

  it('sends nothing when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort(new Error('too late'));
    await expect(pushState(client, 'ws-1', state, { signal: controller.signal })).rejects.toThrow('too late');
    expect(sent()).toEqual([]);
  });

  it('names who holds a refused lock and unlocks nothing', async () => {
    pool.intercept({ path: LOCK, method: 'POST' }).reply(...apiError(409, 'conflict'));
    pool
      .intercept({ path: '/api/v2/workspaces/ws-1?include=locked_by', method: 'GET' })
      .reply(200, workspace({ id: 'user-2', type: 'users' }), { headers: apiHeaders });
    pool
      .intercept({ path: '/api/v2/account/details', method: 'GET' })
      .reply(
        200,
        JSON.stringify({ data: { id: 'user-1', type: 'users', attributes: { username: 'alice' } } }),
        { headers: apiHeaders },
      );
    const err = await pushState(client, 'ws-1', state).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkspaceLockedError);
    expect(err).toMatchObject({
      lockedBy: { id: 'user-2', type: 'users' },
      lockedByName: 'bob',
      heldByCaller: false,
    });
    expect((err as Error).message).toBe(
      'workspace acme/app (ws-1) is locked by user bob; the state was not pushed. ' +
        'Wait until they unlock it (an admin can force-unlock it)',
    );
    expect((err as Error).cause).toBeInstanceOf(HttpStatusError);
    expect(sent()).not.toContain(`POST ${UNLOCK}`);
    expect(sent()).not.toContain(`POST ${UPLOAD}`);
  });

  it('says so when the caller holds the lock already', async () => {
    pool.intercept({ path: LOCK, method: 'POST' }).reply(409, '', { headers: apiHeaders });
    pool
      .intercept({ path: '/api/v2/workspaces/ws-1?include=locked_by', method: 'GET' })
      .reply(200, workspace({ id: 'user-1', type: 'users' }), { headers: apiHeaders });
    pool
      .intercept({ path: '/api/v2/account/details', method: 'GET' })
      .reply(200, JSON.stringify({ data: { id: 'user-1', type: 'users' } }), { headers: apiHeaders });
    const err = await pushState(client, 'ws-1', state).catch((e: unknown) => e);
    expect(err).toMatchObject({ heldByCaller: true });
    expect((err as Error).message).toMatch(
      /^workspace acme\/app \(ws-1\) is already locked by you \(user bob/,
    );
  });

  it('falls back to the holder id when the service did not include the holder', async () => {
    pool.intercept({ path: LOCK, method: 'POST' }).reply(409, '', { headers: apiHeaders });
    const bare = JSON.parse(workspace({ id: 'team-9', type: 'teams' })) as Record<string, unknown>;
    delete bare.included;
    pool
      .intercept({ path: '/api/v2/workspaces/ws-1?include=locked_by', method: 'GET' })
      .reply(200, JSON.stringify(bare), { headers: apiHeaders });
    pool
      .intercept({ path: '/api/v2/account/details', method: 'GET' })
      .reply(404, '', { headers: apiHeaders });
    const err = await pushState(client, 'ws-1', state).catch((e: unknown) => e);
    expect(err).toMatchObject({ heldByCaller: false, lockedBy: { id: 'team-9', type: 'teams' } });
    expect((err as WorkspaceLockedError).lockedByName).toBeUndefined();
    expect((err as Error).message).toContain('is locked by team team-9; the state was not pushed');
  });

  it('neither locks nor unlocks with alreadyLockedByCaller', async () => {
    pool.intercept({ path: UPLOAD, method: 'POST' }).reply(201, stateVersion, { headers: apiHeaders });
    await pushState(client, 'ws-1', state, { alreadyLockedByCaller: true });
    pool.intercept({ path: UPLOAD, method: 'POST' }).reply(409, '', { headers: apiHeaders });
    await expect(pushState(client, 'ws-1', state, { alreadyLockedByCaller: true })).rejects.toMatchObject({
      status: 409,
    });
    expect(sent()).toEqual([`POST ${UPLOAD}`, `POST ${UPLOAD}`]);
  });

  it('reports a failed unlock, with the state version when the upload succeeded', async () => {
    replyLock();
    pool.intercept({ path: UPLOAD, method: 'POST' }).reply(201, stateVersion, { headers: apiHeaders });
    replyUnlock(409);
    const err = await pushState(client, 'ws-1', state).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkspaceUnlockError);
    expect(err).toMatchObject({ stateVersion: { id: 'sv-9' } });
    expect((err as Error).message).toMatch(
      /^state version sv-9 was created, but unlocking workspace ws-1 failed: .*→ 409 nope; it stays locked/,
    );
  });

  it('reports both failures when upload and unlock fail', async () => {
    replyLock();
    pool.intercept({ path: UPLOAD, method: 'POST' }).reply(422, '', { headers: apiHeaders });
    replyUnlock(404);
    const err = await pushState(client, 'ws-1', state).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkspaceUnlockError);
    expect((err as WorkspaceUnlockError).pushError).toMatchObject({ status: 422 });
    expect((err as Error).message).toMatch(
      /^pushing state to workspace ws-1 failed \(.*422.*\), and unlocking it failed too/,
    );
  });
});
