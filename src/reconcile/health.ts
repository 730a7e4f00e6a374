/**
 * `/healthz`: healthy while the last successful cycle is younger than three intervals, so one slow or
 * failed cycle does not restart the pod, but a loop that has not converged for a while does. Before
 * the first success, the loop's start counts as one, so a pod is not killed while it starts.
 */
export interface HealthInput {
  /** When the loop started (ms since the epoch). */
  startedAt: number;
  /** When the last cycle that succeeded ended; undefined before the first. */
  lastSuccessAt: number | undefined;
  intervalMs: number;
  now: number;
  /** Cycles failed in a row (0 after a success). */
  failures?: number;
}

export interface Health {
  healthy: boolean;
  /** For a person reading the probe's answer: why it is (un)healthy. */
  reason: string;
  /** Age in seconds of the last success (or of the start, before any). */
  ageSeconds: number;
}

export const STALE_INTERVALS = 3;

export function health(input: HealthInput): Health {
  const since = input.lastSuccessAt ?? input.startedAt;
  const ageMs = Math.max(0, input.now - since);
  const limitMs = STALE_INTERVALS * input.intervalMs;
  const ageSeconds = Math.round(ageMs / 100) / 10;
  const what =
    input.lastSuccessAt === undefined
      ? `no cycle has succeeded since the start ${ageSeconds}s ago`
      : `the last successful cycle ended ${ageSeconds}s ago`;
  // That cycles are failing, where they are: "stale" alone read like a slow loop. Not why: the
  // probe answers anyone who can reach the port, and an error names files, objects and services
  // (and may echo what a service said); the log's `cycle` lines have it.
  const failing =
    input.failures && input.failures > 0
      ? `; the last ${input.failures === 1 ? 'cycle' : `${input.failures} cycles`} failed (the log's cycle lines say why)`
      : '';
  if (ageMs < limitMs) return { healthy: true, reason: `${what}${failing}`, ageSeconds };
  return {
    healthy: false,
    reason: `${what}, more than ${STALE_INTERVALS} intervals (${limitMs / 1000}s)${failing}`,
    ageSeconds,
  };
}
