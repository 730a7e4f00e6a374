/**
 * `converge sandbox`: delegates to the sandbox, which runs until SIGINT or SIGTERM. The sandbox is
 * imported here, when the command runs, so that every other command starts without loading it and
 * its dependencies (WebAssembly HCL parser, OpenPGP, LDAP client, cron parser).
 */
import { type Command, Option } from 'commander';
import type { Io } from '../io.js';

export interface SandboxFlags {
  port: number;
  host: string;
  token?: string;
  data?: string;
  config?: string;
  latency: string[];
  failRate: string[];
  resetRate: string[];
  rateLimit: string[];
  seed?: string;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/**
 * The fault options. Their values are checked by the sandbox when the command runs (it knows the
 * service names a `service=value` may use), so here they are only collected as typed.
 */
export function addSandboxFaultOptions(command: Command): Command {
  const repeatable = (flags: string, description: string) =>
    new Option(flags, description).argParser(collect).default([] as string[], 'none');
  return command
    .addOption(
      repeatable(
        '--latency <ms[:jitter]>',
        'add MS milliseconds (plus up to JITTER more) to every answer; SERVICE=MS[:JITTER] for one service (repeatable)',
      ),
    )
    .addOption(
      repeatable(
        '--fail-rate <rate>',
        'answer this share of requests (0 to 1) with a 503; SERVICE=RATE for one service',
      ),
    )
    .addOption(
      repeatable(
        '--reset-rate <rate>',
        'drop this share of connections without an answer, half of them after acting; SERVICE=RATE for one service',
      ),
    )
    .addOption(
      repeatable(
        '--rate-limit <rps>',
        'allow each token this many requests per second, then 429 with Retry-After; SERVICE=RPS for one service',
      ),
    )
    .option('--seed <n>', 'seed of the random faults, to repeat a run (random and printed when absent)');
}

export async function sandboxCommand(flags: SandboxFlags, io: Io): Promise<number> {
  const { runSandboxCommand } = await import('../../sandbox/command.js');
  return runSandboxCommand(
    {
      port: flags.port,
      host: flags.host,
      ...(flags.token !== undefined ? { token: flags.token } : {}),
      ...(flags.data !== undefined ? { data: flags.data } : {}),
      ...(flags.config !== undefined ? { config: flags.config } : {}),
      faults: {
        latency: flags.latency,
        failRate: flags.failRate,
        resetRate: flags.resetRate,
        rateLimit: flags.rateLimit,
        ...(flags.seed !== undefined ? { seed: flags.seed } : {}),
      },
    },
    { stdout: io.stdout, stderr: io.stderr },
  );
}
