/**
 * The lines that close an apply, finished or interrupted: every object not applied, with its
 * message. The address is the manifest's and the message may quote a service, so both must be
 * shown inert (no line break, ESC, CR or bidi override acting on the reader's screen or CI log).
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { ChangeResult } from '../../src/applier/applier.js';
import { writeApplySummary, writeInterruptSummary } from '../../src/cli/apply-summary.js';
import type { Io } from '../../src/cli/io.js';

function captured(): { io: Io; out: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      text += String(chunk);
      callback();
    },
  });
  return { io: { stdout: stream, stderr: stream, stdinIsTTY: false, env: {} }, out: () => text };
}

const HOSTILE = 'refused\n::error::forged\r\u001b[2K\u202eevil';
const INERT = 'refused\\n::error::forged\\r\\u001b[2K\\u202eevil';

const results: ChangeResult[] = [
  { address: 'AclRole/default/ok', action: 'create', status: 'applied', durationMs: 3 },
  {
    address: 'AclRole/default/bad\u001b[1A',
    action: 'create',
    status: 'failed',
    message: HOSTILE,
    durationMs: 3,
  },
  {
    address: 'AclRole/default/later',
    action: 'update',
    status: 'skipped',
    message: 'not attempted: interrupted',
    durationMs: 0,
  },
];

function expectInert(text: string) {
  expect(text).not.toMatch(/[\r\u001b\u202e]/);
  expect(text.split('\n').filter((l) => l.trim().startsWith('::'))).toEqual([]);
}

describe('the summary after an apply', () => {
  it('lists what was not applied, each message one inert line', () => {
    const { io, out } = captured();
    writeApplySummary(io, { counts: { applied: 1, failed: 1, skipped: 1, stale: 0 }, results });
    expect(out()).toContain(`  failed: AclRole/default/bad\\u001b[1A: ${INERT}\n`);
    expect(out()).toContain('  skipped: AclRole/default/later: not attempted: interrupted\n');
    // The counts last, where a terminal leaves them in view after a long list.
    expect(out().trimEnd().split('\n').at(-1)).toBe(
      'Apply finished with errors: 1 applied, 1 failed, 1 skipped, 0 stale.',
    );
    expectInert(out());
  });

  it('after an interrupt, says what was and was not applied, each line inert', () => {
    const { io, out } = captured();
    writeInterruptSummary(io, results);
    expect(out()).toContain('  applied: AclRole/default/ok (create)\n');
    expect(out().trimEnd().split('\n').at(-1)).toMatch(
      /^Apply interrupted: 1 applied, 1 failed, 1 not attempted: `converge plan` lists what is left\.$/,
    );
    expect(out()).toContain(`  not applied (failed): AclRole/default/bad\\u001b[1A: ${INERT}\n`);
    expectInert(out());
  });

  it('after an interrupt early in a long apply, lists the first changes it left alone and counts the rest', () => {
    const { io, out } = captured();
    const untouched = Array.from({ length: 250 }, (_, i): ChangeResult => ({
      address: `AclRole/default/r-${i}`,
      action: 'create',
      status: 'skipped',
      message: 'not attempted: interrupted',
      durationMs: 0,
      interrupted: true,
    }));
    writeInterruptSummary(io, [...results, ...untouched]);
    const lines = out().split('\n');
    // What changed or failed is always there; of the 250 the interrupt left alone, 20 lines and a
    // count (the fixture's own skipped change is listed as any other).
    expect(out()).toContain('  applied: AclRole/default/ok (create)\n');
    expect(out()).toContain(`  not applied (failed): AclRole/default/bad\\u001b[1A: ${INERT}\n`);
    expect(lines.filter((l) => l.startsWith('  not applied (skipped): AclRole/default/r-'))).toHaveLength(20);
    expect(out()).toContain(
      '  … and 230 more not attempted: interrupted (`converge plan` lists what is left)\n',
    );
    expect(lines.at(-2)).toMatch(/^Apply interrupted: 1 applied, 1 failed, 251 not attempted: /);
  });

  it('after an interrupted saved plan, names the command that applies what is left of it', () => {
    const { io, out } = captured();
    writeInterruptSummary(io, results, 'reviewed.plan');
    expect(out().trimEnd().split('\n').at(-1)).toBe(
      'Apply interrupted: 1 applied, 1 failed, 1 not attempted: `converge apply reviewed.plan` applies what is left.',
    );
  });

  it('names the command as the apply gives it, with the flags that let its manifest load', () => {
    const saved = captured();
    writeInterruptSummary(
      saved.io,
      results,
      'reviewed.plan',
      'converge apply reviewed.plan --allow-env TEAM',
    );
    expect(saved.out()).toContain(
      ': `converge apply reviewed.plan --allow-env TEAM` applies what is left.\n',
    );
    const manifest = captured();
    writeInterruptSummary(manifest.io, results, undefined, 'converge plan -f infra --allow-env TEAM');
    expect(manifest.out()).toContain(': `converge plan -f infra --allow-env TEAM` lists what is left.\n');
  });
});
