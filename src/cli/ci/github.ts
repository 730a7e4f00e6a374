/**
 * What Converge tells GitHub Actions beside its ordinary output: problems as `::error` workflow
 * commands (annotations on the pull request's files) and the plan's Markdown appended to the step
 * summary. Only here does the CLI know about GitHub; the renderers stay CI-agnostic.
 *
 * A manifest comes from a pull request and a message may quote a service: both are untrusted. The
 * runner reads a workflow command from any line of the output that starts with `::`, so a message is
 * made one printable line and escaped as @actions/core's command.ts escapes (`escapeData`,
 * `escapeProperty`); nothing in it can end the command early or start another.
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { printable } from '../../common/printable.js';
import { addressOf, type PlanProblem } from '../../resources/contract.js';

/** GitHub shows only so many annotations per step; the first ten are what a reviewer reads. */
export const ANNOTATION_CAP = 10;

export interface Annotation {
  /** `validation` ranks before `plan`: a manifest that does not load explains everything after it. */
  stage: 'validation' | 'plan';
  title: string;
  message: string;
  file?: string;
  /** 1-based; 0 or absent when the problem has no line (a whole file). */
  line?: number;
  col?: number;
}

export function onGithubActions(env: NodeJS.ProcessEnv): boolean {
  return env.GITHUB_ACTIONS === 'true';
}

/** @actions/core `escapeData`: the message part of a command. */
export function escapeData(text: string): string {
  return text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

/** @actions/core `escapeProperty`: a `key=value` of a command, where `:` and `,` are separators. */
export function escapeProperty(text: string): string {
  return escapeData(text).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

/** A path as GitHub matches it to the pull request's files: relative to the workspace when inside it. */
export function workspacePath(file: string, env: NodeJS.ProcessEnv): string {
  const root = env.GITHUB_WORKSPACE;
  if (!root) return file;
  const relative = path.relative(path.resolve(root), path.resolve(file));
  const inside = relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative);
  return inside ? relative.split(path.sep).join('/') : file;
}

function command(name: string, properties: Record<string, string | number | undefined>, message: string) {
  const props = Object.entries(properties)
    .filter(([, v]) => v !== undefined && v !== '')
    .map(([k, v]) => `${k}=${escapeProperty(printable(String(v)))}`)
    .join(',');
  return `::${name}${props ? ` ${props}` : ''}::${escapeData(printable(message))}`;
}

/** Validation problems first, each stage by file, line and column; problems without a place last. */
function ranked(annotations: readonly Annotation[]): Annotation[] {
  const stage = (a: Annotation) => (a.stage === 'validation' ? 0 : 1);
  return [...annotations].sort(
    (a, b) =>
      stage(a) - stage(b) ||
      Number(a.file === undefined) - Number(b.file === undefined) ||
      (a.file ?? '').localeCompare(b.file ?? '') ||
      (a.line ?? 0) - (b.line ?? 0) ||
      (a.col ?? 0) - (b.col ?? 0),
  );
}

/** The `::error` lines for the first `ANNOTATION_CAP` problems, and a `::notice` counting the rest. */
export function annotationCommands(annotations: readonly Annotation[], env: NodeJS.ProcessEnv): string[] {
  const all = ranked(annotations);
  const lines = all.slice(0, ANNOTATION_CAP).map((a) =>
    command(
      'error',
      {
        file: a.file === undefined ? undefined : workspacePath(a.file, env),
        line: a.line && a.line > 0 ? a.line : undefined,
        col: a.line && a.line > 0 && a.col && a.col > 0 ? a.col : undefined,
        title: a.title,
      },
      a.message,
    ),
  );
  const left = all.length - lines.length;
  if (left > 0)
    lines.push(
      command(
        'notice',
        {},
        `${left} more problem${left === 1 ? ' is' : 's are'} not annotated; the log above lists them all`,
      ),
    );
  return lines;
}

/**
 * Appends to the file `$GITHUB_STEP_SUMMARY` names, never truncating what earlier steps wrote. The
 * runner creates that file; one that is missing, or a symlink (which could point a write anywhere),
 * is refused: opened without following links and without creating. Returns why it was not written.
 */
export async function appendStepSummary(
  env: NodeJS.ProcessEnv,
  markdown: string,
): Promise<{ written: true } | { written: false; reason: string }> {
  const target = env.GITHUB_STEP_SUMMARY;
  if (!target) return { written: false, reason: 'GITHUB_STEP_SUMMARY is not set' };
  let handle;
  try {
    handle = await open(target, constants.O_WRONLY | constants.O_APPEND | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'ELOOP' ? 'it is a symbolic link' : code === 'ENOENT' ? 'there is no such file' : `${code}`;
    return { written: false, reason: `not writing the step summary to ${target}: ${why}` };
  }
  try {
    if (!(await handle.stat()).isFile())
      return { written: false, reason: `not writing the step summary to ${target}: not a regular file` };
    await handle.write(markdown.endsWith('\n') ? `${markdown}\n` : `${markdown}\n\n`);
    return { written: true };
  } finally {
    await handle.close();
  }
}

/** Validation problems as annotations, under GitHub Actions only (on stderr: stdout may be JSON). */
export function annotateManifestProblems(
  io: { stderr: NodeJS.WritableStream; env: NodeJS.ProcessEnv },
  problems: readonly { position: { file: string; line: number; col: number }; message: string }[],
): void {
  if (!onGithubActions(io.env)) return;
  const annotations = problems.map((p): Annotation => ({
    stage: 'validation',
    title: 'Converge: invalid manifest',
    message: p.message,
    file: p.position.file,
    line: p.position.line,
    col: p.position.col,
  }));
  for (const line of annotationCommands(annotations, io.env)) io.stderr.write(`${line}\n`);
}

/** Plan problems as annotations, under GitHub Actions only. */
export function annotatePlanProblems(
  io: { stderr: NodeJS.WritableStream; env: NodeJS.ProcessEnv },
  problems: readonly PlanProblem[],
): void {
  if (!onGithubActions(io.env)) return;
  const annotations = problems.map((p): Annotation => ({
    stage: 'plan',
    title: `Converge plan: ${addressOf(p.key)}`,
    message: p.message,
    ...(p.position ? { file: p.position.file, line: p.position.line, col: p.position.col } : {}),
  }));
  for (const line of annotationCommands(annotations, io.env)) io.stderr.write(`${line}\n`);
}

/** The plan's Markdown in the step summary, under GitHub Actions when the runner names the file. */
export async function writePlanSummary(
  io: { stderr: NodeJS.WritableStream; env: NodeJS.ProcessEnv },
  markdown: () => string,
): Promise<void> {
  if (!onGithubActions(io.env) || !io.env.GITHUB_STEP_SUMMARY) return;
  const result = await appendStepSummary(io.env, markdown());
  if (!result.written) io.stderr.write(`Warning: ${printable(result.reason)}\n`);
}
