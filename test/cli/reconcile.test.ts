/**
 * `converge reconcile` as a user runs it: usage errors in-process, and the one thing that needs a
 * process boundary, SIGTERM: the built CLI finishes, writes a shutdown line last and exits 143.
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { CLI, manifestDir, role } from './helpers.js';
import { tempDir } from '../support/temp-dirs.js';

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
});
afterAll(async () => {
  await sandbox?.close();
});

const stateDir = () => tempDir('converge-state-');

describe('converge reconcile', () => {
  it('refuses an interval that is not a Go duration, naming the flag', async () => {
    const dir = manifestDir({ 'r.yaml': role('cli-reconcile', 'Description: x') });
    const res = await runCli(['reconcile', '-f', dir, '--interval', 'soon'], {
      ...sandbox.env(),
      CONVERGE_STATE_DIR: stateDir(),
    });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('--interval must be a positive duration like 30s, 5m or 1h30m, not "soon"');
  });

  it('refuses a --listen address it cannot read', async () => {
    const dir = manifestDir({ 'r.yaml': role('cli-reconcile', 'Description: x') });
    const res = await runCli(['reconcile', '-f', dir, '--interval', '1m', '--listen', 'localhost:99999'], {
      ...sandbox.env(),
      CONVERGE_STATE_DIR: stateDir(),
    });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('--listen must be HOST:PORT');
  });

  it('documents the loop in --help', async () => {
    const res = await runCli(['reconcile', '--help'], {});
    expect(res.code).toBe(0);
    for (const flag of ['--interval', '--dry-run', '--listen', '--max-backoff', 'SIGTERM', '/healthz'])
      expect(res.stdout).toContain(flag);
  });

  it('on SIGTERM stops after the cycle, prints a shutdown line last and exits 143', async () => {
    const dir = manifestDir({ 'r.yaml': role('sigterm-loop', 'Description: loop') });
    const child = spawn(process.execPath, [CLI, 'reconcile', '-f', dir, '--interval', '200ms'], {
      env: { PATH: process.env.PATH, ...sandbox.env(), CONVERGE_STATE_DIR: stateDir() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (d) => {
      stdout += d;
      if (stdout.includes('"type":"cycle"') && child.exitCode === null && !child.killed)
        child.kill('SIGTERM');
    });
    const code = await new Promise<number | null>((resolve) => {
      const guard = setTimeout(() => child.kill('SIGKILL'), 15_000);
      child.on('close', (c) => {
        clearTimeout(guard);
        resolve(c);
      });
    });
    expect(code).toBe(143);
    const lines = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.some((l) => l.type === 'cycle' && l.outcome === 'corrected')).toBe(true);
    expect(lines.at(-1)).toMatchObject({ type: 'shutdown', reason: 'SIGTERM' });
  });
});
