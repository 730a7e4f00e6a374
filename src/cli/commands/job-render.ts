/**
 * How `converge job …` shows the scheduler's objects: key/value headers, the per-group summary, the
 * allocation, evaluation and deployment tables, a plan's dry-run section. Pure functions of the
 * service's JSON, so the commands stay about requests and the tests can read one format.
 */
import { createColors } from 'picocolors';
import type {
  AllocMetric,
  Allocation,
  Deployment,
  DesiredUpdates,
  Evaluation,
  Job,
  JobListItem,
  JobSummary,
  PlanResponse,
} from '../../clients/scheduler/client.js';
import { printable } from '../../common/printable.js';
import { keyValues, table } from '../table.js';

/** The scheduler's IDs are UUIDs; 8 characters identify one in practice, as its own CLI shows them. */
export function shortId(id: string | undefined | null): string {
  return (id ?? '').slice(0, 8);
}

/**
 * The evaluation a job write started, for its one-line report: none is started for some (a
 * parameterized job stopped, a scaling event that changes no count), and `(evaluation )` read as a bug.
 */
export function evaluationClause(evalId: string | undefined | null): string {
  return evalId ? `evaluation ${shortId(evalId)}` : 'no evaluation needed';
}

/**
 * The scheduler's times are Unix nanoseconds; shown as UTC to the second (a terminal's zone would
 * make the same output differ between machines).
 */
export function formatNanos(ns: number | undefined | null): string {
  if (!ns) return '';
  return new Date(Math.floor(ns / 1e6)).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export { keyValues };

export function jobHeader(job: Job): string {
  return keyValues([
    ['ID', job.ID],
    ['Name', job.Name ?? job.ID],
    ['Namespace', job.Namespace ?? 'default'],
    ['Type', job.Type ?? ''],
    ['Priority', String(job.Priority ?? '')],
    ['Status', job.Stop ? `${job.Status ?? ''} (stopped)` : (job.Status ?? '')],
    ['Version', String(job.Version ?? '')],
    ['Stable', String(job.Stable ?? false)],
    ['Datacenters', (job.Datacenters ?? []).join(', ')],
    ['Submitted', formatNanos(job.SubmitTime)],
    ...(job.Periodic?.Enabled ? [['Periodic', job.Periodic.Spec ?? 'yes'] as [string, string]] : []),
    // A dispatched child keeps its parent's block but is an instance, not a template.
    ...(job.ParameterizedJob && !job.Dispatched ? [['Parameterized', 'yes'] as [string, string]] : []),
    ...(job.ParentID ? [['Parent', job.ParentID] as [string, string]] : []),
  ]);
}

/** Children of a periodic or parameterized job, by state: their instances are separate jobs. */
export function childrenLine(summary: JobSummary): string | undefined {
  const c = summary.Children;
  if (!c || c.Pending + c.Running + c.Dead === 0) return undefined;
  return `Children: ${c.Pending} pending, ${c.Running} running, ${c.Dead} dead`;
}

export function summaryTable(summary: JobSummary): string {
  const groups = Object.keys(summary.Summary ?? {}).sort();
  if (groups.length === 0) return 'No task groups.';
  return table(
    ['GROUP', 'QUEUED', 'STARTING', 'RUNNING', 'COMPLETE', 'FAILED', 'LOST'],
    groups.map((g) => {
      const s = summary.Summary[g]!;
      return [g, s.Queued, s.Starting, s.Running, s.Complete, s.Failed, s.Lost].map(String);
    }),
  );
}

export function deploymentSection(d: Deployment): string {
  const groups = Object.keys(d.TaskGroups ?? {}).sort();
  const head = keyValues([
    ['ID', shortId(d.ID)],
    ['Job version', String(d.JobVersion ?? '')],
    ['Status', d.Status],
    ['Description', d.StatusDescription ?? ''],
  ]);
  if (groups.length === 0) return head;
  const rows = groups.map((g) => {
    const s = d.TaskGroups![g]!;
    return [
      g,
      String(s.DesiredTotal ?? 0),
      String(s.PlacedAllocs ?? 0),
      `${s.HealthyAllocs ?? 0}/${s.DesiredTotal ?? 0}`,
      String(s.UnhealthyAllocs ?? 0),
    ];
  });
  return `${head}\n\n${table(['GROUP', 'DESIRED', 'PLACED', 'HEALTHY', 'UNHEALTHY'], rows)}`;
}

/** Newest first, as the scheduler's CLI lists them: the allocation just placed is the one asked about. */
function newestFirst<T extends { CreateIndex?: number }>(list: T[]): T[] {
  return [...list].sort((a, b) => (b.CreateIndex ?? 0) - (a.CreateIndex ?? 0));
}

export function allocationsTable(allocs: Allocation[]): string {
  if (allocs.length === 0) return 'No allocations.';
  return table(
    ['ID', 'GROUP', 'NODE', 'DESIRED', 'STATUS', 'VERSION', 'CREATED'],
    newestFirst(allocs).map((a) => [
      shortId(a.ID),
      a.TaskGroup,
      a.NodeName ?? shortId(a.NodeID),
      a.DesiredStatus ?? '',
      a.ClientStatus ?? '',
      String(a.JobVersion ?? ''),
      formatNanos(a.CreateTime),
    ]),
  );
}

export function evaluationsTable(evals: Evaluation[]): string {
  if (evals.length === 0) return 'No evaluations.';
  return table(
    ['ID', 'PRIORITY', 'TRIGGERED BY', 'STATUS', 'PLACEMENT FAILURES'],
    newestFirst(evals).map((e) => [
      shortId(e.ID),
      String(e.Priority ?? ''),
      e.TriggeredBy ?? '',
      e.Status,
      Object.keys(e.FailedTGAllocs ?? {}).length > 0
        ? Object.keys(e.FailedTGAllocs!).sort().join(', ')
        : 'none',
    ]),
  );
}

export function deploymentsTable(deployments: Deployment[]): string {
  if (deployments.length === 0) return 'No deployments.';
  return table(
    ['ID', 'JOB VERSION', 'STATUS', 'DESCRIPTION'],
    newestFirst(deployments).map((d) => [
      shortId(d.ID),
      String(d.JobVersion ?? ''),
      d.Status,
      d.StatusDescription ?? '',
    ]),
  );
}

export function jobListTable(jobs: JobListItem[], withNamespace: boolean): string {
  if (jobs.length === 0) return 'No jobs.';
  const sorted = [...jobs].sort(
    (a, b) => (a.Namespace ?? '').localeCompare(b.Namespace ?? '') || a.ID.localeCompare(b.ID),
  );
  return table(
    [...(withNamespace ? ['NAMESPACE'] : []), 'ID', 'TYPE', 'PRIORITY', 'STATUS', 'SUBMITTED'],
    sorted.map((j) => [
      ...(withNamespace ? [j.Namespace ?? ''] : []),
      j.ID,
      j.Type ?? '',
      String(j.Priority ?? ''),
      j.Stop ? `${j.Status ?? ''} (stopped)` : (j.Status ?? ''),
      formatNanos(j.SubmitTime as number | undefined),
    ]),
  );
}

/** Planned allocation changes by the words the scheduler's diff annotations use. */
const UPDATE_WORDS: [keyof DesiredUpdates, string][] = [
  ['Place', 'create'],
  ['Stop', 'destroy'],
  ['Migrate', 'migrate'],
  ['InPlaceUpdate', 'in-place update'],
  ['DestructiveUpdate', 'create/destroy update'],
  ['Canary', 'canary'],
  ['Preemptions', 'preemption'],
  ['Ignore', 'ignore'],
];

/** `web: 1 create, 2 in-place update` per group; `web: no change` when every count is zero. */
export function desiredUpdatesLines(updates: Record<string, DesiredUpdates> | null | undefined): string[] {
  return Object.keys(updates ?? {})
    .sort()
    .map((g) => {
      const u = updates![g]!;
      const parts = UPDATE_WORDS.filter(([k]) => (u[k] ?? 0) > 0).map(([k, w]) => `${u[k]} ${w}`);
      return `${g}: ${parts.length > 0 ? parts.join(', ') : 'no change'}`;
    });
}

/** Whether the plan would place, stop or change any allocation (what `--detailed-exitcode` reports). */
export function planChangesAllocations(plan: PlanResponse): boolean {
  return Object.values(plan.Annotations?.DesiredTGUpdates ?? {}).some((u) =>
    UPDATE_WORDS.some(([k]) => k !== 'Ignore' && (u[k] ?? 0) > 0),
  );
}

/** Why placements failed, in the words and order the scheduler's own CLI uses for a metric. */
function metricLines(m: AllocMetric): string[] {
  const out: string[] = [];
  const nodes = (n: number) => `${n} node${n === 1 ? '' : 's'}`;
  const each = (map: Record<string, number> | null | undefined, line: (k: string, n: number) => string) => {
    for (const [k, n] of Object.entries(map ?? {}).sort(([a], [b]) => a.localeCompare(b)))
      out.push(line(k, n));
  };
  if (m.NodesEvaluated === 0) out.push('No nodes were eligible for evaluation');
  each(m.NodesAvailable, (dc, n) =>
    n === 0 ? `No nodes are available in datacenter ${JSON.stringify(dc)}` : '',
  );
  each(
    m.ClassFiltered as Record<string, number> | undefined,
    (k, n) => `Class ${JSON.stringify(k)} filtered ${nodes(n)}`,
  );
  each(m.ConstraintFiltered, (k, n) => `Constraint ${JSON.stringify(k)} filtered ${nodes(n)}`);
  if (m.NodesExhausted) out.push(`Resources exhausted on ${nodes(m.NodesExhausted)}`);
  each(m.ClassExhausted, (k, n) => `Class ${JSON.stringify(k)} exhausted on ${nodes(n)}`);
  each(m.DimensionExhausted, (k, n) => `Dimension ${JSON.stringify(k)} exhausted on ${nodes(n)}`);
  return out.filter(Boolean);
}

const ZERO_TIME = '0001-01-01T00:00:00Z';

/** The plan's "Scheduler dry-run" section: placement failures, per-group updates, the next launch. */
export function dryRunSection(plan: PlanResponse, color: boolean): string {
  const c = createColors(color);
  const out = ['Scheduler dry-run:'];
  const failed = Object.entries(plan.FailedTGAllocs ?? {}).sort(([a], [b]) => a.localeCompare(b));
  if (failed.length === 0) out.push('- All tasks successfully allocated.');
  else {
    out.push(c.yellow('- WARNING: Failed to place all allocations.'));
    for (const [g, m] of failed) {
      const n = (m.CoalescedFailures ?? 0) + 1;
      out.push(
        c.yellow(`  Task Group ${JSON.stringify(g)} (failed to place ${n} allocation${n === 1 ? '' : 's'}):`),
      );
      for (const line of metricLines(m)) out.push(`    * ${line}`);
    }
  }
  for (const line of desiredUpdatesLines(plan.Annotations?.DesiredTGUpdates)) out.push(`- ${line}`);
  if (plan.NextPeriodicLaunch && plan.NextPeriodicLaunch !== ZERO_TIME) {
    out.push(`- If submitted now, the next periodic launch would be at ${plan.NextPeriodicLaunch}.`);
  }
  // The service's text: one printable line, so it cannot forge lines of the plan or a CI command.
  if (plan.Warnings) out.push(c.yellow(`- Warnings: ${printable(plan.Warnings.trim())}`));
  return out.join('\n');
}
