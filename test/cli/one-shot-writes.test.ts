/**
 * Operator writes that are sent once (a scale, a dispatch, a revert): a second send would act twice,
 * so none is retried after a failure that may have acted. Whether interrupted or failed, the command
 * says that the write may have taken effect and how to check before running it again; an
 * interrupted `job scale` that had landed used to end with 130 and nothing said.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { SchedulerClient } from '../../src/clients/scheduler/client.js';
import { WorkspacesClient } from '../../src/clients/workspaces/client.js';
import type { Job } from '../../src/clients/scheduler/types.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

let sandbox: RunningSandbox | undefined;
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});

const web: Job = {
  ID: 'web',
  Type: 'service',
  Datacenters: ['dc1'],
  TaskGroups: [
    { Name: 'web', Count: 1, Tasks: [{ Name: 'server', Driver: 'docker', Config: { image: 'nginx:1' } }] },
  ],
} as Job;

async function sandboxWithJob(
  faults: Record<string, unknown>,
  log?: (line: string) => void,
): Promise<RunningSandbox> {
  sandbox = await startSandbox({
    port: 0,
    token: 'one-shot-root-7a1e',
    config: { faults },
    ...(log ? { log } : {}),
  });
  const client = SchedulerClient.fromConnection({ address: sandbox.url, token: sandbox.rootToken });
  try {
    // Registered before the faults matter: the first request may meet one, and is retried.
    await client.registerJob(web, { namespace: 'default' });
  } finally {
    await client.close();
  }
  return sandbox;
}

/**
 * `job scale web web 3` against a scheduler that answers in 1.5 s, with SIGINT while the job is
 * still looked up (half a second in), or while the scale is in flight: 700 ms after the lookup was
 * answered, as the sandbox logs it (mid-way through the scale's 1.5 s, whichever side a loaded machine
 * stretches). Not a fixed time from the start: on a loaded machine the
 * command's own start took long enough for a fixed signal to land during the lookup.
 */
async function interruptedScale(during: 'lookup' | 'scale') {
  let timer: NodeJS.Timeout | undefined;
  const interrupt = (ms: number) => (timer = setTimeout(() => process.emit('SIGINT', 'SIGINT'), ms));
  const s = await sandboxWithJob({ services: { scheduler: { latencyMs: 1500 } } }, (line) => {
    if (during === 'scale' && timer === undefined && line.startsWith('GET /v1/job/web ')) interrupt(700);
  });
  if (during === 'lookup') interrupt(500);
  try {
    return await runCli(['job', 'scale', 'web', 'web', '3', '--message', 'more'], {
      ...s.env(),
      NO_COLOR: '1',
    });
  } finally {
    clearTimeout(timer);
  }
}

it('Ctrl-C while the scale is sent says it may have taken effect and names the check, with 130', async () => {
  const r = await interruptedScale('scale');
  expect(r.code, r.stderr).toBe(130);
  expect(r.stderr).toContain(
    'interrupted: the scaling of group web of web may have reached the service and taken effect: check with `converge job status web` before running it again',
  );
});

it('Ctrl-C while the job is still looked up says the scale was not sent', async () => {
  const r = await interruptedScale('lookup');
  expect(r.code, r.stderr).toBe(130);
  expect(r.stderr).toContain(
    'interrupted before the scaling of group web of web was sent: nothing was changed',
  );
  const client = SchedulerClient.fromConnection({ address: sandbox!.url, token: sandbox!.rootToken });
  try {
    expect((await client.readJob('web'))!.TaskGroups![0]!.Count).toBe(1);
  } finally {
    await client.close();
  }
});

it('a scale that fails once it may have acted is not sent again, and says how to check', async () => {
  // Half the scheduler's answers are 503s (a seeded stream): reads are retried through them, the
  // scale is not. Within a few runs one scale meets a 503 of its own.
  const s = await sandboxWithJob({ services: { scheduler: { failRate: 0.5 } }, seed: 11 });
  const env = { ...s.env(), NO_COLOR: '1', CONVERGE_RETRY_BUDGET: '5' };
  let failed: { code: number; stderr: string } | undefined;
  for (let run = 0; run < 12 && !failed; run++) {
    const r = await runCli(['job', 'scale', 'web', 'web', String(2 + run), '--message', 'm'], env);
    if (r.code !== 0 && r.stderr.includes('POST /v1/job/web/scale')) failed = r;
  }
  expect(failed, 'no scale met a 503 of its own').toBeDefined();
  expect(failed!.stderr).toContain('503');
  expect(failed!.stderr).toContain(
    'the scaling of group web of web may have taken effect all the same: check with `converge job status web` before running it again',
  );
});

it('a write the scheduler refuses with a 500 (a version it cannot revert to) is said as refused, with no "may have taken effect"', async () => {
  const s = await sandboxWithJob({});
  const env = { ...s.env(), NO_COLOR: '1' };
  const current = await runCli(['job', 'revert', 'web', '0'], env);
  expect(current.code).toBe(1);
  expect(current.stderr).toContain('500');
  expect(current.stderr).not.toContain('may have taken effect');
  // A version that is not there is not a job that is not there.
  const missingVersion = await runCli(['job', 'revert', 'web', '7'], env);
  expect(missingVersion.code).toBe(1);
  expect(missingVersion.stderr).not.toContain('no job web');
  expect(missingVersion.stderr).toContain('version 7');
});

it('Ctrl-C before a state push has locked says nothing was uploaded or locked, not that a lock was released', async () => {
  sandbox = await startSandbox({
    port: 0,
    token: 'one-shot-root-7a1e',
    config: {
      workspaces: { organizations: [{ name: 'acme' }] },
      faults: { services: { workspaces: { latencyMs: 800 } } },
    },
  });
  const client = WorkspacesClient.fromConnection({ address: sandbox.url, token: sandbox.rootToken });
  try {
    await client.createWorkspace('acme', { name: 'app' });
  } finally {
    await client.close();
  }
  const dir = tempDir('converge-one-shot-state-');
  const file = path.join(dir, 'app.tfstate');
  writeFileSync(file, JSON.stringify({ version: 4, serial: 1, lineage: 'l-1', resources: [], outputs: {} }));
  // While the workspace is being looked up, before any lock: 800 ms per answer.
  const timer = setTimeout(() => process.emit('SIGINT', 'SIGINT'), 300);
  try {
    const r = await runCli(['state', 'push', 'acme/app', file], { ...sandbox.env(), NO_COLOR: '1' });
    expect(r.code, r.stderr).toBe(130);
    expect(r.stderr).toContain(
      'interrupted before the push began: nothing was uploaded, and the workspace was not locked',
    );
    expect(r.stderr).not.toContain('lock was released');
  } finally {
    clearTimeout(timer);
  }
});
