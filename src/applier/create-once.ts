/**
 * A create that is carried out once even when its answer is lost. When the connection breaks after
 * the request may have been sent, the service answers 5xx after it acted, or no answer comes in
 * time, the object may or may not exist: sending the create again could duplicate it (a role gets a
 * new server-made ID each time) or fail on "already exists" for Converge's own write. So, before
 * sending it again, the object is read back by its key (`observe`): found, the create took effect and
 * the object is brought to what the manifest says (a create of several steps may have stopped midway);
 * absent, the create is sent again.
 *
 * Whether it may be sent again is the HTTP layer's call, not this loop's: each send runs with the
 * create's `CreateSends` in its context's request scope (`scopedContext`), so the create's request
 * counts its attempts across sends, and a lost answer comes
 * back with a `resend` grant only when the create has attempts left (1 + `maxRetries`, whatever
 * the failure) and the host's retry budget gave the retry. One count, one limit, one budget: a
 * resend is a retry like any other, and a failing service gets no retry storm from here either.
 *
 * Kinds whose create writes the object by its key (`createIsUpsert`) send an idempotent request,
 * which the HTTP layer retries itself after a lost answer: they are never sent again on top of that,
 * but an answer lost for good is read back once, as above.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { answerLost } from '../clients/http/retry-policy.js';
import { ConnectionError, formatDuration, isServiceError } from '../clients/http/errors.js';
import { CreateSends, resendGrantOf } from '../clients/http/create-sends.js';
import { scopedContext } from './scoped-context.js';
import { formatWait } from '../common/wait.js';
import {
  type AnyResourceKind,
  createIsUpsert,
  type Desired,
  hasDetailReads,
  hasServerSidePlan,
  type KindContext,
  type Observed,
} from '../resources/contract.js';

export interface CreateOnceOptions {
  /**
   * Told of each lost answer, for the progress output: before each new send (`create answer lost
   * (503); not found by its key, so it is sent again…`, `resent` true: a request sent again, for
   * the run's count of them), or that the read back found the object (nothing sent again).
   */
  onRetry?: (message: string, resent: boolean) => void;
}

export async function createOnce(
  kind: AnyResourceKind,
  ctx: KindContext,
  desired: Desired,
  options: CreateOnceOptions = {},
): Promise<Observed> {
  const sends = new CreateSends();
  let sentAgain = false;
  for (;;) {
    try {
      // Each send's first write is the create's request (`claimCreateRequest`), counting on.
      sends.claimed = false;
      sends.answered = false;
      return await kind.create(scopedContext(ctx, { createSends: sends }), desired);
    } catch (error) {
      // The retry the HTTP layer took for a lost answer goes back to the budget unless it is used
      // for a resend (found by the read back, the read back failed, no resend left): taken and kept,
      // the budget's error said 64 retries where the run had sent 49 requests again.
      const taken = isServiceError(error) ? error.resend : undefined;
      let resending = false;
      let waitMs = 0;
      try {
        // Written by name and already retried as idempotent by the HTTP layer: never sent again here.
        // But an answer lost on the last send (the retry budget spent) may hide a write that landed:
        // read back once, or the object Converge made is reported failed and never recorded as its
        // own, beyond `--prune`'s reach.
        if (createIsUpsert(kind)) {
          if (!answerLost(error)) throw error;
          const found = await kind.observe(ctx, desired.key).catch(() => undefined);
          if (!found) throw error;
          options.onRetry?.(
            `${lostAnswer(error, sends)}; found by its key, so it is not created again (any step it left undone is done now)`,
            false,
          );
          return settle(kind, ctx, desired, found);
        }
        // After a resend, any failure ("already exists", a check-and-set refused) may be an earlier
        // send having landed late: the read back tells. Not once this send's create was answered
        // with success: then the create landed now, and a later step's failure that lost no answer
        // (a state push that could not release its lock) is no sign of an earlier send. Read back,
        // it was taken for done: the workspace was reported created, and left locked by the push.
        if ((sentAgain && !sends.answered) || answerLost(error)) {
          const found = await kind.observe(ctx, desired.key);
          if (found) {
            // Said, so that the read back in the output is explained and the object's "created" is believed.
            // After a resend the failure may not be a lost answer at all ("already exists": the earlier
            // send landed late), so it is named as what came back to the resend; unless the resend
            // was answered with success, when the failure is a later step's.
            const what =
              sentAgain && !sends.answered
                ? `the resend was answered ${reasonOf(error)}`
                : lostAnswer(error, sends);
            options.onRetry?.(
              `${what}; found by its key, so it is not created again (any step it left undone is done now)`,
              false,
            );
            return settle(kind, ctx, desired, found);
          }
        }
        const grant = resendGrantOf(error, sends);
        if (!grant) throw error;
        waitMs = grant.delayMs;
        sentAgain = true;
        resending = true;
        options.onRetry?.(
          `create answer lost (${reasonOf(error)}); not found by its key, so it is sent again ${formatWait(grant.delayMs, formatDuration)} (attempt ${grant.attempt} of ${grant.maxAttempts})`,
          true,
        );
      } finally {
        if (!resending) taken?.release?.();
      }
      await delay(waitMs, undefined, ctx.signal ? { signal: ctx.signal } : {}).catch(() => {
        throw ctx.signal?.reason ?? error;
      });
    }
  }
}

/**
 * The object a lost create left behind, made to match the manifest: a create of several steps (a
 * workspace's state push, its lock) may have stopped after the first. Reads what the plan would
 * have read (`readDetails`) and updates only when the comparison finds a difference.
 */
async function settle(
  kind: AnyResourceKind,
  ctx: KindContext,
  desired: Desired,
  found: Observed,
): Promise<Observed> {
  const observed = hasDetailReads(kind) ? await kind.readDetails(ctx, desired, found) : found;
  const plan = hasServerSidePlan(kind) ? await kind.serverPlan(ctx, desired, observed) : undefined;
  const comparison = kind.compare(desired, observed, plan, ctx);
  if (comparison.diffs.length === 0) return observed;
  if (comparison.replace) {
    throw new Error(
      `the create's answer was lost and an object of that name now exists that differs in ${comparison.diffs.map((d) => d.path).join(', ')}, which cannot be updated in place: plan again to review it`,
    );
  }
  return kind.update(ctx, desired, observed);
}

/**
 * Whose answer was lost: the create's own request, or a later step of the create (a workspace's
 * lock after the workspace was made), named by its request, as the create itself had landed.
 */
function lostAnswer(error: unknown, sends: CreateSends): string {
  if (isServiceError(error) && sends.request && `${error.method} ${error.path}` !== sends.request)
    return `the answer to a later step of the create was lost (${error.method} ${error.path}: ${reasonOf(error)})`;
  return `create answer lost (${reasonOf(error)})`;
}

function reasonOf(error: unknown): string {
  if (!isServiceError(error)) return 'error';
  if (error.kind === 'status') return String(error.status);
  if (error.kind === 'timeout') return 'timeout';
  // The words (`connection closed by the service`), not undici's code: the line is read by people.
  return error instanceof ConnectionError ? error.reason : 'connection broken';
}
