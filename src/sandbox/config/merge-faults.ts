/**
 * Lays fault settings from the command line over the config file's, key by key and service by
 * service: `--fail-rate 0.1` replaces the file's `failRate` (and its older name `errorRate`) and
 * keeps its `latencyMs`.
 */
import type { FaultsConfig, ServiceFaultsConfig } from '../core/faults.js';

export function mergeFaults(
  base: FaultsConfig | undefined,
  over: FaultsConfig | undefined,
): FaultsConfig | undefined {
  if (!over) return base;
  if (!base) return over;
  const { services: baseServices, ...baseShared } = base;
  const { services: overServices, ...overShared } = over;
  const merged: FaultsConfig = mergeScope(baseShared, overShared);
  const names = new Set([...Object.keys(baseServices ?? {}), ...Object.keys(overServices ?? {})]);
  if (names.size > 0) {
    merged.services = {};
    for (const name of names) merged.services[name] = mergeScope(baseServices?.[name], overServices?.[name]);
  }
  return merged;
}

function mergeScope<T extends ServiceFaultsConfig>(base: T | undefined, over: T | undefined): T {
  const merged = { ...base } as T;
  // A fail rate given on top, under either name, replaces the one underneath under both names.
  if (over?.failRate !== undefined || over?.errorRate !== undefined) {
    delete merged.failRate;
    delete merged.errorRate;
  }
  return { ...merged, ...over };
}
