/**
 * A job register sent again after a lost answer, when the first send had landed: the resend's
 * check-and-set is refused as if someone else had registered the job. The job kind reads the
 * service's plan of the same job, and a plan with nothing to change means the register is in effect.
 * The sandbox cannot lose an answer after acting on demand (its seeded resets fall where they fall),
 * so the client answers here as the service would.
 */
import { describe, expect, it } from 'vitest';
import { HttpStatusError } from '../../src/clients/http/errors.js';
import type { Desired, KindContext, Observed } from '../../src/resources/contract.js';
import { jobKind } from '../../src/resources/scheduler/job.js';

const refusal = (attempts: number) =>
  new HttpStatusError({
    service: 'scheduler',
    method: 'POST',
    path: '/v1/jobs',
    status: 500,
    attempts,
    serviceMessage: 'Enforcing job modify index 7: job exists with conflicting job modify index: 9',
  });

function setup(attempts: number, planType: string) {
  const calls: string[] = [];
  const client = {
    registerJob: async () => {
      calls.push('register');
      throw refusal(attempts);
    },
    planJob: async () => {
      calls.push('plan');
      return { JobModifyIndex: 9, Diff: { Type: planType } };
    },
  };
  const ctx = { client: () => client, option: () => false } as unknown as KindContext;
  const job = { ID: 'web', Name: 'web', Type: 'service', TaskGroups: [] };
  const key = { kind: 'Job', name: 'web', namespace: 'default' };
  const desired = { key, spec: {}, local: { job } } as unknown as Desired;
  const observed = { key, id: 'web', version: 7, live: { job } } as unknown as Observed;
  return { calls, update: () => jobKind.update(ctx, desired as never, observed as never) };
}

describe('a job register refused by its check-and-set after a resend', () => {
  it('is in effect when the service plans nothing to change for the same job', async () => {
    const { calls, update } = setup(2, 'None');
    const after = await update();
    expect(calls).toEqual(['register', 'plan']);
    expect(after.live.job.JobModifyIndex).toBe(9);
  });

  it('is refused as changed by someone else when the plan still differs', async () => {
    const { update } = setup(2, 'Edited');
    await expect(update()).rejects.toThrow(
      /changed since the plan \(registered, scaled or reverted by someone else\)/,
    );
  });

  it('is refused at once, without a plan, when it was the first send', async () => {
    const { calls, update } = setup(1, 'None');
    await expect(update()).rejects.toThrow(/changed since the plan/);
    expect(calls).toEqual(['register']);
  });
});
