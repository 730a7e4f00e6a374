/**
 * Puts the config's `secrets:` section into a store. Every listed mount exists on every start (a new
 * mount appears even with an existing data folder); its config, groups and users are seeded only into
 * a mount the data folder has no saved state for, so what the API changed or deleted stays that way.
 * Seeds go through the API's own rules (the same normalisation and checks as a POST), so a bad seed is
 * reported with its position rather than stored.
 */
import type { ServiceConfigIssue } from '../../core/service.js';
import type { MountSeed, SecretsConfig } from './config.js';
import { localNameKey } from './local-names.js';
import { DEFAULT_MOUNT } from './model.js';
import { applyConfigWrite, groupFromBody, userFromBody } from './normalize.js';
import { mountPathProblem, type SecretsStore } from './store.js';
import { SecretsError } from './vault.js';

export function seedSecrets(
  store: SecretsStore,
  config: SecretsConfig | undefined,
  opts: { restored: ReadonlySet<string> },
): ServiceConfigIssue[] {
  const issues: ServiceConfigIssue[] = [];
  const seen = new Map<string, number>();
  config?.mounts?.forEach((seed, i) => {
    const first = seen.get(seed.path);
    if (first !== undefined) {
      issues.push({
        path: ['mounts', i, 'path'],
        message: `another entry has the same path (mounts[${first}])`,
      });
      return;
    }
    // Checked against the other entries (and the default mount, which an entry may seed by its path).
    const others = [...seen.keys(), DEFAULT_MOUNT].filter((p) => p !== seed.path);
    const problem = mountPathProblem(seed.path, others);
    seen.set(seed.path, i);
    if (problem) {
      issues.push({ path: ['mounts', i, 'path'], message: problem });
      return;
    }
    store.mount(seed.path);
    if (!opts.restored.has(seed.path)) issues.push(...seedMount(store, seed, i));
  });
  return issues;
}

function seedMount(store: SecretsStore, seed: MountSeed, i: number): ServiceConfigIssue[] {
  const issues: ServiceConfigIssue[] = [];
  const mount = store.mount(seed.path);
  const refused = (path: (string | number)[], err: unknown) => {
    if (!(err instanceof SecretsError)) throw err;
    issues.push({ path: ['mounts', i, ...path], message: err.errors.join('; ') });
  };
  if (seed.config) {
    try {
      const { config, warnings } = applyConfigWrite(undefined, seed.config);
      if (warnings.length > 0) throw new SecretsError(400, warnings.join('; '));
      store.setConfig(mount, config);
    } catch (err) {
      refused(['config'], err);
    }
  }
  const mountConfig = store.configOf(mount);
  const caseSensitive = mountConfig.case_sensitive_names;
  const key = (name: string) => localNameKey(mountConfig, name);
  // A second entry for a (folded) name would silently replace the first: say so instead.
  const seedEach = <T extends { name: string }>(
    list: 'groups' | 'users',
    entries: T[] | undefined,
    put: (name: string, entry: T) => void,
  ) => {
    const seen = new Map<string, number>();
    entries?.forEach((entry, j) => {
      const name = key(entry.name);
      const first = seen.get(name);
      if (first !== undefined) {
        const what = list === 'groups' ? 'group' : 'user';
        issues.push({
          path: ['mounts', i, list, j, 'name'],
          message: `another ${what} has the same name (${list}[${first}])`,
        });
        return;
      }
      seen.set(name, j);
      try {
        put(name, entry);
      } catch (err) {
        refused([list, j], err);
      }
    });
  };
  seedEach('groups', seed.groups, (name, group) =>
    store.putGroup(mount, name, groupFromBody({ policies: group.policies ?? [] }).group),
  );
  seedEach('users', seed.users, (name, user) => {
    const body = { policies: user.policies ?? [], groups: user.groups ?? [] };
    store.putUser(mount, name, userFromBody(body, caseSensitive).user);
  });
  return issues;
}
