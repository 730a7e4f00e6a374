/**
 * Declarative state seeding. A state file is pushed only when the workspace has no state yet, or when
 * it continues the live state (same lineage, newer serial). A live state that has moved on from the
 * file (same lineage, newer serial: the workspace's own runs wrote it) is the normal life of a seeded
 * workspace, so it needs nothing and only earns a note. Anything else would overwrite someone's state
 * (another lineage, the same serial with other content), so it is a plan problem, never a push.
 */
import type { ManifestResource } from '../contract.js';
import { readLocalFile, unreadableReason } from '../local-file.js';
import type { StateFileInfo } from '../../clients/workspaces/state-file.js';
import { parseStateFile } from '../../clients/workspaces/state-file.js';
import type { AttributeDiff } from '../contract.js';

/** The live state's identity, as far as seeding cares. `null`: the workspace has no state. */
export interface LiveStateInfo {
  serial: number;
  lineage: string;
  md5: string;
}

export interface LocalState {
  /** The path as the manifest wrote it. */
  path: string;
  info: StateFileInfo;
}

/** Largest state file read for seeding; states of large configurations run to tens of MiB. */
const MAX_STATE_FILE_BYTES = 256 * 1024 * 1024;

/**
 * Reads and checks the state file a manifest names, relative to the manifest file's folder and only
 * inside the manifest root (the manifest's confined reader).
 */
export async function readLocalState(
  desired: { resource?: ManifestResource },
  statePath: string,
): Promise<LocalState> {
  const read = await readLocalFile(desired, statePath, MAX_STATE_FILE_BYTES);
  if (!read.ok) throw new Error(`cannot read state file ${statePath}: ${unreadableReason(read)}`);
  return { path: statePath, info: parseStateFile(read.text, statePath) };
}

export function describeState(s: { serial: number; lineage: string }): string {
  return `serial ${s.serial}, lineage ${s.lineage}`;
}

/** What seeding would do: a diff to push, nothing (perhaps with a note), or a problem that forbids it. */
export function compareState(
  local: LocalState,
  live: LiveStateInfo | null,
): { diff?: AttributeDiff; problem?: string; note?: string; heldBack?: true } {
  const wanted = local.info;
  if (live === null) {
    return { diff: { path: 'state', op: 'add', after: `${local.path} (${describeState(wanted)})` } };
  }
  if (live.lineage !== wanted.lineage) {
    return {
      problem: `state file ${local.path} has lineage ${wanted.lineage}, but the workspace's state has lineage ${live.lineage}: it is another state, and Converge will not overwrite it`,
    };
  }
  if (wanted.serial < live.serial) {
    // A seed is for an empty workspace: once runs continue its lineage, the file is history.
    return {
      note: `state: the workspace's state (serial ${live.serial}) has moved on from state file ${local.path} (serial ${wanted.serial}); the seed is not pushed again`,
      heldBack: true,
    };
  }
  if (wanted.serial === live.serial) {
    return wanted.md5 === live.md5
      ? {}
      : {
          problem: `state file ${local.path} has serial ${wanted.serial} like the workspace's state, but different content: bump the serial or fix the file`,
        };
  }
  return {
    diff: {
      path: 'state',
      op: 'change',
      before: describeState(live),
      after: `${local.path} (${describeState(wanted)})`,
    },
  };
}
