/**
 * Implemented by a kind whose spec holds secrets the service also returns or checks (a registry
 * token a job carries). The planner masks them at any depth in every rendering, saved plans never
 * hold them, and the applier scrubs their values from error messages.
 */
export interface SensitiveAttributes {
  /**
   * Dotted paths (`bindpass`, `tls.key`; lists are passed through, so `users.password` is every
   * user's password; `*` is any key, as in `env.*`).
   */
  readonly sensitive: readonly string[];
}

export function hasSensitiveAttributes<K extends object>(
  kind: K | undefined,
): kind is K & SensitiveAttributes {
  return Array.isArray((kind as Partial<SensitiveAttributes> | undefined)?.sensitive);
}

/** The kind's sensitive paths, none for a kind without the group. */
export function sensitivePathsOf(kind: object | undefined): readonly string[] {
  return hasSensitiveAttributes(kind) ? kind.sensitive : [];
}
