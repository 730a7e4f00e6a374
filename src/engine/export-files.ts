/**
 * Writes exported objects as manifest files: one file per kind (`AclRole.yaml`, `Job.yaml`), each a
 * stream of documents in address order, as a person would lay out a manifest. A document with
 * placeholders says above itself which variable fills each and that it must be allowed (`allowEnv`, the
 * CLI's `--allow-env`: the caller's name for it).
 * Files are created, never overwritten: an export into a manifest folder must not replace its files;
 * and every file is checked before the first is written, so a refused export writes nothing.
 */
import { lstat, mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { stringify } from 'yaml';
import { printable } from '../common/printable.js';
import { REDACTED } from '../common/scrub.js';
import { type SettingNames, settingNames } from '../common/setting-names.js';
import { API_VERSION } from '../manifest/kinds.js';
import type { ExportedObject } from './export.js';
import { EngineError } from './errors.js';

/** How the caller names its options in the files and errors (the CLI: `--allow-env`, `-o`). */
export interface ExportFileOptions {
  settingNames?: Partial<SettingNames>;
}

/** One manifest document, with its placeholder notes as comments. */
export function exportedDocument(object: ExportedObject, options: ExportFileOptions = {}): string {
  const { allowEnv } = settingNames(options.settingNames);
  const { key } = object;
  const metadata: Record<string, string> = { name: key.name };
  if (key.namespace !== undefined) metadata[object.namespaceField] = key.namespace;
  if (key.connection !== undefined) metadata.connection = key.connection;
  // A path holds names the service gave (a task group's, an Env entry's): one line whatever they hold.
  const notes = [
    ...object.placeholders.map(
      (p) =>
        `# ${printable(p.path)} is secret and not exported: set ${p.variable} and allow it with ${allowEnv} ${p.variable} (or CONVERGE_ALLOW_ENV)`,
    ),
    ...(object.copied ?? []).map(
      (variable) =>
        `# ${variable} also fills the copies of its secret in other fields of this object, written there as \${env:${variable}}`,
    ),
    ...(object.redacted ?? []).map(
      (p) =>
        `# ${printable(p)} held the token Converge read the service with, written here as ${REDACTED}: remove it from the service and rotate the token`,
    ),
  ];
  const body = stringify(
    { apiVersion: API_VERSION, kind: key.kind, metadata, spec: object.spec },
    { lineWidth: 0, aliasDuplicateObjects: false },
  );
  return [...notes, body].join('\n');
}

/**
 * Writes the files; returns their paths. Refuses, before writing any, when one of them already
 * exists: an export that stopped at its fourth file would leave three behind, and the next try would
 * then fail on those.
 */
export async function writeExportFiles(
  dir: string,
  objects: readonly ExportedObject[],
  options: ExportFileOptions = {},
): Promise<string[]> {
  const byKind = new Map<string, ExportedObject[]>();
  for (const o of objects) byKind.set(o.key.kind, [...(byKind.get(o.key.kind) ?? []), o]);
  const files = [...byKind].map(([kind, list]) => ({
    file: path.join(dir, `${kind}.yaml`),
    text: list.map((o) => exportedDocument(o, options)).join('---\n'),
  }));
  await refuseExisting(
    dir,
    files.map((f) => f.file),
    options,
  );
  await makeFolder(dir, options);
  const written: string[] = [];
  for (const { file, text } of files) {
    try {
      // `wx` still: a file made since the check (another run) is not replaced either.
      await writeFile(file, text, { flag: 'wx', mode: 0o644 });
    } catch (error) {
      throw new EngineError(`${writeFailure(file, error, options)}${writtenSoFar(written)}`);
    }
    written.push(file);
  }
  return written;
}

/** Every target that exists, in one error: fixing them one run at a time would take as many runs. */
async function refuseExisting(
  dir: string,
  files: readonly string[],
  options: ExportFileOptions,
): Promise<void> {
  // lstat: a link, even a dangling one, is in the way of a new file as much as a file is.
  const found = await Promise.all(
    files.map((f) =>
      lstat(f).then(
        () => f,
        () => undefined,
      ),
    ),
  );
  const existing = found.filter((f): f is string => f !== undefined);
  if (existing.length === 0) return;
  const where = `remove ${existing.length === 1 ? 'it' : 'them'} or choose another folder (${settingNames(options.settingNames).exportDir}); nothing was written`;
  throw new EngineError(
    existing.length === 1
      ? `${existing[0]} already exists: export writes new files only; ${where}`
      : `${existing.length} files already exist in ${dir} (${existing.map((f) => path.basename(f)).join(', ')}): export writes new files only; ${where}`,
  );
}

function writeFailure(file: string, error: unknown, options: ExportFileOptions): string {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'EEXIST'
    ? `${file} already exists (made while the export was writing): export writes new files only; remove it or choose another folder (${settingNames(options.settingNames).exportDir})`
    : `cannot write ${file}: ${code ?? String(error)}`;
}

/** Which files a write that failed midway left behind, so none is taken for a whole export. */
function writtenSoFar(written: readonly string[]): string {
  return written.length === 0
    ? '; nothing was written'
    : `; written before it, and incomplete as an export: ${written.join(', ')}`;
}

/** How many missing parent folders export creates before it gives up (a typo, not a layout). */
const MAX_NEW_FOLDERS = 32;

/**
 * Creates `dir` and its missing parents, one level at a time: Node's own recursive mkdir never
 * returns on some paths (under /proc), and its errors (`ENOTDIR`, `EEXIST`) say nothing of which
 * part of the path is wrong.
 */
async function makeFolder(dir: string, options: ExportFileOptions, depth = 0): Promise<void> {
  const refuse = (why: string) =>
    new EngineError(
      `cannot create the folder ${dir}: ${why} (${settingNames(options.settingNames).exportDir})`,
    );
  try {
    await mkdir(dir);
    return;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') {
      const isFolder = await stat(dir).then(
        (found) => found.isDirectory(),
        () => false,
      );
      if (isFolder) return;
      throw refuse('a file of that name is in the way');
    }
    if (code === 'ENOENT' && depth < MAX_NEW_FOLDERS && path.dirname(dir) !== dir) {
      await makeFolder(path.dirname(dir), options, depth + 1);
      // The parent exists now: this level once more, as the first try (another run may have made it).
      return makeFolder(dir, options, MAX_NEW_FOLDERS);
    }
    if (code === 'ENOTDIR') throw refuse('part of the path is a file, not a folder');
    if (code === 'EACCES' || code === 'EPERM') throw refuse('permission denied');
    if (code === 'EROFS') throw refuse('the file system is read-only');
    if (code === 'ENOENT') throw refuse('no folder can be created there');
    throw refuse(code ?? String(error));
  }
}
