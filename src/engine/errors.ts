/**
 * The engine's own failure: a message meant for a person (a plan file that does not verify, a lock
 * held by another run, a malformed setting), with no stack trace worth showing. Front ends decide
 * what it means for them; the CLI prints the message and exits 1.
 */
export class EngineError extends Error {
  /**
   * What the person can do about it, when a front end has its own way to do it (the CLI names its
   * command): the engine's message stays free of any front end's commands.
   */
  readonly remedy: EngineRemedy | undefined;
  constructor(message: string, remedy?: EngineRemedy) {
    super(message);
    this.name = 'EngineError';
    this.remedy = remedy;
  }
}

/**
 * The changes of an apply landed but its inventory could not be written: `result` says what landed,
 * so that a front end still reports it, and which objects are now unrecorded.
 */
export class InventoryNotSavedError<Result = unknown> extends EngineError {
  constructor(
    readonly result: Result,
    override readonly cause: unknown,
  ) {
    super(`the inventory was not saved: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'InventoryNotSavedError';
  }
}

/**
 * `release-inventory-lock`: a lock whose holder may be gone can be released by hand.
 * `declare-from-export`: an object to adopt must be declared first; an export writes live objects as
 * manifest documents.
 * `make-saved-plan-again`: a saved plan no longer matches its manifest; plan it again as it was made
 * (its manifest, prune, targets and excludes) and save it to `file`.
 */
export type EngineRemedy = 'release-inventory-lock' | 'declare-from-export' | SavedPlanRemedy;

export interface SavedPlanRemedy {
  readonly remedy: 'make-saved-plan-again';
  readonly manifest: readonly string[];
  readonly prune: boolean;
  readonly targets: readonly string[];
  readonly excludes: readonly string[];
  readonly file: string;
  /**
   * The `--allow-env` and `--allow-address` values of the run that refused the plan: it loaded the
   * manifest with them, so the plan command needs them too (the file does not record them).
   */
  readonly allowEnv?: readonly string[];
  readonly allowAddresses?: readonly string[];
  /** The run's `--max-deletes`: the plan made again keeps the guard the apply was given. */
  readonly maxDeletes?: number;
  /** Kind switches the saved plan was made with (`force-unlock`), given again to `plan`. */
  readonly options?: readonly string[];
  /**
   * False when the file's MAC did not verify: then manifest, prune, targets and excludes are empty,
   * since what an unverified file says (its paths, `--prune`) must not come back as advice.
   */
  readonly verified: boolean;
}

/** A service the run needs has no connection configured: its address variable is not set at all. */
export class ServiceNotConfiguredError extends EngineError {
  constructor(message: string) {
    super(message);
    this.name = 'ServiceNotConfiguredError';
  }
}
