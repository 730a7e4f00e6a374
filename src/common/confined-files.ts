/**
 * Files a manifest may read: `${file:path}`, a Job's `specFile`, a Workspace's state file. A manifest
 * may come from anyone (a pull request), so it reads only files inside its root (the folder given
 * with `-f`, or the folder of a file given with `-f`), after resolving symbolic links, and never
 * Converge's own state (the inventory and the state key), even when that lies inside the root, as it
 * does when CI runs in the repository's top folder. Every refusal is decided before anything is read.
 */
import { lstat, readlink, realpath } from 'node:fs/promises';
import path from 'node:path';
import { describeFsError, readTextFile, type TextFileResult } from './text-file.js';

/** The folder a manifest file may read under. */
export interface ManifestRoot {
  /** Absolute, as given (symbolic links not resolved): what relative paths are compared with first. */
  folder: string;
  /** The same folder with symbolic links resolved: where a file must really be. */
  real: string;
  /** As the user gave it, for messages. */
  display: string;
}

/** A failed read says why in words (without the path: the caller names the file as its user wrote it). */
export type ManifestFileResult = TextFileResult | { ok: false; reason: string; notFound?: true };

/** Reads a file named relative to one manifest file, within that file's root; at most `maxBytes`. */
export type ManifestFileReader = (reference: string, maxBytes: number) => Promise<ManifestFileResult>;

/** A folder no manifest may read from, however it names it. */
export interface ProtectedFolder {
  folder: string;
  real: string;
  display: string;
  /**
   * A file rather than a folder (an inventory kept outside the state folder, `file:PATH`): the file
   * itself and the temporary files written beside it (`PATH.<random>.tmp`) are refused.
   */
  file?: true;
}

/** Whether `target` is what `p` protects: under the folder, or the file and its temporary copies. */
function isProtected(p: ProtectedFolder, lexical: string, real: string): boolean {
  if (!p.file) return isInside(p.folder, lexical) || isInside(p.real, real);
  return [p.folder, p.real].some((f) => [lexical, real].some((t) => t === f || t.startsWith(`${f}.`)));
}

export interface ConfinementOptions {
  root: ManifestRoot;
  /** The manifest file's folder (absolute): relative references start there. */
  base: string;
  protectedFolders: readonly ProtectedFolder[];
  /** Shared by every reader of one load, so a file named from many values is read once. */
  cache: Map<string, Promise<TextFileResult>>;
}

/**
 * Where a reference really leads, when a manifest may read it: refused when absolute, outside the
 * root (by its text, then once symbolic links are resolved) or in Converge's state folder. Nothing is
 * read; a file that does not exist is `notFound`.
 */
export async function confine(
  { root, base, protectedFolders }: ConfinementOptions,
  reference: string,
): Promise<{ ok: true; real: string } | { ok: false; reason: string; notFound?: true }> {
  const where = `the manifest root (${root.display})`;
  if (path.isAbsolute(reference)) {
    return {
      ok: false,
      reason: `is an absolute path: name a file inside ${where}, relative to the manifest file`,
    };
  }
  const lexical = path.resolve(base, reference);
  if (!isInside(root.folder, lexical)) {
    return {
      ok: false,
      reason: `is outside ${where}: a manifest reads only files inside the folder given with -f`,
    };
  }
  const outside = {
    ok: false as const,
    reason: `is a symbolic link that leads outside ${where}: a manifest reads only files inside it`,
  };
  let real: string;
  try {
    real = await realpath(lexical);
  } catch (error) {
    // Through a link that leads outside (a linked folder, or the file itself a link), a file that is
    // not there is refused as one that is: told apart, a pull request could probe the runner's files.
    if (await linksOutside(root, lexical)) return outside;
    const notFound = (error as NodeJS.ErrnoException).code === 'ENOENT';
    return { ok: false, reason: describeFsError(error), ...(notFound ? { notFound: true as const } : {}) };
  }
  if (!isInside(root.real, real)) return outside;
  const state = protectedFolders.find((p) => isProtected(p, lexical, real));
  if (state) {
    return {
      ok: false,
      reason: state.file
        ? `is Converge's inventory (${state.display}), which a manifest may never read`
        : `is in Converge's state folder (${state.display}), which a manifest may never read`,
    };
  }
  return { ok: true, real };
}

export function confinedFileReader(options: ConfinementOptions): ManifestFileReader {
  const { cache } = options;
  return async (reference, maxBytes) => {
    const confined = await confine(options, reference);
    if (!confined.ok) return confined;
    const key = `${maxBytes}\u0000${confined.real}`;
    let pending = cache.get(key);
    if (!pending) {
      pending = readTextFile(confined.real, maxBytes);
      cache.set(key, pending);
    }
    return pending;
  };
}

/**
 * Whether a path that cannot be resolved passes through a symbolic link that leads out of the root:
 * each part from the root down is looked at without following it, and a link's target is resolved
 * by its text (it may not exist either). A link whose target cannot be told counts as leading out.
 */
async function linksOutside(root: ManifestRoot, lexical: string): Promise<boolean> {
  const parts = path.relative(root.folder, lexical).split(path.sep).filter(Boolean);
  let at = root.folder;
  for (const [i, part] of parts.entries()) {
    const next = path.join(at, part);
    let stat;
    try {
      stat = await lstat(next);
    } catch {
      return false; // Not there, and nothing past it can be: a plain "not found" inside the root.
    }
    if (stat.isSymbolicLink()) {
      let target: string;
      try {
        target = await realpath(next);
      } catch {
        try {
          target = path.resolve(at, await readlink(next));
        } catch {
          return true;
        }
      }
      const rest = parts.slice(i + 1);
      const through = path.join(target, ...rest);
      if (!isInside(root.real, target) && !isInside(root.folder, target)) return true;
      // A link that stays inside: go on from where it leads, once (links of links resolve above).
      return !isInside(root.real, through) && !isInside(root.folder, through);
    }
    at = next;
  }
  return false;
}

/** Whether `child` is `parent` or lies under it (both absolute and normalised). */
export function isInside(parent: string, child: string): boolean {
  const relative = path.relative(parent, child);
  return (
    relative === '' ||
    (!relative.startsWith(`..${path.sep}`) && relative !== '..' && !path.isAbsolute(relative))
  );
}

/** `folder` with symbolic links resolved; as it is when it does not exist (nothing under it can). */
export async function realFolder(folder: string): Promise<string> {
  try {
    return await realpath(folder);
  } catch {
    return folder;
  }
}

/**
 * Converge's own state: `CONVERGE_STATE_DIR` (default `.converge` under `cwd`, as the inventory
 * computes it), and the default `.converge` too, since an earlier run may have left its key there.
 */
export async function stateFolders(env: NodeJS.ProcessEnv, cwd: string): Promise<ProtectedFolder[]> {
  const given = [env.CONVERGE_STATE_DIR || '.converge', '.converge'];
  const folders: ProtectedFolder[] = [];
  for (const display of new Set(given)) {
    const folder = path.resolve(cwd, display);
    folders.push({ folder, real: await realFolder(folder), display });
  }
  // An inventory file kept elsewhere (`CONVERGE_INVENTORY=file:PATH`, possibly inside the manifest
  // root), and the apply lock beside it, are Converge's records as much as the state folder is.
  const inventory = env.CONVERGE_INVENTORY;
  if (inventory?.startsWith('file:') && inventory.length > 5) {
    const file = path.resolve(cwd, inventory.slice(5));
    const lock = path.join(path.dirname(file), STATE_LOCK_FILE);
    for (const [target, display] of [
      [file, inventory.slice(5)],
      [lock, path.join(path.dirname(inventory.slice(5)), STATE_LOCK_FILE)],
    ] as const)
      folders.push({ folder: target, real: await realFile(target), display, file: true });
  }
  return folders;
}

/** The apply lock, in the state folder or beside a file inventory (engine/state-lock.ts). */
export const STATE_LOCK_FILE = 'apply.lock';

/** `file` with symbolic links resolved (its folder's, when the file does not exist yet). */
async function realFile(file: string): Promise<string> {
  try {
    return await realpath(file);
  } catch {
    return path.join(await realFolder(path.dirname(file)), path.basename(file));
  }
}

/** A root for a manifest folder given with -f, or for the folder of a file given with -f. */
export async function manifestRoot(folder: string, display: string): Promise<ManifestRoot> {
  return { folder, real: await realFolder(folder), display };
}

/**
 * The reader for objects that did not come from a manifest file (a program building Desired objects
 * itself, the conformance suite): confined to the current folder, with the same rules.
 */
export async function currentFolderReader(env: NodeJS.ProcessEnv = process.env): Promise<ManifestFileReader> {
  const cwd = process.cwd();
  return confinedFileReader({
    root: await manifestRoot(cwd, '.'),
    base: cwd,
    protectedFolders: await stateFolders(env, cwd),
    cache: new Map(),
  });
}
