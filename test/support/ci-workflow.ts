/**
 * Reads the example CI files as a runner would, as far as a test can: each job's `converge …`
 * commands in order, with the CI's expressions and variables substituted, ready for `runCli`. What
 * only a runner does (checkout, artifacts, comments) is left out; the commands and their order are
 * what the examples promise.
 */
import path from 'node:path';
import { parse } from 'yaml';

export interface CiCommand {
  /** Arguments after `converge`, paths made absolute against the repository. */
  args: string[];
  /** The environment the runner would give the command (the CI's own variables and secrets). */
  env: Record<string, string>;
  /** Where the command came from, for failure messages. */
  origin: string;
}

type Obj = Record<string, unknown>;

/** `$VAR` and `${VAR}` from `vars`; an unknown variable is an empty string, as in a shell. */
export function expandShell(text: string, vars: Readonly<Record<string, string>>): string {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (_m, a, b) => {
    return vars[(a ?? b) as string] ?? '';
  });
}

/** Shell words up to the first operator (`>`, `|`, `||`, `&&`, `;`); quotes removed. */
function words(line: string): string[] {
  const out: string[] = [];
  const re = /"([^"]*)"|'([^']*)'|(\|\||&&|[|;>])|([^\s"'|;&>]+)/g;
  for (const m of line.matchAll(re)) {
    if (m[3] !== undefined) break;
    out.push(m[1] ?? m[2] ?? m[4] ?? '');
  }
  return out;
}

const SUBCOMMANDS = new Set(['validate', 'plan', 'apply']);
/** Flags whose value is a path; any other flag's value (`--max-deletes 10`) is kept as written. */
const PATH_FLAGS = new Set(['-f', '--file', '-out', '--out', '-o', '--output']);

/**
 * Arguments with every path made absolute: a flag's value when the flag takes a path, and a word
 * after the subcommand or another path (`apply plan.bin`).
 */
function absolute(args: string[], repo: string): string[] {
  return args.map((a, i) => {
    if (a.startsWith('-') || (i === 0 && SUBCOMMANDS.has(a))) return a;
    const before = args[i - 1] ?? '';
    return before.startsWith('-') && !PATH_FLAGS.has(before) ? a : path.resolve(repo, a);
  });
}

/** The `converge …` lines of a script, each as arguments. */
export function convergeLines(script: string, vars: Readonly<Record<string, string>>): string[][] {
  return script
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => /^converge\s/.test(l))
    .map((l) => words(expandShell(l, vars)).slice(1));
}

export interface GithubContext {
  repo: string;
  matrix: Record<string, string>;
  secrets: Record<string, string>;
  vars: Record<string, string>;
  /** A fresh folder per job, as each job runs on a fresh runner. */
  runnerTemp: string;
}

/** `${{ matrix.folder }}`, `${{ secrets.X }}`, … ; an expression the test does not know fails it. */
function githubExpressions(text: string, ctx: GithubContext): string {
  return text.replace(/\$\{\{\s*([^}]+?)\s*\}\}/g, (_m, expr: string) => {
    const [scope, name] = expr.split('.', 2) as [string, string];
    if (scope === 'matrix' && name in ctx.matrix) return ctx.matrix[name]!;
    if (scope === 'secrets') return ctx.secrets[name] ?? '';
    if (scope === 'vars') return ctx.vars[name] ?? '';
    if (expr === 'runner.temp') return ctx.runnerTemp;
    if (expr === 'github.token') return 'github-token-unused';
    if (expr === 'github.workspace') return ctx.repo;
    throw new Error(`the test does not know the expression \${{ ${expr} }}`);
  });
}

function envOf(block: unknown, ctx: GithubContext): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries((block ?? {}) as Obj)) out[k] = githubExpressions(String(v), ctx);
  return out;
}

/**
 * The commands this repository's action (`uses: ./`) runs for its inputs, as its action.yml's run
 * step writes them (a test checks that action.yml holds these very commands).
 */
export function actionCommands(inputs: Record<string, string>): string[][] {
  const command = inputs.command ?? 'plan';
  const file = inputs['plan-file'] ?? '';
  const extra = (inputs.args ?? '').split(/\s+/).filter((w) => w !== '');
  switch (command) {
    case 'validate':
      return [['validate', '-f', inputs.path!]];
    case 'plan':
      return [
        [
          'plan',
          '-f',
          inputs.path!,
          '--detailed-exitcode',
          '--markdown',
          ...(file ? ['-out', file] : []),
          ...extra,
        ],
      ];
    case 'apply':
      return [file ? ['apply', file] : ['apply', '-f', inputs.path!, '--auto-approve', ...extra]];
    default:
      return [];
  }
}

export function githubJobNames(workflowText: string): string[] {
  return Object.keys((parse(workflowText) as { jobs: Obj }).jobs);
}

/** The matrix values of a job's first matrix dimension (`folder`), or one run without a matrix. */
export function githubMatrix(workflowText: string, job: string): Record<string, string>[] {
  const j = (parse(workflowText) as { jobs: Record<string, Obj> }).jobs[job]!;
  const matrix = ((j.strategy as Obj | undefined)?.matrix ?? {}) as Record<string, unknown[]>;
  const [name, values] = Object.entries(matrix)[0] ?? [];
  return name ? values!.map((v) => ({ [name]: String(v) })) : [{}];
}

/** One job of a GitHub Actions workflow, for one matrix combination, as commands in order. */
export function githubJobCommands(workflowText: string, job: string, ctx: GithubContext): CiCommand[] {
  const wf = parse(workflowText) as { env?: Obj; jobs: Record<string, Obj> };
  const j = wf.jobs[job];
  if (!j) throw new Error(`no job ${job}`);
  const jobEnv = { ...envOf(wf.env, ctx), ...envOf(j.env, ctx) };
  const out: CiCommand[] = [];
  for (const [i, step] of ((j.steps ?? []) as Obj[]).entries()) {
    const env = { ...jobEnv, ...envOf(step.env, ctx) };
    const origin = `${job} step ${i + 1}`;
    if (step.uses === './') {
      const inputs = envOf(step.with, ctx);
      for (const args of actionCommands(inputs)) out.push({ args: absolute(args, ctx.repo), env, origin });
    } else if (typeof step.run === 'string') {
      const script = githubExpressions(step.run, ctx);
      for (const args of convergeLines(script, env))
        out.push({ args: absolute(args, ctx.repo), env, origin });
    }
  }
  return out;
}

/** One job of a GitLab CI file as commands in order, with the file's and the project's variables. */
export function gitlabJobCommands(
  ciText: string,
  job: string,
  ctx: { repo: string; variables: Record<string, string> },
): CiCommand[] {
  const ci = parse(ciText) as Record<string, Obj> & { variables?: Obj };
  const j = ci[job];
  if (!j) throw new Error(`no job ${job}`);
  const env: Record<string, string> = { ...ctx.variables, CI_PROJECT_DIR: ctx.repo };
  for (const [k, v] of Object.entries({ ...(ci.variables ?? {}), ...((j.variables ?? {}) as Obj) }))
    env[k] = expandShell(String(v), env);
  const script = ((j.script ?? []) as string[]).join('\n');
  return convergeLines(script, env).map((args) => ({ args: absolute(args, ctx.repo), env, origin: job }));
}
