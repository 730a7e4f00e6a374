/**
 * The JSON schema of the sandbox config, assembled from the core's parts (tokens, faults) and each
 * service's section and token rights. Unknown keys are errors everywhere, so typos surface at once.
 */
import { type TProperties, type TSchema, Type } from '@sinclair/typebox';
import { MAX_SEED } from '../core/prng.js';
import type { AnyServiceDefinition } from '../core/service.js';

/**
 * Ten minutes: a longer wait is no emulation of a network, and past 2^31-1 ms Node would shorten the
 * timer to 1 ms, so a huge latency would silently mean none.
 */
export const MAX_LATENCY_MS = 600_000;

const NonEmpty = Type.String({ minLength: 1 });
const NonNegativeInt = Type.Integer({ minimum: 0 });

const Rate = Type.Number({ minimum: 0, maximum: 1 });

/**
 * The ranges of the fault settings, for the config file and for `converge sandbox`'s options alike
 * (config/fault-flags.ts reads its bounds from these): one place says what a value may be.
 */
export const FAULT_RANGES = {
  rate: Rate,
  latencyMs: Type.Integer({ minimum: 0, maximum: MAX_LATENCY_MS }),
  perSecond: Type.Number({ minimum: 0 }),
  seed: Type.Integer({ minimum: 0, maximum: MAX_SEED }),
} as const;

/**
 * `rateLimit`: requests per second per token (a number), or `{ perSecond, burst }`. One schema with
 * two types rather than a union, so a wrong value gets one message rather than one per branch.
 */
const RateLimitSchema = Type.Unsafe<number | { perSecond: number; burst?: number }>({
  type: ['number', 'object'],
  minimum: 0,
  properties: {
    perSecond: FAULT_RANGES.perSecond,
    burst: Type.Integer({ minimum: 1 }),
  },
  required: ['perSecond'],
  additionalProperties: false,
});

/** The settings that may be given for all services and again per service. */
const serviceFaultProps = () => ({
  latencyMs: Type.Optional(FAULT_RANGES.latencyMs),
  jitterMs: Type.Optional(FAULT_RANGES.latencyMs),
  failFirst: Type.Optional(NonNegativeInt),
  failRate: Type.Optional(Rate),
  errorRate: Type.Optional(Rate),
  resetRate: Type.Optional(Rate),
  rateLimit: Type.Optional(RateLimitSchema),
});

/** `faults`, whose `services` keys are the names of the services this sandbox runs. */
export function faultsSchema(serviceNames: readonly string[]): TSchema {
  const perService: TProperties = {};
  for (const name of serviceNames)
    perService[name] = Type.Optional(Type.Object(serviceFaultProps(), { additionalProperties: false }));
  return Type.Object(
    {
      ...serviceFaultProps(),
      seed: Type.Optional(FAULT_RANGES.seed),
      services: Type.Optional(Type.Object(perService, { additionalProperties: false })),
    },
    { additionalProperties: false },
  );
}

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
  rootProps.faults = Type.Optional(faultsSchema(services.map((s) => s.name)));
  for (const service of services) {
    if (service.configSchema) rootProps[service.name] = Type.Optional(service.configSchema);
  }
  return Type.Object(rootProps, { additionalProperties: false });
}
