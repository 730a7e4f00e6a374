/**
 * Ctrl-C or SIGTERM (a cancelled CI job) during `converge export`: the reads stop, the export says
 * it was interrupted and wrote nothing, and the exit code is the signal's (130, 143). In-process: the
 * signal is emitted to this process, as the interrupt handler listens for it.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { signalWhenListening } from '../support/signal-when-listening.js';
import { tempDir } from '../support/temp-dirs.js';

let sandbox: RunningSandbox;
beforeAll(async () => {
  // Slow answers, so that the signal lands while the export is still reading.
  sandbox = await startSandbox({ port: 0, config: { faults: { latencyMs: 2_000 } } });
});
afterAll(async () => {
  await sandbox?.close();
});

describe('export interrupted', () => {
  it.each([
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ] as const)('by %s says so, writes nothing and exits %i', async (signal, code) => {
    const out = path.join(tempDir('converge-export-interrupt-'), 'exported');
    const env = { ...sandbox.env(), CONVERGE_STATE_DIR: tempDir('converge-export-interrupt-state-') };
    // Once the command listens for the signal, and its first reads are out.
    const signalled = signalWhenListening(signal);
    const r = await runCli(['export', '-o', out], env);
    signalled.stop();
    expect(r.code, r.stderr).toBe(code);
    expect(r.stderr).toContain(
      `Export interrupted (${signal}) while reading; nothing was written to ${out}.`,
    );
    expect(existsSync(out)).toBe(false);
    // The reads (2 s each) were stopped, not waited out.
    expect(Date.now() - signalled.sentAt()).toBeLessThan(1_000);
  });
});
