/**
 * Types every layer may import (manifest, resources, planner, clients, CLI, sandbox): a service's
 * name and a position in a manifest file. Nothing here knows a particular service; the services are
 * listed only by the composition roots (`engine/services.ts`, `sandbox/services/index.ts`).
 */

/** A service's name, as it appears in `CONVERGE_<NAME>_ADDR` (upper-cased) and `Connection.service`. */
export type ServiceName = string;

/**
 * A 1-based position in a manifest file. Line 0 (with col 0) means the problem concerns the path as
 * a whole (a missing path, an empty folder): it prints as `path: message`.
 */
export interface SourcePosition {
  file: string;
  line: number;
  col: number;
}

export function formatPosition(p: SourcePosition): string {
  return p.line > 0 ? `${p.file}:${p.line}:${p.col}` : p.file;
}

/** `CONVERGE_REGISTRY` for `registry`: the prefix of a service's environment variables. */
export function envVarPrefix(service: ServiceName): string {
  return `CONVERGE_${service.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}
