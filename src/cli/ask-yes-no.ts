/**
 * Every yes/no question the CLI asks before changing something (apply, inventory forget/unlock,
 * workspace delete, job stop). @clack/prompts' confirm only settles on a key press, so on its own it
 * would wait forever when input ends (EOF: Node then exits 13, a lock still held) or when Ctrl-C
 * arrives as a signal rather than as a key. Both are raced against the prompt here, so the caller
 * always gets an answer and releases what it holds.
 */
import type { Readable } from 'node:stream';
import { confirm, isCancel } from '@clack/prompts';
import { CliError } from './exit-codes.js';
import { onInterrupt, SIGNAL_EXIT_CODES } from './interrupt.js';
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

/** Columns assumed when the terminal reports no width (0 or none): clack would wrap at 1 column. */
const FALLBACK_COLUMNS = 80;

/** Asks on a terminal; without one, throws a CliError with `noTerminal`. The default is no. */
export async function askYesNo(io: Io, question: Question): Promise<YesNo> {
  if (!io.stdinIsTTY || !io.stdout.isTTY) throw new CliError(question.noTerminal);
  const own = question.interrupt ? undefined : onInterrupt(io);
  const interrupt = question.interrupt ?? own!;
  const input: Readable = io.stdin ?? process.stdin;
  const output = io.stdout as typeof io.stdout & { columns?: number };
  if (!output.columns) output.columns = FALLBACK_COLUMNS;
  const inputEnded = new AbortController();
  const endInput = () => inputEnded.abort(new Error('input ended'));
  // In raw mode Ctrl-C is a key, not a signal: it means the same as the signal would.
  let ctrlC = false;
  const onKey = (_text: string | undefined, key: { ctrl?: boolean; name?: string } | undefined) => {
    if (key?.ctrl && key.name === 'c') ctrlC = true;
    // Ctrl-D is end of input on a terminal; in raw mode it arrives as a key, and means no.
    if (key?.ctrl && key.name === 'd') endInput();
  };
  if (input.readableEnded) endInput();
  input.once('end', endInput);
  input.once('close', endInput);
  input.on('keypress', onKey);
  // The prompt reads NO_COLOR from the process's environment only: set for the question's duration.
  const plainForPrompt = question.color === false && process.env.NO_COLOR === undefined;
  if (plainForPrompt) process.env.NO_COLOR = '1';
  try {
    const answer = await confirm({
      message: question.message,
      initialValue: false,
      input,
      output,
      signal: AbortSignal.any([interrupt.signal, inputEnded.signal]),
    });
    if (interrupt.signal.aborted || ctrlC)
      return { answer: 'interrupted', exitCode: interrupt.exitCode ?? SIGNAL_EXIT_CODES.SIGINT ?? 130 };
    return { answer: !isCancel(answer) && answer === true ? 'yes' : 'no' };
  } finally {
    if (plainForPrompt) delete process.env.NO_COLOR;
    input.off('end', endInput);
    input.off('close', endInput);
    input.off('keypress', onKey);
    own?.dispose();
    // Nothing else reads stdin: let the process exit once the run is over.
    input.pause();
  }
}
