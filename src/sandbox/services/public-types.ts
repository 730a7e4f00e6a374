/**
 * The services' types a sandbox caller may need (config sections, token rights, the recovery key
 * shares), re-exported by `../index.ts` as a whole so that the index names no service. A new
 * service adds its line here.
 */
export type { RegistryConfig, RegistryTokenRights } from './registry/config.js';
export type { SchedulerConfig, SchedulerTokenRights } from './scheduler/config.js';
export type { SecretsConfig, SecretsTokenRights } from './secrets/config.js';
export type { InitialKeyShares } from './secrets/recovery-keys.js';
export type { WorkspacesConfig, WorkspacesTokenRights } from './workspaces/config.js';
