/**
 * The command line: argument parsing and dispatch only. Each command lives in ./commands and returns
 * its exit code; errors are turned into one clear message by `run`.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { scrubSecrets } from '../clients/http/scrub.js';
import { ManifestError } from '../manifest/types.js';
import { EngineError } from '../engine/errors.js';
import { type ApplyFlags, applyCommand } from './commands/apply.js';
import { planCommand } from './commands/plan.js';
import { sandboxCommand } from './commands/sandbox.js';
import { validateCommand } from './commands/validate.js';
import { debugTrace, environmentSecrets } from './debug-trace.js';
import { annotateManifestProblems } from './ci/github.js';
import { CliError, EXIT } from './exit-codes.js';
import { type Io, write } from './io.js';
import type { CliCatalog, CommandContext } from './service-module.js';
import { defaultCatalog } from './services.js';
import { VERSION } from './version.js';

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a whole number of at least 1');
  return n;
}

function wholeSeconds(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0)
    throw new InvalidArgumentError('must be a whole number of seconds (0 or more)');
  return n;
}

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new InvalidArgumentError('must be a port number (0 to 65535)');
  return n;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** An option that may be given many times, collecting its values in order (none by default). */
const repeatableOption = (flags: string, description: string) => () =>
  new Option(flags, description).argParser(collect).default([] as string[], 'none');

const fileOption = repeatableOption(
  '-f, --file <path>',
  'manifest file or folder (repeatable; folders are read recursively)',
);
/** Variables `${env:NAME}` may read, beside CONVERGE_ALLOW_ENV; nothing else is readable. */
const allowEnvOption = repeatableOption(
  '--allow-env <name>',
  'let ${env:NAME} read this variable (a name or glob like DEMO_*; repeatable, commas allowed); adds to CONVERGE_ALLOW_ENV',
);
const parallelismOption = () =>
  new Option('--parallelism <n>', 'how many requests may run at once').argParser(positiveInt).default(10);
const timeoutOption = () =>
  new Option(
    '--timeout <seconds>',
    'give up on a request after this long, retries included (a service that accepts connections but never answers)',
  )
    .argParser(positiveInt)
    .default(120);
/** Addresses a manifest Connection may send a token from outside the manifest to. */
const allowAddressOption = repeatableOption(
  '--allow-address <address>',
  'let manifest Connections send a token from outside the manifest to this address or glob (repeatable; also CONVERGE_ALLOW_ADDRESSES)',
);
const lockTimeoutOption = () =>
  new Option('--lock-timeout <seconds>', "how long to wait for another apply's lock on the local inventory")
    .argParser(wholeSeconds)
    .default(10);
const noColorOption = () => new Option('--no-color', 'plain output, no colours (NO_COLOR does the same)');

export function buildProgram(
  io: Io,
  setExit: (code: number) => void,
  catalog: CliCatalog = defaultCatalog,
): Command {
  const program = new Command('converge')
    .description(
      'Keep workspaces, directory auth, ACL roles and scheduler jobs in the state a YAML manifest declares.',
    )
    .version(VERSION, '-v, --version', 'print the version')
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
    })
    .exitOverride();

  program
    .command('validate')
    .description('check the manifest (syntax, schema, references between files); contacts no service')
    .addOption(fileOption())
    .addOption(allowEnvOption())
    .addOption(allowAddressOption())
    .action(async (opts: { file: string[]; allowEnv: string[]; allowAddress: string[] }) =>
      setExit(
        await validateCommand(opts.file, io, catalog, {
          allowEnv: opts.allowEnv,
          allowAddresses: opts.allowAddress,
        }),
      ),
    );

  program
    .command('plan')
    .description('show what apply would change, attribute by attribute')
    .addOption(fileOption())
    .addOption(allowEnvOption())
    .addOption(allowAddressOption())
    .option('--json', 'print the plan as one JSON object (stable, with format_version)')
    .option('--markdown', 'print the plan as markdown for a pull-request comment (under 65,535 characters)')
    .option('--detailed-exitcode', 'exit 0 when there are no changes, 2 when there are, 1 on error')
    .option('-o, --out <file>', 'save the plan for `converge apply FILE` (also spelled -out FILE)')
    .option('--prune', 'also plan to delete objects Converge owns that the manifest no longer declares')
    .addOption(parallelismOption())
    .addOption(timeoutOption())
    .addOption(noColorOption())
    .addHelpText(
      'after',
      '\nUnder GitHub Actions (GITHUB_ACTIONS=true) problems are also printed as ::error annotations,\n' +
        'and the plan as markdown is appended to the file $GITHUB_STEP_SUMMARY names.',
    )
    .action(async (opts) => {
      if (opts.json && opts.markdown) throw new CliError('choose one of --json and --markdown');
      setExit(await planCommand(opts, io, catalog));
    });

  const apply = program
    .command('apply')
    .description('plan, confirm, and make live state match the manifest; or apply a saved plan FILE')
    .argument('[planfile]', 'a plan saved with `converge plan -out FILE`')
    .addOption(fileOption())
    .addOption(allowEnvOption())
    .addOption(allowAddressOption())
    .option('--auto-approve', 'apply without asking (needed when there is no terminal, as in CI)')
    .option('--prune', 'also delete objects Converge owns that the manifest no longer declares');
  // Switches that belong to a kind (`--force-unlock`) come from the kinds themselves.
  const kindFlags = catalog.kindOptions();
  for (const option of kindFlags) apply.option(`--${option.flag}`, option.description);
  apply
    .addOption(lockTimeoutOption())
    .addOption(parallelismOption())
    .addOption(timeoutOption())
    .addOption(noColorOption())
    .action(async (planfile: string | undefined, opts: Record<string, unknown>) => {
      const options = kindFlags.filter((o) => opts[camelCase(o.flag)] === true).map((o) => o.flag);
      setExit(await applyCommand(planfile, { ...(opts as unknown as ApplyFlags), options }, io, catalog));
    });

  program
    .command('sandbox')
    .description('serve a local emulation of the four services on one loopback port')
    .addOption(new Option('--port <n>', 'port to listen on (0: any free port)').argParser(port).default(8500))
    .option('--host <address>', 'address to listen on (loopback unless you say otherwise)', '127.0.0.1')
    .option('--token <token>', 'root token for every service (random when absent)')
    .option('--data <dir>', 'keep the sandbox state in this folder across restarts')
    .option('--config <file>', 'YAML file with extra tokens, policies, seed data and faults')
    .action(async (opts) => setExit(await sandboxCommand(opts, io)));

  const context: CommandContext = {
    io,
    catalog,
    action:
      <A extends unknown[]>(handler: (...args: A) => Promise<number>) =>
      async (...args: A) =>
        setExit(await handler(...args)),
  };
  for (const module of catalog.modules) module.commands?.(program, context);

  configureAll(program, program);
  return program;
}

/** Every command, however deep, reports through the program's streams and never exits the process. */
function configureAll(root: Command, group: Command): void {
  for (const c of group.commands) {
    c.exitOverride().configureOutput(root.configureOutput());
    configureAll(root, c);
  }
}

/** `force-unlock` → `forceUnlock`, as commander names option values. */
function camelCase(flag: string): string {
  return flag.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
}

/** terraform spells it `-out FILE` / `-out=FILE`; commander would read that as `-o ut`. */
export function normaliseArgs(args: string[]): string[] {
  return args.map((a) => (a === '-out' ? '--out' : a.startsWith('-out=') ? `--out=${a.slice(5)}` : a));
}

/** Runs the CLI with the given arguments (without `node` and the script) and returns the exit code. */
export async function run(args: string[], io: Io, catalog: CliCatalog = defaultCatalog): Promise<number> {
  let code: number = EXIT.ok;
  const program = buildProgram(
    io,
    (c) => {
      code = c;
    },
    catalog,
  );
  try {
    await program.parseAsync(normaliseArgs(args), { from: 'user' });
    return code;
  } catch (error) {
    return reportError(error, io);
  }
}

function reportError(error: unknown, io: Io): number {
  const e = error as { code?: string; exitCode?: number };
  if (typeof e?.code === 'string' && e.code.startsWith('commander.')) {
    // Help and version exit 0; usage errors were already printed by commander.
    return e.exitCode === 0 ? EXIT.ok : EXIT.error;
  }
  if (error instanceof ManifestError) {
    const n = error.problems.length;
    write(io.stderr, `Error: the manifest has ${n} problem${n === 1 ? '' : 's'}:\n${error.message}`);
    annotateManifestProblems(io, error.problems);
    return EXIT.error;
  }
  if (error instanceof CliError) {
    write(io.stderr, `Error: ${error.message}`);
    return error.exitCode;
  }
  // The engine's own refusals (a plan file that does not verify, a held lock) read as they are.
  if (error instanceof EngineError) {
    write(io.stderr, `Error: ${error.message}`);
    return EXIT.error;
  }
  // Service errors come scrubbed of every secret of their request; the process's own credentials
  // are scrubbed once more here, from whatever error reaches this point.
  const secrets = environmentSecrets(io.env);
  const message = error instanceof Error ? error.message : String(error);
  write(io.stderr, `Error: ${scrubSecrets(message, secrets)}`);
  if (io.env.CONVERGE_DEBUG && error instanceof Error) write(io.stderr, debugTrace(error, secrets));
  return EXIT.error;
}
