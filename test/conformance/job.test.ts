/** Job runs the kind conformance suite (see ./suite.ts for the rules). */
import { schedulerService } from '../../src/clients/scheduler/definition.js';
import type { Job } from '../../src/clients/scheduler/client.js';
import type { JobLive } from '../../src/resources/scheduler/job.js';
import { runKindConformance } from './suite.js';

const NAMESPACE = 'default';

function job(): Record<string, unknown> {
  return {
    Type: 'service',
    Priority: 50,
    Datacenters: ['dc1'],
    Meta: { team: 'conformance' },
    TaskGroups: [
      {
        Name: 'web',
        Count: 1,
        Tasks: [{ Name: 'server', Driver: 'docker', Config: { image: 'nginx:1.27' } }],
      },
    ],
  };
}

runKindConformance({
  kind: 'Job',
  namespace: NAMESPACE,
  spec: job,
  change: { field: 'Priority', value: 70 },
  // Someone re-registers the job with another priority from their own tooling.
  drift: {
    field: 'Priority',
    async apply({ ctx, observed }) {
      const live = (observed.live as JobLive).job;
      await ctx.client(schedulerService).registerJob({ ...live, Priority: 20 }, { namespace: NAMESPACE });
    },
  },
  // A token the scheduler checks at registration and never stores: masked everywhere.
  secret: { path: 'SecretsToken' },
  // Another team's job in the same namespace, without Converge's ownership marker in Meta.
  async foreign({ ctx, key }) {
    await ctx
      .client(schedulerService)
      .registerJob({ ...(job() as Job), ID: key.name, Meta: { team: 'other' } }, { namespace: NAMESPACE });
  },
});
