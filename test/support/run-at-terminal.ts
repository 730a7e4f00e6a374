/**
 * Runs the CLI in this process with a terminal on both ends, to answer its yes/no questions:
 * `answer` gets the keyboard once `question` is on screen (write 'y\r', 'n\r', '\x03' for Ctrl-C,
 * or end it for EOF). Like runCli, paths should be absolute and CONVERGE_STATE_DIR the test's own.
 */
import { PassThrough, Writable } from 'node:stream';
import type { Io } from '../../src/cli/io.js';
import { run } from '../../src/cli/program.js';
import type { InProcessResult } from './run-cli.js';

export async function runAtTerminal(
  args: string[],
  env: Record<string, string | undefined>,
  question: string,
  answer: (keyboard: PassThrough) => void,
): Promise<InProcessResult & { asked: boolean }> {
  const keyboard = new PassThrough();
  let stdout = '';
  let stderr = '';
  let asked = false;
  const screen = Object.assign(
    new Writable({
      write(chunk: Buffer | string, _encoding, callback) {
        stdout += String(chunk);
        if (!asked && stdout.includes(question)) {
          asked = true;
          setTimeout(() => answer(keyboard), 20);
        }
        callback();
      },
    }),
    { isTTY: true, columns: 120 },
  );
  const errors = Object.assign(
    new Writable({
      write(chunk: Buffer | string, _encoding, callback) {
        stderr += String(chunk);
        callback();
      },
    }),
    { isTTY: false },
  );
  const io: Io = { stdout: screen, stderr: errors, stdinIsTTY: true, stdin: keyboard, env: { ...env } };
  const code = await run(args, io);
  return { code, stdout, stderr, asked };
}
