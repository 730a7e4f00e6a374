/**
 * The command line: argument parsing and dispatch only. Each command lives in ./commands and returns
 * its exit code; errors are turned into one clear message by `run`.
 *
 * Start-up: this module loads only commander and small helpers. Every action imports its command
 * module when it runs (`await import('./commands/plan.js')`), and each service's operator commands
 * come from `./commands/<service>.ts` through `serviceCommands`, so `converge --help` or
 * `converge validate` never load the renderers, prompts, OpenPGP or the sandbox. A new command
 * follows the same pattern: declare it here, import its handler inside the action.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { allowedAddressProblem } from '../common/allowed-address.js';
import { ManifestError } from '../manifest/types.js';
import { EngineError } from '../engine/errors.js';
import { defaultCatalog } from '../engine/services.js';
import type { ApplyFlags } from './commands/apply.js';
import { registerInventoryCommands } from './commands/inventory-program.js';
// Only the option definitions: the sandbox itself loads when the command runs.
import { addSandboxFaultOptions } from './commands/sandbox.js';
import { debugTrace, environmentSecrets } from './debug-trace.js';
import { annotateManifestProblems } from './ci/github.js';
import { CliError, EXIT } from './exit-codes.js';
import { linesAfterError } from './after-error.js';
import { errorText } from './error-text.js';
import { type Io, write } from './io.js';
import { type CliCatalog, type CommandContext, serviceCommands } from './service-module.js';
import { VERSION } from './version.js';
import { wholeNumber } from './whole-number.js';
import {
  excessArgumentsHint,
  missingOutHint,
  manifestGivenAsAddress,
  manifestGivenAsPlan,
  refuseSingleDashLongOptions,
  rememberArgs,
  optionBeforeCommandHint,
} from './usage-hints.js';

/**
 * The parsers of the whole-number flags: decimal digits only (see whole-number.ts). The value is
 * shown quoted in commander's message, so an empty one reads `argument '' is invalid`.
 */
function positiveInt(value: string): number {
  const n = wholeNumber(value);
  if (n === undefined || n < 1)
    throw new InvalidArgumentError('must be a whole number of at least 1, in decimal digits (such as 10)');
  return n;
}

function wholeSeconds(value: string): number {
  const n = wholeNumber(value);
  if (n === undefined)
    throw new InvalidArgumentError(
      'must be a whole number of seconds (0 or more), in decimal digits (such as 10)',
    );
  return n;
}

function wholeCount(value: string): number {
  const n = wholeNumber(value);
  if (n === undefined)
    throw new InvalidArgumentError('must be a whole number (0 or more), in decimal digits (such as 10)');
  return n;
}

function port(value: string): number {
  const n = wholeNumber(value);
  if (n === undefined || n > 65535)
    throw new InvalidArgumentError('must be a port number (0 to 65535), in decimal digits');
  return n;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** An option that may be given many times, collecting its values in order (none by default). */
const repeatableOption = (flags: string, description: string) => () =>
  new Option(flags, description).argParser(collect).default([] as string[], 'none');

/**
 * A value that may not be empty: `-f "$DIR"` or `--target "$TARGET"` with the variable unset gives
 * `""`, which read as the current folder (the whole checkout) or as no target at all (every object).
 * Refused as the number flags refuse `""`, saying where an empty value usually comes from.
 */
function nonEmpty(what: string): (value: string) => string {
  return (value) => {
    if (value.trim() === '')
      throw new InvalidArgumentError(
        `must name ${what}, not be empty (an unset variable gives an empty value)`,
      );
    return value;
  };
}

/** A repeatable option whose every value must name something (`nonEmpty`). */
const repeatableNamingOption = (flags: string, description: string, what: string) => () => {
  const check = nonEmpty(what);
  return new Option(flags, description)
    .argParser((value: string, previous: string[]) => collect(check(value), previous))
    .default([] as string[], 'none');
};

const fileOption = repeatableNamingOption(
  '-f, --file <path>',
  'manifest file or folder (repeatable; folders are read recursively)',
  'a manifest file or folder',
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
/** Addresses a manifest Connection may send a token or values from outside the manifest to. */
const allowAddressOption = () =>
  new Option(
    '--allow-address <address>',
    'let manifest Connections send a token or values from outside the manifest to this address or glob, without credentials or a query string (repeatable; also CONVERGE_ALLOW_ADDRESSES)',
  )
    .argParser(allowedAddress)
    .default([] as string[], 'none');

/**
 * `--allow-address`'s values, each refused as it is read when it carries credentials, a query string
 * or a fragment: before anything can repeat it (the commands a run suggests, a usage hint that repeats
 * the command line). Not through commander's InvalidArgumentError, whose message quotes the value.
 */
function allowedAddress(value: string, previous: string[]): string[] {
  for (const pattern of value.split(',')) {
    const problem = allowedAddressProblem(pattern.trim());
    if (problem !== undefined) throw new CliError(`--allow-address: an address (not shown) ${problem}`);
  }
  return collect(value, previous);
}
/** `--target` / `--exclude` on plan and apply: address globs (engine/targeting.ts). */
const targetOption = repeatableNamingOption(
  '--target <address>',
  'plan only this object and what it needs: the address the plan prints (KIND/NAMESPACE/NAME or KIND/NAME), a glob where * stays in one segment and ** crosses / (repeatable)',
  'an address or a glob (leave --target out to plan every object)',
);
const excludeOption = repeatableNamingOption(
  '--exclude <address>',
  'leave this address or glob out, with every object that needs it; wins over --target (repeatable)',
  'an address or a glob',
);
const lockTimeoutOption = () =>
  new Option(
    '--lock-timeout <seconds>',
    "how long to wait for another run's lock on the inventory (the local file, or CONVERGE_INVENTORY's workspace)",
  )
    .argParser(wholeSeconds)
    .default(10);
const allowEmptyOption = () =>
  new Option(
    '--allow-empty',
    'let --prune delete every object of a kind on a connection (in a namespace) where the manifest no longer declares any of it',
  );
const maxDeletesOption = () =>
  new Option(
    '--max-deletes <n>',
    'refuse a plan that deletes more than N objects (prune, ensure: absent and replacements all count)',
  ).argParser(wholeCount);
const noColorOption = () => new Option('--no-color', 'plain output, no colours (NO_COLOR does the same)');

export async function buildProgram(
  io: Io,
  setExit: (code: number) => void,
  given?: CliCatalog,
  invoked?: string,
): Promise<Command> {
  // The engine's list of services is the one list. Imported with this module: every program needs a
  // catalog, and a separate import() made the bundled CLI (scripts/bundle-cli.mjs) load five more files.
  const catalog: CliCatalog = given ?? defaultCatalog;
  const program = new Command('converge')
    .description(
      'Keep workspaces, directory auth, ACL roles and scheduler jobs in the state a YAML manifest declares.',
    )
    .version(VERSION, '-v, --version', 'print the version')
    // The program's own options (-v, -h) only before the command's name: after it, a value that
    // begins with -v (`--message -verbose`, `--exclude -v`) was read as the version flag, which
    // printed the version and exited 0 in place of the command.
    .enablePositionalOptions()
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
      // `converge -f m.yaml plan`: the command's option before its name, which the program does not know.
      outputError: (text, write) => {
        const hint = optionBeforeCommandHint(program, text);
        const said = withoutOptionValue(text);
        write(hint === undefined ? said : `${said}${hint}\n`);
      },
    })
    .exitOverride();

  program
    .command('validate')
    .description('check the manifest (syntax, schema, references between files); contacts no service')
    .addOption(fileOption())
    // Taken by every command that prints (its output is plain anyway): a CI script passes it to all.
    .addOption(noColorOption())
    .addOption(allowEnvOption())
    .addOption(allowAddressOption())
    .action(async (opts: { file: string[]; allowEnv: string[]; allowAddress: string[] }) => {
      const { validateCommand } = await import('./commands/validate.js');
      setExit(
        await validateCommand(opts.file, io, catalog, {
          allowEnv: opts.allowEnv,
          allowAddresses: opts.allowAddress,
        }),
      );
    });

  const plan = program
    .command('plan')
    .description('show what apply would change, attribute by attribute')
    .addOption(fileOption())
    .addOption(allowEnvOption())
    .addOption(allowAddressOption())
    .option('--json', 'print the plan as one JSON object (stable, with format_version)')
    .option('--markdown', 'print the plan as markdown for a pull-request comment (under 65,535 characters)')
    .option('--detailed-exitcode', 'exit 0 when there are no changes, 2 when there are, 1 on error')
    .addOption(
      new Option(
        '-o, --out <file>',
        'save the plan for `converge apply FILE` (also spelled -out FILE)',
      ).argParser(nonEmpty('the file to save the plan to')),
    )
    .option('--prune', 'also plan to delete objects Converge owns that the manifest no longer declares')
    .addOption(targetOption())
    .addOption(excludeOption())
    .addOption(allowEmptyOption())
    .addOption(maxDeletesOption());
  // A kind's switches (`--force-unlock`) on plan too: the plan then shows what the apply does with them.
  const kindFlags = catalog.kindOptions();
  for (const option of kindFlags)
    plan.option(`--${option.flag}`, `plan what \`apply --${option.flag}\` does: ${option.description}`);
  plan
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
      const options = kindFlags.filter((o) => opts[camelCase(o.flag)] === true).map((o) => o.flag);
      const { planCommand } = await import('./commands/plan.js');
      setExit(await planCommand({ ...opts, options }, io, catalog));
    });

  const apply = program
    .command('apply')
    .description('plan, confirm, and make live state match the manifest; or apply a saved plan FILE')
    .argument('[planfile]', 'a plan saved with `converge plan -out FILE`')
    .addOption(fileOption())
    .addOption(allowEnvOption())
    .addOption(allowAddressOption())
    .option('--auto-approve', 'apply without asking (needed when there is no terminal, as in CI)')
    .option('--prune', 'also delete objects Converge owns that the manifest no longer declares')
    .addOption(targetOption())
    .addOption(excludeOption())
    .addOption(
      repeatableOption(
        '--import <address>',
        'first adopt this existing object the manifest declares into the inventory (as `converge import`; repeatable)',
      )(),
    )
    .addOption(allowEmptyOption())
    .addOption(maxDeletesOption());
  // Switches that belong to a kind (`--force-unlock`) come from the kinds themselves.
  for (const option of kindFlags) apply.option(`--${option.flag}`, option.description);
  apply
    .addOption(lockTimeoutOption())
    .addOption(parallelismOption())
    .addOption(timeoutOption())
    .addOption(noColorOption())
    .addHelpText(
      'after',
      '\nCtrl-C or SIGTERM: no new change starts, changes in flight finish (up to 30 s, then they are aborted),\nthe summary lists each object applied or not, exit 130 (143 for SIGTERM). A second signal quits at once.',
    )
    .action(async (planfile: string | undefined, opts: Record<string, unknown>, command: Command) => {
      // `apply "$PLAN"` with the variable unset: not "no manifest given", which sent users to -f.
      if (planfile !== undefined && planfile.trim() === '')
        throw new CliError(
          'the plan file to apply is empty (an unset variable gives an empty value): name the file `converge plan -out FILE` saved',
        );
      // `apply examples/demo`: a manifest where a saved plan goes, said before it is read as one.
      const manifestGiven = planfile === undefined ? undefined : manifestGivenAsPlan(command, planfile);
      if (manifestGiven !== undefined) throw new CliError(manifestGiven);
      const options = kindFlags.filter((o) => opts[camelCase(o.flag)] === true).map((o) => o.flag);
      const { applyCommand } = await import('./commands/apply.js');
      setExit(await applyCommand(planfile, { ...(opts as unknown as ApplyFlags), options }, io, catalog));
    });

  program
    .command('reconcile')
    .description(
      'keep live state matching the manifest: every --interval re-read it, plan and apply (or report drift); one JSON line per cycle and change',
    )
    .addOption(fileOption())
    .addOption(noColorOption())
    .addOption(allowEnvOption())
    .addOption(allowAddressOption())
    .requiredOption('--interval <duration>', 'time between cycles, a Go duration (30s, 5m, 1h)')
    .option('--dry-run', 'only report drift, change nothing')
    .option(
      '--listen <addr>',
      'serve /healthz, /metrics and POST /reconcile (needs CONVERGE_RECONCILE_TOKEN) on HOST:PORT or :PORT',
    )
    .option(
      '--max-backoff <duration>',
      'longest wait after failed cycles (waits double from 10s, or from --interval if shorter, each between half and all of its value)',
      '15m',
    )
    .option('--prune', 'also delete objects Converge owns that the manifest no longer declares')
    .addOption(allowEmptyOption())
    .addOption(maxDeletesOption())
    .addOption(parallelismOption())
    .addOption(timeoutOption())
    .addOption(lockTimeoutOption())
    .addHelpText(
      'after',
      '\nStops on SIGTERM or SIGINT after the change in flight (exit 143 or 130), with a last `shutdown` line.\n/healthz answers 200 while the last successful cycle is younger than 3 intervals, else 503.',
    )
    .action(async (opts) => {
      // Loaded on use: the loop brings prom-client and an HTTP server no other command needs.
      const { reconcileCommand } = await import('./commands/reconcile.js');
      setExit(await reconcileCommand(opts, io, catalog));
    });

  program
    .command('export')
    .description('write live objects as manifest files (secrets as ${env:…} placeholders); reads only')
    .requiredOption(
      '-o, --out <dir>',
      'folder to write one file per kind into (existing files are never replaced)',
    )
    .addOption(repeatableOption('--kind <kind>', 'only this kind (repeatable; default every kind)')())
    .option(
      '--namespace <namespace>',
      "read this namespace (a directory kind's mount); default each kind's default",
    )
    .option(
      '--connection <name>',
      "read through this manifest Connection (give the manifest with -f); default kinds: its service's",
    )
    .addOption(fileOption())
    .addOption(allowEnvOption())
    .addOption(allowAddressOption())
    .addOption(timeoutOption())
    .action(async (opts) => {
      const { exportCommand } = await import('./commands/export.js');
      setExit(await exportCommand(opts, io, catalog));
    });

  program
    .command('import')
    .description(
      'adopt existing objects the manifest declares into the inventory; writes nothing to services',
    )
    .argument(
      '<address...>',
      "the address as the plan prints it: KIND/NAMESPACE/NAME or KIND/NAME, or a glob as --target takes it ('AclRole/default/*')",
    )
    .addOption(fileOption())
    .addOption(noColorOption())
    .addOption(allowEnvOption())
    .addOption(allowAddressOption())
    .addOption(lockTimeoutOption())
    .addOption(timeoutOption())
    .action(async (addresses: string[], opts: { file: string[] }, command: Command) => {
      // `import '**' exp1`: the folder was taken for one more address.
      const manifestGiven = opts.file.length === 0 ? manifestGivenAsAddress(command) : undefined;
      if (manifestGiven !== undefined) throw new CliError(manifestGiven);
      const { importCommand } = await import('./commands/import.js');
      setExit(await importCommand(addresses, opts, io, catalog));
    });

  const sandbox = program
    .command('sandbox')
    .description('serve a local emulation of the four services on one loopback port')
    .addOption(new Option('--port <n>', 'port to listen on (0: any free port)').argParser(port).default(8500))
    .option('--host <address>', 'address to listen on (loopback unless you say otherwise)', '127.0.0.1')
    .option(
      '--token <token>',
      "root token for every service (random when absent; with --data, the first start's, kept there)",
    )
    .option('--data <dir>', 'keep the sandbox state in this folder across restarts')
    .option('--config <file>', 'YAML file with extra tokens, policies, seed data and faults');
  addSandboxFaultOptions(sandbox).action(async (opts) => {
    // The sandbox is half of Converge (WebAssembly HCL parser, OpenPGP, LDAP): only this command loads it.
    const { sandboxCommand } = await import('./commands/sandbox.js');
    setExit(await sandboxCommand(opts, io));
  });

  registerInventoryCommands(program, (code) => setExit(code), io, lockTimeoutOption, catalog);

  const context: CommandContext = {
    io,
    catalog,
    action:
      <A extends unknown[]>(handler: (...args: A) => Promise<number>) =>
      async (...args: A) =>
        setExit(await handler(...args)),
  };
  // Each service's operator commands, in the catalog's order (so `--help` lists them the same way).
  // Not when `invoked` (the first argument) names a command declared above: none of them can run,
  // so their modules are not loaded (start-up of `converge validate`, issue 20). Help, a service's
  // command, an option first or a word commander must suggest a command for get them all.
  if (!isDeclared(program, invoked)) {
    const found = await Promise.all(catalog.modules.map(serviceCommands));
    for (const commands of found) commands?.(program, context);
  }

  configureAll(program, program);
  return program;
}

/** Whether `name` is a command of `program` already (by name or alias). */
function isDeclared(program: Command, name: string | undefined): boolean {
  return name !== undefined && program.commands.some((c) => c.name() === name || c.aliases().includes(name));
}

/**
 * Every command, however deep, reports through the program's streams, never exits the process, and
 * takes `--no-color` (the option value `color`, false with the flag).
 * A command that reads a manifest follows commander's `too many arguments` with the command line that
 * gives those arguments with -f (usage-hints.ts).
 */
function configureAll(root: Command, group: Command): void {
  for (const c of group.commands) {
    // Every command that runs takes --no-color, those a service module adds (`job …`, `rekey …`)
    // included: a CI script passes it to all of them, and was refused `unknown option` by most.
    if (c.commands.length === 0 && !c.options.some((o) => o.long === '--no-color'))
      c.addOption(noColorOption());
    const output = root.configureOutput();
    c.exitOverride().configureOutput({
      ...output,
      outputError: (text, write) => {
        const hint = text.startsWith('error: too many arguments')
          ? excessArgumentsHint(c)
          : text.startsWith("error: required option '-o, --out")
            ? missingOutHint(c)
            : undefined;
        const said = withoutOptionValue(text);
        output.outputError!(hint === undefined ? said : `${said}${hint}\n`, write);
      },
    });
    configureAll(root, c);
  }
}

/**
 * Commander's `unknown option '--allow-addres=https://user:s3cret@host'` quotes the value given with
 * `=`, which may be a secret (a typo of an option that takes one): said as `'--allow-addres=…'`.
 * Everything after the first `=` goes, whatever it holds (quotes, line breaks), but commander's
 * `(Did you mean --target?)` line, which names only its own options.
 */
export function withoutOptionValue(text: string): string {
  const head = "error: unknown option '";
  if (!text.startsWith(head)) return text;
  // Converge's own `unknown option '-target' (did you mean --target=…?)` repeats no value already.
  if (/^[^'\n=]*' \(did you mean /.test(text.slice(head.length))) return text;
  const equals = text.indexOf('=', head.length);
  if (equals < 0) return text;
  const suggestion = /\n(\(Did you mean [^\n']*\?\))\n?$/.exec(text)?.[1];
  return `${text.slice(0, equals)}=…'\n${suggestion ? `${suggestion}\n` : ''}`;
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
export async function run(args: string[], io: Io, catalog?: CliCatalog): Promise<number> {
  let code: number = EXIT.ok;
  const program = await buildProgram(
    io,
    (c) => {
      code = c;
    },
    catalog,
    args[0],
  );
  const given = normaliseArgs(args);
  rememberArgs(program, given);
  try {
    refuseSingleDashLongOptions(program, given);
    await program.parseAsync(given, { from: 'user' });
    return code;
  } catch (error) {
    const code = reportError(error, io);
    for (const line of linesAfterError(error)) write(io.stderr, line);
    return code;
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
  write(io.stderr, `Error: ${errorText(error, io.env)}`);
  if (error instanceof CliError) return error.exitCode;
  if (io.env.CONVERGE_DEBUG && error instanceof Error && !(error instanceof EngineError))
    write(io.stderr, debugTrace(error, environmentSecrets(io.env)));
  return EXIT.error;
}
