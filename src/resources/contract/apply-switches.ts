/** A command-line switch a kind offers on `apply` (`--force-unlock`). */
export interface KindOption {
  /** Without dashes: `force-unlock`. */
  readonly flag: string;
  readonly description: string;
}

/**
 * Implemented by a kind that lets the user allow, for one run, what it refuses by default (releasing
 * a workspace lock someone else holds). The kind reads its switches with `ctx.option(flag)`.
 */
export interface ApplySwitches {
  readonly options: readonly KindOption[];
}

export function hasApplySwitches<K extends object>(kind: K | undefined): kind is K & ApplySwitches {
  return Array.isArray((kind as Partial<ApplySwitches> | undefined)?.options);
}
