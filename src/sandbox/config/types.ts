/**
 * The sandbox config file (YAML) as TypeScript. The core owns `tokens` and `faults`; every service
 * owns one top-level section named after it and one rights entry of the same name in each token.
 * The matching JSON schema is assembled in `./schema.ts` from the service modules; the matching
 * types are added by each service's `config.ts` to `SandboxServiceSections` and
 * `SandboxServiceTokenRights` below (declaration merging), so this file names no service.
 *
 * ```yaml
 * tokens:
 *   - name: reader               # identity shown in permission errors
 *     secret: reader-token
 *     namespace: team-a          # optional: the token's namespace, the registry's fallback
 *     registry: { acl: read }    # read | write | none (write implies read)
 * faults:                       # see core/faults.ts
 *   latencyMs: 0
 *   jitterMs: 0
 *   failFirst: 0
 *   failRate: 0                  # errorRate: its older name
 *   resetRate: 0
 *   rateLimit: 30                # or { perSecond: 30, burst: 30 }
 *   seed: 42
 *   services: { <service name>: { failRate: 0.2 } }
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
import type { FaultsConfig, ServiceFaultsConfig } from '../core/faults.js';

/** Each service's top-level section, `<name>?: <its config type>`, added by the service module. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging
export interface SandboxServiceSections {}

/** Each service's rights entry in a token, `<name>?: <its rights type>`, added by the service module. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging
export interface SandboxServiceTokenRights {}

export interface SandboxTokenConfig extends SandboxServiceTokenRights {
  name: string;
  secret: string;
  namespace?: string;
  /** Rights in services passed to `startSandbox({ services })`, under their names. */
  [service: string]: unknown;
}

export interface SandboxConfig extends SandboxServiceSections {
  tokens?: SandboxTokenConfig[];
  faults?: FaultsConfig;
  /** Sections of services passed to `startSandbox({ services })`, under their names. */
  [service: string]: unknown;
}

export type { FaultsConfig, ServiceFaultsConfig };
