/**
 * A signal that comes once every read of `plan` is done: while the plan is printed, before it is
 * saved to `-out`. It was announced ("Interrupted (SIGTERM): stopping…") and then ignored: the plan
 * saved, "Saved the plan to …", exit 0, so a cancelled CI job got a green step and a plan artifact.
 * Announced, it stops the run as one during the reads does: nothing saved (an earlier file left as it
 * was, no temporary file beside it) and the signal's exit code. The same for `apply PLANFILE`, whose
 * changes are left alone rather than refused as unreadable.
 *
 * In-process, with no timer: the signal is emitted to this process at the moment the command writes
 * the plan to standard output, as the interrupt handler listens on the process.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
});
afterAll(async () => {
  await sandbox?.close();
});

function manifest(name: string): string {
  const dir = tempDir('converge-plan-late-interrupt-');
  writeFileSync(
    path.join(dir, 'r.yaml'),
    `apiVersion: converge/v1\nkind: AclRole\nmetadata: { name: ${name} }\nspec:\n  Description: x\n`,
  );
  return dir;
}

function env(): Record<string, string | undefined> {
  return { ...sandbox.env(), CONVERGE_STATE_DIR: tempDir('converge-plan-late-interrupt-state-') };
}

/** Emits `signal` to this process once standard output holds what `printed` looks for, once. */
function signalOnceOut(signal: NodeJS.Signals, printed: (stdout: string) => boolean) {
  let sent = false;
  return {
    onStdout: (stdout: string) => {
      if (sent || !printed(stdout)) return;
      sent = true;
      process.emit(signal, signal);
    },
    sent: () => sent,
  };
}

async function roleExists(name: string): Promise<boolean> {
  const res = await fetch(`${sandbox.url}/v1/acl/roles`, {
    headers: { authorization: `Bearer ${sandbox.rootToken}` },
  });
  return ((await res.json()) as { Name: string }[]).some((r) => r.Name === name);
}

describe('plan interrupted once its reads are done', () => {
  it.each([
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ] as const)('by %s while the plan is printed: nothing saved to -out, exit %i', async (signal, code) => {
    const dir = manifest(`late-${signal.toLowerCase()}`);
    const outDir = tempDir('converge-plan-late-interrupt-out-');
    const out = path.join(outDir, 'int.plan');
    const trigger = signalOnceOut(signal, (stdout) => stdout.includes('Plan: 1 to add'));
    const r = await runCli(['plan', '-f', dir, '-out', out], env(), { onStdout: trigger.onStdout });
    expect(trigger.sent()).toBe(true);
    expect(r.stderr).toContain(`Interrupted (${signal})`);
    expect(r.code).toBe(code);
    expect(r.stderr).toContain(
      `Plan interrupted (${signal}) after it was printed. Nothing was saved to ${out}.`,
    );
    expect(r.stdout).not.toContain('Saved the plan');
    expect(existsSync(out)).toBe(false);
    // Not even a temporary file beside it.
    expect(readdirSync(outDir)).toEqual([]);
  });

  it.each([
    ['--json', (stdout: string) => stdout.includes('"format_version"')],
    ['--markdown', (stdout: string) => stdout.length > 0],
  ] as const)('with %s: an earlier -out file is left as it was, exit 143', async (flag, printed) => {
    const dir = manifest(`late${flag.replace(/-/g, '_')}`);
    const outDir = tempDir('converge-plan-late-interrupt-out-');
    const out = path.join(outDir, 'int.plan');
    writeFileSync(out, 'the earlier plan\n');
    const trigger = signalOnceOut('SIGTERM', printed);
    const r = await runCli(['plan', '-f', dir, flag, '-out', out], env(), { onStdout: trigger.onStdout });
    expect(trigger.sent()).toBe(true);
    expect(r.code).toBe(143);
    expect(r.stderr).toContain(
      `Plan interrupted (SIGTERM) after it was printed. Nothing was saved to ${out}. The earlier ${out} is left as it was.`,
    );
    expect(readFileSync(out, 'utf8')).toBe('the earlier plan\n');
    expect(readdirSync(outDir)).toEqual(['int.plan']);
  });

  it('without -out: exit 143, with --detailed-exitcode too', async () => {
    const dir = manifest('late-no-out');
    const trigger = signalOnceOut('SIGTERM', (stdout) => stdout.includes('Plan: 1 to add'));
    const r = await runCli(['plan', '-f', dir, '--detailed-exitcode'], env(), {
      onStdout: trigger.onStdout,
    });
    expect(trigger.sent()).toBe(true);
    expect(r.code).toBe(143);
    expect(r.stderr).toContain('Plan interrupted (SIGTERM) after it was printed.');
  });

  it('a signal after the plan was saved is not announced as stopping it: saved, exit 0', async () => {
    const dir = manifest('late-after-save');
    const out = path.join(tempDir('converge-plan-late-interrupt-out-'), 'int.plan');
    // The interrupt's handler is gone once the plan is saved: emitting the signal now would reach
    // only the test runner's own listeners, so this only checks that it is gone.
    let listening: number | undefined;
    const before = process.listenerCount('SIGTERM');
    const r = await runCli(['plan', '-f', dir, '-out', out], env(), {
      onStdout: (stdout) => {
        if (listening === undefined && stdout.includes('Saved the plan'))
          listening = process.listenerCount('SIGTERM');
      },
    });
    expect(r.code).toBe(0);
    expect(listening).toBe(before);
    expect(existsSync(out)).toBe(true);
  });
});

describe('apply PLANFILE interrupted once its reads are done', () => {
  it('leaves every change alone and exits 143, rather than refusing the plan as unreadable', async () => {
    const name = 'late-apply';
    const dir = manifest(name);
    const runEnv = env();
    const out = path.join(tempDir('converge-plan-late-interrupt-out-'), 'int.plan');
    const planned = await runCli(['plan', '-f', dir, '-out', out], runEnv);
    expect(planned.code).toBe(0);
    const trigger = signalOnceOut('SIGTERM', (stdout) => stdout.includes('Plan: 1 to add'));
    const r = await runCli(['apply', out], runEnv, { onStdout: trigger.onStdout });
    expect(trigger.sent()).toBe(true);
    expect(r.code).toBe(143);
    expect(r.stderr).toContain('Interrupted before any change started; nothing was changed.');
    expect(await roleExists(name)).toBe(false);
  });
});
