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
  /**
   * Maps whose entries the user names (a job's `Env` and `Meta`), as dotted paths (lists passed
   * through): an entry whose name says it is a secret by the rule for sensitive variables
   * (`CONVERGE_SENSITIVE_ENV`: `DB_PASSWORD`, `api_token`) is one, wherever its value came from. The
   * service marks none of them, so the plan masks them (the live value too: a pull request that
   * stops reading it from a variable must not publish it) and the export writes placeholders.
   */
  readonly secretsByName?: readonly string[];
}

export function hasSensitiveAttributes<K extends object>(
  kind: K | undefined,
): kind is K & SensitiveAttributes {
  return Array.isArray((kind as Partial<SensitiveAttributes> | undefined)?.sensitive);
}

/** The kind's maps whose entries are secrets by name, none for a kind without them. */
export function secretMapsOf(kind: object | undefined): readonly string[] {
  return hasSensitiveAttributes(kind) ? (kind.secretsByName ?? []) : [];
}

/** The kind's sensitive paths, none for a kind without the group. */
export function sensitivePathsOf(kind: object | undefined): readonly string[] {
  return hasSensitiveAttributes(kind) ? kind.sensitive : [];
}
