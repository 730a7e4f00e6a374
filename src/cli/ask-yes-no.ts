/**
 * Every yes/no question the CLI asks before changing something (apply, inventory forget/unlock,
 * workspace delete, job stop), through guardedPrompt, so that input ending and Ctrl-C (a key or a
 * signal) always give an answer and the caller releases what it holds.
 */
import { confirm } from '@clack/prompts';
import { CliError } from './exit-codes.js';
import { guardedPrompt } from './guarded-prompt.js';
import type { Io } from './io.js';

export type YesNo =
  | { answer: 'yes' | 'no' }
  /** Ctrl-C (key or signal) or SIGTERM: `exitCode` is 130 or 143. */
  | { answer: 'interrupted'; exitCode: number };

export interface Question {
  message: string;
  /**
   * The refusal when there is no terminal to ask on: it names the flag that answers yes
   * (`--yes`, `--auto-approve`), so CI knows how to state its intent.
   */
  noTerminal: string;
  /**
   * The caller's own interrupt (apply's, which also stops its planning); without one, signals are
   * watched only while the question is open.
   */
  interrupt?: { signal: AbortSignal; readonly exitCode: number | undefined };
  /** False for `--no-color`: the prompt library colours by the environment alone (`NO_COLOR`). */
  color?: boolean;
}

/** Asks on a terminal; without one, throws a CliError with `noTerminal`. The default is no. */
export async function askYesNo(io: Io, question: Question): Promise<YesNo> {
  if (!io.stdinIsTTY || !io.stdout.isTTY) throw new CliError(question.noTerminal);
  const asked = await guardedPrompt(
    io,
    ({ input, output, signal }) =>
      confirm({ message: question.message, initialValue: false, input, output, signal }),
    {
      ...(question.interrupt ? { interrupt: question.interrupt } : {}),
      ...(question.color !== undefined ? { color: question.color } : {}),
    },
  );
  if (asked.outcome === 'interrupted') return { answer: 'interrupted', exitCode: asked.exitCode };
  // Input that ended (Ctrl-D) means no.
  return { answer: asked.outcome === 'answered' && asked.value === true ? 'yes' : 'no' };
}
