/**
 * The reads of a service that holds a request until an index moves (the registry and the scheduler):
 * the request parts of a blocking read, the index its answer carries for the next one, and a read of
 * what may not exist. Each service says how it scopes a request (its namespace parameter, headers)
 * and where its index travels; the rest is the same for both, so it lives here once.
 */
import type { SchemaSource } from './shape.js';
import { type BlockingParameters, blockingQuery, type Indexed, withIndex } from './blocking-query.js';
import type { HttpClient, HttpRequest } from './client.js';

/** How one service addresses its blocking reads. */
export interface BlockingService<Options> {
  /** Named in errors about a `wait` it cannot read. */
  name: string;
  /** The response headers that carry the index, first match wins (lower-case). */
  indexHeaders: readonly string[];
  /** How long the service holds a blocking read that names no `wait`. */
  defaultWaitMs: number;
  /** The service's namespace parameter, headers and the caller's signal for one request. */
  scoped(options: Options, query: HttpRequest['query']): Partial<HttpRequest>;
}

export class BlockingReads<Options extends BlockingParameters> {
  constructor(
    private readonly http: HttpClient,
    private readonly service: BlockingService<Options>,
  ) {}

  /** The same reads through another view of the client (a change's scoped one). */
  withHttp(http: HttpClient): BlockingReads<Options> {
    return new BlockingReads(http, this.service);
  }

  /** `scoped` plus `index`/`wait`, with a timeout long enough for the service to hold the request. */
  request(options: Options, query: HttpRequest['query'] = {}): Partial<HttpRequest> {
    const held = blockingQuery(this.service.name, options, this.service.defaultWaitMs);
    return { ...this.service.scoped(options, { ...query, ...held.query }), ...held.timeout };
  }

  /** `value` with the index the answer's headers carry, for the next blocking read. */
  indexed<T>(value: T, headers: Record<string, string>): Indexed<T> {
    return withIndex(value, headers, this.service.indexHeaders);
  }

  /** `GET path` of what may not exist: an undefined value on 404. */
  async optional<T>(path: string, options: Options, schema: SchemaSource): Promise<Indexed<T | undefined>> {
    const res = await this.http.requestOptional<T>({ method: 'GET', path, ...this.request(options) }, schema);
    return this.indexed(res.body, res.headers);
  }
}
