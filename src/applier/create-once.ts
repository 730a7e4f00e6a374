/**
 * A create that is carried out once even when its answer is lost. When the connection breaks after
 * the request may have been sent, the service answers 5xx after it acted, or no answer comes in
 * time, the object may or may not exist: sending the create again could duplicate it (a role gets a
 * new server-made ID each time) or fail on "already exists" for Converge's own write. So, before
 * sending it again, the object is read back by its key (`observe`): found, the create took effect and
 * the object is brought to what the manifest says (a create of several steps may have stopped midway);
 * absent, the create is sent again. Kinds whose create writes the object by its key
 * (`createIsUpsert`) are simply sent again, which is harmless.
 *
 * Bounded: at most CREATE_ATTEMPTS sends, backoff with full jitter between them, every wait ended by
 * the run's signal, and no new send once the HTTP layer said the run's retry budget for the service is
 * spent (a failing service gets no retry storm from here either).
 */
import { setTimeout as delay } from 'node:timers/promises';
import { classifyNetworkError } from '../clients/http/retry-policy.js';
import { formatDuration, isServiceError } from '../clients/http/errors.js';
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

/**
 * Sends of one create, the first included: as many as the HTTP layer gives any other request (1 +
 * DEFAULT_RETRY.maxRetries). At 3, a service failing 15% of attempts (10% 5xx and 5% dropped
 * connections) lost 0.15³ of creates, about one in 300 objects; at 5, fewer than one in 10,000. The
 * run's retry budget still ends them early when the service is failing outright.
 */
export const CREATE_ATTEMPTS = 5;
const BACKOFF_BASE_MS = 200;
const BACKOFF_CAP_MS = 5_000;

/**
 * Whether the service may have acted on a request that failed this way: a 5xx, a response timeout,
 * or a connection broken after sending. Refused connections and 4xx are not: nothing was done.
 */
export function answerLost(error: unknown): boolean {
  if (!isServiceError(error)) return false;
  if (error.kind === 'status') return (error.status ?? 0) >= 500;
  if (error.kind === 'timeout') return (error as { phase?: string }).phase === 'response';
  if (error.kind === 'connection') {
    const code = (error as { code?: string }).code;
    const failure = code === undefined ? undefined : classifyNetworkError({ code });
    return failure !== undefined && failure.transient && !failure.nothingSent;
  }
  return false;
}

export interface CreateOnceOptions {
  /** Told before each new send, for the progress output (`create answer lost (503); read back: absent`). */
  onRetry?: (message: string) => void;
  random?: () => number;
}

export async function createOnce(
  kind: AnyResourceKind,
  ctx: KindContext,
  desired: Desired,
  options: CreateOnceOptions = {},
): Promise<Observed> {
  const random = options.random ?? Math.random;
  let lostBefore = false;
  for (let attempt = 1; ; attempt++) {
    try {
      return await kind.create(ctx, desired);
    } catch (error) {
      const lost = answerLost(error);
      // After a lost answer, any failure of a later send ("already exists", a check-and-set refused)
      // may be the earlier send having landed: the read back tells.
      if (lostBefore || (lost && !createIsUpsert(kind))) {
        const found = await kind.observe(ctx, desired.key);
        if (found) return settle(kind, ctx, desired, found);
      }
      if (!lost || attempt >= CREATE_ATTEMPTS || budgetSpent(error)) throw error;
      lostBefore = true;
      const waitMs = Math.floor(random() * Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** attempt));
      options.onRetry?.(
        `create answer lost (${reasonOf(error)}); ${createIsUpsert(kind) ? 'the create writes by name, so it is' : 'not found by its key, so it is'} sent again ${formatWait(waitMs, formatDuration)} (attempt ${attempt + 1} of ${CREATE_ATTEMPTS})`,
      );
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
  const comparison = kind.compare(desired, observed, plan);
  if (comparison.diffs.length === 0) return observed;
  if (comparison.replace) {
    throw new Error(
      `the create's answer was lost and an object of that name now exists that differs in ${comparison.diffs.map((d) => d.path).join(', ')}, which cannot be updated in place: plan again to review it`,
    );
  }
  return kind.update(ctx, desired, observed);
}

function budgetSpent(error: unknown): boolean {
  return isServiceError(error) && error.retryBudgetSpent === true;
}

function reasonOf(error: unknown): string {
  if (!isServiceError(error)) return 'error';
  if (error.kind === 'status') return String(error.status);
  if (error.kind === 'timeout') return 'timeout';
  return (error as { code?: string }).code ?? 'connection broken';
}
