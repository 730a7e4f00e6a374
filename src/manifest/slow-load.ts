/**
 * The position-keeping read of one manifest file: yaml's syntax trees, every guard on them, and
 * every problem at its file:line:col. Taken for a file with any problem, or with YAML the fast path
 * (fast-load.ts) leaves alone; loaded by `import()` only then, so a plain manifest never loads yaml.
 */
import { isMap } from 'yaml';
import { collectDocument, type FileContext, type KindsContext, noteUnloaded } from './collect-document.js';
import type { InterpolationSources } from './interpolate.js';
import { type ParsedDocument, parseManifestText } from './parse.js';
import { interpolatedPointersThroughAliases, prepareDocument } from './prepare.js';
import { documentToValue } from './to-value.js';
import type { Manifest, ManifestProblem } from './types.js';
import { validateDocument } from './validate.js';

export interface FileToRead {
  display: string;
  text: string;
  sources: InterpolationSources;
  context: FileContext;
  kinds: KindsContext;
}

/**
 * Adds the file's resources, connections and prune scopes to `manifest` and returns its problems;
 * names of its Connection documents that have problems go to `brokenConnections`.
 */
export async function loadFileKeepingPositions(
  file: FileToRead,
  manifest: Manifest,
  brokenConnections: Set<string>,
): Promise<ManifestProblem[]> {
  const problems: ManifestProblem[] = [];
  const before = {
    resources: manifest.resources.length,
    connections: manifest.connections.length,
    pruneScopes: manifest.pruneScopes.length,
  };
  const parsed = parseManifestText(file.display, file.text);
  // Each document is loaded, and its syntax tree let go, before the next is composed.
  for (const document of parsed.documents) {
    const documentProblems = await loadDocument(document, file.sources, file.context, file.kinds, manifest);
    for (const problem of documentProblems) problems.push(problem);
    if (documentProblems.length > 0) {
      const name = connectionName(document);
      if (name !== undefined) brokenConnections.add(name);
    }
  }
  const tooDeep = parsed.tooDeep();
  if (tooDeep) {
    // A file found too deep part-way is not read at all.
    manifest.resources.length = before.resources;
    manifest.connections.length = before.connections;
    manifest.pruneScopes.length = before.pruneScopes;
    return [tooDeep];
  }
  return [...problems, ...parsed.problems];
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
    // Interpolation problems: validation still runs, for the document's other problems, and the
    // document is counted by the checks across documents as one with a schema error is.
    const validation = validateDocument(converted.value, {
      ...kinds,
      positions,
      sensitivePointers,
      failedPointers: prepared.failedPointers,
    });
    const failedIdentity =
      prepared.hasAliases || prepared.hasMergeKeys
        ? interpolatedPointersThroughAliases(doc, prepared.failedScalars)
        : prepared.failedPointers;
    noteUnloaded(converted.value, positions, kinds.kinds, manifest, failedIdentity);
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
