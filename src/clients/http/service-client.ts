/**
 * What every service client shares: one `HttpClient` per connection, its attempt count (for `--json`
 * and the benchmarks) and closing it. A client with another connection (the workspace client's
 * token-less downloads) adds it to both.
 */
import type { HttpClient } from './client.js';

export class HttpServiceClient {
  constructor(readonly http: HttpClient) {}

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
