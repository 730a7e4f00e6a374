/**
 * Progress while applying: a live line on a terminal, plain lines otherwise (CI logs), so a long
 * apply is never silent.
 */
import type { ApplyEvent } from '../applier/applier.js';
import type { Io } from './io.js';

const PAST: Record<string, string> = {
  create: 'created',
  update: 'updated',
  replace: 'replaced',
  delete: 'deleted',
  noop: 'unchanged',
};
const PRESENT: Record<string, string> = {
  create: 'creating',
  update: 'updating',
  replace: 'replacing',
  delete: 'deleting',
  noop: '',
};

export function applyProgress(io: Io): { onEvent: (e: ApplyEvent) => void; end: () => void } {
  const live = Boolean(io.stderr.isTTY);
  let lineShown = false;
  const clear = () => {
    if (lineShown) io.stderr.write('\r\x1b[2K');
    lineShown = false;
  };
  return {
    onEvent(e) {
      const { change, result } = e;
      if (e.type === 'start') {
        if (live) {
          clear();
          io.stderr.write(`[${e.done}/${e.total}] ${PRESENT[change.action]} ${change.address}…`);
          lineShown = true;
        } else {
          io.stdout.write(`${change.address}: ${PRESENT[change.action]}…\n`);
        }
        return;
      }
      if (!result) return;
      clear();
      const took =
        result.durationMs < 1000 ? `${result.durationMs}ms` : `${(result.durationMs / 1000).toFixed(1)}s`;
      const text =
        result.status === 'applied'
          ? `${change.address}: ${PAST[change.action]} (${took})`
          : `${change.address}: ${result.status.toUpperCase()}: ${result.message ?? ''}`;
      io.stdout.write(`${text}\n`);
    },
    end: clear,
  };
}
