/**
 * loadManifest: files → documents → checked, interpolated, validated resources and connections.
 * Every problem of every file is collected before anything fails, so one run shows them all.
 */
import path from 'node:path';
import {
  type AllowList,
  allowListFrom,
  MIN_SENSITIVE_VALUE_CHARS,
  sensitiveEnvFrom,
} from '../common/allow-list.js';
import { splitPointer, valueAtPointer } from './pointer.js';
import {
  confinedFileReader,
  type ConfinementOptions,
  type ManifestFileReader,
  stateFolders,
} from '../common/confined-files.js';
import type { FileContext } from './collect-document.js';
import { crossCheck } from './crosscheck.js';
import { sensitiveIdentityProblems, withoutSecrets } from './sensitive-identity.js';
import { DeferredPositions } from './deferred-positions.js';
import { discoverManifestFiles, pathProblem } from './discover.js';
import { loadFileFast } from './fast-load.js';
import { loadPositionParser, positionParserLoaded } from './position-parser.js';
import { envAccess, type EnvLookup } from './env-access.js';
import type { InterpolationSources } from './interpolate.js';
import { type ManifestKind, type ManifestService, servicesOfKinds } from './kinds.js';
import {
  MAX_KIND_FILES_TOTAL,
  MAX_DOCUMENT_TEXT,
  textExceeds,
  MAX_INTERPOLATED_FILE_BYTES,
  MAX_INTERPOLATED_TOTAL_BYTES,
  MAX_MANIFEST_FILE_BYTES,
} from './limits.js';
import { readTextFile, type TextFileResult } from '../common/text-file.js';
import { type Manifest, ManifestError, type ManifestProblem } from './types.js';
import { checkKindNames } from './schema.js';

export interface LoadManifestOptions {
  /** The resource kinds a manifest may use (the CLI passes the registry's `kinds`). */
  kinds: readonly ManifestKind[];
  /** The services `Connection` documents may name, with their settings; default: the kinds' services. */
  services?: readonly ManifestService[];
  /** Where `${env:NAME}` looks; defaults to `process.env`. */
  env?: NodeJS.ProcessEnv;
  /**
   * The variables `${env:NAME}` may read (names or globs). Default: those `CONVERGE_ALLOW_ENV` of
   * `env` lists, so nothing unless the operator says so. Converge's credentials are never readable.
   */
  allowEnv?: AllowList;
  /** Folder that relative paths (and the default state folder `.converge`) start from; defaults to `process.cwd()`. */
  cwd?: string;
  /**
   * Read every file with the position-keeping parse, never the fast one: for tests that compare
   * the two, and to rule the fast path out when a manifest loads differently than expected.
   */
  alwaysKeepPositions?: boolean;
  /**
   * Load the position-keeping parser only for the manifest's own problems (which keep their line and
   * column): positions asked for later, of the manifest returned (a plan's problems), fall back to
   * their document's start. For `converge validate`, which asks for none: a valid plain manifest then
   * never loads yaml.
   */
  positionsOnlyForProblems?: boolean;
}

/**
 * Loads manifest files and folders. Resolves with the manifest when every document is valid;
 * rejects with a ManifestError listing every problem (sorted by file, line, column) otherwise.
 */
export async function loadManifest(paths: string[], options: LoadManifestOptions): Promise<Manifest> {
  const { kinds } = options;
  const services = options.services ?? servicesOfKinds(kinds);
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const allowedEnv = envAccess(env, options.allowEnv ?? allowListFrom(env.CONVERGE_ALLOW_ENV), cwd);
  // What a sensitive variable held is kept, so that every output masks it wherever it is copied.
  const sensitiveEnv = sensitiveEnvFrom(env.CONVERGE_SENSITIVE_ENV);
  // Each value with where it came from (named, never shown, when a value is misplaced).
  const sensitiveValues = new Map<string, string>();
  const readEnv = (name: string): EnvLookup => {
    const found = allowedEnv(name);
    if ('value' in found && sensitiveEnv.allows(name) && !sensitiveValues.has(found.value))
      sensitiveValues.set(found.value, `the value of ${name}, a sensitive variable (CONVERGE_SENSITIVE_ENV)`);
    return found;
  };
  // Converge's own state is never readable from a manifest, even when it lies inside the root.
  const protectedFolders = await stateFolders(env, cwd);
  // Two kinds with one name is a programming error and should fail loudly, not per file. Only the
  // names are checked: each kind's schema is built and compiled when a document of the kind is
  // first met (building them all cost validate several milliseconds at start, issue 20).
  checkKindNames(kinds);

  const manifest: Manifest = { files: [], resources: [], connections: [], pruneScopes: [] };
  const discovery = await discoverManifestFiles(paths, cwd, protectedFolders);
  const problems: ManifestProblem[] = [...discovery.problems];
  // A file referenced from many values is read once per load.
  const referencedFiles = new Map<string, Promise<TextFileResult>>();
  // Names of Connection documents that have problems: references to them are not reported again.
  const brokenConnections = new Set<string>();

  // Positions are asked for while documents are collected (a Connection's address) and after (a
  // plan's reference to a policy that does not exist): the parser must be there before the first
  // file, unless the caller wants positions only for the manifest's own problems.
  if (!options.positionsOnlyForProblems) await loadPositionParser();
  const filledIn: FilledIn = { bytes: 0 };
  const kindFiles = objectFileBudget();
  for (const file of discovery.files) {
    const read = await readTextFile(file.absolute, MAX_MANIFEST_FILE_BYTES);
    if (!read.ok) {
      problems.push(pathProblem(file.display, `file ${read.reason}`));
      continue;
    }
    manifest.files.push(file.display);
    const deferredPositions = new DeferredPositions(file.display, read.text);
    // One reader per file: `${file:}` and the files kinds read later follow the same rules.
    const confinement: ConfinementOptions = {
      root: file.root,
      base: path.dirname(file.absolute),
      protectedFolders,
      cache: referencedFiles,
    };
    const readFile = confinedFileReader(confinement);
    const sources = interpolationSources(
      file.display,
      readEnv,
      readFile,
      filledIn,
      (reference, text, shown) => {
        // A file whose path says secret (`secrets/db.txt`, `api-token`) is one, by the variables' rule.
        const secret = reference.split(/[\\/]/).some((segment) => sensitiveEnv.allows(segment));
        if (!secret) return;
        // Its text as read, and without the final line break an editor adds (a copy, an echo, lacks it).
        for (const value of new Set([text, text.trim()]))
          if (!sensitiveValues.has(value))
            sensitiveValues.set(
              value,
              `the text of ${shown}, a file whose name says secret (CONVERGE_SENSITIVE_ENV)`,
            );
      },
    );
    const context: FileContext = {
      confinement,
      readFile,
      readFileFor: kindFiles(readFile, path.dirname(file.absolute)),
      deferredPositions,
    };
    // Most files are valid and plain: read fast, without positions. A file with any problem, or
    // with YAML the fast path leaves alone (anchors, tags...), is read again keeping positions.
    // A file read again keeping positions fills its references in again: counted once, not twice.
    const filledBefore = filledIn.bytes;
    const fast = options.alwaysKeepPositions
      ? undefined
      : await loadFileFast(file.display, read.text, sources, context, { kinds, services });
    if (!fast) filledIn.bytes = filledBefore;
    if (fast) {
      // Appended one by one: a spread of 150,000 passes them all as arguments and overflows the stack.
      appendAll(manifest.resources, fast.resources);
      appendAll(manifest.connections, fast.connections);
      appendAll(manifest.pruneScopes, fast.pruneScopes);
      continue;
    }
    // Only now the position-keeping pipeline (and yaml) is loaded: most runs never need it.
    const { loadFileKeepingPositions } = await import('./slow-load.js');
    await loadPositionParser();
    appendAll(
      problems,
      await loadFileKeepingPositions(
        { display: file.display, text: read.text, sources, context, kinds: { kinds, services } },
        manifest,
        brokenConnections,
      ),
    );
  }

  for (const resource of manifest.resources)
    if (textExceeds(resource.spec, MAX_DOCUMENT_TEXT))
      problems.push({
        position: resource.source,
        message: `the document holds more than ${MAX_DOCUMENT_TEXT / 1024 / 1024} MiB of text once its references are filled in and its aliases expanded (each alias copies what it names); no service takes an object that large`,
      });

  // A sensitive variable the manifest may read is a secret of the run whether or not the manifest
  // reads it: a pull request that drops the reference (`args: ["${env:DB_PASSWORD}"]` → "changed")
  // otherwise printed the live copy of the value, as the side of the change that goes. Masked only,
  // as a read one is (the operator's name for it says secret): the manifest did not put it anywhere,
  // so no name or namespace "holds" it and none is refused for it.
  const exposed: string[] = [];
  for (const name of Object.keys(env)) {
    if (!sensitiveEnv.allows(name)) continue;
    const found = allowedEnv(name);
    if ('value' in found && found.value.trim() !== '' && !sensitiveValues.has(found.value))
      exposed.push(found.value);
  }
  // A connection's token from outside the manifest is a credential whatever its source (a variable
  // of any name, a file): a document copying it into a description must not print it in a plan. One
  // written in the manifest is in the open already (a sandbox's `root`): masking it would only blank
  // out a common word everywhere.
  for (const connection of manifest.connections)
    if (
      connection.token !== undefined &&
      connection.tokenFromOutside &&
      !sensitiveValues.has(connection.token)
    )
      sensitiveValues.set(connection.token, `the token of Connection "${connection.name}"`);
  // A value read from a variable or file into a field whose own name says secret (a job's
  // `Env: { DB_PASSWORD: "${env:PROD_DB}" }`) is one, whatever the variable or file is called: the
  // field says what it holds, and the variable's name may not (`PROD_DB`).
  for (const [value, field] of secretsByFieldName(manifest, sensitiveEnv))
    if (!sensitiveValues.has(value))
      sensitiveValues.set(
        value,
        `the value of ${field}, a field whose name says secret (CONVERGE_SENSITIVE_ENV)`,
      );
  const wholeManifestProblems = () => [
    ...crossCheck(manifest, kinds, brokenConnections),
    ...sensitiveIdentityProblems(manifest, sensitiveValues, kinds),
  ];
  let crossProblems = wholeManifestProblems();
  if (crossProblems.length > 0 && !positionParserLoaded()) {
    // Found with positions deferred: checked again once they can be had, for line and column.
    await loadPositionParser();
    crossProblems = wholeManifestProblems();
  }
  appendAll(problems, crossProblems);
  appendAll(problems, emptinessProblems(manifest, problems));
  if (sensitiveValues.size + exposed.length > 0)
    manifest.sensitiveValues = [...new Set([...sensitiveValues.keys(), ...exposed])];
  if (problems.length > 0)
    throw new ManifestError(sortProblems(withoutSecrets(problems, manifest.sensitiveValues)), manifest);
  return manifest;
}

/**
 * A manifest of files that declare nothing at all (empty, or only comments) is refused, as a folder
 * with no YAML files is: it is a wrong path or a truncated file far more often than an intent, and
 * planned with `--prune` it would have Converge read every managed object as no longer wanted. A
 * manifest of PruneScopes alone is an intent (delete what Converge made in that scope) and loads.
 */
function emptinessProblems(manifest: Manifest, problems: readonly ManifestProblem[]): ManifestProblem[] {
  const declared = manifest.resources.length + manifest.connections.length + manifest.pruneScopes.length;
  if (declared > 0 || problems.length > 0) return [];
  return manifest.files.map((file) =>
    pathProblem(file, 'declares nothing: the file is empty or holds only comments'),
  );
}

/** Interpolated string values whose field's name matches the sensitive patterns, with that name. */
function secretsByFieldName(manifest: Manifest, sensitive: AllowList): [string, string][] {
  const found: [string, string][] = [];
  for (const resource of manifest.resources) {
    for (const pointer of resource.sensitivePointers) {
      const field = splitPointer(pointer).at(-1);
      if (!pointer.startsWith('/spec/') || field === undefined || !sensitive.allows(field)) continue;
      const value = valueAtPointer({ spec: resource.spec }, pointer);
      if (typeof value === 'string' && value.trim().length >= MIN_SENSITIVE_VALUE_CHARS)
        found.push([value, field]);
    }
  }
  return found;
}

/** What the manifest's `${file:}` references have filled in so far (MAX_INTERPOLATED_TOTAL_BYTES). */
interface FilledIn {
  /** UTF-8 bytes, as the limit is stated. */
  bytes: number;
}

function interpolationSources(
  display: string,
  env: (name: string) => EnvLookup,
  readFile: ManifestFileReader,
  filledIn: FilledIn,
  onRead: (reference: string, text: string, shown: string) => void,
): InterpolationSources {
  return {
    env,
    async file(reference) {
      // Relative to the manifest file's folder, not to where the CLI runs.
      const shown = path.isAbsolute(reference) ? reference : path.join(path.dirname(display), reference);
      const result = await readFile(reference, MAX_INTERPOLATED_FILE_BYTES);
      if (!result.ok) return { ok: false, reason: `${shown} ${result.reason}` };
      filledIn.bytes += Buffer.byteLength(result.text, 'utf8');
      if (filledIn.bytes > MAX_INTERPOLATED_TOTAL_BYTES)
        return {
          ok: false,
          reason: `it would bring what \${file:} references fill in to more than ${MAX_INTERPOLATED_TOTAL_BYTES / 1024 / 1024} MiB in all (each reference copies its file's text); refer to large files less often`,
        };
      onRead(reference, result.text, shown);
      return { ...result, text: oneLineText(result.text) };
    },
  };
}

/**
 * A file of one line gives that line: the line break an editor or `echo` puts after a password or a
 * token is not part of it, and a bind sent with it fails. Text of several lines (a certificate, a
 * script) is taken exactly as it is, its final line break included.
 */
export function oneLineText(text: string): string {
  return /^[^\r\n]*\r?\n$/.test(text) ? text.replace(/\r?\n$/, '') : text;
}

export function sortProblems(problems: ManifestProblem[]): ManifestProblem[] {
  return [...problems].sort(
    (a, b) =>
      compareStrings(a.position.file, b.position.file) ||
      a.position.line - b.position.line ||
      a.position.col - b.position.col,
  );
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** `target.push(...items)` without passing every item as an argument (which overflows the stack). */
function appendAll<T>(target: T[], items: readonly T[]): void {
  for (const item of items) target.push(item);
}

/**
 * The readers of the files objects name (a job's specFile, a workspace's state), one per object.
 * One object's file is bounded by its kind's own limit, but each further object naming the same
 * file parses and sends it again: 300 jobs naming one 4 MB file took minutes. Those further copies
 * may hold MAX_KIND_FILES_TOTAL in all. Counted per object and file, so reading again (a library's
 * second plan of the same manifest) adds nothing.
 */
function objectFileBudget(): (
  read: ManifestFileReader,
  base: string,
) => (owner: object) => ManifestFileReader {
  const readersOf = new Map<string, Set<object>>();
  let copies = 0;
  return (read, base) => (owner) => async (reference, maxBytes) => {
    const result = await read(reference, maxBytes);
    if (!result.ok) return result;
    const file = path.resolve(base, reference);
    const readers = readersOf.get(file) ?? new Set<object>();
    readersOf.set(file, readers);
    if (!readers.has(owner)) {
      readers.add(owner);
      if (readers.size > 1) copies += result.text.length;
    }
    if (copies > MAX_KIND_FILES_TOTAL)
      return {
        ok: false,
        reason: `not read: the objects naming the same files would parse and send more than ${MAX_KIND_FILES_TOTAL / 1024 / 1024} MiB of copies of them in all`,
      };
    return result;
  };
}
