/**
 * The sandbox: a local server that emulates Converge's services on one loopback port, each under its
 * own path prefixes, with several tokens, injected faults and optional persistence. The services are
 * modules listed in `./services/index.ts`; a caller may pass its own list.
 */
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { loadConfigFile } from './config/load.js';
import type { SandboxConfig } from './config/types.js';
import { SandboxConfigError, validateSandboxConfig } from './config/validate.js';
import { FaultInjector } from './core/faults.js';
import { JsonStateFile, PersistenceScheduler } from './core/persistence.js';
import { Router } from './core/router.js';
import { SandboxServer } from './core/server.js';
import type { AnyServiceDefinition, InitialKeyShares, ServiceInstance } from './core/service.js';
import { envVarPrefix } from '../common/types.js';
import { TokenStore } from './core/tokens.js';
import { SANDBOX_SERVICES } from './services/index.js';

export type {
  FaultsConfig,
  RegistryConfig,
  RegistryTokenRights,
  SandboxConfig,
  SandboxTokenConfig,
  SchedulerConfig,
  SchedulerTokenRights,
  SecretsConfig,
  SecretsTokenRights,
  WorkspacesConfig,
  WorkspacesTokenRights,
} from './config/types.js';
export { type ConfigProblem, SandboxConfigError } from './config/validate.js';
export { StateFileError } from './core/persistence.js';
export type { InitialKeyShares } from './core/service.js';
export { SandboxStartError } from './core/server.js';

export interface SandboxOptions {
  /** 0 or undefined = pick a free port. */
  port?: number;
  /** Default '127.0.0.1' (loopback only unless told otherwise). */
  host?: string;
  /** Root token for every service; random when absent. */
  token?: string;
  /** Persist state here (one JSON file per service, atomic writes) and reload it on start. */
  dataDir?: string;
  /** Config object, or path to a YAML config file. */
  config?: SandboxConfig | string;
  /** Receives one line per request; default none. */
  log?: (line: string) => void;
  /** The services to emulate; default every service in `./services/index.ts`. */
  services?: readonly AnyServiceDefinition[];
}

export interface RunningSandbox {
  /** e.g. http://127.0.0.1:41234 */
  url: string;
  port: number;
  host: string;
  rootToken: string;
  /**
   * The secrets service's recovery key shares when this start created the key (no data folder, or
   * one without a saved seal): hex and base64, in order, with the threshold. Undefined when the key
   * was restored from the data folder (its shares were shown by the run that made it) or the secrets
   * service is not emulated. With a data folder they are also in `<dataDir>/recovery-keys.json`.
   */
  recoveryKeys: InitialKeyShares | undefined;
  /**
   * CONVERGE_<SERVICE>_ADDR (the url, no path prefix) and CONVERGE_<SERVICE>_TOKEN for every emulated
   * service, plus what services add (CONVERGE_WORKSPACES_ORGANIZATION).
   */
  env(): Record<string, string>;
  /** Flushes persistence, closes keep-alive sockets, resolves when the port is free. */
  close(): Promise<void>;
}

/** How long after a change the state file is written; close() writes at once. */
const PERSIST_DEBOUNCE_MS = 50;

export function loadSandboxConfig(path: string): SandboxConfig {
  return loadConfigFile(path, SANDBOX_SERVICES);
}

export async function startSandbox(opts: SandboxOptions = {}): Promise<RunningSandbox> {
  const host = opts.host ?? '127.0.0.1';
  const rootToken = opts.token ?? randomUUID();
  const services = opts.services ?? SANDBOX_SERVICES;
  const config = resolveConfig(opts.config, rootToken, services);
  const log = opts.log ?? (() => {});
  const tokens = new TokenStore(rootToken, config.tokens ?? []);

  const shutdown = new AbortController();
  // Every request in flight listens for shutdown (and lets go when it ends): a busy sandbox has more
  // than Node's default of 10 at once, which is expected rather than a leak.
  setMaxListeners(0, shutdown.signal);
  const router = new Router();
  const { schedulers, recoveryKeys } = await createServices(services, {
    config,
    tokens,
    router,
    shutdown: shutdown.signal,
    log,
    dataDir: opts.dataDir,
  });

  if (recoveryKeys && opts.dataDir !== undefined) writeRecoveryKeysFile(opts.dataDir, recoveryKeys);

  const faults = config.faults ? new FaultInjector(config.faults) : undefined;
  const server = new SandboxServer({ router, services, faults, shutdown, log });
  let address: AddressInfo;
  try {
    address = await server.listen(opts.port ?? 0, host);
  } catch (err) {
    await server.close();
    throw err;
  }
  // Seeding on start is a change too: the data folder holds a complete state from the first moment.
  for (const scheduler of schedulers) scheduler.markDirty();

  const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  let closing: Promise<void> | undefined;
  return {
    url,
    port: address.port,
    host,
    rootToken,
    recoveryKeys,
    env() {
      const env: Record<string, string> = {};
      for (const service of services) {
        const prefix = envVarPrefix(service.name);
        env[`${prefix}_ADDR`] = url;
        env[`${prefix}_TOKEN`] = rootToken;
        const extra = service.exports?.((config as Record<string, unknown>)[service.name] as never) ?? {};
        for (const [name, value] of Object.entries(extra)) env[`${prefix}_${name}`] = value;
      }
      return env;
    },
    close() {
      closing ??= (async () => {
        await server.close();
        // Saved after the server has stopped, so no write can slip in after the last save.
        const results = await Promise.allSettled(schedulers.map((s) => s.close()));
        const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
        if (failed) throw failed.reason;
      })();
      return closing;
    },
  };
}

/** The validated config; a token may not share the root token's secret. */
function resolveConfig(
  given: SandboxConfig | string | undefined,
  rootToken: string,
  services: readonly AnyServiceDefinition[],
): SandboxConfig {
  const source = typeof given === 'string' ? given : undefined;
  if (rootToken === '')
    throw new SandboxConfigError([{ path: [], message: 'the root token must not be empty' }]);
  const config =
    source !== undefined ? loadConfigFile(source, services) : validateSandboxConfig(given, { services });
  const clash = config.tokens?.findIndex((t) => t.secret === rootToken) ?? -1;
  if (clash !== -1) {
    throw new SandboxConfigError(
      [{ path: ['tokens', clash, 'secret'], message: 'equals the root token' }],
      source,
    );
  }
  return config;
}

interface ServiceSetup {
  config: SandboxConfig;
  tokens: TokenStore;
  router: Router;
  shutdown: AbortSignal;
  log: (line: string) => void;
  dataDir: string | undefined;
}

/**
 * Creates every service (restoring saved state) and, with a data folder, one persistence scheduler
 * each; also the key shares a service made on this start.
 */
async function createServices(
  services: readonly AnyServiceDefinition[],
  setup: ServiceSetup,
): Promise<{ schedulers: PersistenceScheduler[]; recoveryKeys: InitialKeyShares | undefined }> {
  const schedulers: PersistenceScheduler[] = [];
  let recoveryKeys: InitialKeyShares | undefined;
  for (const service of services) {
    const file = setup.dataDir !== undefined ? new JsonStateFile(setup.dataDir, service.name) : undefined;
    let scheduler: PersistenceScheduler | undefined;
    const instance: ServiceInstance = await service.create(
      {
        config: (setup.config as Record<string, unknown>)[service.name] as never,
        tokens: setup.tokens,
        persisted: file?.load(),
        // Changes made while the service seeds itself are saved by the first markDirty after listening.
        markDirty: () => scheduler?.markDirty(),
        shutdown: setup.shutdown,
        log: setup.log,
      },
      setup.router,
    );
    const snapshot = instance.snapshot?.bind(instance);
    if (file && snapshot) {
      scheduler = new PersistenceScheduler(file, snapshot, {
        debounceMs: PERSIST_DEBOUNCE_MS,
        onError: (err) => setup.log(`sandbox: cannot save ${file.path}: ${err.message}`),
      });
      schedulers.push(scheduler);
    }
    recoveryKeys ??= instance.recoveryKeys;
  }
  return { schedulers, recoveryKeys };
}

/**
 * `<dataDir>/recovery-keys.json` (mode 0600): the shares made on this start, for development only,
 * so a sandbox with a data folder keeps them beside its state. A real service shows them once and
 * keeps no copy.
 */
function writeRecoveryKeysFile(dataDir: string, shares: InitialKeyShares): void {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, 'recovery-keys.json');
  const body = { keys: shares.keys, keys_base64: shares.keysBase64, threshold: shares.threshold };
  writeFileSync(path, `${JSON.stringify(body, null, 2)}\n`, { mode: 0o600 });
  // An existing file keeps its mode on write.
  chmodSync(path, 0o600);
}
