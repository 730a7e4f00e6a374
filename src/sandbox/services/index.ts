/**
 * Every service the sandbox emulates. A new service is one module here (routes, state, its config
 * section and token rights) plus its section in `../config/types.ts`.
 */
import type { AnyServiceDefinition } from '../core/service.js';
import { registryService } from './registry/index.js';

export const SANDBOX_SERVICES: readonly AnyServiceDefinition[] = [registryService as AnyServiceDefinition];
