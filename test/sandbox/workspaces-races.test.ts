/**
 * Requests whose bodies arrive slowly (a large state upload) must be checked against the workspace
 * as it is when the body has arrived, not as it was when the request started.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';

let sandbox: RunningSandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, token: 'root' });
});

afterAll(async () => {
  await sandbox?.close();
});

async function call(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: { data: { id: string; attributes: Record<string, unknown> } } }> {
  const res = await fetch(`${sandbox.url}/api/v2${path}`, {
    method,
    headers: { Authorization: 'Bearer root', 'Content-Type': 'application/vnd.api+json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

/** Sends the headers and half the body now; `finish()` sends the rest and resolves with the status. */
function slowRequest(method: string, path: string, body: unknown): { finish(): Promise<number> } {
  const text = Buffer.from(JSON.stringify(body));
  const half = Math.floor(text.length / 2);
  const url = new URL(`${sandbox.url}/api/v2${path}`);
  const req = http.request({
    method,
    host: url.hostname,
    port: url.port,
    path: url.pathname,
    headers: {
      Authorization: 'Bearer root',
      'Content-Type': 'application/vnd.api+json',
      'Content-Length': text.length,
    },
  });
  const status = new Promise<number>((resolve, reject) => {
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
  });
  req.write(text.subarray(0, half));
  return {
    finish() {
      req.end(text.subarray(half));
      return status;
    },
  };
}

async function workspace(name: string): Promise<string> {
  const r = await call('POST', '/organizations/sandbox/workspaces', {
    data: { type: 'workspaces', attributes: { name } },
  });
  expect(r.status).toBe(201);
  return r.json.data.id;
}

const tick = () => new Promise((r) => setTimeout(r, 50));

describe('slow request bodies', () => {
  it('refuses a state upload whose lock was released while its body arrived', async () => {
    const id = await workspace('race-upload');
    expect((await call('POST', `/workspaces/${id}/actions/lock`, {})).status).toBe(200);
    const raw = JSON.stringify({
      version: 4,
      terraform_version: '1.9.8',
      serial: 1,
      lineage: 'r',
      outputs: {},
      resources: [],
    });
    const upload = slowRequest('POST', `/workspaces/${id}/state-versions`, {
      data: {
        type: 'state-versions',
        attributes: {
          serial: 1,
          md5: createHash('md5').update(raw).digest('hex'),
          state: Buffer.from(raw).toString('base64'),
        },
      },
    });
    await tick();
    // A settings change replaces the stored record; then the lock is released.
    expect(
      (
        await call('PATCH', `/workspaces/${id}`, {
          data: { type: 'workspaces', attributes: { description: 'x' } },
        })
      ).status,
    ).toBe(200);
    expect((await call('POST', `/workspaces/${id}/actions/force-unlock`)).status).toBe(200);
    expect(await upload.finish()).toBe(409);
    const after = await call('GET', `/workspaces/${id}`);
    expect(after.json.data.attributes.locked).toBe(false);
    expect((await call('GET', `/workspaces/${id}/current-state-version`)).status).toBe(404);
  });

  it('does not undo a lock or a change made while an update body arrived', async () => {
    const id = await workspace('race-update');
    const update = slowRequest('PATCH', `/workspaces/${id}`, {
      data: { type: 'workspaces', attributes: { description: 'slow' } },
    });
    await tick();
    expect(
      (
        await call('PATCH', `/workspaces/${id}`, {
          data: { type: 'workspaces', attributes: { 'auto-apply': true } },
        })
      ).status,
    ).toBe(200);
    expect((await call('POST', `/workspaces/${id}/actions/lock`, {})).status).toBe(200);
    expect(await update.finish()).toBe(200);
    const attrs = (await call('GET', `/workspaces/${id}`)).json.data.attributes;
    expect(attrs).toMatchObject({ description: 'slow', 'auto-apply': true, locked: true });
  });

  it('does not bring back a workspace deleted while a lock body arrived', async () => {
    const id = await workspace('race-lock');
    const lock = slowRequest('POST', `/workspaces/${id}/actions/lock`, { reason: 'slow' });
    await tick();
    expect((await call('DELETE', `/workspaces/${id}`)).status).toBe(204);
    expect(await lock.finish()).toBe(404);
    expect((await call('GET', `/workspaces/${id}`)).status).toBe(404);
  });
});
