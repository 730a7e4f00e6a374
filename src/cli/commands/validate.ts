/**
 * `converge validate -f PATH`: the manifest alone, no service contacted (see the engine's `validate`):
 * syntax, schema, references, and the local files objects name.
 */
import type { Catalog } from '../../engine/catalog.js';
import { type ManifestAccess, validate } from '../../engine/validate.js';
import { EXIT } from '../exit-codes.js';
import { type Io, write } from '../io.js';
import { requireManifestPaths } from '../manifest-paths.js';
import { CLI_SETTING_NAMES } from '../setting-flags.js';

export async function validateCommand(
  paths: string[],
  io: Io,
  catalog: Catalog,
  access: ManifestAccess = {},
): Promise<number> {
  requireManifestPaths(paths);
  const { manifest } = await validate(paths, {
    env: io.env,
    catalog,
    ...access,
    settingNames: CLI_SETTING_NAMES,
    // Only reported valid or not: positions are needed for problems alone (see the option).
    positionsOnlyForProblems: true,
  });
  const n = manifest.resources.length;
  write(
    io.stdout,
    `The manifest is valid: ${n} object${n === 1 ? '' : 's'} in ${manifest.files.length} file${manifest.files.length === 1 ? '' : 's'}.`,
  );
  return EXIT.ok;
}
