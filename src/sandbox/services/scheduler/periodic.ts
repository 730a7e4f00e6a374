/**
 * A periodic job's next launch, as the real plan reports it (`NextPeriodicLaunch`,
 * `PeriodicConfig.Next`): the earliest next time of its cron `Spec` (or `Specs`) after now, in its
 * `TimeZone` (UTC by default). The real product answers Go's zero time for jobs that are not
 * periodic or whose periodic block is disabled.
 *
 * Cron expressions are read by cron-parser. Its dialect differs from the real one (hashicorp/cronexpr)
 * on 6-field expressions: cron-parser reads a leading seconds field, cronexpr a trailing year. The
 * time is sent in UTC (`...Z`); the real one carries the zone's offset, the same instant.
 */
import { CronExpressionParser } from 'cron-parser';
import { type Json, SchedulerError } from './model.js';

/** Go's zero `time.Time` as JSON. */
export const ZERO_TIME = '0001-01-01T00:00:00Z';

export function nextPeriodicLaunch(job: Json, now: Date = new Date()): string {
  const periodic = job.Periodic as Json | null | undefined;
  if (!periodic || periodic.Enabled !== true) return ZERO_TIME;
  if ((periodic.SpecType ?? 'cron') !== 'cron') return ZERO_TIME;
  const specs = [
    ...(typeof periodic.Spec === 'string' && periodic.Spec !== '' ? [periodic.Spec] : []),
    ...(Array.isArray(periodic.Specs) ? (periodic.Specs as unknown[]).map(String) : []),
  ];
  const tz = typeof periodic.TimeZone === 'string' && periodic.TimeZone !== '' ? periodic.TimeZone : 'UTC';
  let next: number | undefined;
  for (const spec of specs) {
    try {
      const t = CronExpressionParser.parse(spec, { currentDate: now, tz }).next().getTime();
      if (next === undefined || t < next) next = t;
    } catch (err) {
      throw new SchedulerError(500, `Failed to parse cron expression: ${(err as Error).message}`);
    }
  }
  if (next === undefined) return ZERO_TIME;
  return new Date(next).toISOString().replace(/\.000Z$/, 'Z');
}
