/**
 * Who a request is, for the rate limit ("per token", as the real services limit per user), without
 * knowing any service's token header: every `Authorization` header, every header whose name ends in
 * `-token` and every `?token=` parameter together. A request with none is keyed by its address, as
 * the real services limit unauthenticated callers per IP. Hashed, so a bucket key is small whatever
 * a client sends and no secret is kept in the limiter.
 */
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

export function credentialKey(headers: IncomingHttpHeaders, query: URLSearchParams, address: string): string {
  const parts: string[] = [];
  for (const name of Object.keys(headers).sort()) {
    if (name !== 'authorization' && !name.endsWith('-token')) continue;
    const value = headers[name];
    parts.push(`${name}:${Array.isArray(value) ? value.join(',') : (value ?? '')}`);
  }
  for (const value of query.getAll('token')) parts.push(`?token:${value}`);
  const identity = parts.length > 0 ? `token\n${parts.join('\n')}` : `address\n${address}`;
  return createHash('sha256').update(identity).digest('base64url');
}
