/**
 * Whole-number flags take decimal digits and nothing else. They were read with `Number()`, so
 * `--max-deletes ""` (an unset shell variable) was a guard of 0 deletions, `--port ""` a random port,
 * and `0x2`, `1e1` and `1.0` passed as 2, 10 and 1. Every value here is refused while the command
 * line is parsed: no manifest is read and no service contacted (none runs).
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

const env = { PATH: process.env.PATH, CONVERGE_STATE_DIR: tempDir('converge-number-flags-') };
const missing = '/nonexistent/converge-number-flags';

const NOT_DECIMAL = ['', ' ', '0x2', '1e1', '1.0', '+3', ' 3', '-0', '99999999999999999999'];

describe('whole-number flags', () => {
  const flags: [command: string[], flag: string][] = [
    [['plan', '-f', missing], '--max-deletes'],
    [['apply', '-f', missing], '--max-deletes'],
    [['reconcile', '-f', missing, '--interval', '5m'], '--max-deletes'],
    [['plan', '-f', missing], '--parallelism'],
    [['apply', '-f', missing], '--timeout'],
    [['export', '-o', missing], '--timeout'],
    [['apply', '-f', missing], '--lock-timeout'],
    [['import', 'AclRole/default/x', '-f', missing], '--lock-timeout'],
    [['inventory', 'forget', 'AclRole/default/x', '--yes'], '--lock-timeout'],
    [['sandbox'], '--port'],
  ];

  it.each(flags)(
    '%j refuses %s values that are not decimal digits, naming the flag',
    async (command, flag) => {
      for (const value of NOT_DECIMAL) {
        const r = await runCli([...command, flag, value], env);
        expect(r.code, `${flag} ${JSON.stringify(value)}`).toBe(1);
        expect(r.stderr, `${flag} ${JSON.stringify(value)}`).toContain(`option '${flag} <`);
        expect(r.stderr).toContain(`argument '${value}' is invalid`);
        expect(r.stderr).toContain('in decimal digits');
      }
    },
  );

  it('says what an empty value should have been', async () => {
    const r = await runCli(['plan', '-f', missing, '--max-deletes', ''], env);
    expect(r.stderr).toContain(
      "error: option '--max-deletes <n>' argument '' is invalid. must be a whole number (0 or more), in decimal digits (such as 10)",
    );
    const port = await runCli(['sandbox', '--port='], env);
    expect(port.stderr).toContain(
      "option '--port <n>' argument '' is invalid. must be a port number (0 to 65535)",
    );
  });

  it('still takes the documented forms: 0, leading zeros, the largest port', async () => {
    // Past the flags, the run stops at the manifest that is not there: the values were taken.
    for (const args of [
      ['--max-deletes', '0'],
      ['--max-deletes', '007'],
      ['--parallelism', '1'],
      ['--timeout', '120'],
    ]) {
      const r = await runCli(['plan', '-f', missing, ...args], env);
      expect(r.stderr, args.join(' ')).not.toContain('is invalid');
      expect(r.stderr).toContain(missing);
    }
    const lock = await runCli(['apply', '-f', missing, '--lock-timeout', '0', '--auto-approve'], env);
    expect(lock.stderr).not.toContain('is invalid');
    const port = await runCli(['sandbox', '--port', '65536'], env);
    expect(port.stderr).toContain('must be a port number (0 to 65535)');
  });

  it('refuses the same values for rekey start --shares/--threshold and job revert --enforce-prior-version', async () => {
    const secrets = {
      ...env,
      CONVERGE_SECRETS_ADDR: 'http://127.0.0.1:59739',
      CONVERGE_SECRETS_TOKEN: 'unused',
    };
    for (const value of ['', '0x2', '1e1', '2.0']) {
      const shares = await runCli(['rekey', 'start', '--shares', value, '--threshold', '1'], secrets);
      expect(shares.code).toBe(1);
      expect(shares.stderr).toContain('--shares must be a whole number of at least 1');
      const threshold = await runCli(['rekey', 'start', '--shares', '3', '--threshold', value], secrets);
      expect(threshold.stderr).toContain('--threshold must be a whole number of at least 1');
      const prior = await runCli(['job', 'revert', 'web', '1', '--enforce-prior-version', value], env);
      expect(prior.code).toBe(1);
      expect(prior.stderr).toContain('--enforce-prior-version must be a whole number ≥ 0');
    }
  });
});
