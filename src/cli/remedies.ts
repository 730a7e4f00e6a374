/**
 * The CLI's words for what an engine error says can be done (`EngineError.remedy`): the engine names
 * no command of a front end, so the command to run is added here, where the error is printed.
 */
import { printable } from '../common/printable.js';
import type { EngineRemedy, SavedPlanRemedy } from '../engine/errors.js';

export function remedyText(remedy: EngineRemedy | undefined): string {
  if (remedy === undefined) return '';
  if (remedy === 'release-inventory-lock') return ' Release it with `converge inventory unlock`.';
  if (remedy === 'declare-from-export')
    return ' `converge export` writes live objects as manifest documents.';
  // The engine's message already says to plan again and review: only the command is added here.
  if (!remedy.verified)
    return ` With the manifest you mean to apply: \`converge plan -f PATH -out ${quoteArg(remedy.file)}\` (the paths and flags this file names are not repeated, since nothing shows they are the reviewed ones).`;
  return ` Run \`${planCommandFor(remedy)}\` again and review it.`;
}

/** The command that makes the saved plan again, as it was made: it works as printed. */
function planCommandFor(saved: SavedPlanRemedy): string {
  return `converge plan ${[
    ...saved.manifest.map((m) => `-f ${quoteArg(m)}`),
    ...(saved.prune ? ['--prune'] : []),
    ...saved.targets.map((t) => `--target ${quoteArg(t)}`),
    ...saved.excludes.map((t) => `--exclude ${quoteArg(t)}`),
    ...settingFlags({ allowEnv: saved.allowEnv, allowAddress: saved.allowAddresses }),
    ...(saved.maxDeletes !== undefined ? [`--max-deletes ${saved.maxDeletes}`] : []),
    ...(saved.options ?? []).map((o) => `--${quoteArg(o)}`),
  ].join(' ')} -out ${quoteArg(saved.file)}`;
}

/**
 * The flags that let a run's manifest load (`--allow-env NAME`, `--allow-address A`), as words of
 * a command suggested to follow the run: without them the command printed fails where the run did
 * not (`environment variable … is not exposed`).
 */
export function settingFlags(flags: {
  allowEnv?: readonly string[] | undefined;
  allowAddress?: readonly string[] | undefined;
}): string[] {
  return [
    ...(flags.allowEnv ?? []).map((n) => `--allow-env ${quoteArg(n)}`),
    ...(flags.allowAddress ?? []).map((a) => `--allow-address ${quoteArg(a)}`),
  ];
}

/**
 * A path as a shell argument: quoted only when it needs to be. Printable first: the paths come from a
 * plan file not yet verified, and a line break in one would print a line of its own.
 */
export function quoteArg(given: string): string {
  const text = printable(given);
  return /^[\w./:@+-]+$/.test(text) ? text : `'${text.replace(/'/g, "'\\''")}'`;
}
