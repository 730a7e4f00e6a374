/** The `-f` paths of validate, plan and apply, checked before anything else happens. */
import { CliError } from './exit-codes.js';

/** Said before any lock is taken or file read, so a usage error leaves nothing behind. */
export function requireManifestPaths(paths: readonly string[]): void {
  if (paths.length === 0) throw new CliError('no manifest given: pass -f FILE or -f FOLDER');
}
