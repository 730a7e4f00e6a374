/**
 * Every service the sandbox emulates: the sandbox's one list that names them. A new service is one
 * module (routes, state, its config section and token rights) and one line here.
 */
import type { AnyServiceDefinition } from '../core/service.js';
import { registryService } from './registry/index.js';
import { schedulerService } from './scheduler/index.js';
import { secretsService } from './secrets/index.js';
import { workspacesService } from './workspaces/index.js';

// Order is the order of config keys in messages ("allowed here: …"); new services go last.
export const SANDBOX_SERVICES: readonly AnyServiceDefinition[] = [
  registryService as AnyServiceDefinition,
  workspacesService as AnyServiceDefinition,
  secretsService as AnyServiceDefinition,
  schedulerService as AnyServiceDefinition,
];
