/**
 * `converge validate -f PATH`: the manifest alone, no service contacted. Besides syntax and schema it
 * reads the local files objects name (a workspace's state file), so CI catches those too.
 */
import { formatPosition, ManifestError, type ManifestProblem } from '../../manifest/types.js';
import type { Catalog } from '../../engine/catalog.js';
import { connect, desiredObjects, loadManifest, type ManifestAccess } from '../../engine/workflow.js';
import { EXIT } from '../exit-codes.js';
import { type Io, write } from '../io.js';
import { requireManifestPaths } from '../manifest-paths.js';

export async function validateCommand(
  paths: string[],
  io: Io,
  catalog: Catalog,
  access: ManifestAccess = {},
): Promise<number> {
  requireManifestPaths(paths);
  const manifest = await loadManifest(paths, { env: io.env, catalog, ...access });
  // Settings only: no client is made and no service contacted.
  const connections = connect(manifest, { env: io.env, catalog });
  const desired = desiredObjects(manifest, connections, catalog);
  const problems: ManifestProblem[] = [];
  for (const d of desired) {
    const kind = catalog.kind(d.key.kind);
    if (!kind?.resolve || d.ensure === 'absent' || !d.resource) continue;
    const resolved = await kind.resolve(d);
    for (const p of resolved.problems)
      problems.push({ position: p.position ?? d.resource.source, message: p.message });
  }
  if (problems.length > 0) {
    problems.sort((a, b) => formatPosition(a.position).localeCompare(formatPosition(b.position)));
    throw new ManifestError(problems);
  }
  const n = manifest.resources.length;
  write(
    io.stdout,
    `The manifest is valid: ${n} object${n === 1 ? '' : 's'} in ${manifest.files.length} file${manifest.files.length === 1 ? '' : 's'}.`,
  );
  return EXIT.ok;
}
