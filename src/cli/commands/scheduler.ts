/** The scheduler's module: its client definition, the Job kind, and the operator commands `converge job …`. */
import { schedulerService } from '../../clients/scheduler/definition.js';
import { jobKind } from '../../resources/scheduler/job.js';
import type { ServiceModule } from '../catalog.js';

export const schedulerModule: ServiceModule = {
  definition: schedulerService,
  kinds: [jobKind],
};
