/**
 * A wait before a retry, as a person reads it: `in 40ms`, `in 0.4s`, `in 12s`, `now`. Rounded up, so
 * a short wait never reads as no wait (`0.0s`): milliseconds below a tenth of a second, tenths below
 * ten seconds, whole seconds (as `formatDuration` writes them) above.
 */
export function formatWait(ms: number, wholeDuration: (ms: number) => string): string {
  if (ms <= 0) return 'now';
  if (ms < 100) return `in ${Math.ceil(ms)}ms`;
  if (ms < 10_000) return `in ${Math.ceil(ms / 100) / 10}s`;
  return `in ${wholeDuration(Math.ceil(ms / 1000) * 1000)}`;
}
