/**
 * What every service client shares: one `HttpClient` per connection, its attempt count (for `--json`
 * and the benchmarks) and closing it. A client with another connection (the workspace client's
 * token-less downloads) adds it to both.
 */
import type { HttpClient } from './client.js';
import type { CreateSends, RequestScope } from './create-sends.js';

export class HttpServiceClient {
  constructor(readonly http: HttpClient) {}

  /**
   * This client with every request carrying `scope`: a view of it (its caches and settings shared),
   * whose `http` adds the scope. Identity-keyed caches use `root`, the client the views came from.
   */
  withScope(scope: RequestScope): this {
    const view = Object.create(this) as this;
    const http = this.http.withScope(scope);
    Object.defineProperty(view, 'http', { value: http });
    Object.defineProperty(view, 'root', { value: this.root });
    Object.defineProperty(view, 'requestScope', { value: scope });
    for (const [name, value] of Object.entries(this.scopedParts(http)))
      Object.defineProperty(view, name, { value });
    return view;
  }

  /**
   * This client (or view) with its requests counted as the sends of one non-idempotent request that
   * the caller reads back before sending again (`CreateSends`): the first write of each send (once
   * `claimed` is reset) gets the create's limits, and a lost answer comes back with a `ResendGrant`.
   * The view's object label is kept.
   */
  withResends(sends: CreateSends): this {
    return this.withScope({ ...this.requestScope, createSends: sends });
  }

  /**
   * The client's own parts that hold its `http` (a helper made at construction, its blocking reads),
   * made again for a scoped view's `http`: they would otherwise send through the unscoped one.
   */
  protected scopedParts(_http: HttpClient): Record<string, unknown> {
    return {};
  }

  /**
   * A view's scope, for a request the client makes through another connection of its own (the
   * workspace client's downloads), which its `http` does not carry. Undefined on the client itself.
   */
  protected readonly requestScope?: RequestScope;

  /** The client itself, not a scoped view of it: the key of caches per client. */
  get root(): HttpServiceClient {
    return this;
  }

  /** Where requests go: the service's base URL, as the client made it of its address. */
  get baseUrl(): string {
    return this.http.baseUrl;
  }

  /** Whether an answer showed this client's token: see `HttpClient.echoedToken`. */
  get echoedToken(): boolean {
    return this.http.echoedToken;
  }

  /** Attempts sent so far, retries included. */
  get requestCount(): number {
    return this.http.requestCount;
  }

  close(): Promise<void> {
    return this.http.close();
  }
}
