/**
 * Keeps secrets out of the paths an error or a log line shows: a caller may put a credential in a
 * query string (the registry accepts `?token=`). Texts a service wrote go through `scrub.ts`.
 */

import { REDACTED } from '../../common/scrub.js';

// One scrubber for every text (raw, JSON-escaped, URL-encoded, hex, base64 and base32 forms): see
// scrub.ts.
export { REDACTED, scrubSecrets } from '../../common/scrub.js';

/** Query parameters whose values are credentials, compared case-insensitively. */
const SECRET_QUERY_PARAMS = new Set(['token', 'access_token', 'secret', 'password', 'x-secrets-token']);

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
 * The values of the secret query parameters in a path (decoded), so that a service echoing one back
 * in its error body gets it scrubbed like the token.
 */
export function secretQueryValues(pathWithQuery: string): string[] {
  const at = pathWithQuery.indexOf('?');
  if (at < 0) return [];
  const values: string[] = [];
  for (const pair of pathWithQuery.slice(at + 1).split('&')) {
    const eq = pair.indexOf('=');
    if (eq < 0 || !SECRET_QUERY_PARAMS.has(safeDecode(pair.slice(0, eq)).toLowerCase())) continue;
    values.push(safeDecode(pair.slice(eq + 1)));
  }
  return values;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}
