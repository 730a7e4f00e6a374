/**
 * What an operator needs after `job dispatch` and `job force-periodic`: the child job's ID, and
 * the command that follows it. A dispatch's answer names the child; a forced launch's answer
 * (`{EvalID, EvalCreateIndex}`) does not, so the child is found among the parent's children.
 */
import type { PeriodicForceResponse, SchedulerClient } from '../../clients/scheduler/client.js';
import { quoteArg } from '../remedies.js';
import { type JobFlags, ns } from './job.js';

/** `--namespace NS ` when the command was given one, for the commands a message names (shell-quoted). */
export function namespaceFlag(flags: JobFlags): string {
  return flags.namespace !== undefined ? `--namespace ${quoteArg(flags.namespace)} ` : '';
}

/** ``Next: `converge job status [--namespace NS] CHILD` `` (the child's status, allocations, evaluations). */
export function nextStatusLine(child: string, flags: JobFlags): string {
  return `Next: \`converge job status ${namespaceFlag(flags)}${quoteArg(child)}\` follows it.`;
}

/**
 * The child a forced launch made: `<parent>/periodic-<unix time>`. The service registers it with
 * its evaluation in one write, so its CreateIndex is the evaluation's; should that not hold, the
 * child whose evaluations include the one returned is it (newest first, so usually one read).
 * Undefined when neither finds it (the child was already collected): the evaluation still says.
 */
export async function forcedChild(
  client: SchedulerClient,
  parent: string,
  answer: PeriodicForceResponse,
  flags: JobFlags,
): Promise<string | undefined> {
  const children = (await client.listJobs({ ...ns(flags), prefix: `${parent}/periodic-` }))
    .filter((j) => j.ParentID === undefined || j.ParentID === parent)
    .sort((a, b) => (b.CreateIndex ?? 0) - (a.CreateIndex ?? 0));
  const atIndex = children.find((j) => j.CreateIndex === answer.EvalCreateIndex);
  if (atIndex) return atIndex.ID;
  for (const child of children) {
    const evals = await client.jobEvaluations(child.ID, ns(flags));
    if (evals.some((e) => e.ID === answer.EvalID)) return child.ID;
  }
  return undefined;
}
