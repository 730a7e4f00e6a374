/**
 * A connection's settings (a workspace connection's organization) without any client: what
 * `validate` needs to fill in effective namespaces. Kept apart from `ServiceConnections`, which loads
 * the service clients, so validate starts without the HTTP layer (issue 20).
 */
import { settingsFromEnv } from '../clients/http/endpoint.js';
import type { AnyServiceDefinition } from '../clients/service.js';
import type { ManifestConnection } from '../manifest/types.js';
import type { ConnectionSettings } from '../resources/contract.js';
import { EngineError } from './errors.js';

/** The manifest's `Connection` of that name for the service; an `EngineError` naming both if none. */
export function declaredConnection(
  declared: readonly ManifestConnection[],
  service: string,
  connection: string,
): ManifestConnection {
  const c = declared.find((d) => d.name === connection && d.service === service);
  if (!c) throw new EngineError(`no ${service} connection named "${connection}" is declared in the manifest`);
  return c;
}

/** The settings of the named manifest connection, or of the environment's when none is named. */
export function connectionSettings(
  env: NodeJS.ProcessEnv,
  services: readonly AnyServiceDefinition[],
  declared: readonly ManifestConnection[],
  service: string,
  connection?: string,
): ConnectionSettings {
  if (connection !== undefined) return declaredConnection(declared, service, connection).settings;
  const definition = services.find((d) => d.name === service);
  return definition ? settingsFromEnv(definition, env) : {};
}
