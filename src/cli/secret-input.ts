/**
 * Reading a secret a person types (a password, a key share): never from the command line, where it
 * would sit in shell history and the process list. On a terminal a masked prompt asks for it;
 * otherwise it is all of stdin, less one final newline, so `printf %s "$X" | converge …` and a file
 * redirected in both work.
 */
import { password } from '@clack/prompts';
import { guardedPrompt } from './guarded-prompt.js';
import { CliError } from './exit-codes.js';
import type { Io } from './io.js';

export async function readSecret(io: Io, prompt: string, what: string): Promise<string> {
  if (io.stdinIsTTY && io.stdout.isTTY) {
    // Guarded: Ctrl-D at the prompt left it waiting, and Node exited 13 without a word.
    const asked = await guardedPrompt<string>(io, ({ input, output, signal }) =>
      password({ message: prompt, mask: '*', input, output, signal }),
    );
    if (asked.outcome === 'interrupted')
      throw new CliError(`interrupted: no ${what} was sent`, asked.exitCode);
    if (asked.outcome === 'ended') throw new CliError(`cancelled: no ${what} was given, so none was sent`);
    return asked.value;
  }
  if (!io.stdin) throw new CliError(`no ${what}: run on a terminal to be asked, or pipe it on stdin`);
  const chunks: Buffer[] = [];
  for await (const chunk of io.stdin as AsyncIterable<Buffer | string>) {
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  }
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}
