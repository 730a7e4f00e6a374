/**
 * The loop's Prometheus metrics, in a registry of its own (two loops in one process, or a test, never
 * share counters). The HTTP layer knows nothing of them: `requestHooks` turns its request and retry
 * events into counts.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { RequestEvent, RetryEvent } from '../clients/http/index.js';

export class ReconcileMetrics {
  readonly registry = new Registry();
  readonly cycles = new Counter({
    name: 'converge_reconcile_cycles_total',
    help: 'Reconcile cycles by outcome (in_sync, corrected, drift, failed, interrupted).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly lastSuccess = new Gauge({
    name: 'converge_reconcile_last_success_timestamp_seconds',
    help: 'When the last successful cycle ended (Unix time, seconds).',
    registers: [this.registry],
  });
  readonly duration = new Histogram({
    name: 'converge_reconcile_cycle_duration_seconds',
    help: 'How long a cycle took: load, plan and apply.',
    buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
    registers: [this.registry],
  });
  readonly changes = new Counter({
    name: 'converge_reconcile_changes_total',
    help: 'Changes the loop applied, by kind, action and result (applied, failed, skipped, stale).',
    labelNames: ['kind', 'action', 'result'] as const,
    registers: [this.registry],
  });
  readonly drift = new Gauge({
    name: 'converge_reconcile_drift',
    help: 'Objects whose live state differs from the manifest after the last cycle that planned: found by its plan and not corrected by its apply, by kind (objects that could not be planned are not counted).',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  readonly lastPlan = new Gauge({
    name: 'converge_reconcile_last_plan_timestamp_seconds',
    help: 'When the last plan was made (Unix time): the drift gauges are as of then. A cycle that fails before planning (an invalid manifest, a service down) leaves them as they were.',
    registers: [this.registry],
  });
  readonly unplanned = new Gauge({
    name: 'converge_reconcile_unplanned',
    help: 'Objects the last plan could not plan (a problem, or not compared), by kind.',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  readonly errors = new Counter({
    name: 'converge_reconcile_errors_total',
    help: 'Errors by service: cycles that failed on it and changes it refused.',
    labelNames: ['service'] as const,
    registers: [this.registry],
  });
  readonly requests = new Counter({
    name: 'converge_requests_total',
    help: 'HTTP requests sent per service, retries included.',
    labelNames: ['service'] as const,
    registers: [this.registry],
  });
  readonly retries = new Counter({
    name: 'converge_request_retries_total',
    help: 'HTTP requests retried per service.',
    labelNames: ['service'] as const,
    registers: [this.registry],
  });

  /** Hooks for the run's HTTP options: each attempt and each retry is counted for its service. */
  requestHooks(): { onRequest: (e: RequestEvent) => void; onRetry: (e: RetryEvent) => void } {
    return {
      onRequest: (event) => this.requests.inc({ service: event.service }),
      onRetry: (event) => this.retries.inc({ service: event.service }),
    };
  }

  /**
   * The drift and the objects not planned of the last plan, as its summary counts them (each object
   * in one of them at most). Every kind the plan holds has its series from the first cycle, at 0
   * when in sync (a dashboard showed "No data", and an `absent()` alert fired, until a kind first
   * drifted); kinds seen before and now at none go back to 0 rather than vanish.
   */
  setDrift(
    drift: ReadonlyMap<string, number>,
    unplanned: ReadonlyMap<string, number>,
    planned: Iterable<string> = [],
    /** When the plan these come from was made; undefined for the same plan's counts after its apply. */
    plannedAt: number | undefined = Date.now(),
  ): void {
    for (const kind of [...planned, ...drift.keys(), ...unplanned.keys()]) this.knownKinds.add(kind);
    for (const kind of this.knownKinds) {
      this.drift.set({ kind }, drift.get(kind) ?? 0);
      this.unplanned.set({ kind }, unplanned.get(kind) ?? 0);
    }
    if (plannedAt !== undefined) this.lastPlan.set(plannedAt / 1000);
  }

  private readonly knownKinds = new Set<string>();
}
