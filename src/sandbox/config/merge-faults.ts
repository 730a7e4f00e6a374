/**
 * Lays fault settings from the command line over the config file's, key by key and service by
 * service: `--fail-rate 0.1` replaces the file's `failRate` (and its older name `errorRate`) and
 * keeps its `latencyMs`.
 *
 * A key given on top for every service (`--fail-rate 0`, no service prefix) is that key for every
 * service: it replaces the file's shared value and each of the file's per-service values of that key
 * alike. Otherwise the file's `services: {scheduler: {failRate: 0.2}}`, being more specific, outlived
 * `--fail-rate 0`, and the option a user gave to switch the faults off left the scheduler failing.
 * A key given on top for one service (`--fail-rate scheduler=0.1`) replaces that service's value
 * only, and wins over a key given on top for every service.
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
  for (const name of names) {
    const own = baseServices?.[name];
    const scope = mergeScope(withoutKeysOf(own, overShared), overServices?.[name]);
    // A service whose every setting of its own the shared ones replaced follows the shared settings:
    // no override left, so no start-up line of its own repeating them.
    const emptied = Object.keys(scope).length === 0 && Object.keys(definedOf(own)).length > 0;
    if (!emptied) (merged.services ??= {})[name] = scope;
  }
  return merged;
}

function mergeScope<T extends ServiceFaultsConfig>(base: T | undefined, over: T | undefined): T {
  return { ...withoutKeysOf(base, over), ...definedOf(over) };
}

/**
 * `scope` without the keys `over` sets; a fail rate set on top, under either name, takes both names
 * away (they are one setting).
 */
function withoutKeysOf<T extends ServiceFaultsConfig>(
  scope: T | undefined,
  over: ServiceFaultsConfig | undefined,
): T {
  const out = { ...scope } as T;
  const set = definedOf(over);
  for (const key of Object.keys(set)) delete (out as Record<string, unknown>)[key];
  if ('failRate' in set || 'errorRate' in set) {
    delete out.failRate;
    delete out.errorRate;
  }
  return out;
}

/** The keys of `scope` that are set (an `undefined` one sets nothing). */
function definedOf<T extends object>(scope: T | undefined): Partial<T> {
  return Object.fromEntries(Object.entries(scope ?? {}).filter(([, v]) => v !== undefined)) as Partial<T>;
}
