/**
 * The workspace service's parts of the sandbox config: its section (`workspaces:` with organizations,
 * projects, agent pools, teams and their access, optional seed workspaces) and the identity a token
 * has in it (`tokens[].workspaces`: a user with team memberships, a team, or an organization).
 *
 * ```yaml
 * workspaces:
 *   engineVersion: 1.9.8              # "latest" engine version: the create default
 *   organizations:
 *     - name: acme
 *       projects: [platform]          # besides the implicit "Default Project"
 *       agentPools: [{ name: pool-1, id: apool-pool1 }]
 *       forceDeleteByAdmins: false    # true: workspace admins may force delete too
 *       teams:
 *         - name: devs
 *           manageWorkspaces: false   # organization-level "manage workspaces"
 *           projectAdmin: [platform]  # admin on every workspace of these projects
 *           access:                   # per workspace name, "*" = every workspace
 *             "*": { runs: read, lock: true, admin: false, stateVersions: write }
 *             web-prod: { admin: true }
 *       workspaces:                   # seeded into a fresh store only
 *         - { name: web-prod, project: platform, tags: [prod] }
 * tokens:
 *   - { name: alice, secret: a, workspaces: { user: alice, teams: { acme: [devs] } } }
 *   - { name: devs, secret: d, workspaces: { team: devs, organization: acme } }
 *   - { name: acme, secret: o, workspaces: { organization: acme } }
 * ```
 */
import { type Static, Type } from '@sinclair/typebox';

const NonEmpty = Type.String({ minLength: 1 });

export const RUN_LEVELS = ['none', 'read', 'plan', 'apply'] as const;
export type RunLevel = (typeof RUN_LEVELS)[number];
export const STATE_LEVELS = ['none', 'read-outputs', 'read', 'write'] as const;
export type StateLevel = (typeof STATE_LEVELS)[number];

export const AccessSchema = Type.Object(
  {
    runs: Type.Optional(Type.Unsafe<RunLevel>({ type: 'string', enum: [...RUN_LEVELS] })),
    lock: Type.Optional(Type.Boolean()),
    admin: Type.Optional(Type.Boolean()),
    stateVersions: Type.Optional(Type.Unsafe<StateLevel>({ type: 'string', enum: [...STATE_LEVELS] })),
  },
  { additionalProperties: false },
);
export type AccessConfig = Static<typeof AccessSchema>;

export const TeamSchema = Type.Object(
  {
    name: NonEmpty,
    manageWorkspaces: Type.Optional(Type.Boolean()),
    projectAdmin: Type.Optional(Type.Array(NonEmpty)),
    access: Type.Optional(Type.Record(Type.String({ minLength: 1 }), AccessSchema)),
  },
  { additionalProperties: false },
);
export type TeamConfig = Static<typeof TeamSchema>;

export const WorkspaceSeedSchema = Type.Object(
  {
    name: Type.String(),
    project: Type.Optional(NonEmpty),
    description: Type.Optional(Type.String()),
    tags: Type.Optional(Type.Array(Type.String())),
    executionMode: Type.Optional(
      Type.Unsafe<'remote' | 'local' | 'agent'>({ type: 'string', enum: ['remote', 'local', 'agent'] }),
    ),
    agentPool: Type.Optional(NonEmpty),
    autoApply: Type.Optional(Type.Boolean()),
    engineVersion: Type.Optional(NonEmpty),
    workingDirectory: Type.Optional(Type.String()),
    globalRemoteState: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type WorkspaceSeed = Static<typeof WorkspaceSeedSchema>;

export const OrganizationSchema = Type.Object(
  {
    name: NonEmpty,
    projects: Type.Optional(Type.Array(NonEmpty)),
    agentPools: Type.Optional(
      Type.Array(
        Type.Object({ name: NonEmpty, id: Type.Optional(NonEmpty) }, { additionalProperties: false }),
      ),
    ),
    forceDeleteByAdmins: Type.Optional(Type.Boolean()),
    teams: Type.Optional(Type.Array(TeamSchema)),
    workspaces: Type.Optional(Type.Array(WorkspaceSeedSchema)),
  },
  { additionalProperties: false },
);
export type OrganizationConfig = Static<typeof OrganizationSchema>;

export const WorkspacesConfigSchema = Type.Object(
  {
    engineVersion: Type.Optional(NonEmpty),
    organizations: Type.Optional(Type.Array(OrganizationSchema)),
  },
  { additionalProperties: false },
);
export type WorkspacesConfig = Static<typeof WorkspacesConfigSchema>;

/**
 * Who a token is in the workspace service. Exactly one shape: `{user, teams?}` (a user token; `teams`
 * maps organization name to team names), `{team, organization}` (a team token) or `{organization}`
 * (an organization token). Absent: a user named after the token, member of no team (no rights).
 */
export const WorkspacesTokenRightsSchema = Type.Object(
  {
    user: Type.Optional(NonEmpty),
    teams: Type.Optional(Type.Record(Type.String({ minLength: 1 }), Type.Array(NonEmpty))),
    team: Type.Optional(NonEmpty),
    organization: Type.Optional(NonEmpty),
  },
  { additionalProperties: false },
);
export type WorkspacesTokenRights = Static<typeof WorkspacesTokenRightsSchema>;

/** The default "latest released" engine version (create default of `engine-version`). */
export const DEFAULT_ENGINE_VERSION = '1.9.8';
/** The organization the sandbox has when its config names none. */
export const DEFAULT_ORGANIZATION = 'sandbox';
export const OWNERS_TEAM = 'owners';
export const DEFAULT_PROJECT_NAME = 'Default Project';

// The service's section and token rights in the typed sandbox config (`SandboxConfig`).
declare module '../../config/types.js' {
  interface SandboxServiceSections {
    workspaces?: WorkspacesConfig;
  }
  interface SandboxServiceTokenRights {
    /** Who the token is in the workspace service: a user (with teams), a team, or an organization. */
    workspaces?: WorkspacesTokenRights;
  }
}
