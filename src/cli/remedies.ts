/**
 * The CLI's words for what an engine error says can be done (`EngineError.remedy`): the engine names
 * no command of a front end, so the command to run is added here, where the error is printed.
 */
import type { EngineRemedy } from '../engine/errors.js';

const REMEDIES: Record<EngineRemedy, string> = {
  'release-inventory-lock': 'Release it with `converge inventory unlock`.',
};

export function remedyText(remedy: EngineRemedy | undefined): string {
  return remedy ? ` ${REMEDIES[remedy]}` : '';
}
