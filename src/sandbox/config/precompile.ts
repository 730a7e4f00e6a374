/**
 * What the build pregenerates for the sandbox config check: the config schema of the sandbox's
 * built-in services, compiled as `validate.ts` compiles it. Compiling it with ajv took about 0.3 s
 * of every `converge sandbox` start (and of every test that starts one); the generated code needs
 * no compile. Only the build and tests load this (and ajv with it).
 */
import type { AnyServiceDefinition } from '../core/service.js';
import { newAjv } from '../../common/precompiled.js';
import { standaloneModule } from '../../common/standalone-code.js';
import { buildConfigSchema } from './schema.js';
import { CONFIG_AJV_OPTIONS } from './validate.js';

export function configValidatorsSource(services: readonly AnyServiceDefinition[]): string {
  return standaloneModule(newAjv({ ...CONFIG_AJV_OPTIONS, code: { source: true } }), [
    buildConfigSchema(services),
  ]);
}
