/**
 * The composition root for services: builds each service's client from the environment
 * (CONVERGE_<SERVICE>_ADDR / _TOKEN) or from a `Connection` declared in the manifest, lazily, so a
 * manifest that uses one service needs only that service's variables.
 */
import { endpointFromEnv } from '../clients/http/index.js';
import type { ServiceClients } from '../clients/index.js';
import { RegistryClient } from '../clients/registry.js';
import { WorkspacesClient } from '../clients/workspaces.js';
import { formatPosition, type ManifestConnection, type ServiceName } from '../manifest/types.js';
import type { KindContext } from '../resources/contract.js';
import { CliError } from './exit-codes.js';

export interface ConnectionOptions {
  address: string;
  token?: string;
  caCertificate?: string;
  insecureSkipTlsVerify?: boolean;
  /** Where the address came from, for "cannot reach" hints (default: the environment variable). */
  addressSource?: string;
  /** Workspaces: the organization of objects that name none. */
  organization?: string;
}

interface Closable {
  close(): Promise<void>;
  requestCount: number;
}

type Factory<S extends ServiceName> = (options: ConnectionOptions) => ServiceClients[S] & Closable;

const factories: { [S in ServiceName]?: Factory<S> } = {
  registry: (o) => RegistryClient.fromConnection(o) as RegistryClient & Closable,
  workspaces: ({ organization, ...o }) =>
    WorkspacesClient.fromConnection({
      ...o,
      ...(organization !== undefined ? { defaultOrganization: organization } : {}),
    }) as WorkspacesClient & Closable,
};

export class ServiceConnections implements KindContext {
  private readonly clients = new Map<string, Closable>();
  readonly signal?: AbortSignal;
  readonly flags: Readonly<{ forceUnlock?: boolean }>;
  constructor(
    private readonly env: NodeJS.ProcessEnv,
    private readonly declared: readonly ManifestConnection[] = [],
    run: { signal?: AbortSignal; flags?: { forceUnlock?: boolean } } = {},
  ) {
    if (run.signal) this.signal = run.signal;
    this.flags = run.flags ?? {};
  }

  /** The environment's connection for the service, or the manifest's Connection of that name. */
  private options(service: ServiceName, connection?: string): ConnectionOptions {
    let source: Omit<ConnectionOptions, 'addressSource'> & { addressSource?: string };
    if (connection === undefined) {
      try {
        source = endpointFromEnv(service, this.env);
      } catch (error) {
        throw new CliError(error instanceof Error ? error.message : String(error));
      }
    } else {
      const c = this.declared.find((d) => d.name === connection && d.service === service);
      if (!c)
        throw new CliError(`no ${service} connection named "${connection}" is declared in the manifest`);
      source = { ...c, addressSource: `connection "${c.name}" (${formatPosition(c.source)})` };
    }
    const { address, token, caCertificate, insecureSkipTlsVerify, addressSource, organization } = source;
    return {
      address,
      ...(token !== undefined ? { token } : {}),
      ...(caCertificate !== undefined ? { caCertificate } : {}),
      ...(insecureSkipTlsVerify ? { insecureSkipTlsVerify: true } : {}),
      ...(addressSource !== undefined ? { addressSource } : {}),
      ...(organization !== undefined ? { organization } : {}),
    };
  }

  client<S extends ServiceName>(service: S, connection?: string): ServiceClients[S] {
    const id = `${service}@${connection ?? ''}`;
    const existing = this.clients.get(id);
    if (existing) return existing as unknown as ServiceClients[S];
    const factory = factories[service] as Factory<S> | undefined;
    if (!factory) throw new CliError(`the ${service} service is not supported yet`);
    const created = factory(this.options(service, connection));
    this.clients.set(id, created);
    return created;
  }

  /** Requests sent per service so far (for `--json` and benchmarks). */
  requestCounts(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const [id, c] of this.clients) {
      const service = id.split('@')[0]!;
      counts[service] = (counts[service] ?? 0) + c.requestCount;
    }
    return counts;
  }

  async close(): Promise<void> {
    await Promise.all([...this.clients.values()].map((c) => c.close()));
  }
}

/**
 * Runs a one-off operator command with one service's client from the environment, and closes the
 * connection pool afterwards whatever happens.
 */
export async function withClient<S extends ServiceName, T>(
  io: { env: NodeJS.ProcessEnv },
  service: S,
  fn: (client: ServiceClients[S]) => Promise<T>,
): Promise<T> {
  const connections = new ServiceConnections(io.env);
  try {
    return await fn(connections.client(service));
  } finally {
    await connections.close();
  }
}
