/**
 * The registry's parts of the sandbox config: its section (`registry:` with policies and seed roles)
 * and the rights a token may hold in it (`tokens[].registry: { acl: read|write|none }`).
 */
import { type Static, Type } from '@sinclair/typebox';

const AclLevel = Type.Unsafe<'read' | 'write' | 'none'>({ type: 'string', enum: ['read', 'write', 'none'] });

export const RegistryTokenRightsSchema = Type.Object(
  { acl: Type.Optional(AclLevel) },
  { additionalProperties: false, description: 'ACL rights; write implies read' },
);
export type RegistryTokenRights = Static<typeof RegistryTokenRightsSchema>;

const NonEmpty = Type.String({ minLength: 1 });

export const PolicySeedSchema = Type.Object(
  {
    ID: Type.Optional(NonEmpty),
    Name: Type.String(),
    Description: Type.Optional(Type.String()),
    Rules: Type.Optional(Type.String()),
    Datacenters: Type.Optional(Type.Array(Type.String())),
    Namespace: Type.Optional(NonEmpty),
  },
  { additionalProperties: false },
);
export type PolicySeed = Static<typeof PolicySeedSchema>;

export const RoleSeedSchema = Type.Object(
  {
    ID: Type.Optional(NonEmpty),
    Name: Type.String(),
    Description: Type.Optional(Type.String()),
    Namespace: Type.Optional(NonEmpty),
    Policies: Type.Optional(
      Type.Array(
        Type.Object(
          { ID: Type.Optional(Type.String()), Name: Type.Optional(Type.String()) },
          { additionalProperties: false },
        ),
      ),
    ),
    ServiceIdentities: Type.Optional(
      Type.Array(
        Type.Object(
          { ServiceName: Type.String(), Datacenters: Type.Optional(Type.Array(Type.String())) },
          { additionalProperties: false },
        ),
      ),
    ),
    NodeIdentities: Type.Optional(
      Type.Array(
        Type.Object({ NodeName: Type.String(), Datacenter: Type.String() }, { additionalProperties: false }),
      ),
    ),
  },
  { additionalProperties: false },
);
export type RoleSeed = Static<typeof RoleSeedSchema>;

export const RegistryConfigSchema = Type.Object(
  {
    policies: Type.Optional(Type.Array(PolicySeedSchema)),
    roles: Type.Optional(Type.Array(RoleSeedSchema)),
  },
  { additionalProperties: false },
);
export type RegistryConfig = Static<typeof RegistryConfigSchema>;

// The service's section and token rights in the typed sandbox config (`SandboxConfig`).
declare module '../../config/types.js' {
  interface SandboxServiceSections {
    registry?: RegistryConfig;
  }
  interface SandboxServiceTokenRights {
    registry?: RegistryTokenRights;
  }
}
