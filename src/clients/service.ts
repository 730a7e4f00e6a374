/**
 * The client side of a service: what Converge must know to reach it. Each service's client folder
 * exports one definition (`clients/registry/definition.ts`); the CLI's catalog lists them, and no
 * other shared file names a service. The sandbox side has its own definition per service
 * (`sandbox/services/<name>/index.ts`).
 */
import type { RequestScope } from './http/create-sends.js';
import type { ServiceName } from '../common/types.js';
import type { HttpClientOptions } from './http/client.js';

/** A connection setting beyond address and token (a workspace connection's default organization). */
export interface ConnectionSetting {
  /** The `Connection` spec field, and the key in `ConnectionConfig.settings` (`organization`). */
  readonly key: string;
  /** The environment variable's suffix: `ORGANIZATION` reads `CONVERGE_<SERVICE>_ORGANIZATION`. */
  readonly env: string;
  readonly description: string;
}

/**
 * HTTP behaviour a run chooses for every service (timeouts, retry reporting, the response size cap,
 * the run's interrupt `signal`), never the token.
 */
export type RunHttpOptions = Partial<
  Pick<
    HttpClientOptions,
    | 'onRetry'
    | 'onRateLimitPause'
    | 'hosts'
    | 'onRequest'
    | 'requestTimeoutMs'
    | 'connectTimeoutMs'
    | 'deadlineMs'
    | 'settingNames'
    | 'dispatcher'
    | 'maxResponseBytes'
    | 'signal'
    | 'maxConnections'
    | 'secrets'
  >
>;

/** Where and how to reach one service: from `CONVERGE_<SERVICE>_*` or a manifest `Connection`. */
export interface ConnectionConfig {
  /** `scheme://host:port[/prefix]`, without a trailing slash. */
  address: string;
  token?: string;
  /** PEM text of a CA to trust in addition to the system's. */
  caCertificate?: string;
  insecureSkipTlsVerify?: boolean;
  /** What to fix when the address is wrong: `CONVERGE_REGISTRY_ADDR`, or `connection "eu" (file:line)`. */
  addressSource: string;
  /** What to fix when the token is missing or refused (same forms as `addressSource`). */
  tokenSource: string;
  /** The service's own settings, by `ConnectionSetting.key`. */
  settings: Readonly<Record<string, string>>;
  http?: RunHttpOptions;
}

/** What every service client offers the composition root. */
export interface ServiceClient {
  /** Attempts sent so far, retries included (for `--json` and the benchmarks). */
  readonly requestCount: number;
  /**
   * Where requests go (its base URL, `…/api/v2` added where the service has one): what a saved plan
   * records and compares. Default: the connection's address as given.
   */
  readonly baseUrl?: string;
  /** Whether an answer showed the client's token (as sent, in hex or base64): a plan then masks it. */
  readonly echoedToken?: boolean;
  /**
   * This client with every request it makes carrying `scope` (the change it is made for): see
   * `RequestScope`. A client without it makes its requests unscoped (no object in retry lines).
   */
  withScope?(scope: RequestScope): this;
  close(): Promise<void>;
}

export interface ServiceDefinition<Client extends ServiceClient = ServiceClient> {
  /** `registry`: `CONVERGE_REGISTRY_ADDR`, `Connection.service: registry`. */
  readonly name: ServiceName;
  /** One line for help texts: what Converge manages there. */
  readonly description: string;
  readonly settings?: readonly ConnectionSetting[];
  /** The header(s) that carry the token. */
  authHeaders(token: string): Record<string, string>;
  /**
   * Loads the client's code ahead of `createClient`, for definitions that keep it out of start-up
   * (`validate` needs a service's name and settings, never its HTTP client). Absent: always ready.
   */
  loadClient?(): Promise<void>;
  /** Throws if `loadClient` exists and has not finished. */
  createClient(connection: ConnectionConfig): Client;
}

/** Keeps the client type of a definition listed beside others. */
export function defineService<Client extends ServiceClient>(
  definition: ServiceDefinition<Client>,
): ServiceDefinition<Client> {
  return definition;
}

/** The definition list erased to the common client type, for the catalog. */
export type AnyServiceDefinition = ServiceDefinition<ServiceClient>;

/**
 * The options every service client's `fromConnection` takes, from a connection and the service's
 * auth headers: so a definition's `createClient` is one line plus its own settings.
 */
export function clientConnection(
  connection: ConnectionConfig,
  definition: Pick<ServiceDefinition, 'authHeaders'>,
): ClientConnectionOptions {
  const { settings: _settings, http, ...common } = connection;
  return { ...common, http: { ...http, authHeaders: definition.authHeaders } };
}

/** What `clientConnection` gives a client's `fromConnection`: the connection, its auth headers set. */
export type ClientConnectionOptions = Omit<ConnectionConfig, 'settings' | 'http'> & {
  http: Partial<HttpClientOptions>;
};

/**
 * A definition whose client is built the usual way: the connection with the service's auth headers,
 * handed to the client's `fromConnection` (which also gets the raw connection, for its own settings).
 */
export function defineClientService<Client extends ServiceClient>(
  definition: Omit<ServiceDefinition<Client>, 'createClient'> & {
    fromConnection(options: ClientConnectionOptions, connection: ConnectionConfig): Client;
  },
): ServiceDefinition<Client> {
  const { fromConnection, ...rest } = definition;
  return {
    ...rest,
    createClient: (connection) => fromConnection(clientConnection(connection, definition), connection),
  };
}

/** How a lazily loaded client is made once its module is in: `RegistryClient.fromConnection`. */
export type ClientFactory<Client> = (
  options: ClientConnectionOptions,
  connection: ConnectionConfig,
) => Client;

/**
 * A definition whose client module is imported only by `loadClient` (dynamic `import()`), so that
 * reading the catalog (kinds, names, settings) does not load the whole HTTP layer: about a third of
 * `converge validate`'s start-up (issue 20). `createClient` stays synchronous for the kinds; the
 * composition root awaits `loadClient` before handing out clients.
 */
export function defineLazyClientService<Client extends ServiceClient>(
  definition: Omit<ServiceDefinition<Client>, 'createClient' | 'loadClient'> & {
    importClient(): Promise<ClientFactory<Client>>;
  },
): ServiceDefinition<Client> {
  const { importClient, ...rest } = definition;
  let factory: ClientFactory<Client> | undefined;
  let loading: Promise<void> | undefined;
  return {
    ...rest,
    loadClient() {
      loading ??= importClient().then((f) => {
        factory = f;
      });
      return loading;
    },
    createClient(connection) {
      if (!factory) throw new Error(`the ${definition.name} client was used before loadClient() finished`);
      return factory(clientConnection(connection, definition), connection);
    },
  };
}
