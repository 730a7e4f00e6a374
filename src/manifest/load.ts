/**
 * loadManifest: files → documents → checked, interpolated, validated resources and connections.
 * Every problem of every file is collected before anything fails, so one run shows them all.
 */
import path from 'node:path';
import { isMap } from 'yaml';
import { type AllowList, allowListFrom } from '../common/allow-list.js';
import {
  confinedFileReader,
  type ConfinementOptions,
  type ManifestFileReader,
  stateFolders,
} from '../common/confined-files.js';
import { collectDocument, type FileContext, type KindsContext } from './collect-document.js';
import { crossCheck } from './crosscheck.js';
import { DeferredPositions } from './deferred-positions.js';
import { discoverManifestFiles, pathProblem } from './discover.js';
import { loadFileFast } from './fast-load.js';
import { envAccess, type EnvLookup } from './env-access.js';
import type { InterpolationSources } from './interpolate.js';
import { type ManifestKind, type ManifestService, servicesOfKinds } from './kinds.js';
import { MAX_INTERPOLATED_FILE_BYTES, MAX_MANIFEST_FILE_BYTES } from './limits.js';
import { type ParsedDocument, parseManifestText } from './parse.js';
import { interpolatedPointersThroughAliases, prepareDocument } from './prepare.js';
import { readTextFile, type TextFileResult } from '../common/text-file.js';
import { documentToValue } from './to-value.js';
import { type Manifest, ManifestError, type ManifestProblem } from './types.js';
import { checkKindNames } from './schema.js';
import { validateDocument } from './validate.js';

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
  const readEnv = envAccess(env, options.allowEnv ?? allowListFrom(env.CONVERGE_ALLOW_ENV), cwd);
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
    const sources = interpolationSources(file.display, readEnv, readFile);
    const context: FileContext = { confinement, readFile, deferredPositions };
    // Most files are valid and plain: read fast, without positions. A file with any problem, or
    // with YAML the fast path leaves alone (anchors, tags...), is read again keeping positions.
    const fast = options.alwaysKeepPositions
      ? undefined
      : await loadFileFast(file.display, read.text, sources, context, { kinds, services });
    if (fast) {
      manifest.resources.push(...fast.resources);
      manifest.connections.push(...fast.connections);
      manifest.pruneScopes.push(...fast.pruneScopes);
      continue;
    }
    const before = {
      problems: problems.length,
      resources: manifest.resources.length,
      connections: manifest.connections.length,
      pruneScopes: manifest.pruneScopes.length,
    };
    const parsed = parseManifestText(file.display, read.text);
    // Each document is loaded, and its syntax tree let go, before the next is composed.
    for (const document of parsed.documents) {
      const documentProblems = await loadDocument(document, sources, context, { kinds, services }, manifest);
      problems.push(...documentProblems);
      if (documentProblems.length > 0) {
        const name = connectionName(document);
        if (name !== undefined) brokenConnections.add(name);
      }
    }
    const tooDeep = parsed.tooDeep();
    if (tooDeep) {
      // A file found too deep part-way is not read at all.
      problems.length = before.problems;
      manifest.resources.length = before.resources;
      manifest.connections.length = before.connections;
      manifest.pruneScopes.length = before.pruneScopes;
      problems.push(tooDeep);
    } else {
      problems.push(...parsed.problems);
    }
  }

  problems.push(...crossCheck(manifest, kinds, brokenConnections));
  if (problems.length > 0) throw new ManifestError(sortProblems(problems));
  return manifest;
}

async function loadDocument(
  { doc, positions }: ParsedDocument,
  sources: InterpolationSources,
  context: FileContext,
  kinds: KindsContext,
  manifest: Manifest,
): Promise<ManifestProblem[]> {
  if (!isMap(doc.contents)) {
    return [
      {
        position: positions.ofNode(doc.contents),
        message: 'a manifest document must be a mapping with apiVersion, kind, metadata and spec',
      },
    ];
  }
  const prepared = await prepareDocument(doc, positions, sources);
  if (prepared.rejected) return prepared.problems;

  const converted = documentToValue(doc, positions, prepared.firstAlias, {
    hasMergeKeys: prepared.hasMergeKeys,
  });
  if (!converted.ok) return [...prepared.problems, converted.problem];

  const sensitivePointers =
    prepared.hasAliases || prepared.hasMergeKeys
      ? interpolatedPointersThroughAliases(doc, prepared.interpolatedScalars)
      : prepared.interpolatedPointers;
  if (prepared.problems.length > 0) {
    // Interpolation problems: validation still runs, for the document's other problems.
    const validation = validateDocument(converted.value, {
      ...kinds,
      positions,
      sensitivePointers,
      failedPointers: prepared.failedPointers,
    });
    return [...prepared.problems, ...validation];
  }
  return collectDocument(
    { value: converted.value, positions, sensitivePointers, failedPointers: prepared.failedPointers },
    context,
    kinds,
    manifest,
  );
}

/** `metadata.name` of a `kind: Connection` document, read from the AST (the document may be invalid). */
function connectionName({ doc }: ParsedDocument): string | undefined {
  if (!isMap(doc.contents) || doc.get('kind') !== 'Connection') return undefined;
  const name = doc.getIn(['metadata', 'name']);
  return typeof name === 'string' ? name : undefined;
}

function interpolationSources(
  display: string,
  env: (name: string) => EnvLookup,
  readFile: ManifestFileReader,
): InterpolationSources {
  return {
    env,
    async file(reference) {
      // Relative to the manifest file's folder, not to where the CLI runs.
      const shown = path.isAbsolute(reference) ? reference : path.join(path.dirname(display), reference);
      const result = await readFile(reference, MAX_INTERPOLATED_FILE_BYTES);
      return result.ok ? result : { ok: false, reason: `${shown} ${result.reason}` };
    },
  };
}

function sortProblems(problems: ManifestProblem[]): ManifestProblem[] {
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
