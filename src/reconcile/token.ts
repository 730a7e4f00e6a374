/**
 * The bearer token of `POST /reconcile`, compared in constant time: both sides are hashed first, so
 * neither the token's content nor its length shows in how long a refusal takes.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

export const RECONCILE_TOKEN_VARIABLE = 'CONVERGE_RECONCILE_TOKEN';

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** Whether an `Authorization` header carries exactly `Bearer <expected>`. */
export function bearerMatches(header: string | undefined, expected: string): boolean {
  const m = /^Bearer (.+)$/i.exec(header ?? '');
  const given = m ? m[1]! : '';
  // Compared even when the header is malformed, so that case takes as long as a wrong token.
  const same = timingSafeEqual(digest(given), digest(expected));
  return m !== null && same;
}
