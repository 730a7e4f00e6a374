/**
 * Runs the CLI in this process through its `run(argv, io)`, as the process would but without
 * spawning one: the feedback loop stays fast. Use the spawned CLI (test/cli/helpers.ts) only where the
 * process boundary itself is under test (signals, TTY detection, exit on a second Ctrl-C).
 *
 * Paths in `args` should be absolute (the process's cwd is shared by every test of the file), and
 * `env` should set CONVERGE_STATE_DIR to a folder of the test's own for the same reason.
 */
import { Readable, Writable } from 'node:stream';
import type { Io } from '../../src/cli/io.js';
import { run } from '../../src/cli/program.js';

export interface InProcessResult {
  code: number;
  stdout: string;
  stderr: string;
}

function collector(onWrite?: (text: string) => void): {
  stream: Writable & { isTTY: boolean };
  text: () => string;
} {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      chunks.push(String(chunk));
      onWrite?.(chunks.join(''));
      callback();
    },
  });
  return { stream: Object.assign(stream, { isTTY: false }), text: () => chunks.join('') };
}

export async function runCli(
  args: string[],
  env: Record<string, string | undefined>,
  options: {
    stdin?: string;
    /**
     * Called with all of standard output so far after each write: a test acts at an exact point of
     * the command (emits a signal once the plan is printed), without a timer.
     */
    onStdout?: (text: string) => void;
  } = {},
): Promise<InProcessResult> {
  const out = collector(options.onStdout);
  const err = collector();
  const io: Io = {
    stdout: out.stream,
    stderr: err.stream,
    stdinIsTTY: false,
    env: { ...env },
    ...(options.stdin !== undefined ? { stdin: Readable.from([options.stdin]) } : {}),
  };
  const code = await run(args, io);
  return { code, stdout: out.text(), stderr: err.text() };
}
