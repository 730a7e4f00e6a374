/** Where a service lives and how to authenticate to it, from `CONVERGE_<SERVICE>_*` variables. */
import { readFileSync } from 'node:fs';
import type { ServiceName } from '../../manifest/types.js';

export interface Endpoint {
  service: ServiceName;
  /** `scheme://host:port[/prefix]`, without a trailing slash. */
  address: string;
  token?: string;
  /** PEM text of a CA to trust in addition to the system's. */
  caCertificate?: string;
  insecureSkipTlsVerify: boolean;
  /** Where the address came from, for error hints (`CONVERGE_REGISTRY_ADDR`). */
  addressSource: string;
  /** Workspaces only: the default organization, from `CONVERGE_WORKSPACES_ORGANIZATION`. */
  organization?: string;
}

export class EndpointConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EndpointConfigError';
  }
}

export function envVarPrefix(service: ServiceName): string {
  return `CONVERGE_${service.toUpperCase()}`;
}

/**
 * Reads `CONVERGE_<SERVICE>_ADDR` (required, http or https), `_TOKEN`, `_CACERT` (a path to a PEM
 * file) and `_INSECURE` (`1`/`true` skips certificate verification). For the workspace service also
 * `_ORGANIZATION`, the organization used when a manifest object names none.
 */
export function endpointFromEnv(service: ServiceName, env: NodeJS.ProcessEnv = process.env): Endpoint {
  const prefix = envVarPrefix(service);
  const addrVar = `${prefix}_ADDR`;
  const raw = env[addrVar]?.trim();
  if (!raw) {
    throw new EndpointConfigError(
      `${addrVar} is not set: set it to the ${service} service's address, e.g. http://127.0.0.1:8500`,
    );
  }
  const address = normaliseAddress(raw, addrVar);
  const endpoint: Endpoint = {
    service,
    address,
    insecureSkipTlsVerify: isTruthy(env[`${prefix}_INSECURE`]),
    addressSource: addrVar,
  };
  const token = env[`${prefix}_TOKEN`];
  if (token) endpoint.token = token;
  const caPath = env[`${prefix}_CACERT`]?.trim();
  if (caPath) endpoint.caCertificate = readCaFile(caPath, `${prefix}_CACERT`);
  // Only the workspace service has organizations; other services never get the key.
  const organization = service === 'workspaces' ? env[`${prefix}_ORGANIZATION`]?.trim() : undefined;
  if (organization) endpoint.organization = organization;
  return endpoint;
}

/** Checks that `raw` is an http(s) URL without credentials; returns it without a trailing slash. */
export function normaliseAddress(raw: string, source: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new EndpointConfigError(`${source} is not a URL: expected e.g. http://127.0.0.1:8500`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new EndpointConfigError(`${source} must start with http:// or https://, not ${url.protocol}//`);
  }
  if (url.username || url.password) {
    throw new EndpointConfigError(`${source} must not carry credentials; use the _TOKEN variable`);
  }
  if (url.search || url.hash) {
    throw new EndpointConfigError(`${source} must not carry a query or fragment`);
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

function readCaFile(path: string, variable: string): string {
  let pem: string;
  try {
    pem = readFileSync(path, 'utf8');
  } catch (err) {
    throw new EndpointConfigError(`${variable}: cannot read ${path}: ${(err as Error).message}`);
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new EndpointConfigError(`${variable}: ${path} holds no PEM certificate`);
  }
  return pem;
}

function isTruthy(value: string | undefined): boolean {
  return value !== undefined && ['1', 'true', 'yes'].includes(value.trim().toLowerCase());
}
