/**
 * The loop's log: one JSON object per line on standard output, for a log collector. Its types:
 * `start`, `change` (one per change a cycle found or made), `retry` (a request that failed and is
 * sent again), `rate_limit` (requests to a host held back), `inventory_lock_retaken` (a lock someone
 * released mid-apply, taken again), `prune_left` (an object `--prune` did not delete: the
 * inventory's own not found, out of every prune scope or on a Connection no longer declared, or one
 * marked as a Converge's that this inventory does not record), `cycle` (one per cycle), `shutdown` (the last line). Messages are scrubbed of the process's secrets and bounded, as service text is untrusted.
 */
import { scrubAndTruncate } from '../common/scrub.js';
import { jsonOut } from '../common/printable.js';

export interface LogSink {
  write(text: string): unknown;
}

const MAX_MESSAGE = 2_000;

export class JsonLog {
  constructor(
    private readonly sink: LogSink,
    private readonly now: () => number,
    private readonly secrets: readonly string[],
  ) {}

  /** A message from a service or an error, made safe to print. */
  message(text: string): string {
    return scrubAndTruncate(text, this.secrets, MAX_MESSAGE);
  }

  line(
    type:
      | 'change'
      | 'cycle'
      | 'shutdown'
      | 'start'
      | 'retry'
      | 'rate_limit'
      | 'inventory_lock_retaken'
      | 'prune_left'
      | 'held_back',
    fields: Record<string, unknown>,
  ): void {
    // Inert in a log viewer: a service's `##[error]` or a raw C1 control stays a JSON escape.
    this.sink.write(`${jsonOut({ ts: new Date(this.now()).toISOString(), type, ...fields })}\n`);
  }
}
