/**
 * Connecting to the directory as Vault does (hashicorp/cap `ldap.(Client).connect`, formerly
 * `ldaputil.DialLDAP`): the comma-separated `url` list is tried in order and the first server that
 * connects wins. `ldap://` dials TCP (then StartTLS when `starttls`), `ldaps://` dials TLS; any other
 * scheme is an error for that URL. Each failure is collected, and when none connects the errors are
 * reported together in go-multierror's format.
 *
 * ldapts connects lazily and has no public connect, so the socket is dialled here (TCP and, for
 * `ldaps://`, the TLS handshake within `connection_timeout`) and handed to ldapts through its
 * `createConnection` / `createSecureConnection` hooks. `request_timeout` becomes ldapts' per-operation
 * `timeout`. (Vault ≥ 1.16 passes a single timeout, the smaller of the two, to cap; the spec describes
 * them separately, so they stay separate here.)
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import net from 'node:net';
import tls from 'node:tls';
import { Client } from 'ldapts';
import type { DirectorySettings, TlsVersion } from './directory-login.js';

const TLS_VERSIONS: Record<TlsVersion, tls.SecureVersion> = {
  tls10: 'TLSv1',
  tls11: 'TLSv1.1',
  tls12: 'TLSv1.2',
  tls13: 'TLSv1.3',
};

export type ConnectSettings = Pick<
  DirectorySettings,
  | 'url'
  | 'connection_timeout'
  | 'request_timeout'
  | 'starttls'
  | 'tls_min_version'
  | 'tls_max_version'
  | 'insecure_tls'
  | 'certificate'
  | 'client_tls_cert'
  | 'client_tls_key'
>;

/** No configured server could be reached; `message` is the multierror text, `errors` its items. */
export class ConnectError extends Error {
  constructor(readonly errors: string[]) {
    super(formatMultiError(errors));
    this.name = 'ConnectError';
  }
}

/** go-multierror's ListFormatFunc. */
export function formatMultiError(errors: readonly string[]): string {
  if (errors.length === 1) return `1 error occurred:\n\t* ${errors[0]}\n\n`;
  return `${errors.length} errors occurred:\n\t${errors.map((e) => `* ${e}`).join('\n\t')}\n\n`;
}

export interface DirectoryConnection {
  client: Client;
  /** The URL (as configured) that answered. */
  url: string;
  /** Unbinds (best effort) and destroys the socket; safe to call more than once. */
  close(): Promise<void>;
}

const OP = 'ldap.(Client).connect';

/** Connects to the first reachable server of `settings.url`; rejects with `ConnectError` when none is. */
export async function connectDirectory(
  settings: ConnectSettings,
  signal?: AbortSignal,
): Promise<DirectoryConnection> {
  const errors: string[] = [];
  for (const raw of settings.url.split(',')) {
    signal?.throwIfAborted();
    const url = raw.trim();
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      errors.push(`${OP}: error parsing url "${url}": parse "${url}": invalid URI for request`);
      continue;
    }
    const scheme = parsed.protocol.replace(/:$/, '').toLowerCase();
    if (scheme !== 'ldap' && scheme !== 'ldaps') {
      errors.push(`${OP}: invalid LDAP scheme in url "${url}": invalid parameter`);
      continue;
    }
    const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
    const port = parsed.port ? Number(parsed.port) : scheme === 'ldaps' ? 636 : 389;
    try {
      const connection = await connectOne(settings, scheme, url, host, port, signal);
      return connection;
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      errors.push(`${OP}: error connecting to host "${url}": ${describeError(err, host, port)}`);
    }
  }
  throw new ConnectError(errors);
}

async function connectOne(
  settings: ConnectSettings,
  scheme: 'ldap' | 'ldaps',
  url: string,
  host: string,
  port: number,
  signal: AbortSignal | undefined,
): Promise<DirectoryConnection> {
  const timeoutMs = Math.max(0, settings.connection_timeout) * 1000;
  const requestTimeoutMs = Math.max(0, settings.request_timeout) * 1000;
  const tlsOptions = scheme === 'ldaps' || settings.starttls ? tlsOptionsFor(settings, host) : undefined;
  const socket =
    scheme === 'ldaps'
      ? await dial(() => tls.connect({ ...tlsOptions, host, port }), 'secureConnect', timeoutMs, signal)
      : await dial(() => net.connect({ host, port }), 'connect', timeoutMs, signal);
  // Until ldapts takes the socket over (at the first operation) nobody else listens for its errors.
  const ignoreEarlyErrors = () => {};
  socket.on('error', ignoreEarlyErrors);
  let handedOver = false;
  const handOver = (): net.Socket => {
    if (handedOver) throw new Error('the connection to the directory server was lost');
    handedOver = true;
    return socket;
  };
  let client: Client;
  try {
    client = new Client({
      url: `${scheme}://${net.isIPv6(host) ? `[${host}]` : host}:${port}`,
      timeout: requestTimeoutMs || undefined,
      connectTimeout: timeoutMs || undefined,
      ...(scheme === 'ldaps'
        ? { createSecureConnection: handOver as unknown as typeof tls.connect }
        : { createConnection: handOver as unknown as typeof net.connect }),
    });
  } catch (err) {
    socket.destroy();
    throw err;
  }
  const close = async () => {
    await closeClient(client);
    socket.destroy();
  };
  if (scheme === 'ldap' && settings.starttls) {
    // The StartTLS request has the request timeout; the handshake after it gets connection_timeout.
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        client.startTLS({ ...tlsOptions, host }),
        new Promise<never>((_, reject) => {
          if (timeoutMs > 0)
            timer = setTimeout(() => reject(new DialTimeout()), timeoutMs + requestTimeoutMs);
        }),
      ]);
    } catch (err) {
      await close();
      throw err;
    } finally {
      if (timer) clearTimeout(timer);
    }
  }
  return { client, url, close };
}

/** Dials with a deadline covering TCP and, for TLS, the handshake; the socket is destroyed on failure. */
function dial<S extends net.Socket>(
  open: () => S,
  readyEvent: 'connect' | 'secureConnect',
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<S> {
  return new Promise<S>((resolve, reject) => {
    const socket = open();
    let timer: NodeJS.Timeout | undefined;
    const cleanup = () => {
      if (timer) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      socket.removeListener('error', onError);
      socket.removeListener(readyEvent, onReady);
    };
    const fail = (err: unknown) => {
      cleanup();
      socket.destroy();
      reject(err);
    };
    const onError = (err: Error) => fail(err);
    const onAbort = () => fail(signal!.reason);
    const onReady = () => {
      cleanup();
      resolve(socket);
    };
    socket.once('error', onError);
    socket.once(readyEvent, onReady);
    signal?.addEventListener('abort', onAbort, { once: true });
    if (timeoutMs > 0) timer = setTimeout(() => fail(new DialTimeout()), timeoutMs);
  });
}

/** A TLS setting Vault's getTLSConfig refuses; reported as is for that URL. */
class TlsSettingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TlsSettingError';
  }
}

class DialTimeout extends Error {
  constructor() {
    super('i/o timeout');
    this.name = 'DialTimeout';
  }
}

/** Vault's getTLSConfig as Node TLS options; throws with Vault's wording for bad settings. */
export function tlsOptionsFor(settings: ConnectSettings, host: string): tls.ConnectionOptions {
  const minVersion = TLS_VERSIONS[settings.tls_min_version];
  if (settings.tls_min_version && !minVersion)
    throw new TlsSettingError(`invalid 'tls_min_version' in config: invalid parameter`);
  const maxVersion = TLS_VERSIONS[settings.tls_max_version];
  if (settings.tls_max_version && !maxVersion)
    throw new TlsSettingError(`invalid 'tls_max_version' in config: invalid parameter`);
  const options: tls.ConnectionOptions = {
    minVersion,
    maxVersion,
    rejectUnauthorized: !settings.insecure_tls,
  };
  // Node refuses an IP address as SNI name; the certificate is still checked against `host`.
  if (!net.isIP(host)) options.servername = host;
  if (settings.certificate) {
    try {
      new X509Certificate(settings.certificate);
    } catch {
      throw new TlsSettingError('could not append CA certificate: unknown');
    }
    options.ca = [settings.certificate];
  }
  if (settings.client_tls_cert && settings.client_tls_key) {
    try {
      new X509Certificate(settings.client_tls_cert);
      createPrivateKey(settings.client_tls_key);
    } catch (err) {
      throw new TlsSettingError(
        `failed to parse client X509 key pair: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    options.cert = settings.client_tls_cert;
    options.key = settings.client_tls_key;
  } else if (settings.client_tls_cert || settings.client_tls_key) {
    throw new TlsSettingError(
      'both client_tls_cert and client_tls_key must be set in configuration: invalid parameter',
    );
  }
  return options;
}

/** Roughly Go's wording for dial errors (`LDAP Result Code 200 "Network Error": dial tcp …`). */
function describeError(err: unknown, host: string, port: number): string {
  const address = net.isIPv6(host) ? `[${host}]:${port}` : `${host}:${port}`;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const network = (detail: string) => `LDAP Result Code 200 "Network Error": ${detail}`;
  if (err instanceof TlsSettingError) return `ldap.getTLSConfig: ${err.message}`;
  if (err instanceof DialTimeout) return network(`dial tcp ${address}: i/o timeout`);
  switch (code) {
    case 'ECONNREFUSED':
      return network(`dial tcp ${address}: connect: connection refused`);
    case 'EHOSTUNREACH':
      return network(`dial tcp ${address}: connect: no route to host`);
    case 'ENETUNREACH':
      return network(`dial tcp ${address}: connect: network is unreachable`);
    case 'ECONNRESET':
      return network(`read tcp ${address}: read: connection reset by peer`);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return network(`dial tcp: lookup ${host}: no such host`);
  }
  const message = err instanceof Error ? err.message : String(err);
  if (code?.startsWith('ERR_TLS') || /certificate|ssl|tls/i.test(message)) return network(`tls: ${message}`);
  return network(message);
}

/** Unbinds and closes, ignoring errors (the connection may already be gone). */
export async function closeClient(client: Client): Promise<void> {
  try {
    await client.unbind();
  } catch {
    // already closed or broken: nothing left to release
  }
}
