/** Where a service lives and how to authenticate to it, from `CONVERGE_<SERVICE>_*` variables. */
import { readFileSync } from 'node:fs';
import { envVarPrefix } from '../../common/types.js';
import type { ConnectionConfig, ServiceDefinition } from '../service.js';

export class EndpointConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EndpointConfigError';
  }
}

/** No address is set for the service at all: not configured, rather than configured wrongly. */
export class EndpointNotSetError extends EndpointConfigError {
  constructor(message: string) {
    super(message);
    this.name = 'EndpointNotSetError';
  }
}

/**
 * Reads `CONVERGE_<SERVICE>_ADDR` (required, http or https), `_TOKEN`, `_CACERT` (a path to a PEM
 * file), `_INSECURE` (`1`/`true` skips certificate verification), and one variable per setting the
 * service declares (the workspace service's `_ORGANIZATION`).
 */
export function connectionFromEnv(
  service: Pick<ServiceDefinition, 'name' | 'settings'>,
  env: NodeJS.ProcessEnv = process.env,
): ConnectionConfig {
  const prefix = envVarPrefix(service.name);
  const addrVar = `${prefix}_ADDR`;
  const raw = env[addrVar]?.trim();
  if (!raw) {
    throw new EndpointNotSetError(
      `${addrVar} is not set: set it to the ${service.name} service's address, e.g. http://127.0.0.1:8500`,
    );
  }
  const connection: ConnectionConfig = {
    address: normaliseAddress(raw, addrVar),
    addressSource: addrVar,
    tokenSource: `${prefix}_TOKEN`,
    settings: settingsFromEnv(service, env),
  };
  if (isTruthy(env[`${prefix}_INSECURE`])) connection.insecureSkipTlsVerify = true;
  const token = env[`${prefix}_TOKEN`];
  if (token) connection.token = token;
  const caPath = env[`${prefix}_CACERT`]?.trim();
  if (caPath) connection.caCertificate = readCaFile(caPath, `${prefix}_CACERT`);
  return connection;
}

/** The service's own settings from the environment: what planning needs even before connecting. */
export function settingsFromEnv(
  service: Pick<ServiceDefinition, 'name' | 'settings'>,
  env: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const prefix = envVarPrefix(service.name);
  const settings: Record<string, string> = {};
  for (const setting of service.settings ?? []) {
    const value = env[`${prefix}_${setting.env}`]?.trim();
    if (value) settings[setting.key] = value;
  }
  return settings;
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
