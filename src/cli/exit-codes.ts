/** Exit codes, as terraform's `-detailed-exitcode`, plus one for a saved plan that went stale. */
export const EXIT = {
  /** Success; with --detailed-exitcode: success and no changes. */
  ok: 0,
  /** An error: bad input, a failed request, a failed change, a refused apply. */
  error: 1,
  /** With --detailed-exitcode: success, and the plan has changes. */
  changes: 2,
  /** A saved plan was refused for objects that changed since it was made. */
  stale: 3,
} as const;

/** An error the CLI reports as one message (no stack trace) and a given exit code. */
export class CliError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode: number = EXIT.error) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}
