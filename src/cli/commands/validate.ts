/** `converge validate -f PATH`: the manifest alone, no service contacted. */

import { loadManifest } from '../../manifest/index.js';
import { kinds } from '../../resources/index.js';
import { EXIT } from '../exit-codes.js';
import { type Io, write } from '../io.js';

export async function validateCommand(paths: string[], io: Io): Promise<number> {
  const manifest = await loadManifest(paths, { kinds, env: io.env });
  const n = manifest.resources.length;
  write(
    io.stdout,
    `The manifest is valid: ${n} object${n === 1 ? '' : 's'} in ${manifest.files.length} file${manifest.files.length === 1 ? '' : 's'}.`,
  );
  return EXIT.ok;
}
