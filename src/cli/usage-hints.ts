/**
 * What to type instead, for the command lines users bring from other tools:
 *
 * - a manifest given as an argument (`converge plan examples/demo`, as `terraform plan DIR` or
 *   `kubectl apply DIR` take it) instead of with `-f`: the command as it works is suggested;
 * - a long option spelt with one dash, as Terraform spells them (`-auto-approve`, `-target=ADDR`):
 *   refused with its `--` spelling. Without this, one that begins with a short option's letter was
 *   not even refused: `-force-unlock` read as `-f orce-unlock`, `-verbose` as `-v` (the version).
 *   `-out` alone is accepted, on purpose (program.ts `normaliseArgs`).
 *
 * Only commander's public interface is used: a command's options and arguments, `error()`.
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import type { Command, Option } from 'commander';
import { printable } from '../common/printable.js';
import { quoteArg } from './remedies.js';

/** The command line as typed (normalised), per program, for hints that repeat it. */
const typed = new WeakMap<Command, readonly string[]>();

export function rememberArgs(program: Command, args: readonly string[]): void {
  typed.set(program, args);
}

function rootOf(command: Command): Command {
  let c = command;
  while (c.parent) c = c.parent;
  return c;
}

/** The command with its ancestors, whose options it takes too. */
function lineage(command: Command): Command[] {
  const list: Command[] = [];
  for (let c: Command | null = command; c; c = c.parent) list.push(c);
  return list;
}

/** Whether commander reads `next` as the option's value: always for `<value>`, unless an option for `[value]`. */
function takesNext(option: Option, next: string | undefined): boolean {
  if (next === undefined) return false;
  return option.required || (option.optional && !(next.length > 1 && next.startsWith('-')));
}

/** A command's `-f, --file` option: the commands that read a manifest. */
export function readsManifest(command: Command): boolean {
  return command.options.some((o) => o.long === '--file');
}

/** The command `args` run: the deepest subcommand their leading words name. */
export function commandOf(program: Command, args: readonly string[]): Command {
  let command = program;
  for (const arg of args) {
    if (arg === '--') break;
    // The program's own options (-v, -h) take no value: they may come before the command's name.
    if (arg.startsWith('-')) continue;
    const sub = command.commands.find((c) => c.name() === arg || c.aliases().includes(arg));
    if (!sub) break;
    command = sub;
  }
  return command;
}

type Token =
  | { kind: 'operand'; index: number }
  | { kind: 'single-dash-long'; index: number; meant: string }
  | { kind: 'single-dash-unknown'; index: number }
  | { kind: 'other'; index: number };

/**
 * `args` read as `command` reads them: which are operands (the command's own names among them), and
 * which spell one of its long options with a single dash. An option's value is neither.
 */
function tokens(command: Command, args: readonly string[]): Token[] {
  const options = lineage(command).flatMap((c) => c.options);
  const long = new Map(options.filter((o) => o.long).map((o) => [o.long!, o]));
  const short = new Map(options.filter((o) => o.short).map((o) => [o.short!, o]));
  const out: Token[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') {
      for (let j = i + 1; j < args.length; j++) out.push({ kind: 'operand', index: j });
      break;
    }
    if (arg.startsWith('--')) {
      const option = long.get(arg.split('=')[0]!);
      if (option && !arg.includes('=') && takesNext(option, args[i + 1])) i++;
      out.push({ kind: 'other', index: i });
      continue;
    }
    if (!arg.startsWith('-') || arg === '-') {
      out.push({ kind: 'operand', index: i });
      continue;
    }
    const spelt = /^-([a-zA-Z][a-zA-Z0-9-]+)(=[^]*)?$/.exec(arg);
    const meant = spelt ? long.get(`--${spelt[1]}`) : undefined;
    // `-version` does what `-v` does (prints the version): left to it.
    if (spelt && meant && meant.long !== '--version') {
      // The value given with it is not repeated: it may be a secret (`-token=…`) in a CI log.
      out.push({ kind: 'single-dash-long', index: i, meant: `${meant.long}${spelt[2] ? '=…' : ''}` });
      continue;
    }
    // A short option, alone (`-f PATH`) or with its value attached (`-fPATH`).
    const option = short.get(arg.slice(0, 2));
    // A word after a short option that takes no value (`-var`, `-verbose`: Terraform's) is no option
    // of Converge's: commander read `-v` in it and printed the version, exit 0, in place of a plan.
    if (spelt && !meant && option && !option.required && !option.optional && arg.length > 2) {
      out.push({ kind: 'single-dash-unknown', index: i });
      continue;
    }
    if (option && arg.length === 2 && takesNext(option, args[i + 1])) i++;
    out.push({ kind: 'other', index: i });
  }
  return out;
}

/**
 * Refuses a long option given with one dash (`-auto-approve`, `-target=web`), naming its spelling,
 * through commander (its message and exit) before commander reads it as something else.
 */
export function refuseSingleDashLongOptions(program: Command, args: readonly string[]): void {
  const command = commandOf(program, args);
  const found = tokens(command, args).find(
    (t) => t.kind === 'single-dash-long' || t.kind === 'single-dash-unknown',
  );
  if (found?.kind === 'single-dash-unknown') {
    const word = printable((args[found.index] ?? '').split('=')[0]!);
    command.error(`error: unknown option '${word}'`, { code: 'commander.unknownOption' });
  }
  if (found?.kind !== 'single-dash-long') return;
  const word = printable((args[found.index] ?? '').split('=')[0]!);
  command.error(`error: unknown option '${word}' (did you mean ${printable(found.meant)}?)`, {
    code: 'commander.unknownOption',
  });
}

/**
 * The command line as typed with each of `command`'s arguments that `asManifest` picks given with
 * `-f` instead: `converge plan -f examples/demo --prune`. Undefined when the line is not known or no
 * argument is picked.
 */
export function withFileFlags(
  command: Command,
  asManifest: (argument: string, position: number) => boolean,
  flag = '-f',
): string | undefined {
  const args = typed.get(rootOf(command));
  if (!args || (flag === '-f' && !readsManifest(command))) return undefined;
  const depth = lineage(command).length - 1;
  const positional = tokens(command, args)
    .filter((t) => t.kind === 'operand')
    .slice(depth)
    .map((t) => t.index);
  const picked = new Set(positional.filter((index, position) => asManifest(args[index]!, position)));
  if (picked.size === 0) return undefined;
  // After `--` a `-f` is an argument too: the line would fail as this one did.
  const separator = args.indexOf('--');
  if (separator >= 0 && [...picked].some((index) => index > separator)) return undefined;
  const words = args.flatMap((arg, index) => (picked.has(index) ? [flag, arg] : [arg]));
  return `converge ${words.map(quoteArg).join(' ')}`;
}

/**
 * After the program's `unknown option '-f'`, when a command named later on the line takes that option
 * (`converge -f m.yaml plan`, options before the command as some tools take them): where it goes. The
 * option's value is not repeated (it may be a secret: `--allow-address` with a token in it).
 */
export function optionBeforeCommandHint(program: Command, message: string): string | undefined {
  const word = /^error: unknown option '([^']+)'/.exec(message)?.[1];
  const args = typed.get(program);
  if (word === undefined || !args) return undefined;
  const at = args.findIndex((a) => program.commands.some((c) => c.name() === a || c.aliases().includes(a)));
  if (at <= 0) return undefined;
  const rest = args.slice(at);
  const command = commandOf(program, rest);
  const flag = word.split('=')[0]!;
  const option = lineage(command)
    .flatMap((c) => c.options)
    .find((o) => o.short === flag || o.long === flag);
  if (!option) return undefined;
  const name = rest.slice(0, lineage(command).length - 1).join(' ');
  const value = option.required || option.optional ? ' …' : '';
  return `Options of a command go after its name: converge ${printable(name)} ${printable(flag)}${value}`;
}

/** The line said after commander's `too many arguments` on a command that reads a manifest. */
export function excessArgumentsHint(command: Command): string | undefined {
  const declared = command.registeredArguments.length;
  const suggestion = withFileFlags(
    command,
    (argument, position) =>
      position >= declared || (command.name() === 'apply' && manifestAt(argument) !== undefined),
  );
  return suggestion === undefined ? undefined : manifestHint(suggestion);
}

/**
 * After commander's `required option '-o, --out <dir>' not specified`, when the folder was given as
 * an argument (`converge export exp1`): the command with it given with -o.
 */
export function missingOutHint(command: Command): string | undefined {
  const out = command.options.find((o) => o.long === '--out' && o.mandatory);
  if (!out?.short) return undefined;
  const suggestion = withFileFlags(command, (_argument, position) => position === 0, out.short);
  return suggestion === undefined
    ? undefined
    : `The folder is given with ${out.short}; did you mean: ${suggestion}`;
}

export function manifestHint(suggestion: string): string {
  return `Manifest files and folders are given with -f; did you mean: ${suggestion}`;
}

/**
 * Whether `apply PATH` names a manifest rather than a saved plan: a folder, or a file that is not
 * JSON (a plan file is) and is named .yaml/.yml or holds a manifest document's `apiVersion:` or
 * `kind:`. Anything else is left to the plan file's reader and its own messages.
 */
export function manifestAt(file: string): 'folder' | 'file' | undefined {
  try {
    if (statSync(file).isDirectory()) return 'folder';
    const head = fileHead(file, 65_536);
    if (head.trimStart().startsWith('{')) return undefined;
    return /\.ya?ml$/i.test(file) || /^(apiVersion|kind)\s*:/m.test(head) ? 'file' : undefined;
  } catch {
    return undefined;
  }
}

/** Why `apply PLANFILE` refuses a manifest given as its plan file, with the command meant. */
export function manifestGivenAsPlan(command: Command, planfile: string): string | undefined {
  const what = manifestAt(planfile);
  if (what === undefined) return undefined;
  const refusal = `${printable(planfile)} is a manifest ${what}, not a plan saved with \`converge plan -out FILE\``;
  const suggestion = withFileFlags(command, (argument, position) => position === 0 && argument === planfile);
  return suggestion ? `${refusal}. ${manifestHint(suggestion)}` : `${refusal}: give it with -f`;
}

/** Why `import ADDRESS…` without -f refuses, with the command meant when an address is a manifest. */
export function manifestGivenAsAddress(command: Command): string | undefined {
  const suggestion = withFileFlags(command, (argument) => manifestAt(argument) !== undefined);
  return suggestion && `no manifest given: pass -f FILE or -f FOLDER. ${manifestHint(suggestion)}`;
}

/** The first `bytes` of a file (a saved plan may be large; its first character says enough). */
function fileHead(file: string, bytes: number): string {
  const fd = openSync(file, 'r');
  try {
    const buffer = Buffer.alloc(bytes);
    return buffer.toString('utf8', 0, readSync(fd, buffer, 0, bytes, 0));
  } finally {
    closeSync(fd);
  }
}
