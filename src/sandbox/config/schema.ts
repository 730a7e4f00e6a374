/**
 * The JSON schema of the sandbox config, assembled from the core's parts (tokens, faults) and each
 * service's section and token rights. Unknown keys are errors everywhere, so typos surface at once.
 */
import { type TProperties, type TSchema, Type } from '@sinclair/typebox';
import type { AnyServiceDefinition } from '../core/service.js';

const NonEmpty = Type.String({ minLength: 1 });
const NonNegativeInt = Type.Integer({ minimum: 0 });

export const FaultsSchema = Type.Object(
  {
    latencyMs: Type.Optional(NonNegativeInt),
    failFirst: Type.Optional(NonNegativeInt),
    errorRate: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    rateLimit: Type.Optional(
      Type.Object(
        { perSecond: Type.Number({ minimum: 0 }), burst: Type.Optional(Type.Integer({ minimum: 1 })) },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export function buildConfigSchema(services: readonly AnyServiceDefinition[]): TSchema {
  const tokenProps: TProperties = {
    name: NonEmpty,
    secret: NonEmpty,
    namespace: Type.Optional(NonEmpty),
  };
  const rootProps: TProperties = {};
  for (const service of services) {
    if (service.tokenRightsSchema) tokenProps[service.name] = Type.Optional(service.tokenRightsSchema);
  }
  rootProps.tokens = Type.Optional(Type.Array(Type.Object(tokenProps, { additionalProperties: false })));
  rootProps.faults = Type.Optional(FaultsSchema);
  for (const service of services) {
    if (service.configSchema) rootProps[service.name] = Type.Optional(service.configSchema);
  }
  return Type.Object(rootProps, { additionalProperties: false });
}
