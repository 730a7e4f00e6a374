/**
 * A terminal prompt (@clack/prompts) that always settles. On its own a prompt settles only on a key
 * press, so it would wait forever when input ends (Ctrl-D, EOF: Node then exits 13 without a word, a
 * lock still held) or when Ctrl-C arrives as a signal rather than as a key. Both are raced against
 * the prompt here, so the caller always learns what happened and releases what it holds.
 */
import type { Readable } from 'node:stream';
import { isCancel } from '@clack/prompts';
import { onInterrupt, SIGNAL_EXIT_CODES } from './interrupt.js';
import type { Io } from './io.js';

export type PromptOutcome<T> =
  | { outcome: 'answered'; value: T }
  /** Input ended (Ctrl-D) or the prompt was cancelled (Esc). */
  | { outcome: 'ended' }
  /** Ctrl-C (key or signal) or SIGTERM: `exitCode` is 130 or 143. */
  | { outcome: 'interrupted'; exitCode: number };

export interface PromptStreams {
  input: Readable;
  output: Io['stdout'];
  signal: AbortSignal;
}

/** Columns assumed when the terminal reports no width (0 or none): clack would wrap at 1 column. */
const FALLBACK_COLUMNS = 80;

export async function guardedPrompt<T>(
  io: Io,
  ask: (streams: PromptStreams) => Promise<T | symbol>,
  options: {
    /** The caller's own interrupt (apply's); without one, signals are watched while the prompt is open. */
    interrupt?: { signal: AbortSignal; readonly exitCode: number | undefined };
    /** False for `--no-color`: the prompt library colours by the environment alone (`NO_COLOR`). */
    color?: boolean;
  } = {},
): Promise<PromptOutcome<T>> {
  const own = options.interrupt ? undefined : onInterrupt(io);
  const interrupt = options.interrupt ?? own!;
  const input: Readable = io.stdin ?? process.stdin;
  const output = io.stdout as typeof io.stdout & { columns?: number };
  if (!output.columns) output.columns = FALLBACK_COLUMNS;
  const inputEnded = new AbortController();
  const endInput = () => inputEnded.abort(new Error('input ended'));
  // In raw mode Ctrl-C is a key, not a signal: it means the same as the signal would.
  let ctrlC = false;
  const onKey = (_text: string | undefined, key: { ctrl?: boolean; name?: string } | undefined) => {
    if (key?.ctrl && key.name === 'c') ctrlC = true;
    // Ctrl-D is end of input on a terminal; in raw mode it arrives as a key.
    if (key?.ctrl && key.name === 'd') endInput();
  };
  if (input.readableEnded) endInput();
  input.once('end', endInput);
  input.once('close', endInput);
  input.on('keypress', onKey);
  // The prompt reads NO_COLOR from the process's environment only: set for the prompt's duration.
  const plainForPrompt = options.color === false && process.env.NO_COLOR === undefined;
  if (plainForPrompt) process.env.NO_COLOR = '1';
  try {
    const value = await ask({
      input,
      output,
      signal: AbortSignal.any([interrupt.signal, inputEnded.signal]),
    });
    if (interrupt.signal.aborted || ctrlC)
      return { outcome: 'interrupted', exitCode: interrupt.exitCode ?? SIGNAL_EXIT_CODES.SIGINT ?? 130 };
    // An answer given is an answer, even when input ended right behind it (`hunter2\r` then EOF in
    // one chunk): the end only tells a cancelled prompt's reason.
    if (isCancel(value)) return { outcome: 'ended' };
    return { outcome: 'answered', value: value as T };
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
