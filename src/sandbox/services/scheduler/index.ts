/**
 * The scheduler service (spec part B: workload scheduler jobs), emulating the real scheduler's
 * `/v1/job...` API: register, read, list, versions (with diffs), plan (a dry run with the real diff
 * and annotations), parse of text (HCL) job specifications, stop and purge, summaries, scale,
 * dispatch, periodic force, revert and evaluate, and the evaluations, allocations and deployments a
 * simulated scheduler makes on configured nodes of limited capacity. Errors are plain-text bodies
 * with the real status codes; endpoints not emulated yet answer 501 `not emulated yet`.
 */
import { defineService } from '../../core/service.js';
import { restoredSnapshot } from '../shared/startup.js';
import {
  checkSchedulerConfig,
  DEFAULT_DEPLOYMENT_SECONDS,
  DEFAULT_NODE_CPU,
  DEFAULT_NODE_MEMORY_MB,
  checkSchedulerTokenRights,
  namespacesOf,
  type NodeSeed,
  type SchedulerConfig,
  SchedulerConfigSchema,
  SchedulerTokenRightsSchema,
} from './config.js';
import { admitSnapshot } from './admission.js';
import { REGION, registerSchedulerRoutes } from './handlers.js';
import { schedulerText } from './request.js';
import { isSchedulerSnapshot, nodeIdOf, SchedulerStore } from './store.js';

/** Without `scheduler.nodes`: three nodes in `dc1`. */
const DEFAULT_NODES: NodeSeed[] = [1, 2, 3].map((i) => ({ name: `node-${i}`, datacenter: 'dc1' }));

export const schedulerService = defineService<SchedulerConfig>({
  name: 'scheduler',
  pathPrefixes: ['/v1/job'],
  configSchema: SchedulerConfigSchema,
  tokenRightsSchema: SchedulerTokenRightsSchema,
  checkConfig: checkSchedulerConfig,
  checkTokenRights: checkSchedulerTokenRights,

  errorResponse: (status, message) => schedulerText(status, message),
  methodNotAllowed: () => schedulerText(405, 'Invalid method'),
  // Go's ServeMux text for a path no handler owns.
  notFound: () => schedulerText(404, '404 page not found\n'),

  create(ctx, router) {
    const nodes = (ctx.config?.nodes ?? DEFAULT_NODES).map((n) => ({
      ID: nodeIdOf(n.name),
      Name: n.name,
      Datacenter: n.datacenter ?? 'dc1',
      CPU: n.cpu ?? DEFAULT_NODE_CPU,
      MemoryMB: n.memoryMB ?? DEFAULT_NODE_MEMORY_MB,
    }));
    const store = new SchedulerStore(new Set(namespacesOf(ctx.config)), nodes, () => ctx.markDirty(), {
      deploymentSeconds: ctx.config?.deploymentSeconds ?? DEFAULT_DEPLOYMENT_SECONDS,
      shutdown: ctx.shutdown,
    });
    const saved = restoredSnapshot('scheduler', ctx.persisted, isSchedulerSnapshot);
    // Versions an earlier sandbox stored read back canonical and without submit tokens.
    if (saved) store.restore(admitSnapshot(saved, REGION));
    registerSchedulerRoutes(router, { store, tokens: ctx.tokens });
    return { snapshot: () => store.snapshot() };
  },
});
