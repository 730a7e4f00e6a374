/**
 * Runs the CLI as a user would, with no terminal and the sandbox's environment: in this process
 * through its `run(argv, io)` (test/support/run-cli.ts), which is what the binary calls, unless the
 * test needs a working folder of its own; then the built CLI in a child process (npm run build
 * first). A test of the process boundary itself (signals, exit on a second Ctrl-C) spawns `CLI`.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli } from '../support/run-cli.js';
import { tempDir } from '../support/temp-dirs.js';

export const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function converge(
  args: string[],
  env: Record<string, string | undefined>,
  cwd?: string,
  input?: string,
): Promise<CliResult> {
  // Spawning costs a Node start and the CLI's module loading per call; in-process costs neither.
  if (cwd === undefined) {
    return runCli(args, { PATH: process.env.PATH, ...env }, input === undefined ? {} : { stdin: input });
  }
  return convergeProcess(args, env, cwd, input);
}

/** The built CLI in a child process: for a working folder of its own. */
export function convergeProcess(
  args: string[],
  env: Record<string, string | undefined>,
  cwd?: string,
  input?: string,
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { PATH: process.env.PATH, ...env },
      cwd: cwd ?? process.cwd(),
      // No input: stdin is closed, as in CI. Input: piped, as `printf %s "$PW" | converge …`.
      stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => {
      stdout += d;
    });
    child.stderr!.on('data', (d) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin?.end(input);
  });
}

/** A temporary folder holding the given files. */
export function manifestDir(files: Record<string, string>): string {
  const dir = tempDir('converge-cli-');
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  return dir;
}

export function role(name: string, spec: string, namespace = 'default'): string {
  return `apiVersion: converge/v1
kind: AclRole
metadata:
  name: ${name}
  namespace: ${namespace}
spec:
${spec
  .split('\n')
  .map((l) => `  ${l}`)
  .join('\n')}
`;
}
