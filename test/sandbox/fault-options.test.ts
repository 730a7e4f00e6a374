/**
 * `converge sandbox`'s fault options through the CLI in process (`runCli`): bad values are one clear
 * line and exit 1 before anything listens; good ones reach the sandbox, which says at start what it
 * injects and with which seed. Also the config file's fault keys as the summary shows them.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSandboxCommand } from '../../src/sandbox/command.js';
import { type FaultFlags, faultsFromFlags } from '../../src/sandbox/config/fault-flags.js';
import { validateSandboxConfig } from '../../src/sandbox/config/validate.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { SANDBOX_SERVICES } from '../../src/sandbox/services/index.js';
import { freeLoopbackPort } from '../support/ports.js';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

let stateDir: string;
beforeAll(() => {
  stateDir = mkdtempSync(join(tmpdir(), 'converge-fault-options-'));
});
afterAll(() => rmSync(stateDir, { recursive: true, force: true }));

const env = () => ({ PATH: process.env.PATH, CONVERGE_STATE_DIR: stateDir });

describe('converge sandbox fault options: bad values', () => {
  it.each([
    [
      ['--fail-rate', '1.5'],
      '--fail-rate: 1.5 is not a rate between 0 and 1 written as a decimal (such as 0.1)',
    ],
    [
      ['--fail-rate', 'scheduler=-0.1'],
      '--fail-rate: -0.1 is not a rate between 0 and 1 written as a decimal (such as 0.1)',
    ],
    [
      ['--reset-rate', '0x1'],
      '--reset-rate: 0x1 is not a rate between 0 and 1 written as a decimal (such as 0.1)',
    ],
    [
      ['--reset-rate', ''],
      '--reset-rate: "" is not a rate between 0 and 1 written as a decimal (such as 0.1)',
    ],
    // An exponent is refused as hex is (one way to write a rate), and the message says which way.
    [
      ['--fail-rate', '1e-1'],
      '--fail-rate: 1e-1 is not a rate between 0 and 1 written as a decimal (such as 0.1)',
    ],
    [
      ['--fail-rate', 'nosuch=0.2'],
      '--fail-rate: nosuch is not a service of the sandbox (registry, workspaces, secrets, scheduler)',
    ],
    [['--latency', '10:x'], '--latency: 10:x is not MS or MS:JITTER (whole milliseconds, e.g. 10 or 10:5)'],
    [['--latency', '-5'], '--latency: -5 is not MS or MS:JITTER (whole milliseconds, e.g. 10 or 10:5)'],
    // Past 2^31-1 ms Node's timer fires at once: a huge latency would silently be none.
    [['--latency', '3000000000'], '--latency: 3000000000 is more than 600000 ms'],
    [['--rate-limit', 'fast'], '--rate-limit: fast is not a number of requests per second (0: no limit)'],
    [
      ['--rate-limit', 'registry=1e3'],
      '--rate-limit: 1e3 is not a number of requests per second (0: no limit)',
    ],
    [['--seed', '4294967296'], '--seed: 4294967296 is not a whole number from 0 to 4294967295'],
    [['--seed', '1.5'], '--seed: 1.5 is not a whole number from 0 to 4294967295'],
    // The second silently won before, and the start line then said two different things.
    [
      ['--fail-rate', 'scheduler=0.5', '--fail-rate', 'scheduler=0.6'],
      '--fail-rate is given twice for scheduler (scheduler=0.5 and scheduler=0.6): give it once',
    ],
    [
      ['--latency', '10', '--latency', '20'],
      '--latency is given twice for every service (10 and 20): give it once',
    ],
    // One draw decides each request's fault: shares past 1 would be served as other rates than stated.
    [
      ['--fail-rate', '0.9', '--reset-rate', '0.5'],
      '--fail-rate 0.9 and --reset-rate 0.5 add up to more than 1; a request meets at most one of these faults, so together they can be at most 1',
    ],
    [
      ['--fail-rate', '0.2', '--reset-rate', 'scheduler=0.9'],
      'scheduler: --fail-rate 0.2 and --reset-rate 0.9 add up to more than 1; a request meets at most one of these faults, so together they can be at most 1',
    ],
  ])('%j is refused in one line', async (args, message) => {
    const r = await runCli(['sandbox', '--port', '0', ...args], env());
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`converge sandbox: ${message}\n`);
  });

  it('shows a hostile value escaped and cut, never as raw control characters', async () => {
    const hostile = `\u001b]0;owned\u0007${'9'.repeat(200)}`;
    const r = await runCli(['sandbox', '--port', '0', '--fail-rate', hostile], env());
    expect(r.code).toBe(1);
    expect(r.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/);
    expect(r.stderr).toContain('\\u001b]0;owned\\u0007');
    expect(r.stderr.length).toBeLessThan(200);
  });

  it('lists the options in --help', async () => {
    const r = await runCli(['sandbox', '--help'], env());
    expect(r.code).toBe(0);
    for (const flag of [
      '--latency <ms[:jitter]>',
      '--fail-rate <rate>',
      '--reset-rate <rate>',
      '--rate-limit <rps>',
      '--seed <n>',
    ])
      expect(r.stdout).toContain(flag);
  });
});

describe('converge sandbox fault options: in force', () => {
  it('serves with the options laid over the config file, and says so at start', async () => {
    const config = join(stateDir, 'faults.yaml');
    // The file's latency stays; its scheduler override is replaced by the option's.
    writeFileSync(
      config,
      'faults:\n  latencyMs: 5\n  errorRate: 0.5\n  services:\n    scheduler: { failRate: 0 }\n',
    );
    const port = await freeLoopbackPort();
    const running = runCli(
      [
        'sandbox',
        '--port',
        String(port),
        '--token',
        'opt-root',
        '--config',
        config,
        '--fail-rate',
        '0',
        '--fail-rate',
        'scheduler=1',
        '--rate-limit',
        'registry=100',
        '--seed',
        '42',
      ],
      env(),
    );
    try {
      const url = `http://127.0.0.1:${port}`;
      const headers = { Authorization: 'Bearer opt-root' };
      let registry: Response | undefined;
      for (let i = 0; i < 100 && !registry; i++) {
        registry = await fetch(`${url}/v1/acl/roles`, { headers }).catch(() => undefined);
        if (!registry) await new Promise((r) => setTimeout(r, 50));
      }
      expect(registry?.status).toBe(200);
      for (let i = 0; i < 5; i++) expect((await fetch(`${url}/v1/jobs`, { headers })).status).toBe(503);
      for (let i = 0; i < 5; i++) expect((await fetch(`${url}/v1/acl/roles`, { headers })).status).toBe(200);
    } finally {
      process.emit('SIGTERM');
    }
    const r = await running;
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('converge sandbox: faults: latency 5 ms; seed 42\n');
    expect(r.stderr).toContain(
      'converge sandbox: faults for registry: latency 5 ms, rate limit 100/s per token (burst 100), then 429\n',
    );
    expect(r.stderr).toContain('converge sandbox: faults for scheduler: latency 5 ms, 100% answer 503\n');
  });

  it('startSandbox({ faults }) replaces a fail rate given under either name, and is checked', async () => {
    const sandbox = await startSandbox({
      config: { faults: { failRate: 1, latencyMs: 1 } },
      faults: { errorRate: 0 },
    });
    try {
      const res = await fetch(`${sandbox.url}/v1/acl/roles`, {
        headers: { Authorization: `Bearer ${sandbox.rootToken}` },
      });
      expect(res.status).toBe(200);
      expect(sandbox.faultSummary).toEqual([expect.stringMatching(/^faults: latency 1 ms; seed \d+$/)]);
    } finally {
      await sandbox.close();
    }
    await expect(startSandbox({ faults: { resetRate: 2 } })).rejects.toThrow(
      'sandbox config: faults.resetRate: must be <= 1',
    );
    // Each share alone is a rate; together they must fit in all requests, wherever each was set.
    await expect(
      startSandbox({ config: { faults: { failRate: 0.7 } }, faults: { resetRate: 0.7 } }),
    ).rejects.toThrow('sandbox faults: fail rate 0.7 and reset rate 0.7 add up to more than 1');
  });

  it('says an overfull config file once, at the key that set it', () => {
    const problems = (() => {
      try {
        validateSandboxConfig(
          {
            faults: {
              failRate: 0.6,
              resetRate: 0.6,
              services: { registry: { latencyMs: 5 }, scheduler: { failRate: 0.5 } },
            },
          },
          { services: SANDBOX_SERVICES },
        );
        return [];
      } catch (error) {
        return (error as { problems: { path: unknown[] }[] }).problems.map((p) => p.path.join('.'));
      }
    })();
    // The registry sets no rate of its own: the shared settings' problem is its problem, said once.
    expect(problems).toEqual(['faults.resetRate', 'faults.services.scheduler.failRate']);
  });

  it('refuses such faults before any service writes to the data folder', async () => {
    const dataDir = tempDir('converge-faults-data-');
    await expect(
      startSandbox({ dataDir, config: { faults: { failRate: 0.6 } }, faults: { resetRate: 0.6 } }),
    ).rejects.toThrow('add up to more than 1');
    expect(readdirSync(dataDir)).toEqual([]);
  });

  it('prints no fault line without faults, and a random seed it can be repeated with', async () => {
    const quiet = await startSandbox({ config: {} });
    const seeded = await startSandbox({ config: { faults: { resetRate: 0.05, failRate: 0.1 } } });
    try {
      expect(quiet.faultSummary).toEqual([]);
      expect(seeded.faultSummary).toEqual([
        expect.stringMatching(
          /^faults: 10% answer 503, 5% connections dropped \(half after acting\); seed \d+$/,
        ),
      ]);
    } finally {
      await quiet.close();
      await seeded.close();
    }
  });
});

describe('a fault option without a service prefix sets that fault for every service', () => {
  /**
   * The start-up fault lines of `converge sandbox --config FILE <flags> --seed 42`: started on a free
   * port and stopped at once (an aborted signal), through the command itself.
   */
  async function faultLines(faults: Record<string, unknown>, flags: FaultFlags): Promise<string[]> {
    const config = join(tempDir('converge-fault-merge-'), 'sandbox.yaml');
    writeFileSync(config, JSON.stringify({ faults }));
    let stderr = '';
    const code = await runSandboxCommand(
      { port: 0, config, faults: { ...flags, seed: '42' } },
      {
        stdout: { write: () => true },
        stderr: { write: (text: string) => (stderr += text) },
        signal: AbortSignal.abort(),
      },
    );
    expect(code, stderr).toBe(0);
    return stderr
      .split('\n')
      .filter((line) => line.startsWith('converge sandbox: faults'))
      .map((line) => line.slice('converge sandbox: '.length));
  }

  it.each([
    [
      '--fail-rate 0 over a per-service failRate',
      { latencyMs: 20, failRate: 0.5, services: { scheduler: { failRate: 0.2 } } },
      { failRate: ['0'] },
      ['faults: latency 20 ms; seed 42'],
    ],
    [
      '--fail-rate 0 over a per-service errorRate (its older name)',
      { services: { scheduler: { errorRate: 0.2 } } },
      { failRate: ['0'] },
      [],
    ],
    [
      '--fail-rate 0 keeps the per-service keys it does not set',
      { services: { scheduler: { failRate: 0.2, latencyMs: 7 } } },
      { failRate: ['0'] },
      ['faults: none; seed 42', 'faults for scheduler: latency 7 ms'],
    ],
    [
      'a prefixed --fail-rate wins over the bare one, for its service only',
      { failRate: 0.5, services: { scheduler: { failRate: 0.2 }, registry: { failRate: 0.3 } } },
      { failRate: ['0', 'scheduler=0.1'] },
      ['faults: none; seed 42', 'faults for scheduler: 10% answer 503'],
    ],
    [
      'a prefixed --fail-rate alone replaces its service’s value only',
      { failRate: 0.5, services: { scheduler: { failRate: 0.2 }, registry: { failRate: 0.3 } } },
      { failRate: ['scheduler=0.1'] },
      [
        'faults: 50% answer 503; seed 42',
        'faults for scheduler: 10% answer 503',
        'faults for registry: 30% answer 503',
      ],
    ],
    [
      '--latency sets the latency and the jitter of every service',
      { services: { registry: { latencyMs: 50, jitterMs: 10, failRate: 0.3 } } },
      { latency: ['5'] },
      ['faults: latency 5 ms; seed 42', 'faults for registry: latency 5 ms, 30% answer 503'],
    ],
    [
      '--reset-rate 0 over a per-service resetRate',
      { services: { secrets: { resetRate: 0.4 } } },
      { resetRate: ['0'] },
      [],
    ],
    [
      '--rate-limit over a per-service token bucket',
      { services: { workspaces: { rateLimit: { perSecond: 2, burst: 2 } } } },
      { rateLimit: ['50'] },
      ['faults: rate limit 50/s per token (burst 50), then 429; seed 42'],
    ],
  ] as [string, Record<string, unknown>, FaultFlags, string[]][])('%s', async (_, faults, flags, lines) => {
    expect(await faultLines(faults, flags)).toEqual(lines);
  });

  it('serves what the start-up lines say: --fail-rate 0 answers every scheduler request', async () => {
    const names = SANDBOX_SERVICES.map((s) => s.name);
    const sandbox = await startSandbox({
      config: { faults: { failRate: 0.5, services: { scheduler: { failRate: 1 } } } },
      faults: faultsFromFlags({ failRate: ['0'], seed: '42' }, names)!,
    });
    try {
      const headers = { Authorization: `Bearer ${sandbox.rootToken}` };
      const statuses = new Set<number>();
      for (let i = 0; i < 10; i++) {
        statuses.add((await fetch(`${sandbox.url}/v1/jobs`, { headers })).status);
        statuses.add((await fetch(`${sandbox.url}/v1/acl/roles`, { headers })).status);
      }
      expect([...statuses]).toEqual([200]);
    } finally {
      await sandbox.close();
    }
  });
});

describe('converge sandbox fault options and the config file agree on every bound', () => {
  const names = SANDBOX_SERVICES.map((s) => s.name);
  const configAccepts = (faults: Record<string, unknown>) => {
    try {
      validateSandboxConfig({ faults }, { services: SANDBOX_SERVICES });
      return true;
    } catch {
      return false;
    }
  };
  const optionAccepts = (flags: FaultFlags) => {
    try {
      faultsFromFlags(flags, names);
      return true;
    } catch {
      return false;
    }
  };

  it.each([
    [{ failRate: ['1'] }, { failRate: 1 }, true],
    [{ failRate: ['1.0001'] }, { failRate: 1.0001 }, false],
    [{ resetRate: ['0'] }, { resetRate: 0 }, true],
    [{ latency: ['600000'] }, { latencyMs: 600_000 }, true],
    [{ latency: ['600001'] }, { latencyMs: 600_001 }, false],
    [{ latency: ['0:600001'] }, { latencyMs: 0, jitterMs: 600_001 }, false],
    [{ seed: '4294967295' }, { seed: 4_294_967_295 }, true],
    [{ seed: '4294967296' }, { seed: 4_294_967_296 }, false],
    [{ rateLimit: ['0'] }, { rateLimit: 0 }, true],
    [{ failRate: ['0.6'], resetRate: ['0.4'] }, { failRate: 0.6, resetRate: 0.4 }, true],
    [{ failRate: ['0.6'], resetRate: ['0.41'] }, { failRate: 0.6, resetRate: 0.41 }, false],
    [
      { failRate: ['0.6'], resetRate: ['registry=0.5'] },
      { failRate: 0.6, services: { registry: { resetRate: 0.5 } } },
      false,
    ],
  ] as [FaultFlags, Record<string, unknown>, boolean][])('%j', (flags, faults, accepted) => {
    expect(optionAccepts(flags)).toBe(accepted);
    expect(configAccepts(faults)).toBe(accepted);
  });
});
