/**
 * Every service the sandbox emulates. A new service is one module here (routes, state, its config
 * section and token rights) plus its section in `../config/types.ts`.
 */
import type { AnyServiceDefinition } from '../core/service.js';
import { registryService } from './registry/index.js';
import { workspacesService } from './workspaces/index.js';

// Order is the order of config keys in messages ("allowed here: …"); new services go last.
export const SANDBOX_SERVICES: readonly AnyServiceDefinition[] = [
  registryService as AnyServiceDefinition,
  workspacesService as AnyServiceDefinition,
];
