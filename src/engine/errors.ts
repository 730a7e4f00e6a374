/**
 * The engine's own failure: a message meant for a person (a plan file that does not verify, a lock
 * held by another run, a malformed setting), with no stack trace worth showing. Front ends decide
 * what it means for them; the CLI prints the message and exits 1.
 */
export class EngineError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EngineError';
  }
}
