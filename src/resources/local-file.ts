/**
 * The one way a kind reads a local file an object names (a job's `specFile`, a workspace's state
 * file): through the manifest's confined reader, so the manifest root, symbolic-link and state-folder
 * rules of `${file:}` hold for it too. An object that did not come from a manifest file (a program
 * building Desired objects itself) reads within the current folder, under the same rules.
 */
import { currentFolderReader, type ManifestFileResult } from '../common/confined-files.js';
import type { ManifestResource } from './contract.js';

export function readLocalFile(
  desired: { resource?: ManifestResource },
  reference: string,
  maxBytes: number,
): Promise<ManifestFileResult> {
  if (desired.resource) return desired.resource.readFile(reference, maxBytes);
  return currentFolderReader().then((read) => read(reference, maxBytes));
}

/** Why a local file could not be read, in the kinds' words ("no such file" rather than "not found"). */
export function unreadableReason(result: ManifestFileResult & { ok: false }): string {
  return 'notFound' in result && result.notFound ? 'no such file' : result.reason;
}
