/** Where the CLI writes, and whether it may use colour or a live progress line. */
import type { Readable, Writable } from 'node:stream';

export interface Io {
  stdout: Writable & { isTTY?: boolean };
  stderr: Writable & { isTTY?: boolean };
  stdinIsTTY: boolean;
  /** Piped input (a password for `ldap login`); absent: nothing to read. */
  stdin?: Readable;
  env: NodeJS.ProcessEnv;
}

export function processIo(): Io {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdinIsTTY: Boolean(process.stdin.isTTY),
    stdin: process.stdin,
    env: process.env,
  };
}

/** Colour only on a terminal, never with NO_COLOR (any value, per no-color.org) or --no-color. */
export function useColor(io: Io, flag: boolean | undefined): boolean {
  if (flag === false) return false;
  if (io.env.NO_COLOR !== undefined && io.env.NO_COLOR !== '') return false;
  if (io.env.FORCE_COLOR !== undefined && io.env.FORCE_COLOR !== '0') return true;
  return Boolean(io.stdout.isTTY);
}

export function write(stream: Writable, text: string): void {
  stream.write(text.endsWith('\n') ? text : `${text}\n`);
}
