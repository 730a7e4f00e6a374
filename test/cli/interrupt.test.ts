/**
 * The two signals of an interrupt, without a process to kill: the first stops new work and, while an
 * apply's changes are in flight, lets them run for the grace period before aborting them; the second
 * quits at once with the signal's code.
 */
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import type { Io } from '../../src/cli/io.js';
import { type Interrupt, onInterrupt } from '../../src/cli/interrupt.js';
import { holdingLock } from '../../src/common/held-locks.js';

function io(): { io: Io; text: () => string } {
  const chunks: string[] = [];
  const stderr = Object.assign(
    new Writable({
      write(chunk: Buffer | string, _e, cb) {
        chunks.push(String(chunk));
        cb();
      },
    }),
    { isTTY: false },
  );
  return {
    io: { stderr, stdout: stderr, stdinIsTTY: false, env: {} } as unknown as Io,
    text: () => chunks.join(''),
  };
}

let current: Interrupt | undefined;
afterEach(() => current?.dispose());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('onInterrupt', () => {
  it('outside an apply, aborts everything at the first signal and exits 130', () => {
    const out = io();
    current = onInterrupt(out.io, { exit: () => undefined });
    process.emit('SIGINT', 'SIGINT');
    expect(current.stop.aborted).toBe(true);
    expect(current.signal.aborted).toBe(true);
    expect(current.exitCode).toBe(130);
  });

  it('during an apply, stops new changes at once and aborts those in flight only after the grace period', async () => {
    const out = io();
    current = onInterrupt(out.io, { graceMs: 100, exit: () => undefined });
    current.letInFlightFinish();
    process.emit('SIGTERM', 'SIGTERM');
    expect(current.stop.aborted).toBe(true);
    expect(current.signal.aborted).toBe(false);
    expect(current.exitCode).toBe(143);
    expect(out.text()).toContain('starting no new change; changes in flight may finish');
    await sleep(300);
    expect(current.signal.aborted).toBe(true);
    expect(out.text()).toContain('aborting them');
  });

  it('quits at once on the second signal, with the code of the signal', () => {
    const codes: number[] = [];
    const out = io();
    current = onInterrupt(out.io, { exit: (code) => codes.push(code) });
    current.letInFlightFinish();
    process.emit('SIGTERM', 'SIGTERM');
    process.emit('SIGTERM', 'SIGTERM');
    expect(codes).toEqual([143]);
    expect(out.text()).toContain('quitting now');
  });

  it('names each service lock it leaves behind when it quits at once, with the command that releases it', () => {
    const out = io();
    current = onInterrupt(out.io, { exit: () => undefined });
    const forgetPush = holdingLock({
      what: 'workspace acme/web, locked to push web.tfstate',
      release: 'converge workspace unlock acme/web',
    });
    const forgetDone = holdingLock({
      what: 'workspace acme/done',
      release: 'converge workspace unlock acme/done',
    });
    forgetDone();
    try {
      process.emit('SIGINT', 'SIGINT');
      expect(out.text()).not.toContain('Left locked');
      process.emit('SIGINT', 'SIGINT');
      expect(out.text()).toContain(
        'Left locked by this run (release each once this process has exited):\n' +
          '  converge workspace unlock acme/web    (workspace acme/web, locked to push web.tfstate)\n',
      );
      expect(out.text()).not.toContain('acme/done');
      // Its release sent, the answer not in: it may be released already, and is said so.
      forgetPush.releasing();
      process.emit('SIGINT', 'SIGINT');
      expect(out.text()).toContain(
        'Maybe left locked by this run (check, and release each once this process has exited):\n' +
          '  converge workspace unlock acme/web    (workspace acme/web, locked to push web.tfstate; its release was sent, so it may be released already)\n',
      );
      const hostile = holdingLock({
        what: 'workspace x\u001b[2J\nfake line',
        release: 'converge workspace unlock x',
      });
      try {
        process.emit('SIGINT', 'SIGINT');
        expect(out.text()).toContain('(workspace x\\u001b[2J\\nfake line)');
        expect(out.text()).not.toContain('\nfake line');
      } finally {
        hostile();
      }
    } finally {
      forgetPush();
    }
  });

  it('takes any number of listeners on its signals without a MaxListenersExceededWarning', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      current = onInterrupt(io().io, { exit: () => undefined });
      for (let i = 0; i < 50; i++) current.signal.addEventListener('abort', () => undefined);
      await sleep(10);
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('for a loop (reconcile), only stops at the first signal: the change in flight is never aborted', async () => {
    const codes: number[] = [];
    const out = io();
    current = onInterrupt(out.io, { graceMs: 50, finishInFlight: true, exit: (code) => codes.push(code) });
    process.emit('SIGTERM', 'SIGTERM');
    expect(current.stop.aborted).toBe(true);
    expect(current.exitCode).toBe(143);
    expect(current.signalName).toBe('SIGTERM');
    expect(out.text()).toContain('SIGTERM: finishing the change in flight, then stopping');
    await sleep(150);
    expect(current.signal.aborted).toBe(false);
    process.emit('SIGINT', 'SIGINT');
    expect(codes).toEqual([130]);
    expect(out.text()).toContain('quitting now; a change in flight may be cut');
  });

  it('for a loop waiting between cycles, says it stops, not that it finishes a change', () => {
    const out = io();
    current = onInterrupt(out.io, { finishInFlight: true, inFlight: () => false, exit: () => undefined });
    process.emit('SIGTERM', 'SIGTERM');
    expect(current.stop.aborted).toBe(true);
    expect(out.text()).toContain('SIGTERM: stopping.');
    expect(out.text()).not.toContain('finishing');
  });

  it('leaves the signals alone once disposed', () => {
    const out = io();
    const before = process.listenerCount('SIGINT') + process.listenerCount('SIGTERM');
    const interrupt = onInterrupt(out.io, { exit: () => undefined });
    interrupt.dispose();
    expect(process.listenerCount('SIGINT') + process.listenerCount('SIGTERM')).toBe(before);
    expect(interrupt.stop.aborted).toBe(false);
  });
});
