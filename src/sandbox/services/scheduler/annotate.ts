/**
 * What a plan says the scheduler would do to each task group (`Annotations.DesiredTGUpdates`) and the
 * annotations it adds to the diff (`scheduler/annotate.go`). The counts follow the real reconciler's
 * main cases for the job's live allocations:
 *
 * - an unchanged job: every live allocation is ignored;
 * - a changed job: a live allocation needs a destructive (create/destroy) update when its group
 *   changed in a way the real `tasksUpdated` (`scheduler/util.go`) calls destructive (tasks, drivers,
 *   users, config, env, combined job/group/task meta, resources, networks, ephemeral disk, volumes,
 *   artifacts, templates, vault, secrets, logging switched on or off), else an in-place update
 *   (count, restart policy, services, constraints, kill timeout, update strategy...);
 * - destructive updates of a group with an update strategy are rolled: at most `MaxParallel` at once
 *   (the rest are ignored for now), or with `Canary` > 0 canaries are placed and the old allocations
 *   are left alone until promotion;
 * - count increases are placements, decreases and removed groups stops (highest indexes first).
 */
import { type JobDiff, sameCanonical } from './diff.js';
import type { AllocRecord, Json } from './model.js';

export interface DesiredUpdates {
  Ignore: number;
  Place: number;
  Migrate: number;
  Stop: number;
  InPlaceUpdate: number;
  DestructiveUpdate: number;
  Canary: number;
  Preemptions: number;
}

const blank = (): DesiredUpdates => ({
  Ignore: 0,
  Place: 0,
  Migrate: 0,
  Stop: 0,
  InPlaceUpdate: 0,
  DestructiveUpdate: 0,
  Canary: 0,
  Preemptions: 0,
});

/**
 * The desired changes per group of the new job. `live` are the existing job instance's allocations
 * that still run; `changed` says whether the job's spec changed (the real JobModifyIndex comparison).
 */
export function desiredUpdates(
  old: Json | undefined,
  next: Json,
  live: readonly AllocRecord[],
  changed: boolean,
): Record<string, DesiredUpdates> {
  const out: Record<string, DesiredUpdates> = {};
  const groups = (next.TaskGroups as Json[] | undefined) ?? [];
  const stopped = next.Stop === true;
  for (const tg of groups) {
    const name = String(tg.Name);
    const u = (out[name] = blank());
    const mine = live.filter((a) => a.TaskGroup === name);
    const count = stopped ? 0 : Number(tg.Count ?? 1);
    const kept = Math.min(count, mine.length);
    u.Stop = mine.length - kept;
    u.Place = count - kept;
    if (!changed || kept === 0) {
      u.Ignore = kept;
      continue;
    }
    const oldGroup = ((old?.TaskGroups as Json[] | undefined) ?? []).find((g) => g.Name === name);
    if (!oldGroup || !tasksUpdated(old!, next, oldGroup, tg)) {
      u.InPlaceUpdate = kept;
      continue;
    }
    const update = (tg.Update ?? next.Update) as Json | null | undefined;
    const canary = next.Type === 'service' ? Number(update?.Canary ?? 0) : 0;
    const maxParallel = next.Type === 'service' ? Number(update?.MaxParallel ?? 0) : 0;
    if (canary > 0) {
      u.Canary = canary;
      u.Ignore = kept;
    } else if (maxParallel > 0 && maxParallel < kept) {
      u.DestructiveUpdate = maxParallel;
      u.Ignore = kept - maxParallel;
    } else u.DestructiveUpdate = kept;
  }
  // Groups the new job no longer has: every live allocation stops.
  for (const a of live) {
    if (groups.some((g) => g.Name === a.TaskGroup)) continue;
    (out[a.TaskGroup] ??= blank()).Stop += 1;
  }
  return out;
}

/** The real `tasksUpdated`: whether the group's allocations must be replaced rather than updated. */
export function tasksUpdated(oldJob: Json, newJob: Json, a: Json, b: Json): boolean {
  const differ = (x: unknown, y: unknown) => !sameCanonical(x, y);
  const tasksA = (a.Tasks as Json[] | undefined) ?? [];
  const tasksB = (b.Tasks as Json[] | undefined) ?? [];
  if (tasksA.length !== tasksB.length) return true;
  if (differ(a.EphemeralDisk, b.EphemeralDisk) || differ(a.Networks, b.Networks)) return true;
  if (differ(a.Volumes, b.Volumes) || differ(obj(a.Consul).Namespace, obj(b.Consul).Namespace)) return true;
  if (differ(obj(a.RestartPolicy).RenderTemplates, obj(b.RestartPolicy).RenderTemplates)) return true;
  for (const at of tasksA) {
    const bt = tasksB.find((t) => t.Name === at.Name);
    if (!bt) return true;
    for (const field of ['Driver', 'User', 'Config', 'Env', 'Artifacts', 'Vault', 'Secrets', 'Templates'])
      if (differ(at[field], bt[field])) return true;
    if (differ(at.VolumeMounts, bt.VolumeMounts) || differ(at.CSIPluginConfig, bt.CSIPluginConfig))
      return true;
    if (differ(obj(at.Consul).Namespace, obj(bt.Consul).Namespace)) return true;
    if (differ(combinedMeta(oldJob, a, at), combinedMeta(newJob, b, bt))) return true;
    const ra = obj(at.Resources);
    const rb = obj(bt.Resources);
    for (const field of [
      'Networks',
      'CPU',
      'Cores',
      'MemoryMB',
      'MemoryMaxMB',
      'Devices',
      'NUMA',
      'SecretsMB',
    ])
      if (differ(ra[field], rb[field])) return true;
    if (differ(at.Identity, bt.Identity) || differ(at.Identities, bt.Identities)) return true;
    if (differ(obj(at.LogConfig).Disabled, obj(bt.LogConfig).Disabled)) return true;
    if (differ(obj(at.RestartPolicy).RenderTemplates, obj(bt.RestartPolicy).RenderTemplates)) return true;
  }
  return false;
}

/** The real `CombinedTaskMeta`: job meta, overridden by group meta, overridden by task meta. */
function combinedMeta(job: Json, tg: Json, task: Json): Json {
  return { ...obj(job.Meta), ...obj(tg.Meta), ...obj(task.Meta) };
}

function obj(v: unknown): Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {};
}

/** The real `Annotate`: group `Updates` from the desired changes, count and task annotations. */
export function annotateDiff(diff: JobDiff, desired: Record<string, DesiredUpdates>): void {
  for (const tg of diff.TaskGroups ?? []) {
    const u = desired[tg.Name];
    if (u) {
      const updates: Record<string, number> = {};
      const set = (key: string, n: number) => {
        if (n !== 0) updates[key] = n;
      };
      set('ignore', u.Ignore);
      set('create', u.Place);
      set('migrate', u.Migrate);
      set('destroy', u.Stop);
      set('canary', u.Canary);
      set('in-place update', u.InPlaceUpdate);
      set('create/destroy update', u.DestructiveUpdate);
      tg.Updates = updates;
    }
    const count = tg.Fields?.find((f) => f.Name === 'Count');
    if (count) {
      const o = Number(count.Old || 0);
      const n = Number(count.New || 0);
      if (o !== n) (count.Annotations ??= []).push(o < n ? 'forces create' : 'forces destroy');
    }
    for (const task of tg.Tasks ?? []) {
      if (task.Type === 'None') continue;
      if ((tg.Type === 'Added' || tg.Type === 'Deleted') && task.Type !== 'Edited') {
        task.Annotations = [task.Type === 'Added' ? 'forces create' : 'forces destroy'];
        continue;
      }
      // Every primitive field but KillTimeout is destructive; of the objects, services, constraints,
      // affinities, spreads and logging (unless switched on or off) are in place.
      const destructive =
        (task.Fields ?? []).some((f) => f.Name !== 'KillTimeout') ||
        (task.Objects ?? []).some((o) =>
          ['Service', 'Constraint', 'Affinity', 'Spread'].includes(o.Name)
            ? false
            : o.Name === 'LogConfig'
              ? (o.Fields ?? []).some((f) => f.Name === 'Disabled' && f.Type !== 'None')
              : true,
        );
      task.Annotations = [destructive ? 'forces create/destroy update' : 'forces in-place update'];
    }
  }
}
