/**
 * Keeps secrets out of everything an error or a log line can show. Tokens travel in headers, which
 * errors never copy, but a service may echo a token back in its error body and a caller may put one in
 * a query string (the registry accepts `?token=`), so both paths are scrubbed here.
 */

/** Query parameters whose values are credentials, compared case-insensitively. */
const SECRET_QUERY_PARAMS = new Set(['token', 'access_token', 'secret', 'password', 'x-secrets-token']);

export const REDACTED = '[redacted]';

/** `/v1/acl/roles?token=abc&ns=x` → `/v1/acl/roles?token=[redacted]&ns=x`; other parameters untouched. */
export function redactPath(pathWithQuery: string): string {
  const at = pathWithQuery.indexOf('?');
  if (at < 0) return pathWithQuery;
  const query = pathWithQuery
    .slice(at + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const rawName = eq < 0 ? pair : pair.slice(0, eq);
      return SECRET_QUERY_PARAMS.has(safeDecode(rawName).toLowerCase()) ? `${rawName}=${REDACTED}` : pair;
    })
    .join('&');
  return `${pathWithQuery.slice(0, at)}?${query}`;
}

/**
 * Replaces every occurrence of each secret in `text`. Secrets shorter than 4 characters are left
 * alone: scrubbing them would shred ordinary words, and no real token is that short.
 */
export function scrubSecrets(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret && secret.length >= 4) out = out.split(secret).join(REDACTED);
  }
  return out;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}
