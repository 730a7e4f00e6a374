/**
 * A workspace's safe delete after Converge released its own lock, when someone acts in between: the
 * sandbox answers one request at a time in order, so these races are played with a client that
 * answers as the service would have (the HTTP behaviour itself is tested against the sandbox).
 */
import { describe, expect, it } from 'vitest';
import { HttpStatusError } from '../../src/clients/http/errors.js';
import type { KindContext, Observed } from '../../src/resources/contract.js';
import { workspaceKind, type WorkspaceLive } from '../../src/resources/workspace/index.js';

const status = (method: string, path: string, code: number, message = '') =>
  new HttpStatusError({ service: 'workspaces', method, path, status: code, serviceMessage: message });

function race(answers: { safeDelete: Error | undefined; relock?: Error; unlock?: Error; gone?: boolean }) {
  const calls: string[] = [];
  const client = {
    // The unlock's sends are counted as a create's through a view of the client: here, itself.
    withResends: () => client,
    whoAmI: async () => ({ id: 'user-converge', type: 'users' }),
    unlockWorkspace: async () => {
      calls.push('unlock');
      if (answers.unlock) throw answers.unlock;
      return { id: 'ws-1', attributes: { locked: false }, lockedBy: null, lockReason: null };
    },
    safeDeleteWorkspace: async () => {
      calls.push('safe-delete');
      if (answers.safeDelete) throw answers.safeDelete;
    },
    // A refused lock is read back: here someone else holds it. A 404 to the deletion is read back too.
    readWorkspace: async () =>
      answers.gone
        ? undefined
        : {
            id: 'ws-1',
            attributes: { locked: true },
            lockedBy: { id: 'user-someone-else', type: 'users' },
            lockReason: 'theirs',
          },
    lockWorkspace: async (_id: string, reason: string) => {
      calls.push(`lock ${reason}`);
      if (answers.relock) throw answers.relock;
    },
  };
  const ctx = { client: () => client, option: () => false } as unknown as KindContext;
  const observed: Observed<WorkspaceLive> = {
    key: { kind: 'Workspace', name: 'frozen', namespace: 'acme' },
    id: 'ws-1',
    live: {
      workspace: {
        id: 'ws-1',
        name: 'frozen',
        organization: 'acme',
        attributes: { locked: true },
        lockedBy: { id: 'user-converge', type: 'users' },
        lockReason: 'change freeze',
      },
    } as unknown as WorkspaceLive,
  };
  return { calls, run: () => workspaceKind.delete(ctx, observed) };
}

describe('deleting a workspace Converge locked, when someone acts in between', () => {
  it('counts a workspace deleted meanwhile (404) as deleted, and takes no lock', async () => {
    const { calls, run } = race({
      safeDelete: status('POST', '/workspaces/ws-1/actions/safe-delete', 404),
      gone: true,
    });
    await expect(run()).resolves.toBeUndefined();
    expect(calls).toEqual(['unlock', 'safe-delete']);
  });

  it('locks it again with its reason when the safe delete is refused', async () => {
    const refused = status('POST', '/workspaces/ws-1/actions/safe-delete', 409, 'still managing 2 resources');
    const { calls, run } = race({ safeDelete: refused });
    await expect(run()).rejects.toBe(refused);
    expect(calls).toEqual(['unlock', 'safe-delete', 'lock change freeze']);
  });

  it('says the lock was taken by someone else meanwhile, not to lock it again', async () => {
    const { run } = race({
      safeDelete: status('POST', '/workspaces/ws-1/actions/safe-delete', 409, 'still managing 2 resources'),
      relock: status('POST', '/workspaces/ws-1/actions/lock', 409, 'already locked'),
    });
    await expect(run()).rejects.toThrow(
      /its lock, released for the deletion, was taken by someone else meanwhile \(see `converge workspace show acme\/frozen`\)/,
    );
  });

  it('says how to lock it again when the lock could not be taken for another reason', async () => {
    const { run } = race({
      safeDelete: status('POST', '/workspaces/ws-1/actions/safe-delete', 409, 'still managing 2 resources'),
      relock: status('POST', '/workspaces/ws-1/actions/lock', 503),
    });
    await expect(run()).rejects.toThrow(
      /could not be taken again .*: lock it again with `converge workspace lock acme\/frozen`/,
    );
  });
});

describe('releasing a lock this token held, when someone else locked the workspace meanwhile', () => {
  it('fails the change rather than reporting the workspace unlocked', async () => {
    // Our lock was released (by an admin), and another user took it: the unlock is refused, and
    // the read back shows their lock.
    const { calls, run } = race({
      safeDelete: undefined,
      unlock: status('POST', '/workspaces/ws-1/actions/unlock', 409, 'locked by another user'),
    });
    await expect(run()).rejects.toThrow(
      'workspace acme/frozen was locked by someone else meanwhile (reason: "theirs"); it was not unlocked',
    );
    expect(calls).toEqual(['unlock']);
  });
});

describe('deleting a workspace that answers 404', () => {
  function gone(method: 'safe' | 'force', stillThere = false) {
    const calls: string[] = [];
    const client = {
      // The service answers 404 for "not there" and "not yours to delete" alike: read back.
      readWorkspace: async () => {
        calls.push('read');
        return stillThere ? { id: 'ws-2' } : undefined;
      },
      safeDeleteWorkspace: async () => {
        calls.push('safe-delete');
        throw status('POST', '/workspaces/ws-2/actions/safe-delete', 404);
      },
      forceDeleteWorkspace: async () => {
        calls.push('delete');
        throw status('DELETE', '/workspaces/ws-2', 404);
      },
    };
    const ctx = { client: () => client, option: () => false } as unknown as KindContext;
    const key = { kind: 'Workspace', name: 'old', namespace: 'acme' };
    const observed: Observed<WorkspaceLive> = {
      key,
      id: 'ws-2',
      live: {
        workspace: {
          id: 'ws-2',
          name: 'old',
          organization: 'acme',
          attributes: { locked: false },
          lockedBy: null,
        },
      } as unknown as WorkspaceLive,
    };
    const desired = method === 'force' ? { key, spec: { deletion: 'force' as const } } : undefined;
    return { calls, run: () => workspaceKind.delete(ctx, observed, desired) };
  }

  // A resend of the deletion after its own lost answer is answered 404: the apply deleted it, and
  // reporting it failed kept the inventory's record of a workspace that no longer exists.
  it.each(['safe', 'force'] as const)('counts a 404 to the %s delete as deleted', async (method) => {
    const { calls, run } = gone(method);
    await expect(run()).resolves.toBeUndefined();
    expect(calls).toEqual([method === 'safe' ? 'safe-delete' : 'delete', 'read']);
  });

  it.each(['safe', 'force'] as const)(
    'keeps the refusal when the workspace is still there (a token without admin access)',
    async (method) => {
      const { calls, run } = gone(method, true);
      await expect(run()).rejects.toThrow(/404/);
      expect(calls).toEqual([method === 'safe' ? 'safe-delete' : 'delete', 'read']);
    },
  );
});
