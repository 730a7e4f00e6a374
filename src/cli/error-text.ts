/**
 * What a failed command says of its error, after `Error: `: the one wording shared by stderr and by
 * the documents a plan prints instead of itself (`plan --json`, `plan --markdown`).
 */
import { printable } from '../common/printable.js';
import { scrubSecrets } from '../common/scrub.js';
import { EngineError } from '../engine/errors.js';
import { environmentSecrets } from './debug-trace.js';
import { CliError } from './exit-codes.js';
import { remedyText } from './remedies.js';

export function errorText(error: unknown, env: NodeJS.ProcessEnv): string {
  if (error instanceof CliError) return shownLines(error.message);
  // The engine's own refusals (a plan file that does not verify, a held lock) read as they are.
  // The remedy may quote what a plan file says (its manifest paths, targets): printable too.
  if (error instanceof EngineError) return shownLines(`${error.message}${remedyText(error.remedy)}`);
  // Service errors come scrubbed of every secret of their request; the process's own credentials
  // are scrubbed once more here, from whatever error reaches this point.
  const message = error instanceof Error ? error.message : String(error);
  return scrubSecrets(message, environmentSecrets(env));
}

/**
 * A refusal's text line by line, each made printable: it may quote what a service or a lock file
 * holds (a lock reason, a holder's command), which must not rewrite the terminal or a CI log.
 */
function shownLines(message: string): string {
  return message.split('\n').map(printable).join('\n');
}
