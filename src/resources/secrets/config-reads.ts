/**
 * One read of a mount's directory configuration per run, shared by whoever asks first: the plan-time
 * mount check of groups and users (does the mount exist?) and the LdapConfig object's own observe.
 * A plan that declares the configuration, groups and users of one mount reads it once, not twice.
 *
 * The object's observe takes the shared read at most once: a later observe in the same run (the
 * re-read before an apply, to refuse a stale change) reads again, so it never sees a plan-time value.
 */
import { HttpStatusError } from '../../clients/http/errors.js';
import type { LdapConfig } from '../../clients/secrets/client.js';
import type { Desired, KindContext, PlanProblem, ResourceKey } from '../contract.js';
import { RunSharedRead, sharedReadId } from '../run-shared-read.js';
import { secretsClient } from './common.js';

const reads = new RunSharedRead<Promise<LdapConfig | undefined>>();

function fresh(ctx: KindContext, connection: string | undefined, mount: string) {
  return secretsClient(ctx, connection !== undefined ? { connection } : {}).readLdapConfig(
    mount,
    ctx.signal ? { signal: ctx.signal } : {},
  );
}

/** The run's read of the configuration (started now if nobody asked yet). */
export function sharedConfigRead(
  ctx: KindContext,
  connection: string | undefined,
  mount: string,
): Promise<LdapConfig | undefined> {
  return reads.shared(ctx, sharedReadId(connection, mount), () => fresh(ctx, connection, mount));
}

/** For observe: the run's shared read the first time, a fresh read after that. */
export function configReadForObserve(
  ctx: KindContext,
  connection: string | undefined,
  mount: string,
): Promise<LdapConfig | undefined> {
  return reads.take(ctx, sharedReadId(connection, mount), () => fresh(ctx, connection, mount));
}

/**
 * Nothing can live on a mount that is not there: reads answer with `fallback`, and `check` reports
 * the mount at its line (a 404 for the route rather than the entry: the client throws for that one).
 */
export async function unlessMountMissing<T>(read: Promise<T>, fallback: T): Promise<T> {
  try {
    return await read;
  } catch (error) {
    // Only the service saying it has no such route is a missing mount: a 404 in another form came
    // from something else at the address, and its error says to check the address.
    if (error instanceof HttpStatusError && error.status === 404 && saysNoRoute(error)) return fallback;
    throw error;
  }
}

/**
 * Whether a mount exists: one configuration read per run, connection and mount, however many objects
 * and kinds (groups, users, the configuration itself) ask.
 */
export function mountExists(
  ctx: KindContext,
  connection: string | undefined,
  mount: string,
): Promise<boolean> {
  return unlessMountMissing(
    sharedConfigRead(ctx, connection, mount).then(() => true),
    false,
  );
}

/** Why nothing lives on the mount (it is not there: the words `check` starts with), or `undefined`. */
export async function missingMount(
  ctx: KindContext,
  connection: string | undefined,
  mount: string,
): Promise<string | undefined> {
  return (await mountExists(ctx, connection, mount)) ? undefined : notMounted(mount);
}

function notMounted(mount: string): string {
  return `nothing is mounted at auth/${mount} on the secrets service`;
}

function saysNoRoute(error: HttpStatusError): boolean {
  return error.details.some((d) => /no handler for route|unsupported path/.test(d.detail ?? ''));
}

/**
 * Converge configures a mount, it does not enable one: each object on a mount that is not there is a
 * plan problem at the line that names the mount (`field`: `mount` for groups and users, `name` for a
 * configuration), found with the run's one configuration read per mount.
 */
export async function missingMountProblems(
  ctx: KindContext,
  desired: readonly Desired<unknown>[],
  mountOf: (key: ResourceKey) => string,
  field: 'mount' | 'name',
): Promise<PlanProblem[]> {
  const found = await Promise.all(
    desired.map(async (d): Promise<PlanProblem | undefined> => {
      const mount = mountOf(d.key);
      if (await mountExists(ctx, d.key.connection, mount)) return undefined;
      return {
        key: d.key,
        message: `${notMounted(mount)}: enable the directory (LDAP) auth method there first (Converge configures a mount, it does not create one), or fix metadata.${field}`,
        ...(d.resource ? { position: d.resource.locate(`/metadata/${field}`) } : {}),
      };
    }),
  );
  return found.filter((p): p is PlanProblem => p !== undefined);
}
