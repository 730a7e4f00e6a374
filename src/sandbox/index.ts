/**
 * The sandbox: a local server that emulates Converge's services on one loopback port, each under its
 * own path prefixes, with several tokens, injected faults and optional persistence. The services are
 * modules listed in `./services/index.ts`; a caller may pass its own list.
 */
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { loadConfigFile } from './config/load.js';
import type { SandboxConfig } from './config/types.js';
import { SandboxConfigError, validateSandboxConfig } from './config/validate.js';
import { mergeFaults } from './config/merge-faults.js';
import { describeFaults } from './core/fault-summary.js';
import { assertFaultSharesFit, type FaultsConfig, FaultInjector } from './core/faults.js';
import { createServices } from './core/create-services.js';
import { takeDataLock } from './core/data-lock.js';
import { keepRootToken, readKeptRootToken, ROOT_TOKEN_FILE } from './core/root-token.js';
import { Router } from './core/router.js';
import { SandboxServer } from './core/server.js';
import type { AnyServiceDefinition, SandboxServiceExtras, ServiceInstance } from './core/service.js';
import { envVarPrefix } from '../common/types.js';
import { TokenStore } from './core/tokens.js';
import { SANDBOX_SERVICES } from './services/index.js';

export type { FaultsConfig, SandboxConfig, SandboxTokenConfig, ServiceFaultsConfig } from './config/types.js';
export type * from './services/public-types.js';
export { type ConfigProblem, SandboxConfigError } from './config/validate.js';
export { StateFileError } from './core/persistence.js';
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
  /**
   * Fault settings laid over the config's `faults`, key by key (`converge sandbox`'s options); a key
   * set here for every service replaces the config's value of that key for every service, its
   * per-service ones included (merge-faults.ts).
   */
  faults?: FaultsConfig;
  /** Receives one line per request; default none. */
  log?: (line: string) => void;
  /** The services to emulate; default every service in `./services/index.ts`. */
  services?: readonly AnyServiceDefinition[];
}

/**
 * A started sandbox. Besides what every sandbox has, it carries what its services add
 * (`SandboxServiceExtras`, such as the secrets service's `recoveryKeys`).
 */
export interface RunningSandbox extends SandboxServiceExtras {
  /** e.g. http://127.0.0.1:41234 */
  url: string;
  port: number;
  host: string;
  rootToken: string;
  /** Text to show the user once, from the services (each ends in a newline); `converge sandbox` prints it on stderr. */
  startupNotes: readonly string[];
  /** The injected faults in words with the seed in use (one line each, no newline); empty without faults. */
  faultSummary: readonly string[];
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
  const services = opts.services ?? SANDBOX_SERVICES;
  const log = opts.log ?? (() => {});
  const shutdown = new AbortController();
  // Every request in flight listens for shutdown (and lets go when it ends): a busy sandbox has more
  // than Node's default of 10 at once, which is expected rather than a leak.
  setMaxListeners(0, shutdown.signal);
  const router = new Router();
  // Before any service reads its state file (or the root token is read): a second sandbox on the
  // folder is refused first.
  const lock = opts.dataDir !== undefined ? takeDataLock(opts.dataDir) : undefined;
  try {
    // With a data folder, the token of the first start (given with --token or made), so that a
    // restart without --token accepts the token its clients hold. A --token given later is used for
    // that start alone, and the kept one stays.
    const kept =
      opts.token === undefined && opts.dataDir !== undefined ? readKeptRootToken(opts.dataDir) : undefined;
    const rootToken = opts.token ?? kept ?? randomUUID();
    const keep =
      opts.dataDir !== undefined &&
      (opts.token === undefined ? kept === undefined : !existsSync(join(opts.dataDir, ROOT_TOKEN_FILE)));
    return await startLocked(rootToken, keep);
  } catch (err) {
    lock?.release();
    throw err;
  }

  async function startLocked(rootToken: string, keepToken: boolean): Promise<RunningSandbox> {
    const config = resolveConfig(opts.config, opts.faults, rootToken, services);
    const tokens = new TokenStore(rootToken, config.tokens ?? []);
    const started = await createServices(services, {
      config,
      tokens,
      router,
      shutdown: shutdown.signal,
      log,
      dataDir: opts.dataDir,
      debounceMs: PERSIST_DEBOUNCE_MS,
    });
    const extras = mergeExtras(services, started.instances);
    for (const instance of started.instances) instance.created?.();

    const faults = config.faults ? new FaultInjector(config.faults) : undefined;
    const faultSummary = faults ? describeFaults(faults, Object.keys(config.faults?.services ?? {})) : [];
    const server = new SandboxServer({ router, services, faults, shutdown, log });
    let address: AddressInfo;
    try {
      address = await server.listen(opts.port ?? 0, host);
    } catch (err) {
      await server.close();
      throw err;
    }
    // Seeding on start is a change too: the data folder holds a complete state from the first moment.
    for (const saver of started.savers) saver.markDirty();
    // Kept once the sandbox is up, with its state: a start refused (bad config, port in use) keeps
    // no token that no client was ever given.
    if (keepToken && opts.dataDir !== undefined) {
      try {
        keepRootToken(opts.dataDir, rootToken);
      } catch (err) {
        await server.close();
        throw err;
      }
    }

    const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
    let closing: Promise<void> | undefined;
    return {
      ...extras,
      url,
      port: address.port,
      host,
      rootToken,
      startupNotes: started.instances.flatMap((instance) => instance.startupNotes ?? []),
      faultSummary,
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
          const results = await Promise.allSettled(started.savers.map((s) => s.close()));
          lock?.release();
          const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
          if (failed) throw failed.reason;
        })();
        return closing;
      },
    };
  }
}

/** The validated config with the fault options laid over it; a token may not share the root token's secret. */
function resolveConfig(
  given: SandboxConfig | string | undefined,
  faultOptions: FaultsConfig | undefined,
  rootToken: string,
  services: readonly AnyServiceDefinition[],
): SandboxConfig {
  const source = typeof given === 'string' ? given : undefined;
  if (rootToken === '')
    throw new SandboxConfigError([{ path: [], message: 'the root token must not be empty' }]);
  const loaded =
    source !== undefined ? loadConfigFile(source, services) : validateSandboxConfig(given, { services });
  // The options are checked on their own (their problems are not the file's), then laid over it.
  if (faultOptions) validateSandboxConfig({ faults: faultOptions }, { services });
  const faults = mergeFaults(loaded.faults, faultOptions);
  // Each alone was checked; laid over each other they may still ask for more than all requests.
  // Refused here, before any service starts or writes its data folder.
  if (faults) assertFaultSharesFit(faults);
  const config: SandboxConfig = faults ? { ...loaded, faults } : loaded;
  const clash = config.tokens?.findIndex((t) => t.secret === rootToken) ?? -1;
  if (clash !== -1) {
    throw new SandboxConfigError(
      [{ path: ['tokens', clash, 'secret'], message: 'equals the root token' }],
      source,
    );
  }
  return config;
}

/** What every sandbox has, by name: a service's extra may not take one of these names. */
const HANDLE_KEYS = new Set([
  'url',
  'port',
  'host',
  'rootToken',
  'startupNotes',
  'faultSummary',
  'env',
  'close',
]);

/** The services' extras as one object; two services (or a service and the handle) sharing a name is a bug. */
function mergeExtras(
  services: readonly AnyServiceDefinition[],
  instances: readonly ServiceInstance[],
): SandboxServiceExtras {
  const merged: Record<string, unknown> = {};
  const owner = new Map<string, string>();
  instances.forEach((instance, i) => {
    const name = services[i]!.name;
    for (const [key, value] of Object.entries(instance.extras ?? {})) {
      const taken = HANDLE_KEYS.has(key) ? 'the sandbox' : owner.get(key);
      if (taken !== undefined)
        throw new Error(`sandbox service ${name}: extra "${key}" is already ${taken}'s`);
      owner.set(key, `service ${name}`);
      merged[key] = value;
    }
  });
  return merged as SandboxServiceExtras;
}
