/**
 * Reading a secret a person types (a password, a key share): never from the command line, where it
 * would sit in shell history and the process list. On a terminal a masked prompt asks for it;
 * otherwise it is all of stdin, less one final newline, so `printf %s "$X" | converge …` and a file
 * redirected in both work.
 */
import { isCancel, password } from '@clack/prompts';
import { CliError } from './exit-codes.js';
import type { Io } from './io.js';

export async function readSecret(io: Io, prompt: string, what: string): Promise<string> {
  if (io.stdinIsTTY && io.stdout.isTTY) {
    const answer = await password({ message: prompt, mask: '*' });
    if (isCancel(answer)) throw new CliError('cancelled');
    return answer;
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
