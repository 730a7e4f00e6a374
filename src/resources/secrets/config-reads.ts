/**
 * One read of a mount's directory configuration per run, shared by whoever asks first: the plan-time
 * mount check of groups and users (does the mount exist?) and the LdapConfig object's own observe.
 * A plan that declares the configuration, groups and users of one mount reads it once, not twice.
 *
 * The object's observe takes the shared read at most once: a later observe in the same run (the
 * re-read before an apply, to refuse a stale change) reads again, so it never sees a plan-time value.
 */
import type { LdapConfig } from '../../clients/secrets/client.js';
import type { KindContext } from '../contract.js';
import { secretsClient } from './common.js';

interface SharedRead {
  read: Promise<LdapConfig | undefined>;
  takenByObserve: boolean;
}

/** Keyed by the run's context, so a later run reads again. */
const reads = new WeakMap<KindContext, Map<string, SharedRead>>();

function idOf(connection: string | undefined, mount: string): string {
  return `${connection ?? ''}\u0000${mount}`;
}

function fresh(ctx: KindContext, connection: string | undefined, mount: string) {
  return secretsClient(ctx, connection !== undefined ? { connection } : {}).readLdapConfig(
    mount,
    ctx.signal ? { signal: ctx.signal } : {},
  );
}

function readsOf(ctx: KindContext): Map<string, SharedRead> {
  let map = reads.get(ctx);
  if (!map) reads.set(ctx, (map = new Map()));
  return map;
}

/** The run's read of the configuration (started now if nobody asked yet). */
export function sharedConfigRead(
  ctx: KindContext,
  connection: string | undefined,
  mount: string,
): Promise<LdapConfig | undefined> {
  const map = readsOf(ctx);
  const id = idOf(connection, mount);
  let shared = map.get(id);
  if (!shared) map.set(id, (shared = { read: fresh(ctx, connection, mount), takenByObserve: false }));
  return shared.read;
}

/** For observe: the run's shared read the first time, a fresh read after that. */
export function configReadForObserve(
  ctx: KindContext,
  connection: string | undefined,
  mount: string,
): Promise<LdapConfig | undefined> {
  const map = readsOf(ctx);
  const id = idOf(connection, mount);
  const shared = map.get(id);
  if (shared && !shared.takenByObserve) {
    shared.takenByObserve = true;
    return shared.read;
  }
  const read = fresh(ctx, connection, mount);
  // Later checks in this run share it too; no later observe takes it.
  map.set(id, { read, takenByObserve: true });
  return read;
}
