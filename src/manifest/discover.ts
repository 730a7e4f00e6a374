/**
 * Turns the paths the user gave (files, folders, or both) into the ordered list of manifest files
 * to read. Folders are searched recursively for `*.yaml` / `*.yml`; the order is the sorted
 * relative path so that the same folder always loads (and reports errors) in the same order.
 */
import type { Dirent } from 'node:fs';
import { lstat, readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { isInside, type ManifestRoot, manifestRoot, type ProtectedFolder } from '../common/confined-files.js';
import { describeFsError } from '../common/text-file.js';
import type { ManifestProblem } from './types.js';

export interface ManifestFile {
  /** The path as shown to the user: as given, or the given folder joined with the relative path. */
  display: string;
  absolute: string;
  /** The folder this file may read files under: the folder given with -f, or the given file's folder. */
  root: ManifestRoot;
}

export interface DiscoveryResult {
  files: ManifestFile[];
  problems: ManifestProblem[];
}

const MANIFEST_EXTENSIONS = new Set(['.yaml', '.yml']);

/** `protectedFolders`: Converge's own state, which a link found in a folder may not lead into either. */
export async function discoverManifestFiles(
  paths: readonly string[],
  cwd: string,
  protectedFolders: readonly ProtectedFolder[] = [],
): Promise<DiscoveryResult> {
  const files: ManifestFile[] = [];
  const problems: ManifestProblem[] = [];
  // A file named twice (directly and through its folder, say) is read once, at its first place.
  const seen = new Set<string>();
  const add = (file: ManifestFile) => {
    if (seen.has(file.absolute)) return;
    seen.add(file.absolute);
    files.push(file);
  };

  if (paths.length === 0) problems.push(pathProblem('.', 'no manifest files or folders given'));

  for (const given of paths) {
    const display = path.normalize(given);
    const absolute = path.resolve(cwd, given);
    const link = await linkOnTheWay(cwd, absolute);
    if (link !== undefined) {
      problems.push(
        pathProblem(
          display,
          `${link === absolute ? 'is' : `lies under ${path.relative(cwd, link) || link}, which is`} a symbolic link: a checked-out link would move the manifest root (and what it may read) elsewhere; give the path it leads to with -f`,
        ),
      );
      continue;
    }
    let isFolder: boolean;
    try {
      isFolder = (await stat(absolute)).isDirectory();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // A path the system refuses as too long is not a missing file, and is not quoted whole.
      if (code === 'ENAMETOOLONG') {
        problems.push(pathProblem(`${display.slice(0, 120)}…`, 'the path is too long for this system'));
        continue;
      }
      // `team.yml` for `team.yaml` (or the reverse): the one that is there is named.
      const other = /\.ya?ml$/i.test(absolute)
        ? absolute.replace(/\.(ya?ml)$/i, (_, ext: string) =>
            ext.toLowerCase() === 'yml' ? '.yaml' : '.yml',
          )
        : undefined;
      let hint = '';
      if (other !== undefined)
        try {
          await stat(other);
          hint = `; did you mean ${display.replace(/\.(ya?ml)$/i, path.extname(other))}?`;
        } catch {
          // Neither is there.
        }
      problems.push(pathProblem(display, `no such file or folder (${describeFsError(error)})${hint}`));
      continue;
    }
    if (!isFolder) {
      // A file named explicitly is read whatever its extension: the user chose it.
      add({ display, absolute, root: await manifestRoot(path.dirname(absolute), path.dirname(display)) });
      continue;
    }
    const root = await manifestRoot(absolute, display);
    const found: string[] = [];
    const unreadable: string[] = [];
    const leadingOut: string[] = [];
    await collectManifestFiles(root, '', { found, unreadable, leadingOut }, protectedFolders);
    for (const relative of unreadable) {
      problems.push(pathProblem(path.join(display, relative), 'folder cannot be read'));
    }
    for (const relative of leadingOut) {
      problems.push(
        pathProblem(
          path.join(display, relative),
          `is a symbolic link that leads outside the manifest root (${display}) or into Converge's state: not read`,
        ),
      );
    }
    if (found.length === 0) {
      problems.push(pathProblem(display, 'folder has no .yaml or .yml files'));
      continue;
    }
    // Plain code-unit order, not locale order, so the result is the same on every machine.
    found.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    for (const relative of found) {
      add({ display: path.join(display, relative), absolute: path.join(absolute, relative), root });
    }
  }
  return { files, problems };
}

/**
 * The first symbolic link on the way to a path given with -f: the path itself, or, for a path under
 * the current folder, any folder between the two. A pull request can commit `infra -> ../..`; the
 * folders above the current one are the operator's own and are not looked at.
 */
async function linkOnTheWay(cwd: string, absolute: string): Promise<string | undefined> {
  const steps: string[] = [];
  if (isInside(cwd, absolute)) {
    let at = cwd;
    for (const part of path
      .relative(cwd, absolute)
      .split(path.sep)
      .filter((p) => p !== '')) {
      at = path.join(at, part);
      steps.push(at);
    }
  } else {
    steps.push(absolute);
  }
  for (const step of steps) {
    const stats = await lstat(step).catch(() => undefined);
    if (stats?.isSymbolicLink()) return step;
  }
  return undefined;
}

/**
 * Appends to `found` the manifest files under `folder`, as paths relative to the folder given by the
 * user. Hidden entries (dot-files and dot-folders such as `.git`) and `node_modules` are skipped.
 * Symbolic links to files are followed when they stay inside the root (a link out is how a hostile
 * manifest folder would make Converge read someone else's file); links to folders are not followed,
 * so a link cycle cannot loop.
 */
async function collectManifestFiles(
  root: ManifestRoot,
  relativeFolder: string,
  out: { found: string[]; unreadable: string[]; leadingOut: string[] },
  protectedFolders: readonly ProtectedFolder[],
): Promise<void> {
  const { found, unreadable, leadingOut } = out;
  let entries: Dirent[];
  try {
    entries = await readdir(path.join(root.folder, relativeFolder), { withFileTypes: true });
  } catch {
    unreadable.push(relativeFolder);
    return;
  }
  for (const entry of entries) {
    if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
    const relative = relativeFolder === '' ? entry.name : path.join(relativeFolder, entry.name);
    if (entry.isDirectory()) {
      await collectManifestFiles(root, relative, out, protectedFolders);
      continue;
    }
    if (!MANIFEST_EXTENSIONS.has(path.extname(entry.name).toLowerCase())) continue;
    if (entry.isFile()) {
      found.push(relative);
    } else if (entry.isSymbolicLink()) {
      const link = path.join(root.folder, relative);
      const target = await stat(link).catch(() => undefined);
      if (!target?.isFile()) continue;
      const real = await realpath(link).catch(() => undefined);
      const allowed =
        real !== undefined &&
        isInside(root.real, real) &&
        !protectedFolders.some((p) => isInside(p.real, real));
      if (allowed) found.push(relative);
      else leadingOut.push(relative);
    }
  }
}

/** A problem about a path as a whole: line 0 makes it print as `path: message`. */
export function pathProblem(file: string, message: string): ManifestProblem {
  return { position: { file, line: 0, col: 0 }, message };
}
