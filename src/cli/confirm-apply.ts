/**
 * The "Apply these changes?" question. @clack/prompts' confirm only settles on a key press, so on its
 * own it would wait forever when input ends (EOF: Node then exits 13 with the lock still held) or when
 * Ctrl-C arrives as a signal rather than as a key. Both are raced against the prompt here, so the
 * caller always gets an answer and releases its locks.
 */
import type { Readable } from 'node:stream';
import { confirm, isCancel } from '@clack/prompts';
import type { Io } from './io.js';

export type ApplyAnswer = 'yes' | 'no' | 'interrupted';

/** Columns assumed when the terminal reports no width (0 or none): clack would wrap at 1 column. */
const FALLBACK_COLUMNS = 80;

export async function askToApply(io: Io, interrupted: AbortSignal): Promise<ApplyAnswer> {
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
  try {
    const answer = await confirm({
      message: 'Apply these changes?',
      initialValue: false,
      input,
      output,
      signal: AbortSignal.any([interrupted, inputEnded.signal]),
    });
    if (interrupted.aborted || ctrlC) return 'interrupted';
    return !isCancel(answer) && answer === true ? 'yes' : 'no';
  } finally {
    input.off('end', endInput);
    input.off('close', endInput);
    input.off('keypress', onKey);
    // Nothing else reads stdin: let the process exit once the run is over.
    input.pause();
  }
}
