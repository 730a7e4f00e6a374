/** The secrets service's token header, apart from its client so the definition loads without it. */
export const SECRETS_TOKEN_HEADER = 'X-Secrets-Token';

/** The header that carries the token on every administrative request. */
export function secretsAuth(token: string): Record<string, string> {
  return { [SECRETS_TOKEN_HEADER]: token };
}
