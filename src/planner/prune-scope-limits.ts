/**
 * Said wherever a hint suggests a PruneScope (the plan's leftover lists, the emptied-kind guard):
 * declaring one of a kind drops the scopes Converge implies for it, so a user who declared the one
 * scope a refusal named silently stopped pruning the kind everywhere else (roles the manifest dropped
 * in `default` were neither deleted nor listed). Neither rendering nor engine: both say it.
 */
export const PRUNE_SCOPE_LIMITS =
  "a PruneScope limits the kind's prune to the scopes declared: declare one for every scope to prune";
