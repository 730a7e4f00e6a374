/**
 * Puts the config's registry section into a store. Policies are applied on every start (created, or
 * updated when the config changed them), so adding a policy to the config works with an existing data
 * folder. Roles are seeded only into a fresh store: once a data folder holds state, roles belong to the
 * API, and a role deleted through it stays deleted after a restart.
 */
import type { ServiceConfigIssue } from '../../core/service.js';
import type { RegistryConfig, RoleSeed } from './config.js';
import { DEFAULT_NAMESPACE, RegistryError } from './model.js';
import { applyPolicySeed, ensureBuiltinPolicies } from './policies.js';
import { type RoleInput, upsertRole } from './roles.js';
import type { RegistryStore } from './store.js';

export function seedRegistry(
  store: RegistryStore,
  config: RegistryConfig | undefined,
  opts: { seedRoles: boolean },
): ServiceConfigIssue[] {
  const issues: ServiceConfigIssue[] = [];
  ensureBuiltinPolicies(store);
  const seen = new Map<string, number>();
  config?.policies?.forEach((seed, i) => {
    // Two entries for one policy would silently merge into one: say so instead.
    const key = seed.ID ?? `${seed.Namespace ?? DEFAULT_NAMESPACE}/${seed.Name}`;
    const first = seen.get(key);
    if (first !== undefined) {
      const what = seed.ID !== undefined ? `ID ${seed.ID}` : `Name ${JSON.stringify(seed.Name)}`;
      issues.push({
        path: ['policies', i],
        message: `another entry has the same ${what} (policies[${first}])`,
      });
      return;
    }
    seen.set(key, i);
    try {
      applyPolicySeed(store, seed);
    } catch (err) {
      issues.push({ path: ['policies', i], message: (err as Error).message });
    }
  });
  if (opts.seedRoles) {
    config?.roles?.forEach((seed, i) => {
      try {
        upsertRole(store, roleInputOf(seed), seed.Namespace ?? DEFAULT_NAMESPACE, { allowChosenId: true });
      } catch (err) {
        if (!(err instanceof RegistryError)) throw err;
        issues.push({ path: ['roles', i], message: err.message });
      }
    });
  }
  return issues;
}

function roleInputOf(seed: RoleSeed): RoleInput {
  return {
    ID: seed.ID ?? '',
    Name: seed.Name,
    Description: seed.Description ?? '',
    Policies: (seed.Policies ?? []).map((p) => ({ ID: p.ID ?? '', Name: p.Name ?? '' })),
    ServiceIdentities: (seed.ServiceIdentities ?? []).map((s) => ({
      ServiceName: s.ServiceName,
      Datacenters: s.Datacenters ?? [],
    })),
    NodeIdentities: (seed.NodeIdentities ?? []).map((n) => ({ ...n })),
  };
}
