/** The scheduler as Converge reaches it: `CONVERGE_SCHEDULER_*`, a bearer token, the job client. */
import { bearerAuth } from '../http/client.js';
import { SchedulerClient } from './client.js';
import { clientConnection, defineService, type ServiceDefinition } from '../service.js';

export const schedulerService: ServiceDefinition<SchedulerClient> = defineService<SchedulerClient>({
  name: 'scheduler',
  description: 'jobs: register, plan, scale, dispatch (/v1/job...)',
  // The spec leaves the header open; the real agent reads its own header, then `Authorization: Bearer`
  // (the sandbox takes both, and `X-Scheduler-Token`). Bearer is the one proxies already redact.
  authHeaders: bearerAuth,
  createClient(connection) {
    return SchedulerClient.fromConnection(clientConnection(connection, { authHeaders: bearerAuth }));
  },
});
