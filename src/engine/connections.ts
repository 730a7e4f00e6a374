/**
 * The composition root for services: builds each service's client from the environment
 * (CONVERGE_<SERVICE>_ADDR / _TOKEN / settings) or from a `Connection` declared in the manifest,
 * lazily, so a manifest that uses one service needs only that service's variables.
 */
import { connectionFromEnv, EndpointNotSetError } from '../clients/http/endpoint.js';
import { HostRegistry } from '../clients/http/host-registry.js';
import type {
  AnyServiceDefinition,
  ConnectionConfig,
  RunHttpOptions,
  ServiceClient,
  ServiceDefinition,
} from '../clients/service.js';
import { type SettingNames, settingNames } from '../common/setting-names.js';
import { formatPosition } from '../common/types.js';
import type { ManifestConnection } from '../manifest/types.js';
import type { ConnectionSettings, KindContext } from '../resources/contract.js';
import { connectionSettings, declaredConnection } from './connection-settings.js';
import { EngineError, ServiceNotConfiguredError } from './errors.js';
import { SERVICE_MODULES } from './services.js';

// The built-in services' clients are imported lazily (validate never needs them); whoever makes
// connections gets them loaded here, once, so `client()` can stay synchronous for the kinds.
await Promise.all(SERVICE_MODULES.map((m) => m.definition.loadClient?.()));

/** How a front end wants the HTTP of a run to behave; the rest comes from the environment. */
export interface HttpSettings {
  /** Where retry events go (the CLI prints a line on standard error for each). */
  onRetry?: RunHttpOptions['onRetry'];
  /** Where rate-limit pauses go (the CLI prints `registry: rate limited, waiting 1.2 s (429)`). */
  onRateLimitPause?: RunHttpOptions['onRateLimitPause'];
  /** A request gives up after this long, retries included (`--timeout`). */
  timeoutSeconds?: number;
  /** How the front end names `timeout` and `parallelism` in errors; default these options' names. */
  settingNames?: Partial<SettingNames>;
  /**
   * How many changes or reads the run keeps in flight (`--parallelism`): each service's pool opens
   * as many connections (10 at least), so none of them waits in the pool unseen, as if started.
   */
  parallelism?: number;
}

/** Connections per service host when the run says no more (terraform's default parallelism). */
const DEFAULT_CONNECTIONS = 10;
/**
 * The most connections per service host whatever `--parallelism` says: each is a socket (a file
 * descriptor, and a slot in the service's own connection limit); beyond it, requests queue.
 */
export const MAX_CONNECTIONS = 256;

/**
 * What every client of a run does over HTTP: retries are reported as they happen (so a slow service
 * is never silent), each request gives up at the deadline, and no answer is read past
 * CONVERGE_MAX_RESPONSE_BYTES.
 */
export function httpOptions(env: NodeJS.ProcessEnv, settings: HttpSettings = {}): RunHttpOptions {
  const maxResponseBytes = maxResponseBytesFromEnv(env);
  const names = settingNames(settings.settingNames);
  return {
    ...(settings.onRetry ? { onRetry: settings.onRetry } : {}),
    ...(settings.onRateLimitPause ? { onRateLimitPause: settings.onRateLimitPause } : {}),
    ...(settings.timeoutSeconds !== undefined ? { deadlineMs: settings.timeoutSeconds * 1000 } : {}),
    ...(maxResponseBytes !== undefined ? { maxResponseBytes } : {}),
    ...(settings.parallelism !== undefined && settings.parallelism > DEFAULT_CONNECTIONS
      ? { maxConnections: Math.min(Math.floor(settings.parallelism), MAX_CONNECTIONS) }
      : {}),
    settingNames: { timeout: names.timeout, parallelism: names.parallelism },
  };
}

export const MAX_RESPONSE_BYTES_VAR = 'CONVERGE_MAX_RESPONSE_BYTES';

/** CONVERGE_MAX_RESPONSE_BYTES: a whole number of bytes; unset or empty keeps the default (64 MiB). */
export function maxResponseBytesFromEnv(env: NodeJS.ProcessEnv): number | undefined {
  const raw = env[MAX_RESPONSE_BYTES_VAR]?.trim();
  if (!raw) return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || !Number.isSafeInteger(Number(raw))) {
    throw new EngineError(
      `${MAX_RESPONSE_BYTES_VAR} must be a whole number of bytes, at least 1 (134217728 for 128 MiB), not "${raw}"`,
    );
  }
  return Number(raw);
}

export const RETRY_BUDGET_VAR = 'CONVERGE_RETRY_BUDGET';

/**
 * CONVERGE_RETRY_BUDGET: retries each request sent adds to its host's budget for the run (default
 * 0.25, on top of 10), for an operator whose services fail more than usual (an incident) and who
 * would rather wait than fail: at 15% errors and 15% dropped connections, no run got through on the
 * default. Bounded, so a retry storm stays bounded too.
 */
export function retryBudgetFromEnv(env: NodeJS.ProcessEnv): number | undefined {
  const raw = env[RETRY_BUDGET_VAR]?.trim();
  if (!raw) return undefined;
  const value = Number(raw);
  if (!/^\d+(\.\d+)?$/.test(raw) || !(value >= 0 && value <= 5)) {
    throw new EngineError(
      `${RETRY_BUDGET_VAR} must be a number of retries per request sent, from 0 to 5 (default 0.25; 1 allows as many retries as requests), not "${raw}"`,
    );
  }
  return value;
}

/** An address as it is compared: scheme, host, port and path, without user info or a trailing slash. */
function serviceAddress(address: string): string {
  try {
    const url = new URL(address);
    return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
  } catch {
    return address;
  }
}

export interface RunOptions {
  signal?: AbortSignal;
  /** Kind options switched on (`force-unlock`). */
  options?: readonly string[];
  /** HTTP behaviour for every client of the run (timeouts, retry reporting). */
  http?: RunHttpOptions;
}

export class ServiceConnections implements KindContext {
  private readonly clients = new Map<
    string,
    { service: string; client: ServiceClient; address: string; addressSource: string; token?: string }
  >();
  /** Each connection's settings, by service and connection name (see `settings`). */
  private readonly settingsCache = new Map<string, ConnectionSettings>();
  readonly signal?: AbortSignal;
  private readonly options: ReadonlySet<string>;
  private readonly http: RunHttpOptions;

  constructor(
    private readonly env: NodeJS.ProcessEnv,
    private readonly services: readonly AnyServiceDefinition[],
    private readonly declared: readonly ManifestConnection[] = [],
    run: RunOptions = {},
  ) {
    if (run.signal) this.signal = run.signal;
    this.options = new Set(run.options ?? []);
    // One rate limiter and retry budget per host for the whole run, whichever clients reach it.
    this.http = { ...run.http, hosts: run.http?.hosts ?? new HostRegistry(retryBudgetFromEnv(env)) };
  }

  option(flag: string): boolean {
    return this.options.has(flag);
  }

  /**
   * Loads the clients of services whose definitions import them lazily: the built-in ones are
   * loaded with this module, an added service's before its first `client()` call.
   */
  async ready(): Promise<this> {
    await Promise.all(this.services.map((s) => s.loadClient?.()));
    return this;
  }

  /**
   * Throws ServiceNotConfiguredError when the environment gives the service no address (a declared
   * Connection always has one): checked before anything else of the service is asked, so that the
   * missing address is what is said, not a setting derived from it (a workspace's organization).
   */
  requireConfigured(service: string, connection?: string): void {
    if (connection !== undefined) return;
    const definition = this.services.find((s) => s.name === service);
    if (definition) this.config(definition);
  }

  /**
   * A connection's settings, for effective namespaces: read without contacting the service. Once per
   * connection and run (the environment and the manifest do not change meanwhile): every workspace
   * asks for its organization, and reading the environment each time was a hundredth of a plan's CPU.
   */
  settings(service: string, connection?: string): ConnectionSettings {
    const key = `${service}\u0000${connection ?? ''}`;
    let settings = this.settingsCache.get(key);
    if (!settings) {
      settings = connectionSettings(this.env, this.services, this.declared, service, connection);
      this.settingsCache.set(key, settings);
    }
    return settings;
  }

  /** The environment's connection for the service, or the manifest's Connection of that name. */
  private config(service: AnyServiceDefinition, connection?: string): ConnectionConfig {
    let config: ConnectionConfig;
    if (connection === undefined) {
      try {
        config = connectionFromEnv(service, this.env);
      } catch (error) {
        // Only an address not set at all: one set wrongly (not a URL, an unreadable CA) is an error
        // to fix, never a service to leave out.
        if (error instanceof EndpointNotSetError) throw new ServiceNotConfiguredError(error.message);
        throw new EngineError(error instanceof Error ? error.message : String(error));
      }
    } else {
      const c = declaredConnection(this.declared, service.name, connection);
      const where = `connection "${c.name}" (${formatPosition(c.source)})`;
      config = {
        address: c.address,
        addressSource: `the address of ${where}`,
        tokenSource: where,
        settings: c.settings,
        ...(c.token !== undefined ? { token: c.token } : {}),
        ...(c.caCertificate !== undefined ? { caCertificate: c.caCertificate } : {}),
        ...(c.insecureSkipTlsVerify ? { insecureSkipTlsVerify: true } : {}),
      };
    }
    // The run's signal reaches every request the kinds make, whether or not a kind passes its own.
    const http = this.signal ? { ...this.http, signal: this.signal } : this.http;
    return { ...config, http };
  }

  client<C extends ServiceClient>(service: ServiceDefinition<C>, connection?: string): C {
    const id = `${service.name}@${connection ?? ''}`;
    const existing = this.clients.get(id);
    if (existing) return existing.client as C;
    const config = this.config(service, connection);
    const created = service.createClient(config);
    this.clients.set(id, {
      service: service.name,
      client: created,
      address: serviceAddress(created.baseUrl ?? config.address),
      addressSource: config.addressSource ?? `the ${service.name} address`,
      ...(config.token ? { token: config.token } : {}),
    });
    return created;
  }

  /**
   * Where each service this run contacted lives, by `service` or `service@connection`: what a saved
   * plan records, so that its apply goes to the services it was planned against. Without user info.
   */
  addresses(): Record<string, { address: string; source: string }> {
    const out: Record<string, { address: string; source: string }> = {};
    for (const [id, { address, addressSource }] of this.clients) {
      out[id.endsWith('@') ? id.slice(0, -1) : id] = { address, source: addressSource };
    }
    return out;
  }

  /**
   * The tokens this run sent that a service showed back in an answer (`ServiceClient.echoedToken`):
   * one that echoes a token into what a plan shows (a description, a lock reason) must not have it
   * printed in a plan posted to a pull request.
   */
  echoedCredentials(): string[] {
    const tokens = [...this.clients.values()].flatMap(({ client, token }) =>
      client.echoedToken && token ? [token] : [],
    );
    return [...new Set(tokens)];
  }

  /** Requests sent per service so far (for `--json` and benchmarks). */
  requestCounts(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const { service, client } of this.clients.values()) {
      counts[service] = (counts[service] ?? 0) + client.requestCount;
    }
    return counts;
  }

  async close(): Promise<void> {
    await Promise.all([...this.clients.values()].map(({ client }) => client.close()));
  }
}
