/**
 * `converge validate -f PATH`: the manifest alone, no service contacted. Besides syntax and schema it
 * reads the local files objects name (a workspace's state file), so CI catches those too.
 */
import { loadManifest } from '../../manifest/index.js';
import { formatPosition, ManifestError, type ManifestProblem } from '../../manifest/types.js';
import { kindByName, kinds } from '../../resources/index.js';
import { EXIT } from '../exit-codes.js';
import { type Io, write } from '../io.js';
import { desiredOf, requireManifestPaths } from '../workflow.js';

export async function validateCommand(paths: string[], io: Io): Promise<number> {
  requireManifestPaths(paths);
  const manifest = await loadManifest(paths, { kinds, env: io.env });
  const problems: ManifestProblem[] = [];
  for (const resource of manifest.resources) {
    const kind = kindByName(resource.kind);
    if (!kind?.resolve || resource.ensure === 'absent') continue;
    const resolved = await kind.resolve(desiredOf(resource));
    for (const p of resolved.problems)
      problems.push({ position: p.position ?? resource.source, message: p.message });
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
