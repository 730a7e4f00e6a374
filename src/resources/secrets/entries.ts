/**
 * What LdapGroup and LdapUser share: both live under a mount (`metadata.mount`, `ldap` by default),
 * are read one by one after a LIST of their names (the API has no bulk read), are owned only inside
 * scopes the manifest declares (the service stores no marker), and depend on their mount's
 * configuration.
 */
import pLimit from 'p-limit';
import type { SecretsClient } from '../../clients/secrets/client.js';
import { compact, diffValues } from '../compare.js';
import { missingMount, missingMountProblems, unlessMountMissing } from './config-reads.js';
import type {
  Dependencies,
  Desired,
  Exportable,
  KindContext,
  Namespaced,
  Observed,
  Prunable,
  PruneScope,
  RenderDetails,
  ResourceKey,
  ResourceKind,
  ServiceChecks,
  UpsertCreate,
} from '../contract.js';
import { listedKey } from '../contract.js';
import {
  contentVersion,
  DEFAULT_LDAP_MOUNT,
  DIRECTORY_NAME_SCHEMA,
  MOUNT_SCHEMA,
  secretsClient,
} from './common.js';

/** Reads at a time while listing when the run does not say (`ctx.parallelism`, set by the planner). */
const LIST_READ_CONCURRENCY = 8;

/** The mount of an object: its namespace (`metadata.mount`). */
export function mountOf(key: ResourceKey): string {
  return key.namespace ?? DEFAULT_LDAP_MOUNT;
}

export function callOptions(ctx: KindContext): { signal?: AbortSignal } {
  return ctx.signal ? { signal: ctx.signal } : {};
}

/** Where one entry lives on the service, for the client calls of `EntryAccess`. */
interface EntryAt {
  client: SecretsClient;
  mount: string;
  name: string;
  opts: { signal?: AbortSignal };
}

/** What differs between the two kinds: their client calls and the form their entries compare in. */
export interface EntryAccess<Spec, Live> {
  /** `groups` or `users`: the path segment, for ids. */
  readonly collection: 'groups' | 'users';
  listNames(client: SecretsClient, mount: string, opts: { signal?: AbortSignal }): Promise<string[]>;
  read(at: EntryAt): Promise<Live | undefined>;
  /** Sets the whole entry (create and update are the same write); returns the live entry it made. */
  write(at: EntryAt, spec: Spec): Promise<Live>;
  remove(at: EntryAt): Promise<void>;
  /** The live entry in the form it is compared and shown in: its version is a digest of that. */
  canonical(live: Live): Record<string, unknown>;
  /** The manifest's entry in the same form. */
  canonicalSpec(spec: Spec): Record<string, unknown>;
}

function entryAt(ctx: KindContext, key: ResourceKey): EntryAt {
  return { client: secretsClient(ctx, key), mount: mountOf(key), name: key.name, opts: callOptions(ctx) };
}

export function entryObserved<Live>(
  access: Pick<EntryAccess<never, Live>, 'collection' | 'canonical'>,
  key: ResourceKey,
  live: Live,
): Observed<Live> {
  return {
    key,
    id: `auth/${mountOf(key)}/${access.collection}/${key.name}`,
    live,
    version: contentVersion(access.canonical(live)),
  };
}

/** Everything of an entry kind but its name, description, spec schema and dependencies. */
export type EntryKindBase<Spec, Live> = Omit<
  ResourceKind<Spec, Live>,
  'kind' | 'service' | 'description' | 'specSchema'
> &
  Namespaced &
  ServiceChecks<Spec> &
  RenderDetails<Spec, Live> &
  Exportable<Spec, Live> &
  UpsertCreate &
  Prunable<Live>;

/** A whole entry kind: the shared base with what the kind says itself. */
export type EntryKind<Spec, Live> = ResourceKind<Spec, Live> &
  EntryKindBase<Spec, Live> &
  Dependencies<Spec, Live>;

/** The parts of the two kinds that do not depend on what an entry holds. */
export function entryKindBase<Spec, Live>(
  kind: string,
  access: EntryAccess<Spec, Live>,
): EntryKindBase<Spec, Live> {
  const write = async (ctx: KindContext, desired: Desired<Spec>) =>
    entryObserved(access, desired.key, await access.write(entryAt(ctx, desired.key), desired.spec));
  return {
    namespaceLabel: 'mount',
    namespaceField: 'mount',
    namespaceSchema: MOUNT_SCHEMA,
    nameSchema: DIRECTORY_NAME_SCHEMA,
    effectiveNamespace: () => DEFAULT_LDAP_MOUNT,

    // Converge does not enable auth methods: a mount that is not there is a plan problem at the
    // line that names it, found with one configuration read per mount, before anything is written.
    check: (ctx, desired) => missingMountProblems(ctx, desired, mountOf, 'mount'),

    async observe(ctx, key) {
      const live = await unlessMountMissing(access.read(entryAt(ctx, key)), undefined);
      return live === undefined ? undefined : entryObserved(access, key, live);
    },

    async list(ctx, scope) {
      const mount = scope.namespace ?? DEFAULT_LDAP_MOUNT;
      const client = secretsClient(ctx, scope);
      const opts = callOptions(ctx);
      const names = await unlessMountMissing(access.listNames(client, mount, opts), []);
      const limit = pLimit(ctx.parallelism ?? LIST_READ_CONCURRENCY);
      const read = await Promise.all(
        names.map((name) =>
          limit(async () => {
            const key = listedKey(kind, name, { ...scope, namespace: mount });
            const live = await access.read({ client, mount, name, opts });
            // Deleted between the LIST and the read: not there any more.
            return live === undefined ? undefined : entryObserved(access, key, live);
          }),
        ),
      );
      return read.filter((o): o is Observed<Live> => o !== undefined);
    },

    compare(desired, observed) {
      return { diffs: diffValues(access.canonicalSpec(desired.spec), access.canonical(observed.live)) };
    },
    render: (desired) => access.canonicalSpec(desired.spec),
    describe: (observed) => access.canonical(observed.live),
    // A directory entry is written by its name: a create sent twice is the same write.
    createIsUpsert: true,
    exporter: {
      spec: (observed) => compact(access.canonical(observed.live)) as Spec,
      // The list answers a mount that is not there as empty: an export asks, so a typo is named.
      missingScope: (ctx, scope) =>
        missingMount(ctx, scope.connection, scope.namespace ?? DEFAULT_LDAP_MOUNT),
    },

    create: write,
    update: (ctx, desired) => write(ctx, desired),
    async delete(ctx, observed) {
      await access.remove(entryAt(ctx, observed.key));
    },

    // The service stores no marker on directory entries: only scopes the manifest declares are pruned.
    ownership: 'declared-scope',
    owns(observed: Observed<Live>, scope: PruneScope) {
      return scope.namePrefix === undefined || observed.key.name.startsWith(scope.namePrefix);
    },
  };
}
