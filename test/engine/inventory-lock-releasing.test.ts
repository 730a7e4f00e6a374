/**
 * A workspace inventory's lock is named as "its release was sent" on a quit-at-once only once the
 * unlock is on its way. Its release first reads the workspace (only a lock carrying this run's reason
 * is released): a second Ctrl-C during that read used to say the lock may be released already, when
 * no unlock had gone out (found by a review).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { heldLocks } from '../../src/common/held-locks.js';
import { lockInventory } from '../../src/engine/workflow.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { tempDir } from '../support/temp-dirs.js';

const ORG = 'releasing-org';
let sandbox: RunningSandbox;
/** What the registry says of the inventory's lock as each request of the release is answered. */
let seen: { request: string; releasing: boolean | undefined }[] | undefined;

beforeAll(async () => {
  sandbox = await startSandbox({
    port: 0,
    config: { workspaces: { organizations: [{ name: ORG }] } },
    // Called as each answer is written, before the client has read it.
    log: (line) => {
      if (!seen) return;
      const request = /^(GET|POST) (\S+) \d{3}/.exec(line);
      if (!request) return;
      const lock = heldLocks().find((l) => l.what.startsWith('the inventory in'));
      seen.push({ request: `${request[1]} ${request[2]!.split('?')[0]}`, releasing: lock?.releasing });
    },
  });
});
afterAll(async () => sandbox?.close());

it('is marked releasing after the read that decides the unlock, and forgotten once released', async () => {
  const env = {
    ...sandbox.env(),
    CONVERGE_STATE_DIR: tempDir('converge-releasing-state-'),
    CONVERGE_INVENTORY: `workspace:${ORG}/inventory`,
  };
  const locked = await lockInventory({ env, command: 'converge apply (test)', timeoutMs: 5_000 });
  seen = [];
  await locked.release();
  const release = seen;
  seen = undefined;
  const read = release.find((r) => r.request.startsWith('GET /api/v2/workspaces/'));
  const unlock = release.find((r) => r.request.endsWith('/actions/unlock'));
  expect(read).toMatchObject({ releasing: undefined });
  expect(unlock).toMatchObject({ releasing: true });
  expect(release.indexOf(read!)).toBeLessThan(release.indexOf(unlock!));
  expect(heldLocks()).toEqual([]);
});
