/**
 * On Node 20 an AsyncLocalStorage in use switches on promise hooks for the whole process, and they
 * cost every promise afterwards: a plan after an apply ran a third slower in CPU. What must hold: no
 * storage of Converge's is left on once its runs settled, so a plan after an apply (a reconcile loop,
 * a library user) runs without promise hooks. Runs in a process of its own (vitest.config.ts), since
 * the probe reads the process's state.
 */
import { executionAsyncId } from 'node:async_hooks';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { switchableContext } from '../../src/common/switchable-context.js';
import { apply, connect, loadManifest, plan } from '../../src/engine/index.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { tempDir } from '../support/temp-dirs.js';

/** Whether promise hooks are on: a promise's callback then runs in an async context of its own. */
async function promiseHooksOn(): Promise<boolean> {
  let id = 0;
  await Promise.resolve().then(() => {
    id = executionAsyncId();
  });
  return id !== 0;
}

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
});
afterAll(async () => sandbox?.close());

describe('async contexts switched off between runs', () => {
  it('the probe tells hooks on from off', async () => {
    expect(await promiseHooksOn()).toBe(false);
    const context = switchableContext<number>();
    let inside = false;
    await context.run(1, async () => {
      inside = await promiseHooksOn();
    });
    expect(inside).toBe(true);
    expect(await promiseHooksOn()).toBe(false);
  });

  it('an apply that creates leaves no promise hooks on for the plan after it', async () => {
    const dir = tempDir('converge-hooks-');
    writeFileSync(
      path.join(dir, 'roles.yaml'),
      'apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: hooks-off }\nspec: { Description: d }\n',
    );
    const env = { ...sandbox.env(), CONVERGE_STATE_DIR: tempDir('converge-hooks-state-') };
    const manifest = await loadManifest([dir], { env });
    const first = await plan(manifest, { env });
    await first.connections.close();
    expect(first.plan.summary.create).toBe(1);
    const connections = connect(manifest, { env });
    try {
      const result = await apply({ plan: first.plan, connections });
      expect(result.counts.applied).toBe(1);
    } finally {
      await connections.close();
    }
    expect(await promiseHooksOn()).toBe(false);
  });
});
