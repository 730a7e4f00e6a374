/**
 * A workspace create sent again after a lost answer, whose state push then cannot release its lock:
 * the sandbox behind a proxy that answers the first workspace create 503 (not passed on) and every
 * unlock 503 (not passed on either, with `Retry-After: 0` so that the unlock's 9 attempts take no
 * backoff). The rest reaches the sandbox as sent.
 *
 * Was: after the resend, the applier read any failure back as an earlier send that had landed late;
 * the workspace was found by its key with the state pushed, and reported created (exit 0) while the
 * push's lock stayed on it: the next apply failed on "already locked by you". The unlock's failure
 * is now reported, naming the lock that stays.
 */
import { cpSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { forward, type HostileServer, hostileServer } from '../support/hostile.js';
import { runCli } from '../support/run-cli.js';

const CREATE = '/api/v2/organizations/sandbox/workspaces';

let sandbox: RunningSandbox;
let proxy: HostileServer;
const writes: string[] = [];
const proxyErrors: string[] = [];
/** The later step the proxy answers 503 every time (the first create is answered 503 once). */
let refused = '/actions/unlock';
let creates = 0;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
  proxy = await hostileServer((req, res, body) => {
    const url = req.url ?? '/';
    const method = req.method ?? 'GET';
    const refuse =
      (method === 'POST' && url === CREATE && creates++ === 0) ||
      (method === 'POST' && url.endsWith(refused));
    if (method !== 'GET') writes.push(`${method} ${url.replace(/ws-\w+/, 'ws-X')}${refuse ? ' 503' : ''}`);
    if (refuse) {
      res.writeHead(503, { 'content-type': 'application/vnd.api+json', 'retry-after': '0' });
      res.end(JSON.stringify({ errors: [{ status: '503', title: 'unavailable' }] }));
      return;
    }
    // Answered even when the sandbox cannot be reached, so that the test fails with the reason.
    forward(req, res, body, sandbox.url, { onError: (error) => proxyErrors.push(String(error)) });
  });
});
afterAll(async () => {
  await proxy?.close();
  await sandbox?.close();
});

async function workspaceLocked(): Promise<boolean> {
  const res = await fetch(`${sandbox.url}${CREATE}/web-prod`, {
    headers: { authorization: `Bearer ${sandbox.rootToken}` },
  });
  return ((await res.json()) as { data: { attributes: { locked: boolean } } }).data.attributes.locked;
}

/** Applies a workspace `name` with the demo's state file, through the proxy refusing `step`. */
async function applyThroughProxy(name: string, step: string) {
  refused = step;
  creates = 0;
  writes.length = 0;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'converge-push-unlock-'));
  cpSync(path.join(import.meta.dirname, '../../examples/demo/states'), path.join(dir, 'states'), {
    recursive: true,
  });
  writeFileSync(
    path.join(dir, 'ws.yaml'),
    `apiVersion: converge/v1\nkind: Workspace\nmetadata: { name: ${name}, namespace: sandbox }\nspec:\n  execution-mode: remote\n  state: states/web-prod.tfstate\n`,
  );
  const env = {
    ...sandbox.env(),
    CONVERGE_WORKSPACES_ADDR: proxy.url,
    CONVERGE_STATE_DIR: mkdtempSync(path.join(os.tmpdir(), 'converge-push-unlock-state-')),
    NO_COLOR: '1',
  };
  const applied = await runCli(['apply', '-f', dir, '--auto-approve', '--parallelism', '1'], env);
  return { applied, output: applied.stdout + applied.stderr };
}

describe('a workspace create sent again whose state push cannot unlock', () => {
  it('is reported failed with the lock that stays, not created', async () => {
    const { applied, output } = await applyThroughProxy('web-prod', '/actions/unlock');

    expect(proxyErrors).toEqual([]);
    expect(writes).toEqual([
      `POST ${CREATE} 503`,
      `POST ${CREATE}`,
      'POST /api/v2/workspaces/ws-X/actions/lock',
      'POST /api/v2/workspaces/ws-X/state-versions',
      ...Array.from({ length: 9 }, () => 'POST /api/v2/workspaces/ws-X/actions/unlock 503'),
    ]);
    expect(applied.code, output).toBe(1);
    expect(output).toContain('0 applied, 1 failed');
    expect(output).toMatch(/state version sv-\w+ was created, but unlocking workspace ws-\w+ failed/);
    expect(output).toContain('(gave up after 9 attempts)');
    expect(output).toContain('it stays locked until unlocked');
    expect(output).not.toContain('found by its key, so it is not created again');
    // Each unlock sent again was read back first, and said so.
    expect(
      output.match(/attempt \d failed \(503 Service Unavailable; read back: still locked by this run\)/g),
    ).toHaveLength(8);
    // What the failure says is so: the push's lock is still on the workspace.
    expect(await workspaceLocked()).toBe(true);
  });
});

describe('a workspace create sent again whose state upload then fails', () => {
  // Was: "the resend was answered 503; found by its key…", of a resend answered 201: the 503 was
  // the upload's.
  it('names the upload as the step whose answer was lost, not the resend', async () => {
    const { output } = await applyThroughProxy('web-upload', '/state-versions');
    expect(proxyErrors).toEqual([]);
    expect(output).toMatch(
      /the answer to a later step of the create was lost \(POST \/api\/v2\/workspaces\/ws-\w+\/state-versions: 503/,
    );
    expect(output).not.toContain('the resend was answered');
  });
});
