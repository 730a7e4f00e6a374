/**
 * The sends of one create, counted as the attempts of one request. A create that is not an upsert is
 * a non-idempotent request: the HTTP layer cannot send it again after a lost answer (the service may
 * have acted), so the applier reads the object back first and then sends it again itself
 * (`applier/create-once.ts`). Counted apart, the two loops disagreed: each resend started a new
 * request (attempt 1 again, five more tries, and a first attempt that raised the host's retry
 * allowance instead of using it), and the lost-answer line counted to a number of its own.
 *
 * So the applier runs each send of a create under a scope with the create's `CreateSends` (a fresh
 * `claimed` each send), and the HTTP layer treats the send's first write as the create's request
 * (`claimCreateRequest`): its attempts continue the count
 * of the earlier sends, its limit is 1 + `maxRetries` whatever the failure, and when its answer is
 * lost the HTTP layer takes the retry from the host's budget then and there, handing the applier a
 * `ResendGrant` (on the error) instead of sending again itself. A resend is therefore a retry: never
 * a new first attempt, never past the budget, never past the one limit.
 */
import { isServiceError } from './errors.js';
import { isReadMethod } from './retry-policy.js';

/** What the HTTP layer allows the applier after a lost create answer: one more send, after a wait. */
export interface ResendGrant {
  /** The attempt the next send will be (the create's count, every send and retry so far + 1). */
  attempt: number;
  maxAttempts: number;
  /** The backoff before sending again, as for any retry. */
  delayMs: number;
  /**
   * Gives the retry back to the host's budget, once: the read back found the object, so nothing is
   * sent again. Taken and not given back, the budget's "43 retries" disagreed with the 30 requests
   * the run says it sent again.
   */
  release?: () => void;
  /**
   * Reports the resend as the HTTP layer reports its own retries (a progress line, counted among the
   * run's retries), `note` saying what the read back found. For callers without a line of their own:
   * the applier says a create's resend in its own words.
   */
  announce?: (note: string) => void;
}

/**
 * The HTTP layer's permission to send again, if it gave one for these sends: it always names a later
 * attempt than the sends have made, so a loop over it cannot run without end.
 */
export function resendGrantOf(error: unknown, sends: CreateSends): ResendGrant | undefined {
  if (!isServiceError(error) || !error.resend) return undefined;
  const grant = error.resend;
  return grant.attempt > sends.attempts && grant.attempt <= grant.maxAttempts ? grant : undefined;
}

/** The create's count, carried from one send to the next. */
export class CreateSends {
  /** Attempts sent so far, over every send and every cause. */
  attempts = 0;
  /** Of those, retries after 5xx or broken connections (the backoff grows with these)... */
  failures = 0;
  /** ...and after 429s. */
  rateLimited = 0;
  /** Whether this send's create request has started (later writes of the send are its other steps). */
  claimed = false;
  /**
   * Whether this send's create request was answered with success: the create landed in this send,
   * so a failure after it is a later step's, not a sign that an earlier send had landed.
   */
  answered = false;
  /**
   * The create request as errors name it (`POST /v1/acl/role`): a lost answer of another request is
   * a later step's (a workspace's lock after its create), and said as that.
   */
  request?: string;
}

/**
 * What a request is made for, carried with it rather than by the async context: the object of the
 * change it belongs to (for retry lines), and the create whose sends it counts on. On Node 20 an
 * AsyncLocalStorage in use switches promise hooks on for the whole process: a third of an apply's
 * CPU went to them. The applier hands each change a context whose service clients carry its scope
 * (`HttpServiceClient.withScope`), and the HTTP layer reads it off the request.
 */
export interface RequestScope {
  /** The address of the object the request is made for (`AclRole/default/web`). */
  readonly label?: string;
  /** The create whose first write this request may be (`kind.create` under `createOnce`). */
  readonly createSends?: CreateSends;
}

/**
 * The create count a request belongs to: the first write made under a scope with `createSends`,
 * undefined for every other request (reads a create makes before its write, a project's ID, are not
 * its request).
 */
export function claimCreateRequest(
  scope: RequestScope | undefined,
  method: string,
  path: string,
): CreateSends | undefined {
  const sends = scope?.createSends;
  if (!sends || sends.claimed || isReadMethod(method)) return undefined;
  sends.claimed = true;
  sends.request = `${method} ${path}`;
  return sends;
}
