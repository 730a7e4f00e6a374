/**
 * What LdapGroup and LdapUser share: both live under a mount (`metadata.mount`, `ldap` by default),
 * are read one by one after a LIST of their names (the API has no bulk read), are owned only inside
 * scopes the manifest declares (the service stores no marker), and depend on their mount's
 * configuration.
 */
import pLimit from 'p-limit';
import type { SecretsClient } from '../../clients/secrets/client.js';
import { HttpStatusError } from '../../clients/http/errors.js';
import { sharedConfigRead } from './config-reads.js';
import type {
  KindContext,
  Observed,
  PlanProblem,
  PruneScope,
  ResourceKey,
  ResourceKind,
} from '../contract.js';
import {
  contentVersion,
  DEFAULT_LDAP_MOUNT,
  DIRECTORY_NAME_SCHEMA,
  MOUNT_SCHEMA,
  secretsClient,
} from './common.js';

/** Reads at a time while listing: enough to hide latency, few enough not to crowd the service. */
const LIST_READ_CONCURRENCY = 8;

/** The mount of an object: its namespace (`metadata.mount`). */
export function mountOf(key: ResourceKey): string {
  return key.namespace ?? DEFAULT_LDAP_MOUNT;
}

export function callOptions(ctx: KindContext): { signal?: AbortSignal } {
  return ctx.signal ? { signal: ctx.signal } : {};
}

export interface EntryAccess<Live> {
  /** `groups` or `users`: the path segment, for ids. */
  readonly collection: 'groups' | 'users';
  listNames(client: SecretsClient, mount: string, opts: { signal?: AbortSignal }): Promise<string[]>;
  read(
    client: SecretsClient,
    mount: string,
    name: string,
    opts: { signal?: AbortSignal },
  ): Promise<Live | undefined>;
  /** The entry in the form it is compared in: its version is a digest of that. */
  canonical(live: Live): unknown;
}

export function entryObserved<Live>(access: EntryAccess<Live>, key: ResourceKey, live: Live): Observed<Live> {
  return {
    key,
    id: `auth/${mountOf(key)}/${access.collection}/${key.name}`,
    live,
    version: contentVersion(access.canonical(live)),
  };
}

/**
 * Nothing can live on a mount that is not there: reads answer with `fallback`, and `check` reports
 * the mount at its line (a 404 for the route rather than the entry: the client throws for that one).
 */
async function unlessMountMissing<T>(read: Promise<T>, fallback: T): Promise<T> {
  try {
    return await read;
  } catch (error) {
    if (error instanceof HttpStatusError && error.status === 404) return fallback;
    throw error;
  }
}

/**
 * Whether a mount exists: one configuration read per run, connection and mount, however many objects
 * and kinds (groups, users, the configuration itself) ask (see ./config-reads.ts).
 */
function mountExists(ctx: KindContext, connection: string | undefined, mount: string): Promise<boolean> {
  return unlessMountMissing(
    sharedConfigRead(ctx, connection, mount).then(() => true),
    false,
  );
}

/** The parts of the two kinds that do not depend on what an entry holds. */
export function entryKindBase<Live>(
  kind: string,
  access: EntryAccess<Live>,
): Pick<
  ResourceKind<never, Live>,
  | 'namespaced'
  | 'namespaceLabel'
  | 'namespaceField'
  | 'namespaceSchema'
  | 'nameSchema'
  | 'effectiveNamespace'
  | 'check'
  | 'observe'
  | 'list'
  | 'ownership'
  | 'owns'
> {
  return {
    namespaced: true,
    namespaceLabel: 'mount',
    namespaceField: 'mount',
    namespaceSchema: MOUNT_SCHEMA,
    nameSchema: DIRECTORY_NAME_SCHEMA,
    effectiveNamespace: () => DEFAULT_LDAP_MOUNT,

    // Converge does not enable auth methods: a mount that is not there is a plan problem at the
    // line that names it, found with one configuration read per mount, before anything is written.
    async check(ctx, desired) {
      const found = await Promise.all(
        desired.map(async (d): Promise<PlanProblem | undefined> =>
          (await mountExists(ctx, d.key.connection, mountOf(d.key)))
            ? undefined
            : {
                key: d.key,
                message: `nothing is mounted at auth/${mountOf(d.key)} on the secrets service: enable the directory (LDAP) auth method there, or fix metadata.mount`,
                ...(d.resource ? { position: d.resource.locate('/metadata/mount') } : {}),
              },
        ),
      );
      return found.filter((p): p is PlanProblem => p !== undefined);
    },

    async observe(ctx, key) {
      const live = await unlessMountMissing(
        access.read(secretsClient(ctx, key), mountOf(key), key.name, callOptions(ctx)),
        undefined,
      );
      return live === undefined ? undefined : entryObserved(access, key, live);
    },

    async list(ctx, scope) {
      const mount = scope.namespace ?? DEFAULT_LDAP_MOUNT;
      const client = secretsClient(ctx, scope);
      const opts = callOptions(ctx);
      const names = await unlessMountMissing(access.listNames(client, mount, opts), []);
      const limit = pLimit(LIST_READ_CONCURRENCY);
      const read = await Promise.all(
        names.map((name) =>
          limit(async () => {
            const key: ResourceKey = {
              kind,
              name,
              namespace: mount,
              ...(scope.connection !== undefined ? { connection: scope.connection } : {}),
            };
            const live = await access.read(client, mount, name, opts);
            // Deleted between the LIST and the read: not there any more.
            return live === undefined ? undefined : entryObserved(access, key, live);
          }),
        ),
      );
      return read.filter((o): o is Observed<Live> => o !== undefined);
    },

    // The service stores no marker on directory entries: only scopes the manifest declares are pruned.
    ownership: 'declared-scope',
    owns(observed: Observed<Live>, scope: PruneScope) {
      return scope.namePrefix === undefined || observed.key.name.startsWith(scope.namePrefix);
    },
  };
}
