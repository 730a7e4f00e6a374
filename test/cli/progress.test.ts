import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { ApplyEvent, ChangeResult } from '../../src/applier/applier.js';
import type { Io } from '../../src/cli/io.js';
import { applyProgress } from '../../src/cli/progress.js';
import type { Change } from '../../src/planner/types.js';

/** What was written, in order, to which stream. */
type Written = { stream: 'stdout' | 'stderr'; text: string };

/** A stream that records every write; isTTY as a terminal or a pipe would say. */
function recorder(stream: Written['stream'], log: Written[], isTTY: boolean): Writable & { isTTY: boolean } {
  const out = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      log.push({ stream, text: String(chunk) });
      callback();
    },
  });
  return Object.assign(out, { isTTY });
}

function fakeIo(isTTY: boolean): { io: Io; log: Written[] } {
  const log: Written[] = [];
  return {
    io: {
      stdout: recorder('stdout', log, isTTY),
      stderr: recorder('stderr', log, isTTY),
      stdinIsTTY: isTTY,
      env: {},
    },
    log,
  };
}

function change(name: string): Change {
  return {
    address: `Thing/${name}`,
    key: { kind: 'Thing', name },
    action: 'create',
    diffs: [],
    after: {},
    before: null,
    dependsOn: [],
  };
}

const applied = (c: Change): ChangeResult => ({
  address: c.address,
  action: c.action,
  status: 'applied',
  durationMs: 12,
});

const [a, b, c] = [change('a'), change('b'), change('c')];
const start = (ch: Change, done: number): ApplyEvent => ({ type: 'start', change: ch, done, total: 3 });
const finish = (ch: Change, done: number): ApplyEvent => ({
  type: 'finish',
  change: ch,
  result: applied(ch),
  done,
  total: 3,
});

describe('apply progress on a terminal', () => {
  it('redraws the live line after a finished line while changes are still running', () => {
    const { io, log } = fakeIo(true);
    const progress = applyProgress(io);
    progress.onEvent(start(a, 0));
    progress.onEvent(start(b, 0));
    progress.onEvent(start(c, 0));
    progress.onEvent(finish(a, 1));

    const finished = log.findIndex((w) => w.stream === 'stdout' && w.text === 'Thing/a: created (12ms)\n');
    expect(finished).toBeGreaterThanOrEqual(0);
    const last = log.at(-1)!;
    expect(last.stream).toBe('stderr');
    expect(last.text).toBe('[1/3] creating Thing/b… (+1 more running)');
    // The old live line was cleared before the finished line went out.
    expect(log[finished - 1]).toEqual({ stream: 'stderr', text: '\r\x1b[2K' });

    progress.onEvent(finish(b, 2));
    expect(log.at(-1)).toEqual({ stream: 'stderr', text: '[2/3] creating Thing/c…' });

    // The last finish leaves no live line behind, and end() has nothing left to clear.
    progress.onEvent(finish(c, 3));
    expect(log.at(-1)).toEqual({ stream: 'stdout', text: 'Thing/c: created (12ms)\n' });
    const before = log.length;
    progress.end();
    expect(log).toHaveLength(before);
  });

  it('end() clears a live line still shown (an interrupted apply)', () => {
    const { io, log } = fakeIo(true);
    const progress = applyProgress(io);
    progress.onEvent(start(a, 0));
    progress.onEvent(start(b, 0));
    progress.onEvent(finish(a, 1));
    expect(log.at(-1)?.text).toContain('Thing/b');
    progress.end();
    expect(log.at(-1)).toEqual({ stream: 'stderr', text: '\r\x1b[2K' });
  });

  it('fits the live line to the terminal width so clearing it erases all of it', () => {
    const { io, log } = fakeIo(true);
    Object.assign(io.stderr, { columns: 20 });
    const progress = applyProgress(io);
    progress.onEvent(start(change('a-very-long-name-indeed'), 0));
    expect(log.at(-1)?.text.length).toBeLessThan(20);
  });

  it('a skipped change that never started leaves the live line alone', () => {
    const { io, log } = fakeIo(true);
    const progress = applyProgress(io);
    progress.onEvent(start(a, 0));
    progress.onEvent({
      type: 'finish',
      change: b,
      result: { ...applied(b), status: 'skipped', message: 'not attempted', durationMs: 0 },
      done: 1,
      total: 3,
    });
    expect(log.at(-1)).toEqual({ stream: 'stderr', text: '[1/3] creating Thing/a…' });
  });
});

describe('apply progress without a terminal', () => {
  it('writes one plain line per start and finish, and no live line', () => {
    const { io, log } = fakeIo(false);
    const progress = applyProgress(io);
    progress.onEvent(start(a, 0));
    progress.onEvent(start(b, 0));
    progress.onEvent(finish(a, 1));
    progress.onEvent(finish(b, 2));
    progress.end();
    expect(log).toEqual([
      { stream: 'stdout', text: 'Thing/a: creating…\n' },
      { stream: 'stdout', text: 'Thing/b: creating…\n' },
      { stream: 'stdout', text: 'Thing/a: created (12ms)\n' },
      { stream: 'stdout', text: 'Thing/b: created (12ms)\n' },
    ]);
  });
});

describe('a note about a running change', () => {
  it('goes on its own line and leaves the change running on the live line', () => {
    const { io, log } = fakeIo(true);
    const progress = applyProgress(io);
    progress.onEvent(start(a, 0));
    progress.onEvent({
      type: 'note',
      change: a,
      message: 'create answer lost (503); sent again',
      done: 0,
      total: 3,
    });
    const note = log.findIndex((w) => w.text === 'Thing/a: create answer lost (503); sent again\n');
    expect(note).toBeGreaterThan(0);
    expect(log[note - 1]).toEqual({ stream: 'stderr', text: '\r\x1b[2K' });
    expect(log.at(-1)).toEqual({ stream: 'stderr', text: '[0/3] creating Thing/a…' });
  });
});

describe('apply progress with hostile text', () => {
  /** A service's message meant to act on a terminal or a CI log. */
  const HOSTILE = 'no\n::error::forged\r\u001b[2K\u202eevil';
  const INERT = 'no\\n::error::forged\\r\\u001b[2K\\u202eevil';

  it('shows notes, failures and addresses as one inert line each, live or not', () => {
    for (const tty of [true, false]) {
      const { io, log } = fakeIo(tty);
      const progress = applyProgress(io);
      const odd = { ...change('x'), address: 'Thing/x\u001b[1A\n::warning::y' };
      progress.onEvent(start(odd, 0));
      progress.onEvent({ type: 'note', change: odd, message: HOSTILE, done: 0, total: 1 });
      progress.onEvent({
        type: 'finish',
        change: odd,
        result: { ...applied(odd), status: 'failed', message: HOSTILE },
        done: 1,
        total: 1,
      });
      progress.end();
      // The progress line's own cursor control is the only escape left.
      const text = log.map((w) => w.text.replaceAll('\r\x1b[2K', '')).join('');
      expect(text).toContain(`Thing/x\\u001b[1A\\n::warning::y: ${INERT}\n`);
      expect(text).toContain(`Thing/x\\u001b[1A\\n::warning::y: FAILED: ${INERT}\n`);
      expect(text).not.toMatch(/[\r\u001b\u202e]/);
      expect(text.split('\n').filter((l) => l.startsWith('::'))).toEqual([]);
    }
  });
});
