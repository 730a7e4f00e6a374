/**
 * `converge plan | head -2`: once the reader goes away, every write fails with EPIPE. Unhandled, that
 * error event crashes the process with a stack trace. Like git and terraform, the CLI stops writing
 * quietly instead and ends with the command's own exit code (0 for help).
 */
import type { Writable } from 'node:stream';

export function quietOnBrokenPipe(stream: Writable): void {
  let broken = false;
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') broken = true;
    // After EPIPE the stream is destroyed; later writes only report that again.
    if (broken) return;
    throw error;
  });
}
