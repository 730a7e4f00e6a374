/**
 * The sandbox config file (YAML) as TypeScript. The core owns `tokens` and `faults`; every service
 * owns one top-level section named after it and one rights entry of the same name in each token.
 * The matching JSON schema is assembled in `./schema.ts` from the service modules.
 *
 * ```yaml
 * tokens:
 *   - name: reader               # identity shown in permission errors
 *     secret: reader-token
 *     namespace: team-a          # optional default namespace for this token's requests
 *     registry: { acl: read }    # read | write | none (write implies read)
 * faults:
 *   latencyMs: 0
 *   failFirst: 0
 *   errorRate: 0
 *   rateLimit: { perSecond: 0, burst: 0 }
 * registry:
 *   policies: [{ Name: service-read, Description: "..." }]
 *   roles: [{ Name: web, Policies: [{ Name: service-read }] }]
 * secrets:                       # see services/secrets/config.ts
 *   mounts: [{ path: corp-ldap, config: { url: "ldap://dir:389" }, groups: [{ name: admins, policies: [admin] }] }]
 * scheduler:                     # see services/scheduler/config.ts
 *   namespaces: [team-a]
 *   nodes: [{ name: node-1, datacenter: dc1 }]
 * workspaces:                    # see services/workspaces/config.ts
 *   organizations: [{ name: acme, projects: [platform], teams: [{ name: devs, access: { "*": { runs: read } } }] }]
 * ```
 */
import type { FaultsConfig } from '../core/faults.js';
import type { RegistryConfig, RegistryTokenRights } from '../services/registry/config.js';
import type { SchedulerConfig, SchedulerTokenRights } from '../services/scheduler/config.js';
import type { SecretsConfig, SecretsTokenRights } from '../services/secrets/config.js';
import type { WorkspacesConfig, WorkspacesTokenRights } from '../services/workspaces/config.js';

export interface SandboxTokenConfig {
  name: string;
  secret: string;
  namespace?: string;
  registry?: RegistryTokenRights;
  /** Who the token is in the workspace service: a user (with teams), a team, or an organization. */
  workspaces?: WorkspacesTokenRights;
  /** Rights in the secrets service's directory auth method: `{ ldap: read|write|none }`. */
  secrets?: SecretsTokenRights;
  /** Namespace rules in the scheduler: `{ namespaces: { <ns>|"*": { policy, capabilities } } }`. */
  scheduler?: SchedulerTokenRights;
  /** Rights in services added as modules, under their names. */
  [service: string]: unknown;
}

export interface SandboxConfig {
  tokens?: SandboxTokenConfig[];
  faults?: FaultsConfig;
  registry?: RegistryConfig;
  workspaces?: WorkspacesConfig;
  /** Directory auth mounts with seeded config, groups and users (see services/secrets/config.ts). */
  secrets?: SecretsConfig;
  /** Scheduler namespaces besides `default` and the simulated nodes (see services/scheduler/config.ts). */
  scheduler?: SchedulerConfig;
  /** Sections of services added as modules, under their names. */
  [service: string]: unknown;
}

export type {
  FaultsConfig,
  RegistryConfig,
  RegistryTokenRights,
  SchedulerConfig,
  SchedulerTokenRights,
  SecretsConfig,
  SecretsTokenRights,
  WorkspacesConfig,
  WorkspacesTokenRights,
};
