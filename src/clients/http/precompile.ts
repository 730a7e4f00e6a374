/** What the build pregenerates for answer checks: every response schema, compiled as `shape.ts` does. */
import { newAjv } from '../../common/precompiled.js';
import { standaloneModule } from '../../common/standalone-code.js';
import { RESPONSE_AJV_OPTIONS, type SchemaSource, schemaOf } from './shape.js';

export function responseValidatorsSource(schemas: readonly SchemaSource[]): string {
  return standaloneModule(newAjv({ ...RESPONSE_AJV_OPTIONS, code: { source: true } }), schemas.map(schemaOf));
}
