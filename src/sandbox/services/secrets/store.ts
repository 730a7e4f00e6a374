/**
 * The secrets service's state: its directory auth mounts, each with config, groups and users. Saved
 * and restored whole through the core's persistence (`<dataDir>/secrets.json`). Tokens issued by
 * logins are not kept across restarts (they live in `access.ts`).
 */
import {
  DEFAULT_MOUNT,
  defaultLdapConfig,
  type GroupRecord,
  type LdapConfigRecord,
  type MountState,
  type UserRecord,
} from './model.js';
import { compareGo } from './normalize.js';
import { hasFields } from '../shared/record-shape.js';

export interface SecretsSnapshot {
  mounts: {
    path: string;
    config: LdapConfigRecord | null;
    groups: Record<string, GroupRecord>;
    users: Record<string, UserRecord>;
  }[];
}

/** Why a mount path is refused, or undefined when it is fine beside the existing ones. */
export function mountPathProblem(path: string, existing: Iterable<string>): string | undefined {
  const segments = path.split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..')) {
    return 'a mount path is segments separated by single slashes, without a slash at either end';
  }
  // The real service always has the token method at auth/token/.
  if (segments[0] === 'token') return 'path is already in use at auth/token/';
  for (const other of existing) {
    if (other === path || other.startsWith(`${path}/`) || path.startsWith(`${other}/`)) {
      return `path is already in use at auth/${other}/`;
    }
  }
  return undefined;
}

export class SecretsStore {
  private readonly mounts = new Map<string, MountState>();

  constructor(private readonly onChange: () => void = () => {}) {
    this.mount(DEFAULT_MOUNT);
  }

  /** Adds an empty mount; an existing one is returned as it is. */
  mount(path: string): MountState {
    let state = this.mounts.get(path);
    if (!state) {
      state = { path, config: undefined, groups: new Map(), users: new Map() };
      this.mounts.set(path, state);
    }
    return state;
  }

  has(path: string): boolean {
    return this.mounts.has(path);
  }

  paths(): string[] {
    return [...this.mounts.keys()];
  }

  /**
   * The mount a path under `auth/` belongs to, longest first (as the real router's longest-prefix
   * match), and the rest of the path inside it.
   */
  resolve(authPath: string): { mount: MountState; rest: string } | undefined {
    let best: MountState | undefined;
    for (const mount of this.mounts.values()) {
      if (authPath !== mount.path && !authPath.startsWith(`${mount.path}/`)) continue;
      if (!best || mount.path.length > best.path.length) best = mount;
    }
    if (!best) return undefined;
    return { mount: best, rest: authPath.slice(best.path.length + 1) };
  }

  /** The effective config: the stored one, else the defaults (as the real `Config()` reads). */
  configOf(mount: MountState): LdapConfigRecord {
    return mount.config ?? defaultLdapConfig();
  }

  setConfig(mount: MountState, config: LdapConfigRecord): void {
    mount.config = config;
    this.onChange();
  }

  putGroup(mount: MountState, name: string, group: GroupRecord): void {
    mount.groups.set(name, group);
    this.onChange();
  }

  deleteGroup(mount: MountState, name: string): void {
    if (mount.groups.delete(name)) this.onChange();
  }

  putUser(mount: MountState, name: string, user: UserRecord): void {
    mount.users.set(name, user);
    this.onChange();
  }

  deleteUser(mount: MountState, name: string): void {
    if (mount.users.delete(name)) this.onChange();
  }

  snapshot(): SecretsSnapshot {
    return {
      mounts: [...this.mounts.values()]
        .sort((a, b) => compareGo(a.path, b.path))
        .map((m) => ({
          path: m.path,
          config: m.config ?? null,
          groups: Object.fromEntries([...m.groups].sort(([a], [b]) => compareGo(a, b))),
          users: Object.fromEntries([...m.users].sort(([a], [b]) => compareGo(a, b))),
        })),
    };
  }

  restore(snapshot: SecretsSnapshot): void {
    for (const saved of snapshot.mounts) {
      const mount = this.mount(saved.path);
      // Saved before a field was added: the default fills it.
      mount.config = saved.config ? { ...defaultLdapConfig(), ...saved.config } : undefined;
      mount.groups = new Map(Object.entries(saved.groups));
      mount.users = new Map(Object.entries(saved.users));
    }
  }
}

/** Checks the shape of a loaded state file before trusting it. */
export function isSecretsSnapshot(value: unknown): value is SecretsSnapshot {
  return (
    hasFields(value, { mounts: 'array' }) &&
    (value.mounts as unknown[]).every((m) =>
      hasFields(m, { path: 'string', config: 'object?', groups: 'object', users: 'object' }),
    )
  );
}
