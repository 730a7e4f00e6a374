/** The scheduler as Converge reaches it: `CONVERGE_SCHEDULER_*`, a bearer token, the job client. */
import { bearerAuth } from '../http/bearer-auth.js';
import type { SchedulerClient } from './client.js';
import { defineLazyClientService, type ServiceDefinition } from '../service.js';

export const schedulerService: ServiceDefinition<SchedulerClient> = defineLazyClientService<SchedulerClient>({
  name: 'scheduler',
  description: 'jobs: register, plan, scale, dispatch (/v1/job...)',
  // The spec leaves the header open; the real agent reads its own header, then `Authorization: Bearer`
  // (the sandbox takes both, and `X-Scheduler-Token`). Bearer is the one proxies already redact.
  authHeaders: bearerAuth,
  // Imported on first connection: the client pulls in the whole HTTP layer, which validate never uses.
  importClient: async () => {
    const { SchedulerClient } = await import('./client.js');
    return (options) => SchedulerClient.fromConnection(options);
  },
});
