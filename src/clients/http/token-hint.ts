/**
 * What to fix when a service refuses a request's credentials. The services' own texts name no setting
 * ("anonymous token lacks permission", a bare 401), so the HTTP layer adds which one to look at.
 *
 * - No token configured: any 401/403 is answered with "set <source>": nothing else can help.
 * - A token the service does not know (401, or a 403 whose text says the token itself was not found):
 *   "check the token in <source>".
 * - Any other 403 is a permission denial: the token is valid but lacks a right.
 * - 404 gets no hint: the workspace service answers 404 for what a token may not see, but also for
 *   what does not exist, and a hint would be wrong half of the time.
 *
 * The hint names where the token comes from, never the token.
 */

/** 403 texts meaning "this token is unknown" rather than "this token may not": registry, scheduler, secrets. */
const UNKNOWN_TOKEN =
  /\bACL not found\b|\b(?:ACL )?token not found\b|\binvalid token\b|\bunknown token\b|\btoken (?:is )?expired\b/i;

export interface TokenState {
  /** A token was configured and sent with the request. */
  sent: boolean;
  /** Where it is configured: `CONVERGE_REGISTRY_TOKEN`, `connection "eu" (infra/c.yaml:3:1)`. */
  source: string;
}

/** The hint for a refused request, or undefined when the status is not about credentials. */
export function tokenHint(
  status: number,
  serviceMessage: string | undefined,
  token: TokenState,
): string | undefined {
  if (status !== 401 && status !== 403) return undefined;
  if (!token.sent)
    return token.source.startsWith('CONVERGE_')
      ? `no token was sent: set ${token.source}`
      : `no token was sent: give ${token.source} a token`;
  if (status === 401 || UNKNOWN_TOKEN.test(serviceMessage ?? ''))
    return `check the token in ${token.source}: the service refused it`;
  // The secrets service answers a bare "permission denied" for an unknown token and for a missing
  // right alike, so the hint names both rather than guessing.
  if (/^permission denied$/i.test((serviceMessage ?? '').trim()))
    return `the token in ${token.source} is unknown to the service or lacks this permission`;
  return `the token in ${token.source} lacks this permission`;
}
