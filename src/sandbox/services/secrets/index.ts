/**
 * The secrets service (spec: "Directory Login Method" and "Recovery Key Rekey"), emulating HashiCorp
 * Vault's LDAP auth method under `/v1/auth/<mount>/` with Vault's error bodies and response envelope,
 * and the recovery-key rekey ceremony under `/v1/sys/rekey-recovery-key/` (`rekey/`). The method is
 * mounted at `auth/ldap` from the start; the config section adds mounts at any path. The seal
 * supports recovery keys: a fresh start (no saved seal) makes a recovery key and hands its shares to
 * the sandbox to show once (`recovery-keys.ts`).
 */
import { randomUUID } from 'node:crypto';
import { defineService, type ServiceConfigIssue, type ServiceInstance } from '../../core/service.js';
import { refuseSeedIssues, restoredSnapshot } from '../shared/startup.js';
import { SecretsAccess } from './access.js';
import {
  type RecoverySeed,
  type SecretsConfig,
  SecretsConfigSchema,
  SecretsTokenRightsSchema,
} from './config.js';
import { registerAuthRoutes, registerSysFallback } from './handlers.js';
import {
  type InitialKeyShares,
  markRecoveryKeysReplaced,
  recoveryKeysNote,
  writeRecoveryKeysFile,
} from './recovery-keys.js';
import { RekeyCeremony } from './rekey/ceremony.js';
import { registerRekeyRoutes } from './rekey/handlers.js';
import {
  DEFAULT_RECOVERY_CONFIG,
  initialiseSeal,
  type RecoveryConfig,
  recoveryConfigProblem,
} from './rekey/seal.js';
import { toBase64, toHex } from './rekey/shamir.js';
import { isRecoveryState, type RecoveryState, RekeyMachine } from './rekey/state.js';
import { seedSecrets } from './seed.js';
import { isSecretsSnapshot, SecretsStore } from './store.js';
import { errorResponse, noHandler, SecretsError } from './vault.js';

function recoveryConfigOf(seed: RecoverySeed | undefined): RecoveryConfig {
  return {
    shares: seed?.shares ?? DEFAULT_RECOVERY_CONFIG.shares,
    threshold: seed?.threshold ?? DEFAULT_RECOVERY_CONFIG.threshold,
  };
}

/** The `recovery:` section against the real seal rules, reported at the field the rule is about. */
function recoveryIssues(seed: RecoverySeed | undefined): ServiceConfigIssue[] {
  if (!seed) return [];
  const { shares, threshold } = recoveryConfigOf(seed);
  const problem = recoveryConfigProblem(shares, threshold);
  if (!problem) return [];
  const field = /^shares/.test(problem) || seed.threshold === undefined ? 'shares' : 'threshold';
  return [{ path: ['recovery', field], message: problem }];
}

export const secretsService = defineService<SecretsConfig>({
  name: 'secrets',
  pathPrefixes: ['/v1/auth/', '/v1/sys/'],
  // The real service lists with the LIST method; the core lets it past node's parser.
  extensionMethods: ['LIST'],
  configSchema: SecretsConfigSchema,
  tokenRightsSchema: SecretsTokenRightsSchema,

  checkConfig(section) {
    // A dry run on an empty store finds bad paths and seeds with their positions.
    return [
      ...recoveryIssues(section.recovery),
      ...seedSecrets(new SecretsStore(), section, { restored: new Set() }),
    ];
  },

  errorResponse: (status, message) => errorResponse(status, [message]),
  // A method the real HTTP layer does not turn into an operation: 405 with no message.
  methodNotAllowed: () => errorResponse(405, []),
  notFound: (req) => errorResponse(404, noHandler(req.path.replace(/^\/v1\//, '')).errors),

  async create(ctx, router) {
    const store = new SecretsStore(() => ctx.markDirty());
    const restored = new Set<string>();
    let savedRecovery: RecoveryState | undefined;
    const saved = restoredSnapshot('secrets', ctx.persisted, isSecretsSnapshot);
    if (saved) {
      store.restore(saved);
      for (const mount of saved.mounts) restored.add(mount.path);
      const recovery = (saved as { recovery?: unknown }).recovery;
      if (recovery !== undefined) {
        if (!isRecoveryState(recovery)) throw new Error('secrets state file has an unexpected recovery seal');
        savedRecovery = recovery;
      }
    }
    refuseSeedIssues('secrets', 'the secrets service', seedSecrets(store, ctx.config, { restored }));
    // A saved seal is kept (its shares were shown by the run that made it); otherwise a new key.
    let recoveryKeys: InitialKeyShares | undefined;
    let recovery = savedRecovery;
    if (!recovery) {
      const config = recoveryConfigOf(ctx.config?.recovery);
      const { seal, shares } = await initialiseSeal(config);
      recovery = { seal };
      recoveryKeys = {
        keys: shares.map(toHex),
        keysBase64: shares.map(toBase64),
        threshold: config.threshold,
      };
    }
    const machine = new RekeyMachine(recovery, { newNonce: randomUUID, onChange: () => ctx.markDirty() });

    const deps = { store, access: new SecretsAccess(ctx.tokens) };
    registerAuthRoutes(router, deps);
    // The development copy of the shares is marked replaced once a rekey installs a new key: it
    // would otherwise be offered as the shares to rekey with, and they no longer work.
    const dataDir = ctx.dataDir;
    const ceremony = new RekeyCeremony(
      machine,
      dataDir !== undefined ? () => markRecoveryKeysReplaced(dataDir) : undefined,
    );
    registerRekeyRoutes(router, { ceremony, access: deps.access });
    // Specific /v1/sys/ routes (rekey, above) must be registered before this catch-all.
    registerSysFallback(router, deps);
    return {
      snapshot: () => ({ ...store.snapshot(), recovery: machine.snapshot() }),
      ...(recoveryKeys ? initialSharesOutputs(recoveryKeys, ctx.dataDir) : {}),
    };
  },
});

/**
 * Where a fresh key's shares go: the running sandbox's `recoveryKeys`, a note `converge sandbox`
 * prints once, and with a data folder a development copy, written once every service has started.
 */
function initialSharesOutputs(shares: InitialKeyShares, dataDir: string | undefined): ServiceInstance {
  return {
    extras: { recoveryKeys: shares },
    startupNotes: [recoveryKeysNote(shares, dataDir)],
    ...(dataDir !== undefined ? { created: () => writeRecoveryKeysFile(dataDir, shares) } : {}),
  };
}

export { SecretsError };
