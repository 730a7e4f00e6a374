/**
 * Who holds a workspace's lock, in words. `relationships.locked-by` only carries an id (a user, a
 * team or a run); with `include=locked_by` the service adds the holder to `included`, where a user
 * carries `username` and a team `name`. People recognise names, so names are shown, and the id only
 * when the response did not include the holder.
 */
import type { JsonApiIdentifier, JsonApiResource } from './types.js';

/** The holder's username or team name from `included`; undefined when it is not there. */
export function holderNameIn(
  included: readonly JsonApiResource[],
  ref: JsonApiIdentifier | null,
): string | undefined {
  if (!ref) return undefined;
  const resource = included.find((r) => r.id === ref.id && r.type === ref.type);
  const name = resource?.attributes?.username ?? resource?.attributes?.name;
  return typeof name === 'string' && name !== '' ? name : undefined;
}

/** `user bob`, `team devs`, `run run-abc` (runs have no name); the id when the name is unknown. */
export function describeLockHolder(ref: JsonApiIdentifier, name?: string | null): string {
  return `${singular(ref.type)} ${name || ref.id}`;
}

/** `users` → `user`, `teams` → `team`, `runs` → `run`. */
function singular(type: string): string {
  return type.endsWith('s') ? type.slice(0, -1) : type;
}
