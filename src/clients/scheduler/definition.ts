/** The scheduler as Converge reaches it: `CONVERGE_SCHEDULER_*`, a bearer token, the job client. */
import { bearerAuth } from '../http/client.js';
import { SchedulerClient } from './client.js';
import { defineClientService, type ServiceDefinition } from '../service.js';

export const schedulerService: ServiceDefinition<SchedulerClient> = defineClientService<SchedulerClient>({
  name: 'scheduler',
  description: 'jobs: register, plan, scale, dispatch (/v1/job...)',
  // The spec leaves the header open; the real agent reads its own header, then `Authorization: Bearer`
  // (the sandbox takes both, and `X-Scheduler-Token`). Bearer is the one proxies already redact.
  authHeaders: bearerAuth,
  fromConnection: (options) => SchedulerClient.fromConnection(options),
});
