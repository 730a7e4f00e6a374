/**
 * From what a service client's `fromConnection` takes (address, token, TLS, where each came from) to
 * the options of its `HttpClient`. Every service takes the same connection; what differs (the base
 * URL, how its error bodies read, its auth header, which statuses it retries) the service says in
 * `ServiceHttp`, so the four clients no longer copy the mapping.
 */
import type { Dispatcher } from 'undici';
import type { HttpClientOptions } from './client.js';

/** Where and how a service client reaches its service. */
export interface ClientConnection {
  address: string;
  token?: string;
  caCertificate?: string;
  insecureSkipTlsVerify?: boolean;
  dispatcher?: Dispatcher;
  /** Where the address came from, for "cannot reach" hints. Default `CONVERGE_<SERVICE>_ADDR`. */
  addressSource?: string;
  /** Where the token came from, for 401/403 hints. Default `CONVERGE_<SERVICE>_TOKEN`. */
  tokenSource?: string;
  /** Anything else of the HTTP layer (timeouts and `deadlineMs`, retry, hooks). */
  http?: Partial<Omit<HttpClientOptions, 'service' | 'baseUrl' | 'token'>>;
}

/** What a service decides about its HTTP itself; `baseUrl` defaults to the connection's address. */
export type ServiceHttp = Pick<HttpClientOptions, 'service'> &
  Partial<
    Pick<
      HttpClientOptions,
      'baseUrl' | 'authHeaders' | 'parseError' | 'errorDetails' | 'routeMissing' | 'retry'
    >
  >;

/**
 * The `HttpClient` options for `connection`. The service's own choices win over the connection's
 * `http` extras, but for `retry`, whose fields the caller may still tune on top of the service's.
 */
export function connectionHttpOptions(connection: ClientConnection, service: ServiceHttp): HttpClientOptions {
  const { http: extra, ...c } = connection;
  return {
    ...extra,
    baseUrl: c.address,
    ...service,
    retry: { ...service.retry, ...extra?.retry },
    ...(c.token ? { token: c.token } : {}),
    ...(c.caCertificate ? { caCertificate: c.caCertificate } : {}),
    ...(c.insecureSkipTlsVerify ? { insecureSkipTlsVerify: true } : {}),
    ...(c.dispatcher ? { dispatcher: c.dispatcher } : {}),
    ...(c.addressSource ? { addressSource: c.addressSource } : {}),
    ...(c.tokenSource ? { tokenSource: c.tokenSource } : {}),
  };
}
