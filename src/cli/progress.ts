/**
 * Progress while applying: a live line on a terminal, plain lines otherwise (CI logs), so a long
 * apply is never silent. Addresses come from the manifest and notes and failures may quote a
 * service: each is shown through `printable`, so none can end the line, move the cursor or issue a
 * CI workflow command.
 */
import type { ApplyEvent } from '../applier/applier.js';
import type { Change } from '../planner/types.js';
import { printable } from '../common/printable.js';
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
  // Changes started and not yet finished, oldest first: the live line names the one that has run
  // longest, and must come back after each finished line while any is still running.
  const running = new Map<string, Change>();
  let done = 0;
  let total = 0;
  let lineShown = false;
  const clear = () => {
    if (lineShown) io.stderr.write('\r\x1b[2K');
    lineShown = false;
  };
  const draw = () => {
    clear();
    const [oldest] = running.values();
    if (!oldest) return;
    const more = running.size > 1 ? ` (+${running.size - 1} more running)` : '';
    let line = `[${done}/${total}] ${PRESENT[oldest.action]} ${printable(oldest.address)}…${more}`;
    // A line wider than the terminal wraps, and clearing would then erase only its last row.
    const columns = (io.stderr as { columns?: unknown }).columns;
    if (typeof columns === 'number' && columns > 1 && line.length >= columns) {
      line = `${line.slice(0, columns - 2)}…`;
    }
    io.stderr.write(line);
    lineShown = true;
  };
  return {
    onEvent(e) {
      const { change, result } = e;
      done = e.done;
      total = e.total;
      if (e.type === 'note') {
        clear();
        io.stderr.write(`${printable(change.address)}: ${printable(e.message ?? '')}\n`);
        if (live) draw();
        return;
      }
      if (e.type === 'start') {
        running.set(change.address, change);
        if (live) draw();
        else io.stdout.write(`${printable(change.address)}: ${PRESENT[change.action]}…\n`);
        return;
      }
      running.delete(change.address);
      if (!result) return;
      // A change an interrupt left alone gets no line of its own: the interrupt's summary lists them,
      // and a line each here doubled a long list (and every one said the same).
      // So does one left alone because its saved plan is stale: the summary says so once.
      if (result.interrupted || result.planStale) {
        // The count moved on all the same.
        if (live) draw();
        return;
      }
      clear();
      const took =
        result.durationMs < 1000 ? `${result.durationMs}ms` : `${(result.durationMs / 1000).toFixed(1)}s`;
      const text =
        result.status === 'applied'
          ? `${printable(change.address)}: ${PAST[change.action]} (${took})`
          : `${printable(change.address)}: ${result.status.toUpperCase()}: ${printable(result.message ?? '')}`;
      io.stdout.write(`${text}\n`);
      if (live) draw();
    },
    end() {
      running.clear();
      clear();
    },
  };
}
